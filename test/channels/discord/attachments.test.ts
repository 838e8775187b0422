import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { discordChannel } from "../../../functions/channels/discord/index.ts";
import { discordAdapter } from "../../../functions/channels/discord/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import {
  deliver,
  fakeDiscord,
  messageCreate,
  newScenario,
  recorded,
  scriptModel,
  settlesTo,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * MESSAGE_CREATE attachments reach the model as other channels' files do: text files downloaded after
 * access control, from Discord's CDN hosts only (mediaAllowHosts, redirects re-checked), without the
 * bot token, within mediaMaxMb; anything else is described with the reason it was not read.
 */

async function serveFile(
  path: string,
  file: { body: string; contentType?: string; redirect?: string; understateLength?: boolean },
) {
  await fetch(`${fakeDiscord()}/_control/file`, {
    method: "POST",
    body: JSON.stringify({ path, ...file }),
  });
  return `${fakeDiscord()}${path}?ex=6a1b2c3d&is=6a1a0000&hm=abcdef`;
}

async function downloads(path: string): Promise<Array<{ authorization: string | null }>> {
  return (await (
    await fetch(`${fakeDiscord()}/_control/downloads?path=${encodeURIComponent(path)}`)
  ).json()) as Array<{ authorization: string | null }>;
}

function withDiscord(config: EdgeclawConfig, patch: Record<string, unknown>): EdgeclawConfig {
  const channels = config.channels as Record<string, Record<string, unknown>>;
  return {
    ...config,
    channels: { ...channels, discord: { ...channels.discord, ...patch } },
  } as EdgeclawConfig;
}

const route = { channel: "discord", accountId: "default", to: "1" };

describe("Discord inbound attachments", { timeout: 60_000 }, () => {
  it("gives the model an allowed sender's text file, fetched from the CDN without the bot token", async () => {
    const scenario = newScenario("dc-file");
    await scriptModel(scenario, [{ type: "text", text: "Read it." }]);
    const path = `/attachments/${snowflake()}/${snowflake()}/notes.txt`;
    const url = await serveFile(path, {
      body: "the launch code is TANGERINE-42",
      contentType: "text/plain; charset=utf-8",
    });
    const dm = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[15]!,
        channelId: dm,
        content: `see file [scenario:${scenario}]`,
        attachments: [
          { filename: "notes.txt", url, size: 31, content_type: "text/plain; charset=utf-8" },
        ],
      }),
    );
    await settlesTo(dm, ["Read it."]);
    const sent = JSON.stringify((await recorded(scenario))[0]!.body);
    expect(sent).toContain("notes.txt");
    expect(sent).toContain("TANGERINE-42");
    expect(await downloads(path)).toEqual([{ path, authorization: null }]);
  });

  it("never fetches a stranger's attachment", async () => {
    const path = `/attachments/${snowflake()}/${snowflake()}/secret.txt`;
    const url = await serveFile(path, { body: "x", contentType: "text/plain" });
    await deliver(
      messageCreate({
        author: snowflake(),
        channelId: TEST_DISCORD.openChannel,
        guildId: TEST_DISCORD.guild,
        content: "look",
        attachments: [{ filename: "secret.txt", url, size: 1, content_type: "text/plain" }],
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await downloads(path)).toEqual([]);
  });

  it("fetches only from mediaAllowHosts, a redirect included, and refuses files over mediaMaxMb, declared or not", async () => {
    const ctx = (patch: Record<string, unknown> = {}) =>
      contextFor(
        discordChannel,
        {
          env: env as unknown as Record<string, unknown>,
          config: withDiscord(configFromEnv(env as never), patch),
        },
        "default",
      );
    const fetchFile = (url: string, size?: number, patch?: Record<string, unknown>) =>
      discordAdapter.fetchAttachment!(
        {
          name: "a.txt",
          mimeType: "text/plain",
          url,
          ...(size !== undefined ? { sizeBytes: size } : {}),
        },
        route,
        ctx(patch),
      );

    expect(await fetchFile("http://169.254.169.254/latest/meta-data/a.txt")).toEqual({
      skipped: "169.254.169.254 is not on channels.discord.mediaAllowHosts",
    });
    expect(await fetchFile("https://cdn.discordapp.com.evil.example/a.txt")).toMatchObject({
      skipped: expect.stringContaining("not on channels.discord.mediaAllowHosts"),
    });

    const hop = `/attachments/${snowflake()}/hop.txt`;
    await serveFile(hop, { body: "", redirect: "http://127.0.0.1:9/internal.txt" });
    expect(await fetchFile(`${fakeDiscord()}${hop}`)).toEqual({
      skipped: "127.0.0.1:9 is not on channels.discord.mediaAllowHosts",
    });

    const big = `/attachments/${snowflake()}/big.txt`;
    const bigUrl = await serveFile(big, { body: "y".repeat(4096), contentType: "text/plain" });
    const small = { mediaMaxMb: 0.002 }; // 2097 bytes
    expect(await fetchFile(bigUrl, 4096, small)).toEqual({
      skipped: "larger than mediaMaxMb (0.002 MB)",
    });
    expect(await downloads(big)).toEqual([]); // refused on the declared size, unread
    expect(await fetchFile(bigUrl, 10, small)).toEqual({
      skipped: "larger than mediaMaxMb (0.002 MB)",
    }); // Content-Length
    const sneaky = `/attachments/${snowflake()}/sneaky.txt`;
    const sneakyUrl = await serveFile(sneaky, {
      body: "z".repeat(4096),
      contentType: "text/plain",
      understateLength: true,
    });
    expect(await fetchFile(sneakyUrl, 10, small)).toEqual({
      skipped: "larger than mediaMaxMb (0.002 MB)",
    }); // while reading
    expect(await fetchFile(bigUrl, 4096)).toEqual({ text: "y".repeat(4096) }); // the default 100 MB
  });
});

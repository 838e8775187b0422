import { describe, expect, it } from "vitest";
import type { OutboundMessage } from "../../../functions/channels/adapter.ts";
import { mattermostServerRefusal } from "../../../functions/channels/mattermost/api.ts";
import { accountOf, contextFor } from "../../../functions/channels/channel-account.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { mattermostChannel } from "../../../functions/channels/mattermost/index.ts";
import { sendMattermostMessage } from "../../../functions/channels/mattermost/send.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import { TEST_MATTERMOST } from "../../../functions/channels/mattermost/test-fixtures.ts";
import { mattermostCalls, mattermostPosts, mmId, workerEnv } from "./helpers.ts";

/**
 * OpenClaw's SSRF guard for Mattermost: requests to a server on a private, loopback, link-local or
 * internal address are refused unless `network.dangerouslyAllowPrivateNetwork` (root or account)
 * says otherwise. The Worker cannot resolve names, so it judges the server as written; the
 * companion also checks resolved addresses (companion/test/connectors/mattermost-private-network).
 * The suite's own config sets the flag for the loopback fake; these configs do not.
 */

const fakeUrl = () => String(workerEnv.FAKE_MATTERMOST_URL);
const env = { ...workerEnv, TEST_MATTERMOST_BOT_TOKEN: TEST_MATTERMOST.botToken } as Record<
  string,
  unknown
>;

function configWith(mattermost: Record<string, unknown>): EdgeclawConfig {
  return parseConfig({
    channels: {
      mattermost: { botToken: { source: "env", id: "TEST_MATTERMOST_BOT_TOKEN" }, ...mattermost },
    },
  });
}

/** A reply as the outbox sends it: with the account of its route (channel-account.ts). */
function send(message: OutboundMessage, config: EdgeclawConfig) {
  const ctx = contextFor(mattermostChannel, { env, config }, message.route.accountId);
  return sendMattermostMessage(message, ctx);
}

function reply(accountId: string, channel: string, text: string): OutboundMessage {
  return {
    id: `out-${mmId("o")}`,
    route: { channel: "mattermost", accountId, to: channel },
    text,
    chunkIndex: 0,
    chunkCount: 1,
    queuedAt: Date.now(),
  };
}

describe("Mattermost private-network guard (Worker)", () => {
  it("by default a reply to a server on 127.0.0.1, 10.x, [::1], 169.254.x or an internal name is refused for good, and no request is made", async () => {
    const port = new URL(fakeUrl()).port;
    const before = (await mattermostCalls("/")).length;
    const servers = [
      fakeUrl(),
      `http://10.0.0.7:${port}`,
      `http://[::1]:${port}`,
      `http://169.254.169.254:${port}`,
      `http://100.64.1.1:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      `http://[fd00::5]:${port}`,
      `http://localhost:${port}`,
      `http://chat.internal:${port}`,
      `http://mattermost:${port}`,
    ];
    for (const baseUrl of servers) {
      const channel = mmId("ch");
      const result = await send(
        reply("default", channel, "must not leave"),
        configWith({ baseUrl }),
      );
      expect(result, baseUrl).toMatchObject({ ok: false, retryable: false });
      expect("error" in result && result.error, baseUrl).toMatch(
        /Mattermost server refused for account default: .*private, internal and metadata addresses are blocked.*dangerouslyAllowPrivateNetwork/,
      );
    }
    expect((await mattermostCalls("/")).length, "the fake saw no request").toBe(before);
  });

  it("network.dangerouslyAllowPrivateNetwork on the root or on one account lets that account reach the loopback server; an account can turn it back off", async () => {
    const channel = mmId("ch");
    const config = configWith({
      baseUrl: fakeUrl(),
      accounts: { default: {}, lan: { network: { dangerouslyAllowPrivateNetwork: true } } },
    });
    const guarded = await send(reply("default", channel, "from default"), config);
    expect(guarded).toMatchObject({ ok: false, retryable: false });
    const allowed = await send(reply("lan", channel, "from lan"), config);
    expect(allowed).toMatchObject({ ok: true });

    const rootAllows = configWith({
      baseUrl: fakeUrl(),
      network: { dangerouslyAllowPrivateNetwork: true },
      accounts: { default: {}, strict: { network: { dangerouslyAllowPrivateNetwork: false } } },
    });
    expect(await send(reply("default", channel, "root allows"), rootAllows)).toMatchObject({
      ok: true,
    });
    expect(await send(reply("strict", channel, "account refuses"), rootAllows)).toMatchObject({
      ok: false,
      retryable: false,
    });

    expect((await mattermostPosts(channel)).map((p) => p.message).sort()).toEqual([
      "from lan",
      "root allows",
    ]);
  });

  it("a public server passes the guard as written", () => {
    const account = accountOf(
      mattermostChannel,
      configWith({ baseUrl: "https://chat.example.com" }),
      "default",
    )!;
    expect(mattermostServerRefusal(account, "https://chat.example.com")).toBeUndefined();
    expect(mattermostServerRefusal(account, "https://203.0.114.10")).toBeUndefined();
  });
});

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { discordChannel } from "../../../functions/channels/discord/index.ts";
import { discordAdapter } from "../../../functions/channels/discord/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { NOT_AUTHORIZED_TEXT } from "../../../durable-objects/session/inbox/triage-access.ts";
import {
  discordCalls,
  discordMessages,
  forgetPairingWhenDone,
  interactionMessages,
  newScenario,
  postInteraction,
  recorded,
  scriptModel,
  settle,
  signInteraction,
  snowflake,
  TEST_DISCORD,
  waitFor,
} from "./helpers.ts";

/**
 * An interaction the SessionDO turns away still owes Discord an answer: a deferred command shows
 * "thinking…" until it is answered. The sender alone is told "not authorized", once; nothing runs;
 * a click's message (the bot's own) is never edited; a forged request changes nothing.
 */

function command(user: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    id: snowflake(),
    application_id: TEST_DISCORD.applicationId,
    type: 2,
    token: `tok-${snowflake()}`,
    channel_id: snowflake(),
    user: { id: user, username: "someone" },
    data: { name: "ask", options: [{ name: "question", type: 3, value: text }] },
    ...extra,
  };
}

function click(user: string, customId: string) {
  return {
    id: snowflake(),
    application_id: TEST_DISCORD.applicationId,
    type: 3,
    token: `tok-${snowflake()}`,
    channel_id: TEST_DISCORD.openChannel,
    guild_id: TEST_DISCORD.guild,
    member: { user: { id: user, username: "x" }, roles: [] },
    message: { id: snowflake(), author: { id: TEST_DISCORD.botId } },
    data: { custom_id: customId, component_type: 2 },
  };
}

/** The calls made on one interaction's webhook (its token is in the path). */
async function webhookCalls(
  token: string,
): Promise<Array<{ route: string; body: Record<string, unknown> }>> {
  return (await discordCalls()).filter((c) => (c as { path?: string }).path?.includes(`/${token}`));
}

async function answerOf(token: string) {
  return waitFor(async () => {
    const shown = (await interactionMessages(token)).filter((m) => !m.deleted);
    return shown.length ? shown : undefined;
  }, 30_000);
}

describe("Discord refused interactions", { timeout: 60_000 }, () => {
  it("tells a stranger's slash command in a guild channel, privately and once, that it is not authorized; nothing runs", async () => {
    const scenario = newScenario("dc-refuse-guild");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const stranger = snowflake();
    const interaction = command(stranger, `obey [scenario:${scenario}]`, {
      guild_id: TEST_DISCORD.guild,
      channel_id: TEST_DISCORD.openChannel,
      user: undefined,
      member: { user: { id: stranger, username: "x" }, roles: [] },
    });
    const res = await postInteraction(interaction);
    expect(await res.json()).toEqual({ type: 5, data: { flags: 64 } });
    expect((await answerOf(interaction.token)).map((m) => m.content)).toEqual([
      NOT_AUTHORIZED_TEXT,
    ]);
    await settle(1500);
    // The ephemeral "thinking…" became the refusal: one edit, no follow-up, nothing in the channel.
    expect((await webhookCalls(interaction.token)).map((c) => c.route)).toEqual([
      "PATCH /webhooks/messages",
    ]);
    expect(
      await discordMessages(TEST_DISCORD.openChannel).then((all) =>
        all.filter((m) => m.content === NOT_AUTHORIZED_TEXT),
      ),
    ).toEqual([]);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("gives a DM stranger's first slash command the pairing code and the next one a refusal; nothing runs", async () => {
    const stranger = snowflake();
    forgetPairingWhenDone(stranger);
    const scenario = newScenario("dc-refuse-pairing");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const first = command(stranger, `hello [scenario:${scenario}]`);
    await postInteraction(first);
    expect((await answerOf(first.token))[0]!.content).toMatch(/pairing/i);
    const second = command(stranger, `again [scenario:${scenario}]`, {
      channel_id: first.channel_id,
    });
    await postInteraction(second);
    expect((await answerOf(second.token)).map((m) => m.content)).toEqual([NOT_AUTHORIZED_TEXT]);
    await settle(1500);
    expect((await webhookCalls(second.token)).map((c) => c.route)).toEqual([
      "PATCH /webhooks/messages",
    ]);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("answers a stranger's button click with an ephemeral follow-up, never an edit of the clicked message; an allowed click gets nothing", async () => {
    const scenario = newScenario("dc-refuse-click");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const stranger = click(snowflake(), `approve [scenario:${scenario}]`);
    expect(await (await postInteraction(stranger)).json()).toEqual({ type: 6 });
    const shown = await answerOf(stranger.token);
    expect(shown.map((m) => [m.content, (m.flags ?? 0) & 64])).toEqual([[NOT_AUTHORIZED_TEXT, 64]]);
    const allowed = click(TEST_DISCORD.allowed[11]!, `approve [scenario:${scenario}]`);
    expect(await (await postInteraction(allowed)).json()).toEqual({ type: 6 });
    await settle(2000);
    // `@original` of a click is the bot's message the button sits on: never touched.
    expect((await webhookCalls(stranger.token)).map((c) => c.route)).toEqual(["POST /webhooks"]);
    expect(await webhookCalls(allowed.token)).toEqual([]);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("stores nothing for a forged interaction: no refusal is sent, and the genuine one is then new", async () => {
    const stranger = snowflake();
    const interaction = command(stranger, "forged", {
      guild_id: TEST_DISCORD.guild,
      channel_id: TEST_DISCORD.otherChannel,
      user: undefined,
      member: { user: { id: stranger, username: "x" } },
    });
    const body = JSON.stringify(interaction);
    const good = await signInteraction(body);
    const forged = {
      ...good,
      "x-signature-ed25519": good["x-signature-ed25519"]!.replace(/^./, (c) =>
        c === "0" ? "1" : "0",
      ),
    };
    expect((await postInteraction(interaction, forged)).status).toBe(401);
    await settle(1500);
    expect(await webhookCalls(interaction.token)).toEqual([]);
    const genuine = await postInteraction(interaction, good);
    expect(genuine.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    expect((await answerOf(interaction.token)).map((m) => m.content)).toEqual([
      NOT_AUTHORIZED_TEXT,
    ]);
  });

  it("for a publicly deferred command deletes the public thinking and follows up ephemerally; after the token's life sends nothing", async () => {
    const ctx = contextFor(
      discordChannel,
      {
        env: env as unknown as Record<string, unknown>,
        config: configFromEnv(env as never),
      },
      "default",
    );
    const token = `tok-${snowflake()}`;
    const channel = snowflake();
    const route = (expiresAt: number) => ({
      channel: "discord",
      accountId: "default",
      to: channel,
      extra: {
        interactionToken: token,
        applicationId: TEST_DISCORD.applicationId,
        interactionExpiresAt: String(expiresAt),
        ephemeral: "0",
      },
    });
    const live = discordAdapter.refusalRoute!(route(Date.now() + 60_000))!;
    const sent = await discordAdapter.send(
      {
        id: `refusal:${token}:0`,
        route: live,
        text: NOT_AUTHORIZED_TEXT,
        chunkIndex: 0,
        chunkCount: 1,
      },
      ctx,
    );
    expect(sent.ok).toBe(true);
    expect((await webhookCalls(token)).map((c) => c.route)).toEqual([
      "DELETE /webhooks/messages",
      "POST /webhooks",
    ]);
    expect(
      (await interactionMessages(token))
        .filter((m) => !m.deleted)
        .map((m) => [m.content, (m.flags ?? 0) & 64]),
    ).toEqual([[NOT_AUTHORIZED_TEXT, 64]]);

    // Expired while queued: a refusal never falls back to the channel.
    expect(discordAdapter.refusalRoute!(route(Date.now() - 1))).toBeUndefined();
    const late = await discordAdapter.send(
      {
        id: `refusal:${token}:late`,
        route: {
          ...route(Date.now() - 1),
          extra: { ...route(Date.now() - 1).extra, refusal: "1" },
        },
        text: NOT_AUTHORIZED_TEXT,
        chunkIndex: 0,
        chunkCount: 1,
      },
      ctx,
    );
    expect(late).toMatchObject({ ok: false, retryable: false });
    expect(await discordCalls(undefined, channel)).toEqual([]);
  });
});

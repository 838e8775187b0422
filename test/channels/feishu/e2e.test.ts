import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { withDb } from "../../../functions/db/client.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  PLAIN,
  TEST_FEISHU,
  botMention,
  control,
  eventBody,
  feishuCalls,
  feishuId,
  feishuMessages,
  forgetPairingWhenDone,
  holdMessage,
  messageEvent,
  newScenario,
  plainMessage,
  postFeishu,
  scriptModel,
  settle,
  waitFor,
} from "./helpers.ts";

/**
 * Signed (and encrypted) Feishu event → Worker → durable accept → agent run against the fake model
 * → reply through the fake Open Platform. The default account is what a user gets (pairing DMs,
 * groups closed); "plain" is the token-only convenience app (open DMs, a group map).
 */

const testEnv = env as unknown as Env;

async function settlesTo(chat: string, texts: string[]) {
  await waitFor(
    async () =>
      JSON.stringify((await feishuMessages(chat)).map((m) => m.text)) === JSON.stringify(texts)
        ? true
        : undefined,
    25_000,
  ).catch(async () => {
    throw new Error(
      `Feishu shows ${JSON.stringify((await feishuMessages(chat)).map((m) => m.text))} in ${chat}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await feishuMessages(chat);
  expect(messages.map((m) => m.text)).toEqual(texts);
  return messages;
}

describe("Feishu end to end", () => {
  it("with the defaults: a stranger's DM gets one pairing code as a reply and never reaches the model", async () => {
    // An app of its own (token-only, dmPolicy "pairing" by default), so no other file's strangers
    // share its three pending pairing requests.
    await control("app", {
      app_id: TEST_FEISHU.strangersAppId,
      app_secret: "test-feishu-strangers-secret",
    });
    const stranger = feishuId("ou");
    forgetPairingWhenDone(stranger, "strangers");
    const chat = feishuId("oc");
    const messageId = feishuId("om");
    await holdMessage(messageId, chat);
    const scenario = newScenario("feishu-stranger");
    const event = messageEvent({
      sender: stranger,
      chatId: chat,
      messageId,
      appId: TEST_FEISHU.strangersAppId,
      token: "test-feishu-strangers-token",
      content: { text: `hello [scenario:${scenario}]` },
    });
    const res = await postFeishu(event, { path: "/feishu/strangers", encryptKey: null });
    expect(res.status).toBe(200);
    const [code] = await waitFor(
      async () => ((await feishuMessages(chat)).length ? await feishuMessages(chat) : undefined),
      25_000,
    );
    expect(code!.text).toContain("Pairing code:");
    await settle(1000);
    expect(await feishuMessages(chat)).toHaveLength(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("an approved sender gets one answer per event, delivered three times, even when the first send is rate-limited", async () => {
    const user = feishuId("ou");
    await withDb(testEnv, (db) =>
      postgresAccessStore(db).addApprovedSender(
        { channel: "feishu", accountId: "default", senderId: user, source: "admin" },
        Date.now(),
      ),
    );
    const chat = feishuId("oc");
    const messageId = feishuId("om");
    await holdMessage(messageId, chat);
    const scenario = newScenario("feishu-dm");
    await scriptModel(scenario, [{ type: "text", text: "All **good** here." }]);
    await control("script", { api: "reply", chat, status: 429, code: 99991400, times: 1 });
    const event = messageEvent({
      sender: user,
      chatId: chat,
      messageId,
      content: { text: `status please [scenario:${scenario}]` },
    });
    const deliveries = await Promise.all([postFeishu(event), postFeishu(event), postFeishu(event)]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);
    const [answer] = await settlesTo(chat, ["All **good** here."]);
    expect(answer!.via).toBe("reply");
    expect(answer!.reply_to).toBe(messageId);
    // The rate-limited attempt and the one that landed carried the same uuid.
    const replies = (await feishuCalls("reply", chat)).filter((c) => c.body.uuid);
    expect(replies.length).toBeGreaterThanOrEqual(2);
    expect(new Set(replies.map((c) => c.body.uuid)).size).toBe(1);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("with the defaults, an answer streams into one card: sent once as the reply, updated while it grows, committed once", async () => {
    const user = feishuId("ou");
    await withDb(testEnv, (db) =>
      postgresAccessStore(db).addApprovedSender(
        { channel: "feishu", accountId: "default", senderId: user, source: "admin" },
        Date.now(),
      ),
    );
    const chat = feishuId("oc");
    const messageId = feishuId("om");
    await holdMessage(messageId, chat);
    const scenario = newScenario("feishu-stream");
    const answer = "First, the context. Then the details. Finally, the **conclusion**.";
    await scriptModel(scenario, [
      {
        type: "text",
        text: answer,
        chunks: ["First, the context. ", "Then the details. ", "Finally, the **conclusion**."],
        chunkDelayMs: 1300,
      },
    ]);
    const res = await postFeishu(
      messageEvent({
        sender: user,
        chatId: chat,
        messageId,
        content: { text: `explain [scenario:${scenario}]` },
      }),
    );
    expect(res.status).toBe(200);
    // The card shows the whole text before the run ends; the commit ends its streaming.
    await waitFor(
      async () =>
        (await feishuMessages(chat)).some((m) => m.streaming === false) ? true : undefined,
      25_000,
    );
    const [card] = await settlesTo(chat, [answer]);
    expect(card).toMatchObject({
      via: "reply",
      reply_to: messageId,
      msg_type: "interactive",
      streaming: false,
    });
    const updates = await feishuCalls("card.content", chat);
    // At least one preview update while the model wrote, then the final text; never one per token.
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.length).toBeLessThanOrEqual(4);
    expect(updates.at(-1)!.body.content).toBe(answer);
    expect(await feishuCalls("card.settings", chat)).toHaveLength(1);
    expect((await feishuCalls("reply", chat)).filter((c) => c.status === 200)).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("in a gated group only a mention of the bot is answered; an expired tenant token is replaced", async () => {
    const chat = TEST_FEISHU.groupGated;
    const quiet = newScenario("feishu-quiet");
    const before = (await feishuMessages(chat)).length;
    expect(
      (
        await postFeishu(
          plainMessage({
            sender: feishuId("ou"),
            chatId: chat,
            chatType: "group",
            content: { text: `chatting [scenario:${quiet}]` },
          }),
          PLAIN,
        )
      ).status,
    ).toBe(200);
    await control("revoke-tokens");
    const scenario = newScenario("feishu-group");
    await scriptModel(scenario, [{ type: "text", text: "Answered in the group." }]);
    const messageId = feishuId("om");
    await holdMessage(messageId, chat);
    const mention = botMention(TEST_FEISHU.plainBotOpenId);
    expect(
      (
        await postFeishu(
          plainMessage({
            sender: feishuId("ou"),
            chatId: chat,
            chatType: "group",
            messageId,
            mentions: [mention],
            content: { text: `${mention.key} what now? [scenario:${scenario}]` },
          }),
          PLAIN,
        )
      ).status,
    ).toBe(200);
    await waitFor(
      async () =>
        (await feishuMessages(chat))
          .slice(before)
          .some((m) => m.text.includes("Answered in the group."))
          ? true
          : undefined,
      25_000,
    );
    await settle(1500);
    expect((await feishuMessages(chat)).slice(before).map((m) => m.text)).toEqual([
      "Answered in the group.",
    ]);
    expect(await recorded(quiet)).toEqual([]);
  });

  it("a stranger adding the bot to a group, on the defaults, never starts a run or reaches the model", async () => {
    const chat = feishuId("oc");
    const scenario = newScenario("feishu-system");
    const added = eventBody("im.chat.member.bot.added_v1", {
      chat_id: chat,
      operator_id: { open_id: feishuId("ou") },
      name: `team [scenario:${scenario}]`,
      external: false,
    });
    expect((await postFeishu(added)).status).toBe(200);
    await settle(2500);
    expect(await recorded(scenario)).toEqual([]);
    expect(await feishuMessages(chat)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { FeishuAccount } from "../../../functions/channels/feishu/config.ts";
import { feishuChannel } from "../../../functions/channels/feishu/index.ts";
import type {
  OutboundMessage,
  ProgressContext,
  ProgressState,
} from "../../../functions/channels/adapter.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { feishuProgress } from "../../../functions/channels/feishu/progress.ts";
import { sendFeishuMessage } from "../../../functions/channels/feishu/send.ts";
import {
  control,
  fakeFeishu,
  feishuCalls,
  feishuId,
  feishuMessages,
  holdMessage,
  settle,
} from "./helpers.ts";

/**
 * The streaming card (CardKit) between the progress relay and the outbox, against the fake Open
 * Platform: created once, sent once as the reply, its text replaced at most once a second, the final
 * text committed exactly once with streaming ended — and the crash and refusal paths.
 */

const APP = { appId: "cli_test_streaming", appSecret: "test-feishu-streaming-secret" };

function context(
  channel: Record<string, unknown> = {},
): Omit<ProgressContext<FeishuAccount>, "runId"> {
  const config = parseConfig({
    channels: {
      feishu: {
        connectionMode: "webhook",
        apiBaseUrl: fakeFeishu(),
        appId: APP.appId,
        appSecret: APP.appSecret,
        typingIndicator: false,
        ...channel,
      },
    },
  });
  return contextFor(feishuChannel, { env: {}, config }, "default");
}

async function conversation(): Promise<ReplyRoute> {
  await control("app", { app_id: APP.appId, app_secret: APP.appSecret });
  const chat = feishuId("oc");
  const messageId = feishuId("om");
  await holdMessage(messageId, chat);
  return {
    channel: "feishu",
    accountId: "default",
    to: chat,
    replyToMessageId: messageId,
    extra: { chatType: "direct" },
  };
}

/** Feeds the deltas as the relay would (one call at a time), `gapMs` apart; returns the run's state. */
async function stream(
  route: ReplyRoute,
  ctx: ProgressContext<FeishuAccount>,
  deltas: string[],
  gapMs: number,
): Promise<ProgressState> {
  let state: ProgressState = await feishuProgress(route, { type: "run-started" }, {}, ctx);
  let soFar = "";
  for (const text of deltas) {
    soFar += text;
    state = await feishuProgress(route, { type: "text-delta", text, soFar }, state, ctx);
    await settle(gapMs);
  }
  return feishuProgress(route, { type: "run-finished" }, state, ctx);
}

const chunk = (
  route: ReplyRoute,
  text: string,
  state: ProgressState,
  runId: string,
  extra: Partial<OutboundMessage> = {},
): OutboundMessage => ({
  id: `out-${crypto.randomUUID()}`,
  route,
  text,
  chunkIndex: 0,
  chunkCount: 1,
  progressState: state,
  runId,
  ...extra,
});

describe("Feishu streaming card", () => {
  it("streams into one card sent once as the reply, updated at most once a second, the final text committed once and streaming ended", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context(), runId };
    const deltas = ["Hello", " there,", " this", " is", " a", " growing", " answer."];
    const startedAt = Date.now();
    const state = await stream(route, ctx, deltas, 250);
    const elapsedMs = Date.now() - startedAt;
    expect(state.cardId).toBeTruthy();
    expect(state.cardMessageId).toBeTruthy();

    const [card] = await feishuMessages(route.to);
    expect(card).toMatchObject({
      via: "reply",
      reply_to: route.replyToMessageId,
      msg_type: "interactive",
      card_id: state.cardId,
      streaming: true,
    });
    const previews = await feishuCalls("card.content", route.to);
    // The first text went into the card as it was created; later ones at most once a second.
    expect(previews.length).toBeGreaterThanOrEqual(1);
    expect(previews.length).toBeLessThanOrEqual(Math.floor(elapsedMs / 1000) + 1);
    expect(card!.text.length).toBeGreaterThan("Hello".length);

    const result = await sendFeishuMessage(
      chunk(route, "Hello there, this is a **growing** answer.", state, runId),
      ctx,
    );
    expect(result).toEqual({ ok: true, platformMessageId: state.cardMessageId });
    const messages = await feishuMessages(route.to);
    expect(messages.map((m) => [m.msg_type, m.text, m.streaming])).toEqual([
      ["interactive", "Hello there, this is a **growing** answer.", false],
    ]);
    expect(
      (await feishuCalls()).filter(
        (c) => c.api === "card.create" && JSON.stringify(c.body).includes("Hello"),
      ),
    ).toHaveLength(1);
    const sequences = [
      ...(await feishuCalls("card.content", route.to)),
      ...(await feishuCalls("card.settings", route.to)),
    ].map((c) => c.body.sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
  });

  it("a card message whose answer was lost is sent again with the same uuid: Feishu shows one card, and the commit finds it", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context(), runId };
    await control("script", { api: "reply", chat: route.to, dropConnection: true, times: 1 });
    const state = await stream(route, ctx, ["Partial"], 0);
    expect(state.cardSendPending).toBe("1");
    expect(state.cardMessageId).toBeUndefined();

    const result = await sendFeishuMessage(chunk(route, "Partial, then whole.", state, runId), ctx);
    expect(result.ok).toBe(true);
    const replies = await feishuCalls("reply", route.to);
    expect(replies).toHaveLength(2);
    expect(replies[0]!.body.uuid).toBe(replies[1]!.body.uuid);
    expect((await feishuMessages(route.to)).map((m) => [m.msg_type, m.text, m.streaming])).toEqual([
      ["interactive", "Partial, then whole.", false],
    ]);
  });

  it("a card Feishu refuses at the commit is recalled and the answer posted once as a message", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context(), runId };
    const state = await stream(route, ctx, ["Half an ans"], 0);
    expect((await feishuMessages(route.to)).map((m) => m.msg_type)).toEqual(["interactive"]);
    await control("script", {
      api: "card.content",
      chat: route.to,
      status: 400,
      code: 300309,
      times: 5,
    });
    const result = await sendFeishuMessage(
      chunk(route, "Half an answer, whole.", state, runId),
      ctx,
    );
    expect(result.ok).toBe(true);
    expect((await feishuMessages(route.to)).map((m) => [m.msg_type, m.text])).toEqual([
      ["post", "Half an answer, whole."],
    ]);
    expect(await feishuCalls("recall", route.to)).toHaveLength(1);
  });

  it("a rate-limited commit is retried by the outbox with the same text, still one message", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context(), runId };
    const state = await stream(route, ctx, ["Soon"], 0);
    await control("script", {
      api: "card.settings",
      chat: route.to,
      status: 429,
      code: 99991400,
      times: 1,
    });
    const message = chunk(route, "Soon done.", state, runId);
    const first = await sendFeishuMessage(message, ctx);
    expect(first).toMatchObject({ ok: false, retryable: true });
    await settle(5);
    expect(await sendFeishuMessage(message, ctx)).toEqual({
      ok: true,
      platformMessageId: state.cardMessageId,
    });
    expect((await feishuMessages(route.to)).map((m) => [m.text, m.streaming])).toEqual([
      ["Soon done.", false],
    ]);
  });

  it("a silent or aborted run recalls its card", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context(), runId };
    const state = await stream(route, ctx, ["I will ans"], 0);
    expect(await feishuMessages(route.to)).toHaveLength(1);
    expect(await sendFeishuMessage(chunk(route, "", state, runId, { retract: true }), ctx)).toEqual(
      { ok: true },
    );
    expect(await feishuMessages(route.to)).toEqual([]);
  });

  it("streaming.mode off and renderMode raw send no card; renderMode card sends the answer as a card without streaming", async () => {
    for (const channel of [{ streaming: { mode: "off" } }, { renderMode: "raw" }]) {
      const route = await conversation();
      const runId = `run-${crypto.randomUUID()}`;
      const ctx = { ...context(channel), runId };
      const state = await stream(route, ctx, ["No card ", "here."], 0);
      expect(state.cardId).toBeUndefined();
      await sendFeishuMessage(chunk(route, "No card here.", state, runId), ctx);
      expect((await feishuMessages(route.to)).map((m) => [m.msg_type, m.text])).toEqual([
        ["post", "No card here."],
      ]);
    }
    const route = await conversation();
    const ctx = { ...context({ renderMode: "card", streaming: { mode: "off" } }), runId: "r" };
    await sendFeishuMessage(chunk(route, "A **card**.", {}, "r"), ctx);
    expect((await feishuMessages(route.to)).map((m) => [m.msg_type, m.text])).toEqual([
      ["interactive", "A **card**."],
    ]);
  });

  it("with streaming.block.enabled the card shows completed blocks only", async () => {
    const route = await conversation();
    const runId = `run-${crypto.randomUUID()}`;
    const ctx = { ...context({ streaming: { block: { enabled: true } } }), runId };
    let state = await feishuProgress(
      route,
      { type: "text-delta", text: "First para", soFar: "First para" },
      {},
      ctx,
    );
    expect(state.cardId).toBeUndefined();
    state = await feishuProgress(
      route,
      { type: "text-delta", text: "graph.\n\nSecond", soFar: "First paragraph.\n\nSecond" },
      state,
      ctx,
    );
    expect((await feishuMessages(route.to)).map((m) => m.text)).toEqual(["First paragraph."]);
  });
});

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OutboundMessage, SendContext } from "../../../functions/channels/adapter.ts";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { LineAccount } from "../../../functions/channels/line/config.ts";
import { lineChannel } from "../../../functions/channels/line/index.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { reconcileLineMessage, sendLineMessage } from "../../../functions/channels/line/send.ts";
import { lineProgress } from "../../../functions/channels/line/progress.ts";
import { fetchLineContent } from "../../../functions/channels/line/content.ts";
import {
  fakeLine,
  issueReplyToken,
  lineCalls,
  lineId,
  lineMessages,
  scriptLine,
  serveContent,
  uniqueToken,
} from "./helpers.ts";

/** The LINE sender against the fake Messaging API, one chunk at a time as the outbox hands them over. */

const base = { env: env as unknown as Record<string, unknown>, config: configFromEnv(env) };
/** What the pipeline hands the channel for one account (channel-account.ts). */
const ctxFor = (accountId: string): SendContext<LineAccount> =>
  contextFor(lineChannel, base, accountId);
const ctx = ctxFor("default");

function route(to: string, extra: Record<string, string> = {}, accountId = "default"): ReplyRoute {
  return {
    channel: "line",
    accountId,
    to,
    extra: { chatType: to.startsWith("U") ? "direct" : "group", ...extra },
  };
}
function chunk(to: string, text: string, fields: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: `run:${uniqueToken("r")}:0`,
    route: route(to),
    text,
    chunkIndex: 0,
    chunkCount: 1,
    queuedAt: Date.now(),
    ...fields,
  };
}

describe("LINE sending", () => {
  it("answers with the reply token while it is fresh, as plain text", async () => {
    const user = lineId("U");
    const token = uniqueToken();
    await issueReplyToken(token, user);
    const result = await sendLineMessage(
      chunk(user, "**Hi** there", {
        route: route(user, { replyToken: token, replyTokenAt: String(Date.now()) }),
      }),
      ctx,
    );
    expect(result.ok).toBe(true);
    expect(await lineMessages(user)).toMatchObject([{ text: "Hi there", via: "reply" }]);
    const [call] = await lineCalls("reply", user);
    expect(call!.token).toBe("…ault"); // the default account's token, from LINE_CHANNEL_ACCESS_TOKEN
    expect(call!.retryKey).toBeUndefined(); // LINE refuses a retry key on the reply API
  });

  it("pushes instead when the token is too old, already used, or the chunk is not the first", async () => {
    const user = lineId("U");
    const old = uniqueToken();
    await issueReplyToken(old, user);
    await sendLineMessage(
      chunk(user, "late", {
        route: route(user, { replyToken: old, replyTokenAt: String(Date.now() - 55_000) }),
      }),
      ctx,
    );
    expect(await lineCalls("reply", user)).toHaveLength(0); // past replyTokenMaxAgeSeconds (50): not even tried

    const used = uniqueToken();
    await issueReplyToken(used, user);
    const fresh = { replyToken: used, replyTokenAt: String(Date.now()) };
    expect(
      (await sendLineMessage(chunk(user, "first", { route: route(user, fresh) }), ctx)).ok,
    ).toBe(true);
    expect(
      (await sendLineMessage(chunk(user, "a notice after it", { route: route(user, fresh) }), ctx))
        .ok,
    ).toBe(true);
    expect(
      (
        await sendLineMessage(
          chunk(user, "second chunk", { route: route(user, fresh), chunkIndex: 1, chunkCount: 2 }),
          ctx,
        )
      ).ok,
    ).toBe(true);
    expect((await lineMessages(user)).map((m) => [m.text, m.via])).toEqual([
      ["late", "push"],
      ["first", "reply"],
      ["a notice after it", "push"], // LINE said "Invalid reply token": nothing sent, pushed instead
      ["second chunk", "push"],
    ]);
    expect((await lineCalls("reply", user)).map((c) => c.status)).toEqual([200, 400]);
  });

  it("sends a chunk again with the same X-Line-Retry-Key, which LINE drops as already accepted", async () => {
    const user = lineId("U");
    const message = chunk(user, "once");
    expect(await sendLineMessage(message, ctx)).toMatchObject({ ok: true });
    expect(await sendLineMessage(message, ctx)).toMatchObject({ ok: true });
    expect(await lineMessages(user)).toHaveLength(1);
    const pushes = await lineCalls("push", user);
    expect(pushes.map((c) => c.status)).toEqual([200, 409]);
    expect(pushes[0]!.retryKey).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(pushes[1]!.retryKey).toBe(pushes[0]!.retryKey);
    // Another chunk gets another key.
    await sendLineMessage(chunk(user, "twice"), ctx);
    expect((await lineCalls("push", user))[2]!.retryKey).not.toBe(pushes[0]!.retryKey);
  });

  it("classifies LINE's refusals for the outbox", async () => {
    const user = lineId("U");
    await scriptLine({ api: "push", to: user, status: 429, retryAfter: 3 });
    expect(await sendLineMessage(chunk(user, "x"), ctx)).toMatchObject({
      ok: false,
      retryable: true,
      retryAfterMs: 3000,
    });
    await scriptLine({
      api: "push",
      to: user,
      status: 429,
      message: "You have reached your monthly limit.",
    });
    expect(await sendLineMessage(chunk(user, "x"), ctx)).toMatchObject({
      ok: false,
      retryable: false,
    });
    await scriptLine({ api: "push", to: user, status: 500 });
    expect(await sendLineMessage(chunk(user, "x"), ctx)).toMatchObject({
      ok: false,
      retryable: true,
    }); // the retry key makes a repeat safe
    await scriptLine({
      api: "push",
      to: user,
      status: 400,
      message: "The property, 'to', in the request body is invalid",
    });
    expect(await sendLineMessage(chunk(user, "x"), ctx)).toMatchObject({
      ok: false,
      retryable: false,
    });
    // A reply that failed with 5xx may still have gone out, and cannot be repeated: outcome unknown.
    const token = uniqueToken();
    await issueReplyToken(token, user);
    await scriptLine({ api: "reply", to: user, status: 500 });
    expect(
      await sendLineMessage(
        chunk(user, "x", {
          route: route(user, { replyToken: token, replyTokenAt: String(Date.now()) }),
        }),
        ctx,
      ),
    ).toMatchObject({ ok: false, outcomeUnknown: true });
    // A bad token is final.
    const badCtx: SendContext<LineAccount> = {
      ...ctx,
      env: { ...ctx.env, LINE_CHANNEL_ACCESS_TOKEN: "revoked" },
    };
    expect(await sendLineMessage(chunk(user, "x"), badCtx)).toMatchObject({
      ok: false,
      retryable: false,
    });
  });

  it("a push that got no answer is simply retried (its retry key makes the repeat safe); a reply that got none is an unknown outcome", async () => {
    const user = lineId("U");
    await scriptLine({ api: "push", to: user, dropConnection: true });
    const message = chunk(user, "landed, answer lost");
    expect(await sendLineMessage(message, ctx)).toMatchObject({ ok: false, retryable: true });
    expect(await sendLineMessage(message, ctx)).toMatchObject({ ok: true });
    expect(await lineMessages(user)).toHaveLength(1);
    const token = uniqueToken();
    await issueReplyToken(token, user);
    await scriptLine({ api: "reply", to: user, dropConnection: true });
    expect(
      await sendLineMessage(
        chunk(user, "maybe", {
          route: route(user, { replyToken: token, replyTokenAt: String(Date.now()) }),
        }),
        ctx,
      ),
    ).toMatchObject({ ok: false, outcomeUnknown: true });
  });

  it("reconcile: a push may be repeated (retry key), a reply-token send may not", async () => {
    const user = lineId("U");
    const replyRoute = route(user, { replyToken: "t", replyTokenAt: String(Date.now()) });
    expect(await reconcileLineMessage(chunk(user, "x", { route: replyRoute }), ctx)).toMatchObject({
      outcome: "untraceable",
      idempotent: false,
    });
    expect(
      await reconcileLineMessage(chunk(user, "x", { route: replyRoute, chunkIndex: 1 }), ctx),
    ).toMatchObject({ outcome: "untraceable", idempotent: true });
    expect(await reconcileLineMessage(chunk(user, "x"), ctx)).toMatchObject({
      outcome: "untraceable",
      idempotent: true,
    });
  });

  it("puts a long chunk in one call of at most five messages of at most 5000 characters", async () => {
    const user = lineId("U");
    const text = Array.from({ length: 5 }, (_, i) => `${"abcde".repeat(900)} ${i}`).join("\n\n");
    expect((await sendLineMessage(chunk(user, text), ctx)).ok).toBe(true);
    const [push] = await lineCalls("push", user);
    const messages = push!.body.messages as Array<{ text: string }>;
    expect(messages.length).toBeLessThanOrEqual(5);
    expect(messages.every((m) => m.text.length <= 5000)).toBe(true);
    expect(
      messages
        .map((m) => m.text)
        .join("")
        .replace(/\s/g, ""),
    ).toBe(text.replace(/\s/g, ""));
  });

  it("uses each account's own access token", async () => {
    const user = lineId("U");
    expect(
      (
        await sendLineMessage(
          { ...chunk(user, "from biz"), route: route(user, {}, "biz") },
          ctxFor("biz"),
        )
      ).ok,
    ).toBe(true);
    expect((await lineCalls("push", user))[0]!.token).toBe("…-biz");
  });

  it("shows the loading animation in 1:1 chats only, and renews it only once it ran out", async () => {
    const user = lineId("U");
    const state = await lineProgress(route(user), { type: "run-started" }, {}, ctx);
    expect(Number(state.loadingUntil)).toBeGreaterThan(Date.now());
    expect(
      await lineProgress(route(user), { type: "tool", name: "x", phase: "start" }, state, ctx),
    ).toEqual(state);
    const [call] = await lineCalls("loading", user);
    expect(call!.body).toEqual({ chatId: user, loadingSeconds: 20 });
    expect(await lineCalls("loading", user)).toHaveLength(1);
    const group = lineId("C");
    expect(await lineProgress(route(group), { type: "run-started" }, {}, ctx)).toEqual({});
    expect(await lineCalls("loading", group)).toHaveLength(0);
    // A refusal is swallowed: progress is best effort.
    await scriptLine({ api: "loading", to: user, status: 500 });
    expect(await lineProgress(route(user), { type: "accepted" }, {}, ctx)).toEqual({});
  });

  it("downloads a text file a user sent from the content API, within mediaMaxMb, never elsewhere", async () => {
    const user = lineId("U");
    const id = uniqueToken("m");
    await serveContent(id, { content: "line one\nline two" });
    const url = `${fakeLine()}/v2/bot/message/${id}/content`;
    expect(await fetchLineContent({ name: "notes.txt", url }, route(user), ctx)).toEqual({
      text: "line one\nline two",
    });
    const big = uniqueToken("m");
    await serveContent(big, { bytes: 2 * 1024 * 1024 });
    expect(
      await fetchLineContent(
        { name: "big.txt", url: `${fakeLine()}/v2/bot/message/${big}/content` },
        route(user, {}, "biz"),
        ctxFor("biz"),
      ),
    ).toMatchObject({ skipped: expect.stringContaining("mediaMaxMb") });
    expect(
      await fetchLineContent(
        { name: "x.txt", url: `https://attacker.test/v2/bot/message/${id}/content` },
        route(user),
        ctx,
      ),
    ).toMatchObject({ skipped: expect.stringContaining("refusing") });
    expect(
      await fetchLineContent(
        { name: "x.txt", url: `${fakeLine()}/v2/bot/message/${id}/other` },
        route(user),
        ctx,
      ),
    ).toMatchObject({ skipped: expect.stringContaining("refusing") });
    expect(
      (await lineCalls("content")).every((c) => c.token === "…ault" || c.token === "…-biz"),
    ).toBe(true);
  });
});

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { withDb } from "../../../functions/db/client.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  TEST_LINE,
  eventId,
  forgetPairingWhenDone,
  issueReplyToken,
  lineCalls,
  lineEvent,
  lineId,
  lineMessages,
  newScenario,
  postLine,
  scriptLine,
  scriptModel,
  settle,
  textMessage,
  uniqueToken,
  waitFor,
  webhookBody,
} from "./helpers.ts";

/**
 * Signed LINE webhook → Worker → durable accept → agent run against the fake model → reply through
 * the fake LINE API. The default account is what a user gets (pairing DMs, allowlisted groups with
 * nothing listed); "biz" is the convenience account (open DMs, a group map).
 */

const testEnv = env as unknown as Env;
const BIZ = { path: "/line/biz", secret: TEST_LINE.bizChannelSecret };

function toolThenAnswer(answer: string) {
  return [
    { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
    { type: "text", text: answer },
  ];
}

/** Waits until `to` shows exactly `texts`, then checks it stays so. */
async function settlesTo(to: string, texts: string[]) {
  await waitFor(async () =>
    JSON.stringify((await lineMessages(to)).map((m) => m.text)) === JSON.stringify(texts)
      ? true
      : undefined,
  ).catch(async () => {
    throw new Error(
      `LINE shows ${JSON.stringify((await lineMessages(to)).map((m) => m.text))} in ${to}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await lineMessages(to);
  expect(messages.map((m) => m.text)).toEqual(texts);
  return messages;
}

async function approve(senderId: string, accountId = "default") {
  await withDb(testEnv, (db) =>
    postgresAccessStore(db).addApprovedSender(
      { channel: "line", accountId, senderId, source: "admin" },
      Date.now(),
    ),
  );
}

describe("LINE end to end", () => {
  it("with the defaults: a stranger gets one pairing code by reply token; once approved, one answer per event even when delivered three times", async () => {
    const user = lineId("U");
    forgetPairingWhenDone(user);
    const firstToken = uniqueToken();
    await issueReplyToken(firstToken, user);
    const stranger = newScenario("line-stranger");
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "user", userId: user },
          replyToken: firstToken,
          message: textMessage(`hello [scenario:${stranger}]`),
        }),
      ]),
    );
    const code = await waitFor(async () => (await lineMessages(user))[0]);
    expect(code.text).toContain("Pairing code:");
    expect(code.via).toBe("reply");
    expect(await recorded(stranger)).toEqual([]);

    await approve(user);
    const scenario = newScenario("line-dm");
    await scriptModel(scenario, toolThenAnswer("All **good** here."));
    const token = uniqueToken();
    await issueReplyToken(token, user);
    const id = eventId();
    // A redelivery carries the same event id and the same message.
    const message = textMessage(`status please [scenario:${scenario}]`);
    const event = (isRedelivery: boolean) =>
      lineEvent({
        source: { type: "user", userId: user },
        webhookEventId: id,
        replyToken: token,
        isRedelivery,
        message,
      });
    // A redelivery comes only after the first delivery's answer was lost, so here the first copy is
    // stored first and the two redeliveries (without a reply token: a redelivered event's is not
    // used) race each other. Sent all three at once, a redelivery could win: the answer, a push.
    const first = await postLine(webhookBody([event(false)]));
    const deliveries = [
      first,
      ...(await Promise.all([
        postLine(webhookBody([event(true)])),
        postLine(webhookBody([event(true)])),
      ])),
    ];
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);

    const messages = await settlesTo(user, [code.text, "All good here."]);
    expect(messages[1]!.via).toBe("reply");
    expect((await lineCalls("loading", user)).length).toBeGreaterThan(0); // 1:1: the loading animation showed
  });

  it("waits out a 429 on the first send and still answers once", async () => {
    const user = lineId("U");
    const scenario = newScenario("line-429");
    await scriptModel(scenario, [{ type: "text", text: "After the rate limit." }]);
    const token = uniqueToken();
    await issueReplyToken(token, user);
    await scriptLine({ api: "reply", to: user, status: 429, retryAfter: 1 });
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "user", userId: user },
          replyToken: token,
          message: textMessage(`hi [scenario:${scenario}]`),
        }),
      ]),
      BIZ,
    );
    await settlesTo(user, ["After the rate limit."]);
    expect((await lineCalls("reply", user)).map((c) => c.status)).toEqual([429, 200]);
  });

  it("pushes, with a retry key, when the reply token has expired; a lost push answer does not send twice", async () => {
    const user = lineId("U");
    const scenario = newScenario("line-expired");
    await scriptModel(scenario, [{ type: "text", text: "Pushed answer." }]);
    const token = uniqueToken();
    await issueReplyToken(token, user, 1); // LINE lets it lapse at once
    await scriptLine({ api: "push", to: user, dropConnection: true });
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "user", userId: user },
          replyToken: token,
          message: textMessage(`hi [scenario:${scenario}]`),
        }),
      ]),
      BIZ,
    );
    const [message] = await settlesTo(user, ["Pushed answer."]);
    expect(message!.via).toBe("push");
    const pushes = await lineCalls("push", user);
    expect(pushes.length).toBeGreaterThanOrEqual(2); // the dropped one, then the repeat LINE refused as already accepted
    expect(pushes.at(-1)!.status).toBe(409);
    expect(new Set(pushes.map((c) => c.retryKey)).size).toBe(1);
  });

  it("a reply whose answer was lost is never repeated (LINE cannot be asked, and a used token would turn the repeat into a push): one answer, one notice", async () => {
    const user = lineId("U");
    const scenario = newScenario("line-lost-reply");
    await scriptModel(scenario, [{ type: "text", text: "Only once." }]);
    const token = uniqueToken();
    await issueReplyToken(token, user);
    await scriptLine({ api: "reply", to: user, dropConnection: true });
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "user", userId: user },
          replyToken: token,
          message: textMessage(`hi [scenario:${scenario}]`),
        }),
      ]),
      BIZ,
    );
    await waitFor(async () => ((await lineMessages(user)).length >= 2 ? true : undefined));
    await settle(1500);
    const texts = (await lineMessages(user)).map((m) => m.text);
    expect(texts.filter((text) => text === "Only once.")).toHaveLength(1);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toContain("may not have arrived");
  });

  it("in groups: answers when mentioned (isSelf) or where no mention is required, in that group", async () => {
    const sender = lineId("U");
    const quiet = newScenario("line-quiet");
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: TEST_LINE.groupGated, userId: sender },
          message: textMessage(`just chatting [scenario:${quiet}]`),
        }),
      ]),
      BIZ,
    );
    const asked = newScenario("line-asked");
    await scriptModel(asked, [{ type: "text", text: "You called?" }]);
    const before = (await lineMessages(TEST_LINE.groupGated)).length;
    const text = `@edgeclaw help [scenario:${asked}]`;
    const mention = {
      mentionees: [
        { index: 0, length: 9, type: "user", userId: TEST_LINE.botUserId, isSelf: true },
      ],
    };
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: TEST_LINE.groupGated, userId: sender },
          message: textMessage(text, { mention }),
        }),
      ]),
      BIZ,
    );
    await waitFor(async () =>
      (await lineMessages(TEST_LINE.groupGated)).some((m) => m.text === "You called?")
        ? true
        : undefined,
    );
    expect(await recorded(quiet)).toEqual([]);
    expect((await lineMessages(TEST_LINE.groupGated)).length).toBe(before + 1);

    const open = newScenario("line-open-group");
    await scriptModel(open, [{ type: "text", text: "No mention needed." }]);
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: TEST_LINE.groupOpen, userId: sender },
          message: textMessage(`anyone? [scenario:${open}]`),
        }),
      ]),
      BIZ,
    );
    await waitFor(async () =>
      (await lineMessages(TEST_LINE.groupOpen)).some((m) => m.text === "No mention needed.")
        ? true
        : undefined,
    );
    expect(await lineCalls("loading", TEST_LINE.groupOpen)).toEqual([]); // no loading animation outside 1:1 chats
  });

  it("with the defaults, a group is ignored even when the bot is mentioned; allowFrom for DMs does not admit group senders", async () => {
    const group = lineId("C");
    const sender = lineId("U");
    await approve(sender); // a paired DM sender
    const scenario = newScenario("line-default-group");
    const mention = {
      mentionees: [
        { index: 0, length: 4, type: "user", userId: TEST_LINE.botUserId, isSelf: true },
      ],
    };
    const res = await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: group, userId: sender },
          message: textMessage(`@bot hi [scenario:${scenario}]`, { mention }),
        }),
      ]),
    );
    expect(res.status).toBe(200);
    await settle(2500);
    expect(await recorded(scenario)).toEqual([]);
    expect(await lineMessages(group)).toEqual([]);
  });

  it("a group sender allowlist admits only its members", async () => {
    const stranger = lineId("U");
    const outsider = newScenario("line-outsider");
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: TEST_LINE.groupMembers, userId: stranger },
          message: textMessage(`let me in [scenario:${outsider}]`),
        }),
      ]),
      BIZ,
    );
    const member = newScenario("line-member");
    await scriptModel(member, [{ type: "text", text: "Hello member." }]);
    await postLine(
      webhookBody([
        lineEvent({
          source: { type: "group", groupId: TEST_LINE.groupMembers, userId: TEST_LINE.member },
          message: textMessage(`hi [scenario:${member}]`),
        }),
      ]),
      BIZ,
    );
    await waitFor(async () =>
      (await lineMessages(TEST_LINE.groupMembers)).some((m) => m.text === "Hello member.")
        ? true
        : undefined,
    );
    expect(await recorded(outsider)).toEqual([]);
  });
});

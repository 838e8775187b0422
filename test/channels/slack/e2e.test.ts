import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  BOT_USER,
  messageEvent,
  newScenario,
  OPS_SIGNING_SECRET,
  postSigned,
  scriptModel,
  scriptSlack,
  slackCalls,
  slackMessages,
  forgetPairingWhenDone,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * Signed Slack event → Worker → durable accept in the SessionDO → agent run against the fake model
 * (one tool call, then the answer) → reply through the fake Slack Web API. With the settings a user
 * gets: streaming.mode "partial" (a preview edited into the answer, or a native stream in threads).
 * The "plain" account (streaming off) covers the same crash path without a preview.
 */

const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
const recordedCount = async (scenario: string) => (await recorded(scenario)).length;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function repliesIn(channel: string, minimum = 1) {
  return waitFor(async () => {
    const messages = (await slackMessages(channel)).filter((m) => !m.deleted);
    return messages.length >= minimum ? messages : undefined;
  }, 20_000);
}

/** Waits until the channel shows exactly `texts` (previews edited into answers), then checks it stays so. */
async function settlesTo(channel: string, texts: string[]) {
  const visible = async () => (await slackMessages(channel)).filter((m) => !m.deleted);
  await waitFor(
    async () =>
      JSON.stringify((await visible()).map((m) => m.text)) === JSON.stringify(texts)
        ? true
        : undefined,
    20_000,
  ).catch(async () => {
    throw new Error(
      `channel shows ${JSON.stringify((await visible()).map((m) => m.text))}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await visible();
  expect(messages.map((m) => m.text)).toEqual(texts);
  return messages;
}

function toolThenAnswer(answer: string) {
  return [
    { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
    { type: "text", text: answer },
  ];
}

describe("Slack end to end", () => {
  it("answers a DM after one tool call, exactly once, even when Slack delivers the event three times", async () => {
    const scenario = newScenario("slack-dm");
    await scriptModel(scenario, toolThenAnswer("All **good** here."));
    const channel = uniqueId("D");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      text: `status please [scenario:${scenario}]`,
      ts: nowTs(),
    });
    const deliveries = await Promise.all([postSigned(body), postSigned(body), postSigned(body)]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);

    const [reply] = await settlesTo(channel, ["All *good* here."]);
    expect(reply!.thread_ts).toBeUndefined(); // a top-level DM with replyToMode off stays top-level
    expect(await slackMessages(channel)).toHaveLength(1);
    const posts = await slackCalls("chat.postMessage", channel);
    expect(posts).toHaveLength(1); // the preview, edited into the answer
    expect(posts[0]!.args.unfurl_links).toBe("false");
    expect(posts[0]!.token).toBe("…ault"); // the default account's bot token
  });

  it("waits out a 429 on the first post and still posts once", async () => {
    const scenario = newScenario("slack-429");
    await scriptModel(scenario, toolThenAnswer("Posted after the rate limit."));
    const channel = uniqueId("D");
    // The preview post and the answer's first post are refused.
    await scriptSlack({
      method: "chat.postMessage",
      channel,
      status: 429,
      retryAfter: 1,
      times: 2,
    });
    const res = await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `hi [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    expect(res.status).toBe(200);

    await settlesTo(channel, ["Posted after the rate limit."]);
    const posts = await slackCalls("chat.postMessage", channel);
    expect(posts).toHaveLength(3); // two refused, the one that landed
    expect(await slackMessages(channel)).toHaveLength(1);
  });

  it("does not post twice when the preview landed but its answer was lost", async () => {
    const scenario = newScenario("slack-lost");
    await scriptModel(scenario, [{ type: "text", text: "Only once." }]);
    const channel = uniqueId("D");
    await scriptSlack({ method: "chat.postMessage", channel, dropConnection: true });
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `hi [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    await settlesTo(channel, ["Only once."]);
    expect(await slackCalls("chat.postMessage", channel)).toHaveLength(1);
    expect((await slackCalls("conversations.history", channel)).length).toBeGreaterThan(0);
  });

  it("with streaming off, does not post twice when the answer landed but its response was lost", async () => {
    const scenario = newScenario("slack-lost-plain");
    await scriptModel(scenario, [{ type: "text", text: "Only once, plainly." }]);
    const channel = uniqueId("D");
    await scriptSlack({ method: "chat.postMessage", channel, dropConnection: true });
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `hi [scenario:${scenario}]`,
        ts: nowTs(),
      }),
      { path: "/slack/plain/events" },
    );
    await waitFor(
      async () =>
        (await slackCalls("conversations.history", channel)).length > 0 ? true : undefined,
      20_000,
    );
    await settlesTo(channel, ["Only once, plainly."]);
    expect(await slackCalls("chat.postMessage", channel)).toHaveLength(1);
    expect(await slackCalls("chat.update", channel)).toHaveLength(0);
  });

  it("replies in the thread of a channel message when replyToMode is all", async () => {
    const scenario = newScenario("slack-thread");
    await scriptModel(scenario, toolThenAnswer("Threaded answer."));
    const ts = nowTs();
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: "C0OPEN",
        channelType: "channel",
        text: `question [scenario:${scenario}]`,
        ts,
      }),
    );
    const reply = await waitFor(
      async () =>
        (await slackMessages("C0OPEN")).find(
          (m) => m.thread_ts === ts && m.text === "Threaded answer.",
        ),
      20_000,
    );
    expect(reply.thread_ts).toBe(ts);
  });

  it("answers in a mention-gated channel only when mentioned", async () => {
    const channel = uniqueId("C");
    const quiet = newScenario("slack-quiet");
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `just chatting [scenario:${quiet}]`,
        ts: nowTs(),
      }),
    );
    const asked = newScenario("slack-asked");
    await scriptModel(asked, [{ type: "text", text: "You called?" }]);
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `<@${BOT_USER}> help [scenario:${asked}]`,
        ts: nowTs(),
      }),
    );
    await settlesTo(channel, ["You called?"]);
  });

  it("keeps answering in a thread it took part in, without a new mention", async () => {
    const channel = uniqueId("C");
    const first = newScenario("slack-thread-1");
    await scriptModel(first, [{ type: "text", text: "On it." }]);
    // Someone's thread; the agent is mentioned in a reply there and answers in the thread.
    const rootTs = nowTs();
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `<@${BOT_USER}> start [scenario:${first}]`,
        ts: nowTs(),
        threadTs: rootTs,
      }),
    );
    await settlesTo(channel, ["On it."]);
    const followUp = newScenario("slack-thread-2");
    await scriptModel(followUp, [{ type: "text", text: "Still here." }]);
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `and then? [scenario:${followUp}]`,
        ts: nowTs(),
        threadTs: rootTs,
      }),
    );
    await settlesTo(channel, ["On it.", "Still here."]);
    // Outside that thread, an unmentioned message is still only context.
    const elsewhere = newScenario("slack-thread-3");
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `unrelated [scenario:${elsewhere}]`,
        ts: nowTs(),
      }),
    );
    await settle(1000);
    expect(await recordedCount(elsewhere)).toBe(0);
  });

  it("answers a follow-up in the thread it opened under a mention, without a new mention", async () => {
    // C0THREADS: mention required, every reply threaded under the message it answers.
    const channel = "C0THREADS";
    const first = newScenario("slack-root");
    await scriptModel(first, [{ type: "text", text: "Replying in a thread." }]);
    const rootTs = nowTs();
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `<@${BOT_USER}> kick off [scenario:${first}]`,
        ts: rootTs,
      }),
    );
    await waitFor(
      async () =>
        (await slackMessages(channel)).some((m) => m.thread_ts === rootTs) ? true : undefined,
      20_000,
    );
    const followUp = newScenario("slack-root-follow");
    await scriptModel(followUp, [{ type: "text", text: "Following up." }]);
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `thanks, one more thing [scenario:${followUp}]`,
        ts: nowTs(),
        threadTs: rootTs,
      }),
    );
    await waitFor(
      async () =>
        (await slackMessages(channel)).some(
          (m) => m.text === "Following up." && m.thread_ts === rootTs,
        )
          ? true
          : undefined,
      20_000,
    );
  });

  it("answers an unknown DM sender on a pairing account with a pairing code, once", async () => {
    const channel = uniqueId("D");
    const user = uniqueId("U");
    forgetPairingWhenDone(user);
    const first = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      user,
      text: "hello?",
      ts: nowTs(),
    });
    const res = await postSigned(first, { path: "/slack/ops/events", secret: OPS_SIGNING_SECRET });
    expect(res.status).toBe(200);
    const [notice] = await repliesIn(channel);
    expect(notice!.text).toContain("Pairing code:");
    expect(notice!.text).toContain(user);
    const posts = await slackCalls("chat.postMessage", channel);
    expect(posts[0]!.token).toBe("…-ops");

    const second = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      user,
      text: "hello again",
      ts: nowTs(),
    });
    await postSigned(second, { path: "/slack/ops/events", secret: OPS_SIGNING_SECRET });
    await settle(1500);
    expect(await slackMessages(channel)).toHaveLength(1);
  });
});

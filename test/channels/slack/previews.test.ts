import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../durable-objects/helpers.ts";
import {
  BOT_USER,
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  scriptSlack,
  slackCalls,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * End to end with the default streaming mode ("partial"): whatever way a run ends — an answer, a
 * silent NO_REPLY, /stop, a failure, or a kill between posting the preview and recording it — the
 * user ends up seeing exactly the final message (or nothing), never a stray preview beside it.
 */

const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const visible = async (channel: string, threadTs?: string) =>
  (await slackMessages(channel)).filter(
    (m) => !m.deleted && (threadTs === undefined || m.thread_ts === threadTs),
  );

async function settlesTo(channel: string, texts: string[], threadTs?: string) {
  const shown = async () => (await visible(channel, threadTs)).map((m) => m.text);
  await waitFor(
    async () => (JSON.stringify(await shown()) === JSON.stringify(texts) ? true : undefined),
    20_000,
  ).catch(async () => {
    throw new Error(
      `channel shows ${JSON.stringify(await shown())}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  expect(await shown()).toEqual(texts);
}

/** Streams a first thought, calls a tool, then answers NO_REPLY: the preview showed text, the run says nothing. */
function thinkThenSilent() {
  return [
    {
      type: "tool_calls",
      text: "Let me check that.",
      calls: [{ name: "session_status", arguments: {} }],
    },
    { type: "text", text: "NO_REPLY", chunks: ["NO", "_REP", "LY"], chunkDelayMs: 100 },
  ];
}

describe("Slack previews (streaming.mode partial)", () => {
  it("removes the preview when the run ends with NO_REPLY, and never shows the token", async () => {
    const scenario = newScenario("preview-silent");
    await scriptModel(scenario, thinkThenSilent());
    const channel = uniqueId("D");
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `anything? [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    await waitFor(
      async () => ((await slackCalls("chat.delete", channel)).length ? true : undefined),
      20_000,
    );
    await settlesTo(channel, []);
    const posted = await slackCalls("chat.postMessage", channel);
    expect(posted).toHaveLength(1); // the preview ("Let me check that.")
    expect(posted[0]!.args.metadata).toMatchObject({
      event_type: "edgeclaw_preview",
      event_payload: { run_id: expect.any(String) },
    });
    const shownTexts = [...posted, ...(await slackCalls("chat.update", channel))].map((call) =>
      String(call.args.text),
    );
    expect(shownTexts.some((text) => text.startsWith("Let me"))).toBe(true);
    expect(
      shownTexts.filter((text) => text.trim() && "NO_REPLY".startsWith(text.trim().toUpperCase())),
    ).toEqual([]);
  });

  it("stops and removes a native stream in a thread when the run ends with NO_REPLY", async () => {
    const scenario = newScenario("stream-silent");
    await scriptModel(scenario, thinkThenSilent());
    const ts = nowTs();
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: "C0OPEN",
        channelType: "channel",
        text: `thoughts? [scenario:${scenario}]`,
        ts,
      }),
    );
    const stream = await waitFor(
      async () =>
        (await slackCalls("chat.startStream", "C0OPEN")).find((call) => call.args.thread_ts === ts),
      20_000,
    );
    expect(stream).toBeTruthy();
    await waitFor(
      async () =>
        (await slackMessages("C0OPEN")).some((m) => m.thread_ts === ts && m.deleted)
          ? true
          : undefined,
      20_000,
    );
    await settlesTo("C0OPEN", [], ts);
    const streamed = (await slackMessages("C0OPEN")).find((m) => m.thread_ts === ts)!;
    expect(
      (await slackCalls("chat.stopStream", "C0OPEN")).some((call) => call.args.ts === streamed.ts),
    ).toBe(true);
  });

  it("removes the half-written preview of a run stopped with /stop", async () => {
    const scenario = newScenario("preview-stop");
    const pieces = [
      "Here is ",
      "a long ",
      "answer ",
      "that ",
      "takes ",
      "a while ",
      "to ",
      "write.",
    ];
    await scriptModel(scenario, [
      { type: "text", text: pieces.join(""), chunks: pieces, chunkDelayMs: 600 },
    ]);
    const channel = uniqueId("D");
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `explain [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    await waitFor(async () => ((await visible(channel)).length ? true : undefined), 20_000); // the preview is up
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: "/stop",
        ts: nowTs(),
      }),
    );
    await settlesTo(channel, ["⏹️ Stopped the current run."]);
  });

  it("turns the preview into the failure notice when the model fails mid-answer", async () => {
    const scenario = newScenario("preview-fail");
    await scriptModel(scenario, [
      {
        type: "stream_error",
        text: "Half an answ",
        errorType: "invalid_request_error",
        message: "broken",
        chunkDelayMs: 200,
      },
    ]);
    const channel = uniqueId("D");
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "im",
        text: `go [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    await waitFor(
      async () => ((await visible(channel)).some((m) => m.text.startsWith("⚠️")) ? true : undefined),
      20_000,
    );
    await settle(1500);
    const shown = await visible(channel);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.text).toMatch(/^⚠️/);
  });

  it("a kill between posting the preview and recording it leaves one message: the answer", async () => {
    const scenario = newScenario("preview-kill");
    const answer = "The full answer, after a crash.";
    const step = {
      type: "text",
      text: answer,
      chunks: ["The full answer,", " after a crash."],
      chunkDelayMs: 100,
    };
    await scriptModel(scenario, [step, step]);
    const channel = uniqueId("C");
    // The preview post reaches Slack, which takes its time answering; the object dies meanwhile.
    await scriptSlack({ method: "chat.postMessage", channel, delayMs: 1500 });
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel,
        channelType: "channel",
        text: `<@${BOT_USER}> explain [scenario:${scenario}]`,
        ts: nowTs(),
      }),
    );
    await waitFor(
      async () => ((await slackCalls("chat.postMessage", channel)).length ? true : undefined),
      20_000,
    );
    await abortAllDurableObjects();
    await waitFor(async () => ((await visible(channel)).length ? true : undefined), 5_000); // the preview landed, unrecorded

    await runDurableObjectAlarm(sessionStub(`agent:main:slack:channel:${channel.toLowerCase()}`));
    await settlesTo(channel, [answer]);
  });

  it("a kill between starting a native stream and recording it leaves one message in the thread: the answer", async () => {
    const scenario = newScenario("stream-kill");
    const answer = "Streamed answer that survived a crash.";
    const step = {
      type: "text",
      text: answer,
      chunks: ["Streamed answer", " that survived a crash."],
      chunkDelayMs: 100,
    };
    await scriptModel(scenario, [step, step]);
    const ts = nowTs();
    await scriptSlack({ method: "chat.startStream", channel: "C0OPEN", delayMs: 1500 });
    await postSigned(
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: "C0OPEN",
        channelType: "channel",
        text: `stream it [scenario:${scenario}]`,
        ts,
      }),
    );
    await waitFor(
      async () =>
        (await slackCalls("chat.startStream", "C0OPEN")).find((call) => call.args.thread_ts === ts),
      20_000,
    );
    await abortAllDurableObjects();
    await waitFor(async () => ((await visible("C0OPEN", ts)).length ? true : undefined), 5_000);

    await runDurableObjectAlarm(sessionStub("agent:main:slack:channel:c0open"));
    await settlesTo("C0OPEN", [answer], ts);
  });
});

import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { newScenario } from "../agent/model-helpers.ts";
import { slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import { approveOpsSenders, modelRequests, opsDmEvent, scriptModel, sessionStub, waitFor } from "./helpers.ts";

/**
 * The object dies at some point between two steps — after accept and before triage, during triage,
 * mid-run while a preview streams, between a post and its record — with the defaults a user gets
 * (the "ops" account: streaming partial, queue mode steer). Whatever the moment, the person sees at
 * most one reply to their message: the answer, once, and no half-written preview beside it.
 */

const SENDER = uniqueId("UCRASH");
beforeAll(() => approveOpsSenders(SENDER));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ANSWER = "The one and only answer to your question.";

async function visible(channel: string): Promise<string[]> {
  return (await slackMessages(channel)).filter((message) => !message.deleted).map((message) => message.text);
}

/** Wakes the object the way its stored alarm would (it is not waited for after an abort). */
async function wakeUntil(key: string, done: () => Promise<boolean>): Promise<void> {
  await waitFor(
    async () => {
      if (await done()) return true;
      await runDurableObjectAlarm(sessionStub(key)).catch(() => false);
      return false;
    },
    40_000,
    "the answer after the crash",
  );
}

async function crashAfter(delayMs: number): Promise<{ channel: string; scenario: string; key: string }> {
  const key = `agent:main:crash-${delayMs}-${crypto.randomUUID()}`;
  const channel = uniqueId("D");
  const scenario = newScenario(`crash-${delayMs}`);
  // Streamed slowly enough that a preview is posted and edited; every (re)try answers the same.
  const step = { type: "text", text: ANSWER, chunks: ["The one and only ", "answer to ", "your question."], chunkDelayMs: 500 };
  await scriptModel(scenario, [step, step, step, step]);
  expect(await sessionStub(key).accept(opsDmEvent(key, SENDER, channel, `what is it? [scenario:${scenario}]`))).toEqual({ status: "accepted" });
  await sleep(delayMs);
  await abortAllDurableObjects();
  await wakeUntil(key, async () => (await visible(channel)).includes(ANSWER) && (await sessionStub(key).history()).some((entry) => entry.text === ANSWER));
  // Let any retry, reconcile or late preview edit land before counting.
  await sleep(2_500);
  await runDurableObjectAlarm(sessionStub(key)).catch(() => false);
  await sleep(500);
  return { channel, scenario, key };
}

describe("a crash between two steps, with the defaults (streaming partial, steer)", () => {
  // 0 ms: before triage; ~50–300 ms: triage and the first model bytes; later: mid-stream, previews
  // posted and edited, then the final edit and its record.
  it.each([0, 40, 400, 1300, 1900])("killed %i ms after accept: exactly one visible reply, the answer", async (delayMs) => {
    const { channel, scenario, key } = await crashAfter(delayMs);
    expect(await visible(channel)).toEqual([ANSWER]);
    // The session recorded one answer to the one message, however many model calls the crash cost.
    const answers = (await sessionStub(key).history()).filter((entry) => entry.role === "assistant");
    expect(answers.map((entry) => entry.text)).toEqual([ANSWER]);
    expect((await modelRequests(scenario)).length).toBeGreaterThanOrEqual(1);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { newScenario } from "../agent/model-helpers.ts";
import { slackCalls, slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import {
  approveOpsSenders,
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";

/**
 * Two people share one session (dmScope "main": every DM of an account lands in agent:main:main)
 * and write while each other's run is busy. Whatever the queue mode, each gets exactly one answer,
 * on their own DM, and nothing of the other's text shows up there — not in the answer, not in a
 * streamed preview. The "ops" account keeps the defaults a user gets (pairing, streaming partial,
 * queue mode steer); both senders are approved. Each test has a session key of its own, so another
 * test file's traffic in agent:main:main cannot interleave.
 */

const ALICE = uniqueId("UALICE");
const BOB = uniqueId("UBOB");

beforeAll(() => approveOpsSenders(ALICE, BOB));

async function dm(
  sessionKey: string,
  sender: string,
  channel: string,
  text: string,
): Promise<void> {
  expect(
    await sessionStub(sessionKey).accept(opsDmEvent(sessionKey, sender, channel, text)),
  ).toMatchObject({ status: "accepted" });
}

async function setQueue(sessionKey: string, args: string): Promise<void> {
  const events = await collectRunEvents(
    await sessionStub(sessionKey).chat(webchatEvent(sessionKey, `/queue ${args}`)),
  );
  expect(events.some((event) => event.type === "done")).toBe(true);
}

/** Every text the fake Slack saw go to `channel`: posts, preview edits, stream appends. */
async function everythingSentTo(channel: string): Promise<string> {
  return JSON.stringify((await slackCalls(undefined, channel)).map((call) => call.args));
}

async function visible(channel: string): Promise<string[]> {
  return (await slackMessages(channel))
    .filter((message) => !message.deleted)
    .map((message) => message.text);
}

async function answered(channel: string, text: string): Promise<void> {
  await waitFor(
    async () => (await visible(channel)).includes(text),
    25_000,
    `"${text}" in ${channel}`,
  );
}

/**
 * Alice writes; her run is busy (a slow model call that asks for a tool, so a steer boundary
 * follows); Bob writes meanwhile. Both must be answered once, each on their own DM.
 */
async function interleave(sessionKey: string) {
  const aliceDm = uniqueId("D");
  const bobDm = uniqueId("D");
  const alice = newScenario("two-users-alice");
  const bob = newScenario("two-users-bob");
  const aliceSecret = `alice-private-${crypto.randomUUID().slice(0, 8)}`;
  const bobSecret = `bob-private-${crypto.randomUUID().slice(0, 8)}`;
  await scriptModel(alice, [
    { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }], delayMs: 2_500 },
    { type: "text", text: "Answer for Alice." },
  ]);
  await scriptModel(bob, [{ type: "text", text: "Answer for Bob." }]);

  await dm(sessionKey, ALICE, aliceDm, `${aliceSecret} [scenario:${alice}]`);
  await waitFor(
    async () => (await modelRequests(alice)).length >= 1,
    20_000,
    "Alice's first model call",
  );
  await dm(sessionKey, BOB, bobDm, `${bobSecret} [scenario:${bob}]`);

  await answered(aliceDm, "Answer for Alice.");
  await answered(bobDm, "Answer for Bob.");
  await new Promise((resolve) => setTimeout(resolve, 1500));

  expect(await visible(aliceDm)).toEqual(["Answer for Alice."]);
  expect(await visible(bobDm)).toEqual(["Answer for Bob."]);
  // Nothing of one person's conversation went to the other's DM, previews included.
  expect(await everythingSentTo(aliceDm)).not.toContain(bobSecret);
  expect(await everythingSentTo(aliceDm)).not.toContain("Answer for Bob.");
  expect(await everythingSentTo(bobDm)).not.toContain("Answer for Alice.");
  // Alice's run never read Bob's message: it was not folded into her turn.
  for (const request of await modelRequests(alice))
    expect(JSON.stringify(request.body.messages)).not.toContain(bobSecret);
}

describe("two users in one session (dmScope main), messages interleaved during a run", () => {
  it("steer (the default): the other sender's message waits for a run of its own", async () => {
    await interleave(`agent:main:two-users-steer-${crypto.randomUUID()}`);
  });

  it("collect: only messages for the same reply route are merged", async () => {
    const key = `agent:main:two-users-collect-${crypto.randomUUID()}`;
    await setQueue(key, "collect debounce:50ms");
    await interleave(key);
  });

  it("followup: each message gets its own turn and its own route", async () => {
    const key = `agent:main:two-users-followup-${crypto.randomUUID()}`;
    await setQueue(key, "followup debounce:50ms");
    await interleave(key);
  });
});

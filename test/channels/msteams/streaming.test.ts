import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  activity,
  approve,
  messageTexts,
  newScenario,
  postTeams,
  scriptModel,
  scriptTeams,
  settle,
  teamsActivities,
  TEST_MSTEAMS,
  uniqueId,
  waitFor,
  type FakeActivity,
} from "./helpers.ts";

/**
 * Streaming replies with the defaults a user gets (`streaming.mode: "partial"`), against the fake
 * Bot Connector, which enforces Teams' streaming rules (personal chats only, ascending
 * streamSequence, cumulative text, one final per stream, 403 into an ended stream):
 * personal chats stream natively and end with one final message; channels show a posted message
 * edited in place; a lost final or edit is committed once, never twice.
 */

const ANSWER = "The quick brown fox jumps over the lazy dog, twice, and then rests.";
const PIECES = ["The quick brown ", "fox jumps over ", "the lazy dog, ", "twice, and then rests."];

async function settlesTo(conversation: string, texts: string[]) {
  await waitFor(
    async () =>
      JSON.stringify(await messageTexts(conversation)) === JSON.stringify(texts) ? true : undefined,
    25_000,
  ).catch(async () => {
    throw new Error(
      `Teams shows ${JSON.stringify(await messageTexts(conversation))} in ${conversation}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(2500);
  expect(await messageTexts(conversation)).toEqual(texts);
}

function streamUpdates(shown: FakeActivity[]) {
  return shown.filter((a) => a.type === "typing" && a.streamType === "streaming");
}

async function personalRun(name: string) {
  const user = uniqueId("aad-st");
  await approve(user);
  const conversation = `a:${uniqueId("dm")}`;
  const scenario = newScenario(name);
  await scriptModel(scenario, [{ type: "text", text: ANSWER, chunks: PIECES, chunkDelayMs: 700 }]);
  return {
    conversation,
    scenario,
    event: activity({
      kind: "personal",
      conversation,
      sender: user,
      text: `tell me [scenario:${scenario}]`,
    }),
  };
}

describe("Microsoft Teams streaming replies", () => {
  it("a personal chat streams the answer natively and ends the stream with one final message", async () => {
    const { conversation, event } = await personalRun("teams-stream");
    expect((await postTeams(event)).status).toBe(200);
    await settlesTo(conversation, [ANSWER]);
    const shown = await teamsActivities(conversation);
    const updates = streamUpdates(shown);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // Throttled: far fewer updates than deltas would give unthrottled, one stream, ascending sequence.
    expect(updates.length).toBeLessThanOrEqual(PIECES.length);
    const streamId = updates[0]!.streamId;
    expect(updates.every((u) => u.streamId === streamId)).toBe(true);
    expect(updates.map((u) => u.streamSequence)).toEqual(updates.map((_, i) => i + 1));
    const final = shown.filter((a) => a.type === "message");
    expect(final).toEqual([
      expect.objectContaining({ id: streamId, streamType: "final", text: ANSWER }),
    ]);
  });

  it("a stream final whose answer is lost is committed once: the retry finds the stream ended and counts it as shown", async () => {
    const { conversation, event } = await personalRun("teams-stream-lost");
    await scriptTeams({ api: "final", drop: true, conversation });
    expect((await postTeams(event)).status).toBe(200);
    await settlesTo(conversation, [ANSWER]);
    // No "may not have arrived" notice: the stream's end is checkable, unlike a plain post.
    expect((await teamsActivities(conversation)).filter((a) => a.type === "message")).toHaveLength(
      1,
    );
  });

  it("a stream Teams refuses (Stop pressed, not allowed) stops streaming and the answer still arrives once", async () => {
    const { conversation, event } = await personalRun("teams-stream-refused");
    await scriptTeams({ api: "stream", status: 403, conversation });
    expect((await postTeams(event)).status).toBe(200);
    await settlesTo(conversation, [ANSWER]);
    expect(streamUpdates(await teamsActivities(conversation))).toEqual([]);
  });

  it("a refused final falls back to one plain message", async () => {
    const { conversation, event } = await personalRun("teams-final-refused");
    await scriptTeams({ api: "final", status: 403, conversation });
    expect((await postTeams(event)).status).toBe(200);
    await settlesTo(conversation, [ANSWER]);
    const [message] = (await teamsActivities(conversation)).filter((a) => a.type === "message");
    expect(message!.streamType).toBeUndefined();
  });

  it("in a channel thread the answer is a posted message edited in place, committed exactly once", async () => {
    const root = uniqueId("1");
    const thread = `${TEST_MSTEAMS.openChannel};messageid=${root}`;
    const scenario = newScenario("teams-preview");
    await scriptModel(scenario, [
      { type: "text", text: ANSWER, chunks: PIECES, chunkDelayMs: 700 },
    ]);
    expect(
      (
        await postTeams(
          activity({
            kind: "channel",
            conversation: thread,
            sender: uniqueId("aad-p"),
            mentionBot: true,
            text: `go [scenario:${scenario}]`,
          }),
        )
      ).status,
    ).toBe(200);
    const mine = async () =>
      (await teamsActivities(TEST_MSTEAMS.openChannel)).filter(
        (a) => a.conversation === thread && a.type === "message",
      );
    await waitFor(
      async () => ((await mine()).some((a) => a.text === ANSWER) ? true : undefined),
      25_000,
    );
    await settle(2500);
    const messages = await mine();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toBe(ANSWER);
    expect(messages[0]!.updates).toBeGreaterThanOrEqual(1);
    expect(messages[0]!.streamId).toBeUndefined();
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("a lost final edit of a channel preview is sent again (an edit is safe to repeat): one message, no notice", async () => {
    const root = uniqueId("1");
    const thread = `${TEST_MSTEAMS.openChannel};messageid=${root}`;
    const scenario = newScenario("teams-preview-lost");
    await scriptModel(scenario, [
      { type: "text", text: ANSWER, chunks: PIECES, chunkDelayMs: 400 },
    ]);
    // Every edit's answer is lost: the preview stops being edited, and the final edit goes unanswered
    // once more before it lands.
    await scriptTeams({
      api: "update",
      drop: true,
      times: 2,
      conversation: TEST_MSTEAMS.openChannel,
    });
    expect(
      (
        await postTeams(
          activity({
            kind: "channel",
            conversation: thread,
            sender: uniqueId("aad-p"),
            mentionBot: true,
            text: `go [scenario:${scenario}]`,
          }),
        )
      ).status,
    ).toBe(200);
    const mine = async () =>
      (await teamsActivities(TEST_MSTEAMS.openChannel)).filter(
        (a) => a.conversation === thread && a.type === "message",
      );
    await waitFor(
      async () => ((await mine()).some((a) => a.text === ANSWER) ? true : undefined),
      25_000,
    );
    await settle(2500);
    const messages = await mine();
    expect(messages.map((m) => m.text)).toEqual([ANSWER]);
  });
});

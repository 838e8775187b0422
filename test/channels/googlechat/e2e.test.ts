import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { withDb } from "../../../functions/db/client.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  chatCalls,
  chatEvent,
  chatMessages,
  fakeGoogle,
  forgetPairingWhenDone,
  newScenario,
  postChat,
  scriptGoogle,
  scriptModel,
  settle,
  TEST_GOOGLECHAT,
  uniqueId,
  visibleTexts,
  waitFor,
} from "./helpers.ts";
import { TYPING_TEXT } from "../../../functions/channels/googlechat/progress.ts";

/**
 * Signed Google Chat event → Worker → durable accept → agent run against the fake model → reply
 * through the fake Chat API, with the defaults a user gets (pairing DMs, allowlisted spaces with
 * mentions required, typing placeholder on).
 */

const testEnv = env as unknown as Env;

async function approve(senderId: string) {
  await withDb(testEnv, (db) =>
    postgresAccessStore(db).addApprovedSender(
      { channel: "googlechat", accountId: "default", senderId, source: "admin" },
      Date.now(),
    ),
  );
}

/** Waits until the space shows exactly `texts` (deleted messages left out), then checks it stays so. */
async function settlesTo(space: string, texts: string[]) {
  await waitFor(
    async () =>
      JSON.stringify(await visibleTexts(space)) === JSON.stringify(texts) ? true : undefined,
    25_000,
  ).catch(async () => {
    throw new Error(
      `Google Chat shows ${JSON.stringify(await visibleTexts(space))} in ${space}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  expect(await visibleTexts(space)).toEqual(texts);
}

describe("Google Chat end to end", () => {
  it("a stranger's DM gets one pairing code and never reaches the model", async () => {
    const stranger = uniqueId("users/s");
    forgetPairingWhenDone(stranger);
    const space = `spaces/${uniqueId("D")}`;
    const scenario = newScenario("gchat-stranger");
    const response = await postChat(
      chatEvent({ space, dm: true, sender: stranger, text: `hello [scenario:${scenario}]` }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
    const code = await waitFor(async () => (await visibleTexts(space))[0]);
    expect(code).toContain("Pairing code:");
    await settle(1000);
    expect(await visibleTexts(space)).toHaveLength(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("an approved user gets one answer per event, delivered three times, with the typing placeholder turned into it", async () => {
    const user = uniqueId("users/u");
    await approve(user);
    const space = `spaces/${uniqueId("D")}`;
    const scenario = newScenario("gchat-dm");
    await scriptModel(scenario, [
      {
        type: "text",
        text: "All **good** here, see [docs](https://example.com).",
        chunks: ["All **good** here, ", "see [docs](https://example.com)."],
        chunkDelayMs: 300,
      },
    ]);
    const event = chatEvent({
      space,
      dm: true,
      sender: user,
      text: `status please [scenario:${scenario}]`,
    });
    const deliveries = await Promise.all([postChat(event), postChat(event), postChat(event)]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);
    await settlesTo(space, ["All *good* here, see <https://example.com|docs>."]);
    const [message] = await chatMessages(space);
    // The placeholder was posted first and edited into the answer: one message.
    expect(message!.edits).toBe(1);
    const creates = await chatCalls("create");
    expect(
      creates
        .filter((c) => c.path.startsWith(`/v1/${space}/messages`))
        .map((c) => (c.body as { text: string }).text),
    ).toEqual([TYPING_TEXT]);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("in a space: unmentioned posts stay silent; a mention is answered in the message's thread, once, even when the first send is rate-limited", async () => {
    const space = TEST_GOOGLECHAT.openSpace;
    const thread = `${space}/threads/${uniqueId("t")}`;
    const quiet = newScenario("gchat-quiet");
    expect(
      (
        await postChat(
          chatEvent({
            space,
            thread,
            sender: uniqueId("users/m"),
            text: `just chatting [scenario:${quiet}]`,
          }),
        )
      ).status,
    ).toBe(200);
    const scenario = newScenario("gchat-space");
    await scriptModel(scenario, [{ type: "text", text: "Answer in the thread." }]);
    await scriptGoogle({ api: "patch", status: 429, retryAfter: 1 });
    await scriptGoogle({ api: "create", status: 429, retryAfter: 1, times: 1 });
    const before = (await chatMessages(space)).length;
    expect(
      (
        await postChat(
          chatEvent({
            space,
            thread,
            sender: uniqueId("users/m"),
            mentionBot: true,
            text: `what now? [scenario:${scenario}]`,
          }),
        )
      ).status,
    ).toBe(200);
    await waitFor(
      async () =>
        (await chatMessages(space)).some((m) => m.text === "Answer in the thread." && !m.deleted)
          ? true
          : undefined,
      25_000,
    );
    await settle(2000);
    const answers = (await chatMessages(space))
      .slice(before)
      .filter((m) => !m.deleted && m.text !== TYPING_TEXT);
    expect(answers.map((m) => [m.text, m.thread])).toEqual([["Answer in the thread.", thread]]);
    expect(await recorded(quiet)).toEqual([]);
    // The mention was cut from what the model read (argumentText).
    const [call] = await recorded(scenario);
    expect(JSON.stringify(call)).toContain("what now?");
    expect(JSON.stringify(call)).not.toContain("@edgeclaw what now");
  });

  it("a revoked access token is replaced and the reply still goes out once", async () => {
    const user = uniqueId("users/u");
    await approve(user);
    const space = `spaces/${uniqueId("D")}`;
    const scenario = newScenario("gchat-token");
    await scriptModel(scenario, [{ type: "text", text: "Fresh token, same answer." }]);
    await fetch(`${fakeGoogle()}/_control/revoke-tokens`, { method: "POST" });
    expect(
      (
        await postChat(
          chatEvent({ space, dm: true, sender: user, text: `hi [scenario:${scenario}]` }),
        )
      ).status,
    ).toBe(200);
    await settlesTo(space, ["Fresh token, same answer."]);
  });

  it("a stranger's join, removal and card click in a space never start a run or reach the model", async () => {
    const space = TEST_GOOGLECHAT.openSpace;
    const stranger = uniqueId("users/x");
    const scenario = newScenario("gchat-system");
    const before = (await chatMessages(space)).length;
    for (const type of ["ADDED_TO_SPACE", "REMOVED_FROM_SPACE", "CARD_CLICKED"]) {
      const event = chatEvent({
        type,
        space,
        sender: stranger,
        extra: { action: { actionMethodName: `approve [scenario:${scenario}]` } },
      });
      const response = await postChat(event);
      expect(response.status).toBe(200);
    }
    await settle(2500);
    expect(await recorded(scenario)).toEqual([]);
    expect((await chatMessages(space)).length).toBe(before);
  });
});

import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SessionDO } from "../../durable-objects/session.ts";
import { SessionState } from "../../durable-objects/session/state.ts";
import { newScenario, scriptModel, slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import { plainSlackDm } from "./slack-dm.ts";
import { sessionStub, waitFor } from "./helpers.ts";

/**
 * What one plain message costs inside its SessionDO, read from the step profile
 * (EDGECLAW_STEP_PROFILE, upkeep/step-profile.ts) the way scripts/bench/message-cost.ts reads it:
 * a Slack DM on the "plain" account (DMs open, streaming off), one model call, one reply chunk.
 * SQLite rows written are billed ($1.00 per million); the bounds are what the session writes today
 * (issue 19 step 9's goal is 10), so a change that adds a write per message fails here.
 */

/** Existing session: every row the accept, triage, run, outbox, mirror and metrics steps write. */
const ROWS_PER_MESSAGE = 10;
/**
 * A new session's first message also creates the schema and starts the session (schema step 13's
 * `responses` table, /v1/responses, is 3 rows of a new object's schema; no message writes it).
 */
const ROWS_FIRST_MESSAGE = 48;
/** The Worker's accept plus the calls the SessionDO makes (budget reserve/settle, metrics shard). */
const DO_CALLS_PER_MESSAGE = 4;

interface ProfileLine {
  trigger: string;
  rowsWritten: number;
  doCalls: number;
  tables: Record<string, number>;
  writes: Record<string, number>;
}

let log: { mock: { calls: unknown[][] }; mockRestore(): void };
beforeEach(() => {
  log = vi.spyOn(console, "log");
});
afterEach(() => log.mockRestore());

function profileLines(sessionKey: string): ProfileLine[] {
  return log.mock.calls
    .map((call) => String(call[0]))
    .filter((text) => text.includes('"session_step_profile"') && text.includes(sessionKey))
    .map((text) => JSON.parse(text) as ProfileLine);
}

/** Sends one DM, waits for its reply and for the passes after it (mirror, metrics) to end. */
async function oneMessage(sessionKey: string, channel: string, n: number) {
  const from = profileLines(sessionKey).length;
  const scenario = newScenario(`message-cost-${n}`);
  await scriptModel(scenario, [{ type: "text", text: `Answer ${n}.` }]);
  const stub = sessionStub(sessionKey);
  expect(
    (
      await stub.accept(
        plainSlackDm(sessionKey, channel, `plain ${n} [scenario:${scenario}]`, "UCOST"),
      )
    ).status,
  ).toBe("accepted");
  await waitFor(async () => (await slackMessages(channel)).length >= n, 20_000, `reply ${n}`);
  // Quiet: no profile line for a while and no alarm due soon (retention's is an hour away).
  let seen = -1;
  await waitFor(
    async () => {
      const now = profileLines(sessionKey).length;
      const alarm = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
      const quiet = now === seen && (alarm === null || alarm > Date.now() + 60_000);
      seen = now;
      return quiet;
    },
    20_000,
    "the session to go quiet",
  );
  // Poll calls themselves run nothing: the lines counted are the message's own.
  const lines = profileLines(sessionKey).slice(from);
  const sum = (pick: (line: ProfileLine) => number) =>
    lines.reduce((total, line) => total + pick(line), 0);
  const writes: Record<string, number> = {};
  for (const line of lines)
    for (const [statement, rows] of Object.entries(line.writes))
      writes[statement] = (writes[statement] ?? 0) + rows;
  return {
    rowsWritten: sum((line) => line.rowsWritten),
    // The accept RPC itself is one call (its own profile line), as the bench counts it.
    doCalls: sum((line) => line.doCalls + (line.trigger === "accept" ? 1 : 0)),
    writes,
  };
}

describe("what one plain message costs (step profile)", () => {
  it(`writes at most ${ROWS_PER_MESSAGE} SQLite rows and makes at most ${DO_CALLS_PER_MESSAGE} Durable Object calls per message`, async () => {
    const sessionKey = `agent:main:message-cost:${uniqueId("s").toLowerCase()}`;
    const channel = uniqueId("D");
    // Profiled from its first statement: the schema a new session creates counts too.
    await runInDurableObject(sessionStub(sessionKey), async (instance: SessionDO, state) => {
      await state.storage.deleteAll();
      const profiled = {
        ...(instance as unknown as { env: object }).env,
        EDGECLAW_STEP_PROFILE: "1",
      };
      (instance as unknown as { s: SessionState }).s = new SessionState(
        state,
        () => profiled as never,
      );
    });
    const first = await oneMessage(sessionKey, channel, 1);
    const next = await oneMessage(sessionKey, channel, 2);
    const third = await oneMessage(sessionKey, channel, 3);
    const report = JSON.stringify({ first, next, third }, null, 1);
    expect(first.rowsWritten, report).toBeLessThanOrEqual(ROWS_FIRST_MESSAGE);
    expect(next.rowsWritten, report).toBeLessThanOrEqual(ROWS_PER_MESSAGE);
    expect(third.rowsWritten, report).toBeLessThanOrEqual(ROWS_PER_MESSAGE);
    for (const cost of [first, next, third])
      expect(cost.doCalls, report).toBeLessThanOrEqual(DO_CALLS_PER_MESSAGE);
    expect(next.rowsWritten, report).toBeGreaterThan(0);
  });
});

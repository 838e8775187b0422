import { sql } from "drizzle-orm";
import { withDb, type DbEnv } from "../../../functions/db/client.ts";
import {
  modelCalls,
  runPlatformCost,
  sessions,
  transcriptEntries,
  usage,
} from "../../../functions/db/schema.ts";
import type { PlatformCost } from "../../../functions/agent/platform-cost.ts";
import type { RunRow, SessionStore } from "../storage.ts";

export interface SessionIndexFacts {
  sessionKey: string;
  sessionId: string;
  agentId: string;
  channel: string | null;
  chatType: string | null;
  lastRoute: unknown;
  modelOverride: string | null;
  sessionStartedAt: number;
  lastInteractionAt: number | null;
}

/**
 * Copies what changed in the SessionDO to Postgres: the session index row, new transcript entries
 * finished runs' usage and estimated platform cost, and every model call (metering.ts). Idempotent (upserts, on-conflict-do-nothing), so a batch that failed
 * half-way is simply sent again on the next alarm (the watermarks move only after it succeeded).
 * Returns true when everything was mirrored.
 */
export async function mirrorToPostgres(args: {
  env: DbEnv;
  store: SessionStore;
  facts: SessionIndexFacts;
  batchSize: number;
  costOf: (
    modelRef: string,
    usage: {
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    },
  ) => number;
  platformCostOf: (run: RunRow) => PlatformCost;
}): Promise<boolean> {
  const { store, facts, batchSize } = args;
  const entries = store.transcript.unmirrored(batchSize);
  const runs = store.runs.unmirrored(batchSize);
  const calls = store.modelCalls.unmirrored(batchSize);
  const totals = store.runs.sessionTotals(facts.sessionId);
  await withDb(args.env, async (db) => {
    await db
      .insert(sessions)
      .values({
        sessionKey: facts.sessionKey,
        sessionId: facts.sessionId,
        agentId: facts.agentId,
        channel: facts.channel,
        chatType: facts.chatType,
        lastRoute: facts.lastRoute ?? null,
        modelOverride: facts.modelOverride,
        inputTokens: totals.inputTokens,
        outputTokens: totals.outputTokens,
        sessionStartedAt: new Date(facts.sessionStartedAt),
        lastInteractionAt:
          facts.lastInteractionAt === null ? null : new Date(facts.lastInteractionAt),
        updatedAt: new Date(),
      })
      .onConflictDoUpdate({
        target: sessions.sessionKey,
        set: {
          sessionId: sql`excluded.session_id`,
          agentId: sql`excluded.agent_id`,
          channel: sql`excluded.channel`,
          chatType: sql`excluded.chat_type`,
          lastRoute: sql`excluded.last_route`,
          modelOverride: sql`excluded.model_override`,
          inputTokens: sql`excluded.input_tokens`,
          outputTokens: sql`excluded.output_tokens`,
          sessionStartedAt: sql`excluded.session_started_at`,
          lastInteractionAt: sql`excluded.last_interaction_at`,
          updatedAt: sql`excluded.updated_at`,
        },
      });
    if (entries.length) {
      await db
        .insert(transcriptEntries)
        .values(
          entries.map((entry) => ({
            sessionKey: facts.sessionKey,
            sessionId: entry.sessionId,
            seq: entry.seq,
            role: entry.message.role,
            content: entry.message,
            createdAt: new Date(entry.createdAt),
          })),
        )
        .onConflictDoNothing();
    }
    if (runs.length) {
      await db
        .insert(usage)
        .values(
          runs.map((run) => ({
            runId: run.runId,
            sessionKey: facts.sessionKey,
            agentId: facts.agentId,
            model: run.modelRef ?? "none",
            inputTokens: run.inputTokens,
            outputTokens: run.outputTokens,
            cacheReadTokens: run.cacheReadTokens,
            cacheWriteTokens: run.cacheWriteTokens,
            costUsd: args.costOf(run.modelRef ?? "", run).toFixed(6),
            createdAt: new Date(run.startedAt),
          })),
        )
        .onConflictDoNothing();
      await db
        .insert(runPlatformCost)
        .values(
          runs.map((run) => ({
            runId: run.runId,
            sessionKey: facts.sessionKey,
            agentId: facts.agentId,
            channel: run.route.channel,
            ...args.platformCostOf(run),
            createdAt: new Date(run.startedAt),
          })),
        )
        .onConflictDoNothing();
    }
    if (calls.length) {
      await db
        .insert(modelCalls)
        .values(
          calls.map((call) => ({
            id: call.id,
            runId: call.runId,
            sessionKey: facts.sessionKey,
            sessionId: call.sessionId,
            agentId: facts.agentId,
            channel: call.channel,
            senderId: call.senderId,
            kind: call.kind,
            provider: call.provider,
            model: call.model,
            ...call.usage,
            costUsd: call.costUsd,
            outcome: call.outcome,
            durationMs: call.durationMs,
            createdAt: new Date(call.at),
          })),
        )
        .onConflictDoNothing();
    }
  });
  // Each part up to the last row it copied (each list is in key order), in memory: the next run's
  // end and the sweep store it (watermark.ts). A row written while this pass awaited Postgres has a
  // higher seq or stamp, so the next pass copies it.
  store.mirrorMarks.advance({
    transcriptSeq: entries.at(-1)?.seq,
    runStamp: runs.at(-1)?.mirrorStamp,
    callStamp: calls.at(-1)?.mirrorStamp,
  });
  return entries.length < batchSize && runs.length < batchSize && calls.length < batchSize;
}

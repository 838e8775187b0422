import { recordDisplayTurns } from "./display-log.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { chunkText } from "../../../functions/channels/chunk.ts";
import { costOfRun } from "../run/deps.ts";
import { flushCronReports, hasCronReports } from "../inbox/automation.ts";
import { deliverDueOutbox } from "./deliver-due.ts";
import { mirrorToPostgres } from "../mirror/postgres.ts";
import { runPlatformCostOf } from "../upkeep/platform-usage.ts";
import { ProgressRelay } from "./progress.ts";
import { recordAuditEvent } from "../audit.ts";
import { isPostgresUnavailable } from "../../../functions/db/client.ts";
import { settings } from "../identity.ts";
import { countSession } from "../upkeep/metrics.ts";
import { sessionLog } from "../log.ts";
import type { InboxRow, RunRow } from "../storage.ts";
import { describeError, zeroUsage, type SessionState } from "../state.ts";

/**
 * The glue between a session and the outside: reply chunks into the outbox and out to the
 * platform, progress to the channel, and the mirror to Postgres.
 */

/**
 * The outbox id prefix of an answer that belongs to one inbox event (a notice, a refusal, a dead
 * letter's notice). Inbox sequence numbers restart in every session, and adapters hand the chunk id
 * to the platform as its idempotency key (LINE's X-Line-Retry-Key, Feishu's uuid, Google Chat's
 * client message id, Discord's nonce): `notice:1` alone would make the second session's first notice
 * a "repeat" of the first's, which the platform drops. The session's own Durable Object id makes it
 * unique everywhere. (Run replies need nothing: run ids are UUIDs.)
 */
export function eventReplyId(
  s: Pick<SessionState, "ctx">,
  kind: "notice" | "refusal" | "dead",
  seq: number,
): string {
  return `${kind}:${s.ctx.id.toString()}:${seq}`;
}

/** Splits a reply into the channel's chunks and records them in the outbox (inside the caller's transaction). */
export function enqueueReply(
  s: SessionState,
  idPrefix: string,
  runId: string | null,
  route: RunRow["route"],
  text: string,
  now: number,
): void {
  const adapter = adapterFor(route.channel);
  const limit = adapter ? adapter.textChunkLimit(s.config, route.accountId) : 4000;
  const chunks = chunkText(
    text,
    limit,
    adapter?.chunkMode?.(s.config, route.accountId) ?? "length",
    adapter?.maxLinesPerChunk?.(s.config, route.accountId),
  );
  chunks.forEach((chunk, index) => {
    s.store.insertOutbox(
      {
        id: `${idPrefix}:${index}`,
        runId,
        route,
        text: chunk,
        chunkIndex: index,
        chunkCount: chunks.length,
      },
      now,
    );
  });
}

/**
 * A run that ends with no reply to take over its live preview (silent, aborted) still resolves it:
 * a retract row (no text, `chunkCount` 0 — the outbox hands it to the channel as `retract`) goes
 * through the outbox like any chunk, so it is durable, ordered and retried. Only for a channel that
 * reports progress and a run that left progress state behind.
 */
export function enqueueRetract(s: SessionState, run: RunRow, now: number): void {
  if (HTTP_CHANNELS.has(run.route.channel) || !adapterFor(run.route.channel)?.progress) return;
  const state = s.store.getRun(run.runId)?.progressState ?? {};
  if (!Object.keys(state).length) return;
  s.store.insertOutbox(
    {
      id: `run:${run.runId}:retract`,
      runId: run.runId,
      route: run.route,
      text: "",
      chunkIndex: 0,
      chunkCount: 0,
    },
    now,
  );
}

/**
 * Answers that need no model (command replies, pairing codes): queued once in the outbox for chat
 * platforms, and streamed to HTTP listeners. `settle` ends the event (no run follows).
 */
export function reply(s: SessionState, row: InboxRow, texts: string[], settle: boolean): void {
  const now = Date.now();
  const route = row.event.envelope.route;
  const text = texts.join("\n\n");
  s.ctx.storage.transactionSync(() => {
    if (!HTTP_CHANNELS.has(route.channel))
      enqueueReply(s, eventReplyId(s, "notice", row.seq), null, route, text, now);
    if (settle) s.store.settleInbox(row.seq, text, now);
    // A settled event never reaches the transcript: keep its turn for the web chat's history.
    const asked = settle ? (row.event.envelope.text ?? "") : "";
    recordDisplayTurns(s, [
      ...(asked ? [{ role: "user" as const, text: asked, at: row.receivedAt }] : []),
      ...(text ? [{ role: "assistant" as const, text, at: now }] : []),
    ]);
  });
  s.emit([row.seq], { type: "notice", text });
  if (settle)
    s.emit([row.seq], { type: "done", runId: "", text, usage: zeroUsage(), modelRef: "" });
}

/**
 * An event turned away on a platform that holds its sender waiting (ChannelAdapter.refusalRoute):
 * the refusal is queued once, on the route the channel named, in the same transaction that settles
 * the event, so neither a crash nor a duplicate delivery can send it twice or leave it unsent.
 */
export function refuse(s: SessionState, row: InboxRow, route: RunRow["route"], text: string): void {
  const now = Date.now();
  s.ctx.storage.transactionSync(() => {
    enqueueReply(s, eventReplyId(s, "refusal", row.seq), null, route, text, now);
    s.store.settleInbox(row.seq, null, now);
  });
}

export function progressRelay(
  s: SessionState,
  run: RunRow | null,
  route: RunRow["route"],
): ProgressRelay {
  return new ProgressRelay({
    adapter: HTTP_CHANNELS.has(route.channel) ? undefined : adapterFor(route.channel),
    route,
    ctx: { env: s.env, config: s.config },
    store: s.store,
    runId: run?.runId ?? null,
  });
}

/** Sends every due outbox chunk; dead letters are recorded in the audit trail. Serialised per object. */
export function deliver(s: SessionState): Promise<void> {
  const pass = s.deliveries.then(() => deliverOnce(s));
  s.deliveries = pass.catch(() => undefined);
  return pass;
}

async function deliverOnce(s: SessionState): Promise<void> {
  const dead = await deliverDueOutbox({
    store: s.store,
    adapterFor,
    ctx: { env: s.env, config: s.config },
    policy: s.config.messages.outbox,
    progressStateFor: (runId) => (runId ? s.store.getRun(runId)?.progressState : undefined),
    now: Date.now,
    onSend: (row, outcome) =>
      countSession(
        s,
        outcome === "sent" ? "edgeclaw_outbox_sent_total" : "edgeclaw_outbox_retries_total",
        { channel: row.route.channel },
      ),
  });
  for (const letter of dead) {
    countSession(s, "edgeclaw_outbox_dead_letters_total", { channel: letter.row.route.channel });
    await recordAuditEvent(s.env, "outbox.dead_letter", {
      sessionKey: s.store.getMeta("sessionKey"),
      outboxId: letter.row.id,
      channel: letter.row.route.channel,
      reason: letter.reason,
    }).catch((error) => {
      if (!isPostgresUnavailable(error))
        sessionLog(s).error("audit write failed", { error: describeError(error) });
    });
  }
}

/** A failed mirror is tried again this long after (Postgres down never blocks a conversation). */
export const MIRROR_RETRY_MS = 5_000;

/** Something is waiting to be copied to Postgres, and when the mirror may next try. */
export function mirrorDueAt(s: SessionState, now: number): number | undefined {
  if (
    !s.env.DATABASE_URL ||
    !s.store.getMeta("sessionId") ||
    !(s.store.hasUnmirrored() || hasCronReports(s.store))
  )
    return undefined;
  return Math.max(now, Number(s.store.getMeta("mirrorRetryAt") ?? 0));
}

/** Copies what changed to Postgres; a failure is recorded so the alarm schedule backs off. */
export async function mirror(s: SessionState): Promise<void> {
  const done = await mirrorOnce(s);
  if (done) s.store.deleteMeta("mirrorRetryAt");
  else s.store.setMeta("mirrorRetryAt", String(Date.now() + MIRROR_RETRY_MS));
}

async function mirrorOnce(s: SessionState): Promise<boolean> {
  const sessionId = s.store.getMeta("sessionId");
  if (!sessionId || !s.env.DATABASE_URL) return true;
  const lastRun = s.store.activeRun();
  try {
    await mirrorToPostgres({
      env: s.env,
      store: s.store,
      batchSize: s.config.messages.mirrorBatchSize,
      costOf: (modelRef, usage) => costOfRun(s.config, s.env, modelRef, usage),
      sql: s.ctx.storage.sql,
      platformCostOf: (run) => runPlatformCostOf(s, run),
      facts: {
        sessionKey: s.store.getMeta("sessionKey") ?? "",
        sessionId,
        agentId: s.store.getMeta("agentId") ?? "main",
        channel:
          lastRun?.route.channel ??
          s.store.getJson<{ channel: string }>("lastRoute")?.channel ??
          null,
        chatType: s.store.getMeta("chatType") ?? null,
        lastRoute: s.store.getJson("lastRoute") ?? null,
        modelOverride: settings(s).modelOverride ?? null,
        sessionStartedAt: Number(s.store.getMeta("sessionStartedAt") ?? Date.now()),
        lastInteractionAt: s.store.getMeta("lastInteractionAt")
          ? Number(s.store.getMeta("lastInteractionAt"))
          : null,
      },
    });
    await flushCronReports(s);
    // A full batch leaves more behind: mirrorDueAt sees the unmirrored rows and asks for a pass now.
    return true;
  } catch (error) {
    // Postgres being down never blocks a conversation: the mirror retries on the next alarm.
    // First lines only: a failed query's message carries its parameters (transcript text).
    // An outage was already logged, once, by the database client.
    if (!isPostgresUnavailable(error))
      sessionLog(s).error("session mirror failed", { error: describeError(error) });
    return false;
  }
}

import { recordDisplayTurns } from "./display-log.ts";
import type { OutboundFileRef } from "../../../functions/media/outbound.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { chunkText } from "../../../functions/channels/chunk.ts";
import { deliverDueOutbox } from "./deliver-due.ts";
import { ProgressRelay } from "./progress.ts";
import { recordAuditEvent } from "../audit.ts";
import { isPostgresUnavailable } from "../../../functions/db/client.ts";
import { countSession } from "../upkeep/metrics.ts";
import { sessionLog } from "../log.ts";
import type { InboxRow, RunRow } from "../storage.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import { zeroUsage, type SessionState } from "../state.ts";
import { channelAccount, sendContextFor } from "../../../functions/channels/channel-account.ts";
import { sessionSendDecision } from "./send-gate.ts";
import { queueAsMaybeAttempted } from "./queued-state.ts";

/**
 * Reply chunks into the outbox and out to the platform, and progress to the channel. (The copy to
 * Postgres is the mirror phase: mirror/mirror.ts.)
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
  const account = channelAccount(s.config, route.channel, route.accountId);
  const limit = adapter ? adapter.textChunkLimit(account) : 4000;
  const chunks = chunkText(
    text,
    limit,
    adapter?.chunkMode?.(account) ?? "length",
    adapter?.maxLinesPerChunk?.(account),
  );
  chunks.forEach((chunk, index) => {
    const row = {
      id: `${idPrefix}:${index}`,
      runId,
      route,
      text: chunk,
      chunkIndex: index,
      chunkCount: chunks.length,
    };
    s.store.outbox.insert(row, now, { maybeAttempted: queueAsMaybeAttempted(adapter, row) });
  });
}

/**
 * The files a reply sends, after its text, one outbox row each (`<prefix>:file:<n>`), recorded in
 * the caller's transaction like the text: the row holds the media store reference, never the bytes.
 */
export function enqueueFiles(
  s: SessionState,
  idPrefix: string,
  runId: string | null,
  route: RunRow["route"],
  files: OutboundFileRef[],
  now: number,
): void {
  const adapter = adapterFor(route.channel);
  files.forEach((file, index) => {
    const row = {
      id: `${idPrefix}:file:${index}`,
      runId,
      route,
      text: "",
      chunkIndex: index,
      chunkCount: files.length,
      media: file,
    };
    s.store.outbox.insert(row, now, {
      maybeAttempted: queueAsMaybeAttempted(adapter, { ...row, file }),
    });
  });
}

/**
 * A run that ends with no reply to take over its live preview (silent, aborted) still resolves it:
 * a retract row (no text, `chunkCount` 0 — the outbox hands it to the channel as `retract`) goes
 * through the outbox like any chunk, so it is durable, ordered and retried. Only for a channel that
 * reports progress and a run that left progress state behind.
 */
export function enqueueRetract(s: SessionState, run: RunRow, now: number): void {
  const adapter = adapterFor(run.route.channel);
  if (HTTP_CHANNELS.has(run.route.channel) || !adapter?.progress) return;
  const state = s.store.runs.get(run.runId)?.progressState ?? {};
  if (!Object.keys(state).length) return;
  const row = {
    id: `run:${run.runId}:retract`,
    runId: run.runId,
    route: run.route,
    text: "",
    chunkIndex: 0,
    chunkCount: 0,
  };
  s.store.outbox.insert(row, now, {
    maybeAttempted: queueAsMaybeAttempted(adapter, { ...row, retract: true }),
  });
}

/**
 * Answers that need no model (command replies, pairing codes): queued once in the outbox for chat
 * platforms, and streamed to HTTP listeners. `settle` ends the event (no run follows). A `private`
 * answer (a stranger's pairing code) leaves the session's web-chat history alone: on a shared
 * session (dmScope "main") that history is the owner's conversation, and a stranger's words and
 * code do not belong in it.
 */
export function reply(
  s: SessionState,
  row: InboxRow,
  texts: string[],
  settle: boolean,
  opts: { private?: boolean } = {},
): void {
  const now = Date.now();
  const route = row.event.envelope.route;
  const text = texts.join("\n\n");
  s.ctx.storage.transactionSync(() => {
    if (!HTTP_CHANNELS.has(route.channel))
      enqueueReply(s, eventReplyId(s, "notice", row.seq), null, route, text, now);
    if (settle) s.store.inbox.settle(row.seq, text, now);
    // A settled event never reaches the transcript: keep its turn for the web chat's history.
    const asked = settle ? (row.event.envelope.text ?? "") : "";
    if (!opts.private)
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
    s.store.inbox.settle(row.seq, null, now);
  });
}

export function progressRelay(
  s: SessionState,
  run: RunRow | null,
  route: RunRow["route"],
): ProgressRelay {
  return new ProgressRelay({
    // Held-back replies (session.sendPolicy, /send off) show no preview or typing either.
    adapter:
      HTTP_CHANNELS.has(route.channel) || !sessionSendDecision(s, route).allowed
        ? undefined
        : adapterFor(route.channel),
    route,
    ctx: sendContextFor({ env: s.env, config: s.config }, route),
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
    progressStateFor: (runId) => (runId ? s.store.runs.get(runId)?.progressState : undefined),
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
      sessionKey: s.store.meta.get("sessionKey"),
      outboxId: letter.row.id,
      channel: letter.row.route.channel,
      reason: letter.reason,
    }).catch((error) => {
      if (!isPostgresUnavailable(error))
        sessionLog(s).error("audit write failed", { error: describeError(error) });
    });
  }
}

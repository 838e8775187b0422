import type {
  ChannelAdapter,
  OutboundMessage,
  ReconcileResult,
  SendContext,
} from "../../../functions/channels/adapter.ts";
import type { OutboxRow, SessionStore } from "../storage.ts";
import { sendContextFor } from "../../../functions/channels/channel-account.ts";
import { mediaStoreFor } from "../../../functions/media/store.ts";
import { queueAsMaybeAttempted } from "./queued-state.ts";

export interface OutboxPolicy {
  maxAttempts: number;
  maxBackoffMs: number;
}

/** Told once when a reply may or may not have arrived and cannot be checked (e.g. a slash-command response URL). */
export const UNDELIVERED_NOTICE =
  "⚠️ A reply may not have arrived: the connection dropped while it was being sent, and it was not sent again to avoid a duplicate.";
const UNDELIVERED_SUFFIX = ":undelivered";

/**
 * Every dead-letter reason for a chunk whose last send may have reached the platform starts with
 * this. An operator's retry (dead-letter-admin.ts) puts such a chunk back as "unknown", so it is
 * reconciled (or re-sent under its idempotency key) like any unknown outcome, never sent blindly.
 */
export const OUTCOME_UNKNOWN = "outcome unknown";

export interface DeadLetter {
  row: OutboxRow;
  reason: string;
}

/**
 * Sends due chunks in the session's order: chunks of a reply by index, replies as they were queued.
 * The first chunk that has to wait (retry backoff, Retry-After, an outcome still unknown) holds
 * back everything queued after it — across alarm passes too — so a later reply never overtakes an
 * earlier one. A chunk is "sending" durably before the request, so a crash mid-send leaves a row
 * whose outcome is unknown: it is reconciled with the platform (did the message land?) and never
 * blindly sent again — unless the channel's sends are idempotent (`idempotentSends`): then it is sent
 * again under the same chunk id, which the platform takes as its idempotency key and drops if seen,
 * and no mark is written. A chunk the channel can always reconcile is queued "sending" already
 * (queued-state.ts), so its first send writes no mark either.
 */
export async function deliverDueOutbox(args: {
  store: SessionStore;
  adapterFor: (channel: string) => ChannelAdapter | undefined;
  /** What every call shares; each gets the account of its chunk's route added (sendContextFor). */
  ctx: Omit<SendContext, "account">;
  policy: OutboxPolicy;
  progressStateFor: (runId: string | null) => Record<string, string> | undefined;
  now: () => number;
  random?: () => number;
  /** Told of every send that landed or will be retried (metrics); dead letters are the return value. */
  onSend?: (row: OutboxRow, outcome: "sent" | "retry") => void;
}): Promise<DeadLetter[]> {
  const { store, policy, now } = args;
  const random = args.random ?? Math.random;
  const dead: DeadLetter[] = [];
  for (const row of store.outbox.unsettled()) {
    // Not due yet: it waits, and so does everything behind it.
    if (row.nextAt > now()) break;
    const adapter = args.adapterFor(row.route.channel);
    if (!adapter) {
      store.outbox.update(
        row.id,
        { state: "dead", lastError: `no channel adapter for "${row.route.channel}"` },
        now(),
      );
      dead.push({ row, reason: `no channel adapter for "${row.route.channel}"` });
      continue;
    }
    const message: OutboundMessage = {
      id: row.id,
      route: row.route,
      text: row.text,
      chunkIndex: row.chunkIndex,
      chunkCount: row.chunkCount,
      progressState: args.progressStateFor(row.runId),
      ...(row.runId ? { runId: row.runId } : {}),
      queuedAt: row.createdAt,
      ...(row.firstAttemptAt !== null ? { firstAttemptAt: row.firstAttemptAt } : {}),
      ...(row.chunkCount === 0 ? { retract: true } : {}),
      ...(row.media ? { file: row.media } : {}),
    };

    // This isolate queued the chunk and knows it has not tried yet (queued-state.ts).
    const unattempted = store.outbox.unattemptedHere(row.id);
    // The previous attempt may have reached the platform. A platform that drops a repeated key is
    // simply sent the same chunk id again (below); any other is asked, never sent blindly.
    if (
      (row.state === "sending" || row.state === "unknown") &&
      !adapter.idempotentSends &&
      !unattempted
    ) {
      const found: ReconcileResult | undefined = adapter.reconcile
        ? await adapter
            .reconcile(message, sendContextFor(args.ctx, row.route))
            .catch(() => undefined)
        : { outcome: "untraceable", reason: "channel cannot reconcile", idempotent: false };
      if (found === undefined) {
        // Could not ask right now: try reconciling again later.
        const attempts = row.attempts + 1;
        if (attempts >= policy.maxAttempts) {
          store.outbox.update(
            row.id,
            { state: "dead", attempts, lastError: `${OUTCOME_UNKNOWN} and reconcile kept failing` },
            now(),
          );
          dead.push({ row, reason: `${OUTCOME_UNKNOWN} and reconcile kept failing` });
        } else {
          store.outbox.update(
            row.id,
            { state: "unknown", attempts, nextAt: now() + backoff(attempts, policy, random) },
            now(),
          );
          break;
        }
        continue;
      }
      if (found.outcome === "landed") {
        store.outbox.update(
          row.id,
          { state: "sent", platformId: found.platformMessageId ?? null },
          now(),
        );
        continue;
      }
      if (found.outcome === "untraceable" && !found.idempotent) {
        // No way to know, and a repeat would not be dropped: a duplicate answer is worse than a gap.
        // Record it, tell the user once (never about a notice itself), and move on.
        const reason = `${OUTCOME_UNKNOWN}; ${found.reason}; not re-sent`;
        store.outbox.update(row.id, { state: "dead", lastError: reason }, now());
        dead.push({ row, reason });
        if (!row.id.endsWith(UNDELIVERED_SUFFIX)) {
          const notice = {
            id: `${row.id}${UNDELIVERED_SUFFIX}`,
            runId: null,
            route: row.route,
            text: UNDELIVERED_NOTICE,
            chunkIndex: 0,
            chunkCount: 1,
          };
          store.outbox.insert(notice, now(), {
            maybeAttempted: queueAsMaybeAttempted(adapter, notice),
          });
        }
        continue;
      }
      // Reconciled as "never arrived" (or the platform drops repeats): send it.
    }

    // A file's bytes come from the media store for this one call, before it counts as an attempt.
    const file = row.media ? await loadOutboundFile(adapter, row, args.ctx.env) : undefined;
    if (file && "refused" in file) {
      store.outbox.update(row.id, { state: "dead", lastError: file.refused }, now());
      dead.push({ row, reason: file.refused });
      continue;
    }
    if (file && "unavailable" in file) {
      store.outbox.update(row.id, { lastError: file.unavailable, nextAt: now() + 5000 }, now());
      break;
    }
    const attempts = row.attempts + 1;
    const firstAttemptAt = row.firstAttemptAt ?? now();
    // Recorded with the attempt's outcome below; durably before it only where recovery learns from
    // the mark. A chunk this isolate queued and has not tried needs none when its sends are
    // idempotent (a repeat is dropped) or it was queued as possibly attempted (recovery
    // reconciles). Any other attempt is marked first: an untraceable chunk's, so a crash mid-send
    // is never repeated blindly, and a repeat of an idempotent one after a crash, so its attempts
    // are counted and an isolate that dies in every send still reaches maxAttempts.
    const attempt = { attempts, firstAttemptAt };
    const markSpared = unattempted && (adapter.idempotentSends || row.state === "sending");
    if (!markSpared) store.outbox.update(row.id, { state: "sending", ...attempt }, now());
    // Forgotten before the request: should anything below throw, the next pass reconciles first.
    store.outbox.attempting(row.id);
    message.firstAttemptAt = firstAttemptAt;
    let result;
    try {
      const sendCtx = sendContextFor(args.ctx, row.route);
      result =
        file && message.file && adapter.sendFile
          ? await adapter.sendFile({ ...message, file: message.file }, file.bytes, sendCtx)
          : await adapter.send(message, sendCtx);
    } catch (error) {
      result = {
        ok: false as const,
        outcomeUnknown: true as const,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    if (result.ok) {
      store.outbox.update(
        row.id,
        {
          state: "sent",
          platformId: result.platformMessageId ?? null,
          lastError: null,
          ...attempt,
        },
        now(),
      );
      args.onSend?.(row, "sent");
      continue;
    }
    if ("outcomeUnknown" in result) {
      if (adapter.idempotentSends && attempts >= policy.maxAttempts) {
        // Repeats are safe but not endless: the same bound as any other retry.
        const reason = `${OUTCOME_UNKNOWN} after ${attempts} attempts: ${result.error}`;
        store.outbox.update(row.id, { state: "dead", lastError: reason, ...attempt }, now());
        dead.push({ row, reason });
        continue;
      }
      args.onSend?.(row, "retry");
      store.outbox.update(
        row.id,
        {
          state: "unknown",
          lastError: result.error,
          nextAt: now() + backoff(attempts, policy, random),
          ...attempt,
        },
        now(),
      );
      break;
    }
    if (result.notSent && result.retryable) {
      // Held back before any request (an empty rate-limit bucket): no attempt was made, so none is
      // counted and the first attempt is still ahead; it waits like a Retry-After, holding the rest.
      // A chunk whose earlier outcome is unknown stays so: it is reconciled again before it goes;
      // one queued as possibly attempted and not tried yet stays so too, and still untried here.
      store.outbox.update(
        row.id,
        {
          state: unattempted || row.state === "pending" ? row.state : "unknown",
          attempts: row.attempts,
          firstAttemptAt: row.firstAttemptAt,
          lastError: result.error,
          nextAt: now() + Math.max(1, result.retryAfterMs ?? 1000),
        },
        now(),
      );
      if (unattempted) store.outbox.notAttempted(row.id);
      break;
    }
    if (!result.retryable || attempts >= policy.maxAttempts) {
      const reason = result.retryable
        ? `gave up after ${attempts} attempts: ${result.error}`
        : result.error;
      store.outbox.update(row.id, { state: "dead", lastError: reason, ...attempt }, now());
      dead.push({ row, reason });
      continue;
    }
    // The platform's Retry-After is a floor, never cut to maxBackoffMs (which bounds our own backoff):
    // sending earlier only earns another 429.
    const wait = Math.max(result.retryAfterMs ?? 0, backoff(attempts, policy, random));
    args.onSend?.(row, "retry");
    store.outbox.update(
      row.id,
      { state: "pending", lastError: result.error, nextAt: now() + wait, ...attempt },
      now(),
    );
    break;
  }
  return dead;
}

/**
 * The bytes of a file row, or why it cannot go: refused for good (the channel sends no files, the
 * bytes are gone from the store) or unavailable for now (the store did not answer: try later).
 */
async function loadOutboundFile(
  adapter: ChannelAdapter,
  row: OutboxRow,
  env: Record<string, unknown>,
): Promise<{ bytes: Uint8Array } | { refused: string } | { unavailable: string }> {
  if (!adapter.sendFile) return { refused: `the ${adapter.id} channel cannot send files` };
  const media = mediaStoreFor(env);
  if (!media) return { refused: "no media store is bound (MEDIA or MEDIA_DISK)" };
  try {
    const bytes = await media.get(row.media!.ref);
    return bytes ? { bytes } : { refused: "the file is no longer in the media store" };
  } catch (error) {
    return {
      unavailable: `media store: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function backoff(attempt: number, policy: OutboxPolicy, random: () => number): number {
  const base = Math.min(policy.maxBackoffMs, 1000 * 2 ** (attempt - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}

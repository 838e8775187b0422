import type { ChannelAdapter, OutboundMessage } from "../../../functions/channels/adapter.ts";

/**
 * How a chunk enters the outbox: "pending", or already "sending" (possibly attempted). Before a
 * send the outbox marks a chunk "sending" durably only where that mark tells recovery something:
 *
 * - idempotent sends (`idempotentSends`): recovery sends the same key again whatever the state
 *   says, so the chunk is queued "pending" and its first send in the isolate that queued it is
 *   not marked; a repeat after a crash is, so that its attempts count towards maxAttempts;
 * - a chunk the channel can always reconcile (`reconcilesChunk`): queued "sending" in the run's
 *   own transaction, so its first send needs no mark; this isolate remembers it has not tried yet
 *   (OutboxStore.unattemptedHere) and skips the reconcile, while a new isolate after a crash
 *   reconciles first and sends only if the chunk is missing;
 * - anything else (untraceable and not idempotent): "pending", marked "sending" before each send.
 */
export function queueAsMaybeAttempted(
  adapter: ChannelAdapter | undefined,
  chunk: Pick<OutboundMessage, "route" | "chunkIndex" | "chunkCount" | "retract" | "file">,
): boolean {
  if (!adapter || adapter.idempotentSends || !adapter.reconcile) return false;
  return adapter.reconcilesChunk?.(chunk) === true;
}

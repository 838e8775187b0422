import type { EdgeclawConfig } from "../config/schema.ts";
import type { AccessStore, PairingRequest } from "./access-store.ts";
import {
  approvalLockout,
  RATE_LIMITED_APPROVAL_EVENT,
  recordFailedApproval,
} from "./approval-guard.ts";
import { ownerEntryFor } from "./owner.ts";
import { normalizePairingCode } from "./pairing-code.ts";

/**
 * Approving and rejecting pairing codes (admin API and CLI). Approval grants DM access only (an
 * allow_entries row, source "pairing"); the first approval also becomes the owner when
 * `commands.ownerAllowFrom` is empty and no owner was stored before. Wrong codes go through the
 * brute-force guard.
 */
export type PairingActionResult =
  | { ok: true; request: PairingRequest; ownerSet: boolean }
  | { ok: false; status: 400 | 404 | 429; reason: string; retryAfterMs?: number };

export interface PairingActionInput {
  config: EdgeclawConfig;
  store: AccessStore;
  channel: string;
  code: string;
  /** Who is asking (client IP or "admin"): the brute-force guard's key. */
  actor: string;
  now: number;
}

export async function approvePairingCode(input: PairingActionInput): Promise<PairingActionResult> {
  const found = await takeRequest(input, "approve");
  if (!found.ok) return found;
  const { request } = found;
  const { store, now } = input;
  await store.addApprovedSender(
    {
      channel: request.channel,
      accountId: request.accountId,
      senderId: request.senderId,
      source: "pairing",
    },
    now,
  );
  let ownerSet = false;
  if (input.config.commands.ownerAllowFrom.length === 0) {
    ownerSet = await store.setOwnerIfUnset(ownerEntryFor(request), now);
  }
  await store.audit({
    kind: "pairing.approved",
    actor: input.actor,
    detail: {
      channel: request.channel,
      accountId: request.accountId,
      senderId: request.senderId,
      ownerSet,
    },
    at: now,
  });
  return { ok: true, request, ownerSet };
}

export async function rejectPairingCode(input: PairingActionInput): Promise<PairingActionResult> {
  const found = await takeRequest(input, "reject");
  if (!found.ok) return found;
  const { request } = found;
  await input.store.audit({
    kind: "pairing.rejected",
    actor: input.actor,
    detail: { channel: request.channel, accountId: request.accountId, senderId: request.senderId },
    at: input.now,
  });
  return { ok: true, request, ownerSet: false };
}

async function takeRequest(
  input: PairingActionInput,
  action: "approve" | "reject",
): Promise<{ ok: true; request: PairingRequest } | Extract<PairingActionResult, { ok: false }>> {
  const { store, actor, now, channel } = input;
  const locked = await approvalLockout(store, actor, now);
  if (locked) {
    await store.audit({
      kind: RATE_LIMITED_APPROVAL_EVENT,
      actor,
      detail: { channel, action },
      at: now,
    });
    return {
      ok: false,
      status: 429,
      reason: "too many wrong pairing codes; try again later",
      retryAfterMs: locked.retryAfterMs,
    };
  }
  const code = normalizePairingCode(input.code);
  const request = code ? await store.takePairingRequest(channel, code, now) : undefined;
  if (request) return { ok: true, request };
  const limit = input.config.gateway.auth.rateLimit;
  const lockout = await recordFailedApproval(store, actor, now, limit, {
    channel,
    action,
    malformed: code === undefined,
  });
  if (lockout) {
    return {
      ok: false,
      status: 429,
      reason: "too many wrong pairing codes; try again later",
      retryAfterMs: lockout.retryAfterMs,
    };
  }
  return code
    ? {
        ok: false,
        status: 404,
        reason: `no pending pairing request with code ${code} on ${channel} (expired, already used, or mistyped)`,
      }
    : {
        ok: false,
        status: 400,
        reason: "a pairing code is 8 characters from A-Z and 2-9 (no 0, O, 1 or I)",
      };
}

/** What an unknown sender is told, once per request. */
export function pairingReplyText(
  request: Pick<PairingRequest, "channel" | "senderId" | "code">,
): string {
  return [
    "edgeclaw: access not configured.",
    "",
    `Your ${request.channel} user id: ${request.senderId}`,
    `Pairing code: ${request.code}`,
    "",
    "Ask the bot owner to approve with:",
    `npx edgeclaw pairing approve ${request.channel} ${request.code}`,
    "",
    "The code is valid for 1 hour.",
  ].join("\n");
}

import { DISCONNECT } from "./wa-socket.ts";

/**
 * The link of one WhatsApp account, as an explicit state machine: what the connector does on each
 * `connection.update` (Baileys never reconnects by itself), and what the control page and
 * `npx edgeclaw channels whatsapp link` show.
 *
 *   unlinked ──socket──▶ awaiting-qr | awaiting-pairing-code ──scanned──▶ (515) reconnecting ──▶ linked
 *   connecting (stored creds) ──open──▶ linked
 *   linked ──close 515 restartRequired──▶ reconnecting (at once)
 *   linked | connecting ──close 408/428/500/503/…──▶ reconnecting (backoff) ──▶ connecting
 *   any ──close 401 loggedOut / 411──▶ logged-out: keys forgotten, stopped; relink = restart the companion
 *   any ──close 403 forbidden──▶ logged-out: stopped (the account is refused; keys kept)
 *   any ──close 440 connectionReplaced──▶ replaced: stopped (another session took over; never fight it)
 */

export type LinkState =
  | { state: "unlinked" }
  | { state: "awaiting-qr"; qr: string; expiresAt: number }
  | { state: "awaiting-pairing-code"; pairingCode: string; phoneNumber: string }
  | { state: "connecting" }
  | { state: "linked"; me: string }
  | { state: "reconnecting"; attempt: number; retryAt: number; reason: string }
  | { state: "logged-out"; reason: string }
  | { state: "replaced"; reason: string };

export type LinkEvent =
  | { type: "socket"; registered: boolean }
  | { type: "qr"; qr: string; now: number; first: boolean }
  | { type: "pairing-code"; pairingCode: string; phoneNumber: string }
  | { type: "open"; me: string }
  | { type: "close"; statusCode: number | undefined; now: number; backoffMs: number };

/** What the connector does after the transition. */
export type LinkAction = "none" | "reconnect-now" | "reconnect-later" | "forget-and-stop" | "stop";

/** Baileys shows a QR ref for 60 s, the next ones for 20 s each. */
const FIRST_QR_MS = 60_000;
const NEXT_QR_MS = 20_000;

export const isTerminal = (link: LinkState) =>
  link.state === "logged-out" || link.state === "replaced";

export function linkTransition(
  current: LinkState,
  event: LinkEvent,
): { next: LinkState; action: LinkAction } {
  if (isTerminal(current)) return { next: current, action: "none" };
  switch (event.type) {
    case "socket":
      return {
        next: event.registered ? { state: "connecting" } : { state: "unlinked" },
        action: "none",
      };
    case "qr":
      return {
        next: {
          state: "awaiting-qr",
          qr: event.qr,
          expiresAt: event.now + (event.first ? FIRST_QR_MS : NEXT_QR_MS),
        },
        action: "none",
      };
    case "pairing-code":
      return {
        next: {
          state: "awaiting-pairing-code",
          pairingCode: event.pairingCode,
          phoneNumber: event.phoneNumber,
        },
        action: "none",
      };
    case "open":
      return { next: { state: "linked", me: event.me }, action: "none" };
    case "close":
      return onClose(current, event);
  }
}

function onClose(
  current: LinkState,
  event: Extract<LinkEvent, { type: "close" }>,
): { next: LinkState; action: LinkAction } {
  const code = event.statusCode;
  const named = `${closeReason(code)}${code ? ` (${code})` : ""}`;
  if (code === DISCONNECT.loggedOut || code === DISCONNECT.multideviceMismatch)
    return {
      next: { state: "logged-out", reason: `${named}: link the device again` },
      action: "forget-and-stop",
    };
  if (code === DISCONNECT.forbidden)
    return {
      next: { state: "logged-out", reason: `${named}: WhatsApp refused the account` },
      action: "stop",
    };
  if (code === DISCONNECT.connectionReplaced)
    return {
      next: { state: "replaced", reason: `${named}: another session of this device took over` },
      action: "stop",
    };
  const attempt = current.state === "reconnecting" ? current.attempt + 1 : 0;
  if (code === DISCONNECT.restartRequired)
    return {
      next: { state: "reconnecting", attempt, retryAt: event.now, reason: named },
      action: "reconnect-now",
    };
  return {
    next: { state: "reconnecting", attempt, retryAt: event.now + event.backoffMs, reason: named },
    action: "reconnect-later",
  };
}

function closeReason(code: number | undefined): string {
  switch (code) {
    case DISCONNECT.loggedOut:
      return "logged out from the phone";
    case DISCONNECT.multideviceMismatch:
      return "multi-device mismatch";
    case DISCONNECT.forbidden:
      return "forbidden";
    case DISCONNECT.connectionReplaced:
      return "connection replaced";
    case DISCONNECT.restartRequired:
      return "restart required";
    case DISCONNECT.connectionLost:
      return "connection lost or timed out";
    case DISCONNECT.connectionClosed:
      return "connection closed";
    case DISCONNECT.badSession:
      return "bad session";
    case DISCONNECT.unavailableService:
      return "service unavailable";
    default:
      return "connection closed";
  }
}

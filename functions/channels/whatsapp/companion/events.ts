import type { RawEvent } from "../../../../companion/src/connector.ts";
import type { WaEventMap, WaMessage } from "./wa-socket.ts";

/**
 * Baileys' inbound events → the companion's raw events (parsed by the Worker, ../parse.ts), one per
 * message or reaction, keyed `<remoteJid>:<message id>` like the Worker's dedup key. The WAMessage
 * goes as Baileys emitted it, made JSON-safe: byte fields (media keys, hashes, thumbnails) are
 * left out — the Worker reads none, and they would only fill the outbox — and a protobuf Long
 * becomes a number. Offline messages (type "append", delivered after a reconnect) count like live
 * ones ("notify"): they are new to this device. Status and broadcast messages never leave here.
 */

export interface Self {
  id: string;
  lid?: string;
}

export function messageEvents(upsert: WaEventMap["messages.upsert"], self: Self): RawEvent[] {
  if (upsert.type !== "notify" && upsert.type !== "append") return [];
  return upsert.messages.flatMap((message): RawEvent[] => {
    const { remoteJid, id } = message.key;
    if (!remoteJid || !id || remoteJid.endsWith("@broadcast")) return [];
    // A reaction arrives twice: here and as messages.reaction, which is the one forwarded.
    if (message.message && "reactionMessage" in message.message) return [];
    return [
      {
        eventId: `${remoteJid}:${id}`,
        payload: { type: "message", self, message: jsonSafe(message) as WaMessage },
      },
    ];
  });
}

export function reactionEvents(entries: WaEventMap["messages.reaction"], self: Self): RawEvent[] {
  return entries.flatMap((entry): RawEvent[] => {
    const own = entry.reaction.key;
    const remoteJid = own?.remoteJid ?? entry.key.remoteJid;
    if (!own?.id || !remoteJid || remoteJid.endsWith("@broadcast")) return [];
    return [
      {
        eventId: `${remoteJid}:${own.id}`,
        payload: {
          type: "reaction",
          self,
          key: jsonSafe(entry.key),
          reaction: jsonSafe({ ...entry.reaction, key: { ...own, remoteJid } }),
        },
      },
    ];
  });
}

const MAX_DEPTH = 16;

/** A protobuf object as plain JSON: no bytes, no functions, Longs as numbers, bounded depth. */
export function jsonSafe(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object")
    return typeof value === "function" ? undefined : value;
  if (depth > MAX_DEPTH || value instanceof Uint8Array || ArrayBuffer.isView(value))
    return undefined;
  const long = value as { low?: unknown; high?: unknown; toNumber?: () => number };
  if (
    typeof long.low === "number" &&
    typeof long.high === "number" &&
    typeof long.toNumber === "function"
  )
    return long.toNumber();
  if (Array.isArray(value))
    return value.map((item) => jsonSafe(item, depth + 1)).filter((item) => item !== undefined);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const safe = jsonSafe(item, depth + 1);
    if (safe !== undefined) out[key] = safe;
  }
  return out;
}

import { env } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import type { ParseResult } from "../../../functions/channels/channel.ts";
import { TEST_MATRIX } from "../../../functions/channels/matrix/test-fixtures.ts";
import { pairingForgetter, settle, waitFor } from "../wait.ts";
import { parseSocketEvent, postCompanionEvent, storedOutcomes } from "../companion-events.ts";

export { newScenario, script as scriptModel, recorded } from "../../agent/model-helpers.ts";
export { settle, waitFor };

export const workerEnv = env as unknown as Env;
const fake = () => String(workerEnv.FAKE_MATRIX_URL);
export const BOT = TEST_MATRIX.bot.userId;
export const COMPANION_KEY = { id: "matrix", secret: "test-companion-matrix-secret" };

let counter = 0;
/** A Matrix-shaped id, unique per call: `!x…:fake.test`, `@x…:fake.test`, `$x…`. */
export function mxId(sigil: "!" | "@" | "$", prefix = "x"): string {
  counter += 1;
  const local = `${prefix}${Date.now().toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  return sigil === "$" ? `$${local}` : `${sigil}${local}:fake.test`;
}

/** A room event as the homeserver serves it in a sync timeline. */
export function roomEvent(fields: {
  sender: string;
  body?: string;
  type?: string;
  content?: Record<string, unknown>;
  eventId?: string;
}) {
  return {
    event_id: fields.eventId ?? mxId("$", "e"),
    type: fields.type ?? "m.room.message",
    sender: fields.sender,
    origin_server_ts: Date.now(),
    content: fields.content ?? { msgtype: "m.text", body: fields.body ?? "" },
  };
}

/** The connector's payload for one event: the event, its room, the bot, whether the room is a DM. */
export function payloadOf(
  roomId: string,
  event: ReturnType<typeof roomEvent>,
  extra: { direct?: boolean; targetSender?: string } = {},
) {
  return { roomId, event, self: { userId: BOT }, direct: extra.direct ?? false, ...extra };
}

/**
 * Hands one room event to the Worker as the companion's /sync connector does: a signed POST
 * /internal/companion/events. `parsed` is the same parse run locally, so tests can read drop reasons.
 */
export async function deliver(
  accountId: string,
  payload: ReturnType<typeof payloadOf>,
): Promise<{ parsed: ParseResult; outcomes: string[] }> {
  const event = { eventId: payload.event.event_id, payload };
  const parsed = await parseSocketEvent(workerEnv, "matrix", accountId, event);
  const result = await postCompanionEvent(COMPANION_KEY, "matrix", accountId, event);
  if (parsed.kind === "malformed") return { parsed, outcomes: [] };
  return { parsed, outcomes: storedOutcomes(result) };
}

export interface SentEvent {
  event_id: string;
  type: string;
  content: {
    body?: string;
    "m.relates_to"?: {
      rel_type?: string;
      event_id?: string;
      "m.in_reply_to"?: { event_id: string };
    };
  };
  unsigned?: { transaction_id?: string };
}

export const control = (path: string, body: unknown) =>
  fetch(`${fake()}/_control/${path}`, { method: "POST", body: JSON.stringify(body) });

/** A room the bot is in, on the fake homeserver (replies are refused elsewhere, as Matrix does). */
export async function joinedRoom(prefix = "r"): Promise<string> {
  const roomId = mxId("!", prefix);
  await control("room", { roomId, joined: true });
  return roomId;
}

export async function sentIn(roomId: string): Promise<SentEvent[]> {
  return (await (
    await fetch(`${fake()}/_control/sent?room=${encodeURIComponent(roomId)}`)
  ).json()) as SentEvent[];
}

export async function homeserverCalls(
  path: string,
): Promise<Array<{ method: string; path: string; body: Record<string, unknown> }>> {
  return (await (
    await fetch(`${fake()}/_control/calls?path=${encodeURIComponent(path)}`)
  ).json()) as Array<{ method: string; path: string; body: Record<string, unknown> }>;
}

/** The bot's events in a room, once they have settled to `count`. */
export async function sentSettled(roomId: string, count: number): Promise<SentEvent[]> {
  await waitFor(async () => ((await sentIn(roomId)).length >= count ? true : undefined));
  await settle(1500);
  return sentIn(roomId);
}

export const forgetPairingWhenDone = pairingForgetter("matrix");

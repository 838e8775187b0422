import { env, SELF } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import type { ParseResult } from "../../../functions/channels/channel.ts";
import { channelDefinition } from "../../../functions/channels/registry.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import { findSocketAccount } from "../../../functions/channels/companion/socket-accounts.ts";
import { signCompanion } from "./sign.ts";
import { TEST_SIGNAL } from "../../../functions/channels/signal/test-fixtures.ts";
import { pairingForgetter, settle, waitFor } from "../wait.ts";

export { newScenario, script as scriptModel, recorded } from "../../agent/model-helpers.ts";
export { settle, waitFor };

export const workerEnv = env as unknown as Env;
const fake = () => String(workerEnv.FAKE_SIGNAL_URL);
export const BOT = TEST_SIGNAL.bot;
export const COMPANION_KEY = { id: "signal", secret: "test-companion-signal-secret" };

let counter = 0;
/** A fresh E.164 number per call (+1555…), so tests never share a sender. */
export function number(): string {
  counter += 1;
  return `+1556${String(Date.now() % 1_000_000).padStart(6, "0")}${String(counter % 100).padStart(2, "0")}`;
}
/** A strictly increasing Signal timestamp. */
let clock = Date.now();
export function timestamp(): number {
  clock = Math.max(clock + 1, Date.now());
  return clock;
}

/** One envelope as signal-cli's receive serialises it (JsonMessageEnvelope with a data message). */
export function envelope(
  from: string,
  data: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const ts = typeof data.timestamp === "number" ? data.timestamp : timestamp();
  return {
    source: from,
    sourceNumber: from,
    sourceUuid: null,
    sourceName: "Tester",
    sourceDevice: 1,
    timestamp: ts,
    serverReceivedTimestamp: ts + 5,
    serverDeliveredTimestamp: ts + 9,
    dataMessage: { timestamp: ts, message: null, expiresInSeconds: 0, viewOnce: false, ...data },
    ...extra,
  };
}

/** The connector's payload for one envelope, as the bot of `accountId` received it. */
export function payloadOf(envelopeValue: ReturnType<typeof envelope>, accountId = "default") {
  const self =
    accountId === "team" ? { number: TEST_SIGNAL.team } : { number: BOT.number, uuid: BOT.uuid };
  return { envelope: envelopeValue, self, attachmentText: {} };
}

export const eventIdOf = (payload: ReturnType<typeof payloadOf>) =>
  `${payload.envelope.sourceNumber}:${payload.envelope.timestamp}`;

/**
 * Hands one envelope to the Worker as the companion's connector does: a signed POST
 * /internal/companion/events. `parsed` is the same parse run locally, so tests can read drop reasons.
 */
export async function deliver(
  accountId: string,
  payload: ReturnType<typeof payloadOf>,
): Promise<{ parsed: ParseResult; outcomes: string[] }> {
  const socket = channelDefinition("signal")!.socket!;
  const account = findSocketAccount(
    configFromEnv(workerEnv),
    workerEnv as unknown as Record<string, unknown>,
    "signal",
    accountId,
  )?.account;
  if (!account) throw new Error(`no Signal socket account ${accountId}`);
  const eventId = eventIdOf(payload);
  const parsed = await socket.parse(
    { eventId, payload, receivedAt: Date.now() },
    account,
    workerEnv,
  );
  const body = JSON.stringify({
    channel: "signal",
    accountId,
    events: [{ eventId, payload, receivedAt: Date.now() }],
  });
  const headers = await signCompanion(COMPANION_KEY, "POST", "/internal/companion/events", body);
  const res = await SELF.fetch("https://edgeclaw.test/internal/companion/events", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  if (res.status !== 200)
    throw new Error(`companion events answered ${res.status}: ${await res.text()}`);
  const [result] = (
    (await res.json()) as {
      results: Array<{ status: string; outcomes?: string[]; error?: string }>;
    }
  ).results;
  if (parsed.kind === "malformed") return { parsed, outcomes: [] };
  if (result!.status !== "stored") throw new Error(`event not stored: ${result!.error}`);
  return { parsed, outcomes: result!.outcomes ?? [] };
}

export interface SentCall {
  account: string;
  method: string;
  params: Record<string, unknown>;
  timestamp?: number;
}

/** What the bot did in one conversation (a number or `group:<id>`), optionally one method only. */
export async function sentTo(conversation: string, method = "send"): Promise<SentCall[]> {
  const query = new URLSearchParams({ to: conversation, method });
  return (await (await fetch(`${fake()}/_control/sent?${query}`)).json()) as SentCall[];
}

/** The bot's messages in a conversation, once they have settled to `count`. */
export async function sentSettled(conversation: string, count: number): Promise<SentCall[]> {
  await waitFor(async () => ((await sentTo(conversation)).length >= count ? true : undefined));
  await settle(1500);
  return sentTo(conversation);
}

export const forgetPairingWhenDone = pairingForgetter("signal");

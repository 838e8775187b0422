import { SELF } from "cloudflare:test";
import type { ParseResult } from "../../functions/channels/channel.ts";
import { findSocketAccount } from "../../functions/channels/companion/socket-accounts.ts";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { channelDefinition } from "../../functions/channels/registry.ts";
import type { Env } from "../../workers/env.ts";

/**
 * What the socket channels' tests share: handing an event to the Worker as the companion does,
 * and the parse alone as the Worker calls it. Each channel's helpers build the payloads.
 */

/** What `POST /internal/companion/events` answers for one event. */
export interface CompanionEventResult {
  status: string;
  outcomes?: string[];
  error?: string;
}

/**
 * One socket event handed to the Worker as the companion does: a signed
 * `POST /internal/companion/events`, where the channel's own socket parser turns it into envelopes
 * that are durably accepted. Throws unless the Worker answers 200.
 */
export async function postCompanionEvent(
  key: { id: string; secret: string },
  channel: string,
  accountId: string,
  event: { eventId: string; payload: unknown },
): Promise<CompanionEventResult> {
  const body = JSON.stringify({
    channel,
    accountId,
    events: [{ eventId: event.eventId, payload: event.payload, receivedAt: Date.now() }],
  });
  const headers = await signRequest(key, {
    method: "POST",
    path: "/internal/companion/events",
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000),
  });
  const res = await SELF.fetch("https://edgeclaw.test/internal/companion/events", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  if (res.status !== 200)
    throw new Error(`companion events answered ${res.status}: ${await res.text()}`);
  const [result] = ((await res.json()) as { results: CompanionEventResult[] }).results;
  return result!;
}

/** What the stored event's envelopes became; throws unless the event was stored. */
export function storedOutcomes(result: CompanionEventResult): string[] {
  if (result.status !== "stored") throw new Error(`event not stored: ${result.error}`);
  return result.outcomes ?? [];
}

/** The parse alone, through the channel's socket pieces and its configured account. */
export async function parseSocketEvent(
  workerEnv: Env,
  channel: string,
  accountId: string,
  event: { eventId: string; payload: unknown },
): Promise<ParseResult> {
  const socket = channelDefinition(channel)!.socket!;
  const account = findSocketAccount(
    configFromEnv(workerEnv),
    workerEnv as unknown as Record<string, unknown>,
    channel,
    accountId,
  )?.account;
  if (!account) throw new Error(`no ${channel} socket account ${accountId}`);
  return socket.parse({ ...event, receivedAt: Date.now() }, account, workerEnv);
}

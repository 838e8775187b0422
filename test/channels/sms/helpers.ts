import { env, SELF } from "cloudflare:test";
import { signTwilioRequest } from "../../../functions/channels/sms/verify.ts";
import type { Env } from "../../../workers/env.ts";
import { TEST_TWILIO } from "../../../functions/channels/sms/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_TWILIO };
export const fakeTwilio = () => String((env as unknown as Record<string, unknown>).FAKE_TWILIO_URL);
/** The host the Worker sees in tests (SELF.fetch). */
export const WORKER_ORIGIN = "https://edgeclaw.test";

let counter = 0;
/** A Twilio SID: two letters and 32 hex digits, unique per call. */
export function sid(prefix: "SM" | "MM" | "AC" | "MG" = "SM"): string {
  counter += 1;
  const hex =
    `${Date.now().toString(16)}${counter.toString(16)}${Math.floor(Math.random() * 0xffffffff).toString(16)}`
      .padEnd(32, "0")
      .slice(0, 32);
  return `${prefix}${hex}`;
}

/** A phone number nobody else in the suite uses (a stranger). */
export function strangerNumber(): string {
  counter += 1;
  return `+1999${String(Date.now() % 1_000_000).padStart(6, "0")}${counter % 10}`;
}

/** The form Twilio posts for an incoming SMS/MMS (https://www.twilio.com/docs/messaging/guides/webhook-request). */
export function inboundSms(fields: {
  from: string;
  body: string;
  messageSid?: string;
  to?: string;
  accountSid?: string;
  media?: Array<{ url: string; contentType: string }>;
  extra?: Array<[string, string]>;
}): Array<[string, string]> {
  const messageSid = fields.messageSid ?? sid(fields.media?.length ? "MM" : "SM");
  const params: Array<[string, string]> = [
    ["ToCountry", "US"],
    ["ToState", "CA"],
    ["SmsMessageSid", messageSid],
    ["NumMedia", String(fields.media?.length ?? 0)],
    ["ToCity", "SAN FRANCISCO"],
    ["FromZip", "94105"],
    ["SmsSid", messageSid],
    ["FromState", "CA"],
    ["SmsStatus", "received"],
    ["FromCity", "SAN FRANCISCO"],
    ["Body", fields.body],
    ["FromCountry", "US"],
    ["To", fields.to ?? TEST_TWILIO.fromNumber],
    ["ToZip", "94105"],
    ["NumSegments", "1"],
    ["MessageSid", messageSid],
    ["AccountSid", fields.accountSid ?? TEST_TWILIO.accountSid],
    ["From", fields.from],
    ["ApiVersion", "2010-04-01"],
  ];
  for (const [index, item] of (fields.media ?? []).entries())
    params.push([`MediaContentType${index}`, item.contentType], [`MediaUrl${index}`, item.url]);
  return [...params, ...(fields.extra ?? [])];
}

export interface PostOptions {
  /** Path on the Worker (default /webhooks/sms). */
  path?: string;
  /** The URL Twilio signed (default: the URL the Worker receives). */
  signedUrl?: string;
  authToken?: string;
  /** Send this signature instead of computing one (null: no header). */
  signature?: string | null;
  /** Send this body instead of the encoded params (the signature still covers `params`). */
  rawBody?: string;
  contentType?: string;
}

/** POSTs a form to the Worker the way Twilio does: urlencoded body, X-Twilio-Signature over the URL + sorted params. */
export async function postTwilio(
  params: Array<[string, string]>,
  options: PostOptions = {},
): Promise<Response> {
  const url = `${WORKER_ORIGIN}${options.path ?? "/webhooks/sms"}`;
  const signature =
    options.signature === undefined
      ? await signTwilioRequest(
          options.authToken ?? TEST_TWILIO.authToken,
          options.signedUrl ?? url,
          params,
        )
      : options.signature;
  return SELF.fetch(url, {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/x-www-form-urlencoded; charset=utf-8",
      "i-twilio-idempotency-token": crypto.randomUUID(),
      ...(signature === null ? {} : { "x-twilio-signature": signature }),
    },
    body: options.rawBody ?? new URLSearchParams(params).toString(),
  });
}

export interface FakeTwilioMessage {
  sid: string;
  to: string;
  from: string | null;
  body: string;
  messaging_service_sid: string | null;
  status: string;
}
export interface FakeTwilioCall {
  method: string;
  accountSid: string;
  args: Record<string, string | string[]>;
  auth: string;
}

export async function twilioMessages(to?: string): Promise<FakeTwilioMessage[]> {
  return (await (
    await fetch(`${fakeTwilio()}/_control/messages${to ? `?to=${encodeURIComponent(to)}` : ""}`)
  ).json()) as FakeTwilioMessage[];
}

export async function twilioCalls(method?: string, to?: string): Promise<FakeTwilioCall[]> {
  const query = new URLSearchParams();
  if (method) query.set("method", method);
  if (to) query.set("to", to);
  return (await (
    await fetch(`${fakeTwilio()}/_control/calls?${query}`)
  ).json()) as FakeTwilioCall[];
}

export async function scriptTwilio(script: {
  method: string;
  to?: string;
  times?: number;
  status?: number;
  code?: number;
  retryAfter?: number;
  dropConnection?: boolean;
  delayMs?: number;
}) {
  await fetch(`${fakeTwilio()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

/** Registers a media file with the fake; returns the MediaUrl Twilio would put in the webhook. */
export async function twilioMedia(item: {
  content?: string;
  contentType?: string;
  bytes?: number;
  contentLength?: number;
  accountSid?: string;
}): Promise<string> {
  const res = await fetch(`${fakeTwilio()}/_control/media`, {
    method: "POST",
    body: JSON.stringify({ accountSid: TEST_TWILIO.accountSid, ...item }),
  });
  return ((await res.json()) as { url: string }).url;
}

export { script as scriptModel, newScenario, recorded } from "../../agent/model-helpers.ts";

/** Was this event stored? SMS DMs land in the agent's main session under the default dmScope "main". */
export async function storedEvent(
  dedupKey: string,
  sessionKey = "agent:main:main",
): Promise<boolean> {
  const { runInDurableObject } = await import("cloudflare:test");
  const { SessionStore } = await import("../../../durable-objects/session/storage.ts");
  const sessions = (env as unknown as Env).SESSIONS;
  return runInDurableObject(
    sessions.get(sessions.idFromName(sessionKey)),
    async (_instance, state) =>
      new SessionStore(state.storage.sql).inbox.byKey(dedupKey) !== undefined,
  );
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("sms");

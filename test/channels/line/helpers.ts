import { env, SELF } from "cloudflare:test";
import { signLineBody } from "../../../functions/channels/line/verify.ts";
import { TEST_LINE } from "../../../functions/channels/line/test-fixtures.ts";
import { pairingForgetter } from "../wait.ts";

export { TEST_LINE };
export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

export const fakeLine = () => String((env as unknown as Record<string, unknown>).FAKE_LINE_URL);

let counter = 0;
/** A LINE-shaped id (`U`/`C`/`R` + 32 hex), unique per call so parallel files never share a chat. */
export function lineId(prefix: "U" | "C" | "R"): string {
  counter += 1;
  const hex = `${Date.now().toString(16)}${counter.toString(16).padStart(4, "0")}${Math.floor(Math.random() * 0xffffffff).toString(16)}`;
  return `${prefix}${hex.padEnd(32, "0").slice(0, 32)}`;
}

export function uniqueToken(prefix = "rt"): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}${Math.floor(Math.random() * 1e9).toString(36)}`;
}

/** A ULID-like webhookEventId. */
export function eventId(): string {
  return uniqueToken("01J").toUpperCase();
}

export type LineSourceInput =
  | { type: "user"; userId: string }
  | { type: "group"; groupId: string; userId?: string }
  | { type: "room"; roomId: string; userId?: string };

export interface LineEventInput {
  type?: string;
  source: LineSourceInput;
  webhookEventId?: string;
  replyToken?: string;
  isRedelivery?: boolean;
  timestamp?: number;
  mode?: "active" | "standby";
  message?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

/** One webhook event object as LINE sends it. */
export function lineEvent(input: LineEventInput): Record<string, unknown> {
  return {
    type: input.type ?? "message",
    mode: input.mode ?? "active",
    timestamp: input.timestamp ?? Date.now(),
    source: input.source,
    webhookEventId: input.webhookEventId ?? eventId(),
    deliveryContext: { isRedelivery: input.isRedelivery ?? false },
    ...(input.replyToken ? { replyToken: input.replyToken } : {}),
    ...(input.message ? { message: input.message } : {}),
    ...input.extra,
  };
}

export function textMessage(
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: "text",
    id: String(Math.floor(Math.random() * 1e15)),
    quoteToken: uniqueToken("q"),
    text,
    ...extra,
  };
}

export function webhookBody(
  events: Array<Record<string, unknown>>,
  destination: string = TEST_LINE.botUserId,
): string {
  return JSON.stringify({ destination, events });
}

export interface PostOptions {
  path?: string;
  secret?: string;
  signature?: string | null;
  headers?: Record<string, string>;
}

/** POSTs `body` to the Worker as LINE does: raw bytes, X-Line-Signature over them. */
export async function postLine(body: string, options: PostOptions = {}): Promise<Response> {
  const signature =
    options.signature === undefined
      ? await signLineBody(options.secret ?? TEST_LINE.channelSecret, body)
      : options.signature;
  return SELF.fetch(`https://edgeclaw.test${options.path ?? "/line/webhook"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature !== null ? { "x-line-signature": signature } : {}),
      ...options.headers,
    },
    body,
  });
}

/** Tells the fake LINE that it issued `replyToken` for an event in conversation `to`. */
export async function issueReplyToken(
  replyToken: string,
  to: string,
  ttlMs = 60_000,
): Promise<void> {
  await fetch(`${fakeLine()}/_control/reply-token`, {
    method: "POST",
    body: JSON.stringify({ replyToken, to, ttlMs }),
  });
}

export async function scriptLine(script: {
  api: "reply" | "push" | "loading" | "content";
  to?: string;
  times?: number;
  status?: number;
  retryAfter?: number;
  message?: string;
  dropConnection?: boolean;
}) {
  await fetch(`${fakeLine()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export interface FakeLineMessage {
  to: string;
  text: string;
  via: "reply" | "push";
}

export async function lineMessages(to: string): Promise<FakeLineMessage[]> {
  return (await (
    await fetch(`${fakeLine()}/_control/messages?to=${to}`)
  ).json()) as FakeLineMessage[];
}

export interface FakeLineCall {
  api: string;
  to?: string;
  body: Record<string, unknown>;
  retryKey?: string;
  token: string;
  status: number;
}

export async function lineCalls(api?: string, to?: string): Promise<FakeLineCall[]> {
  const query = new URLSearchParams();
  if (api) query.set("api", api);
  if (to) query.set("to", to);
  return (await (await fetch(`${fakeLine()}/_control/calls?${query}`)).json()) as FakeLineCall[];
}

export async function serveContent(
  messageId: string,
  content: { content?: string; bytes?: number; contentType?: string },
): Promise<void> {
  await fetch(`${fakeLine()}/_control/content`, {
    method: "POST",
    body: JSON.stringify({ messageId, ...content }),
  });
}

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("line");

import { env, SELF } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import { signSlackRequest } from "../../../functions/channels/slack/verify.ts";
import { pairingForgetter } from "../wait.ts";

export const SIGNING_SECRET = "test-slack-signing-secret";
export const OPS_SIGNING_SECRET = "test-slack-ops-signing-secret";
export const TEAM = "TTEST";
export const BOT_USER = "UBOTTEST";
export const APP_ID = "ATEST";

const fakeSlack = () => String((env as unknown as Env).FAKE_SLACK_URL);

export interface SignedPostOptions {
  path?: string;
  secret?: string;
  timestamp?: number;
  contentType?: string;
  headers?: Record<string, string>;
}

/** POSTs `body` to the Worker the way Slack does: raw bytes, v0 signature, request timestamp. */
export async function postSigned(body: string, options: SignedPostOptions = {}): Promise<Response> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = await signSlackRequest(options.secret ?? SIGNING_SECRET, timestamp, body);
  return SELF.fetch(`https://edgeclaw.test${options.path ?? "/slack/events"}`, {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
      ...options.headers,
    },
    body,
  });
}

let counter = 0;
/** Unique ids per call so parallel test files never share a conversation or an event. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36).toUpperCase()}${counter}${Math.floor(Math.random() * 1e6)}`;
}

export function messageEvent(fields: {
  eventId: string;
  channel: string;
  channelType: "im" | "channel" | "mpim" | "group";
  user?: string;
  text: string;
  ts: string;
  threadTs?: string;
  type?: "message" | "app_mention";
  extra?: Record<string, unknown>;
  /** Slack's `authorizations` entry names the bot user; `false` leaves it out (the bot's ids unknown). */
  authorizations?: false;
}): string {
  return JSON.stringify({
    token: "legacy-verification-token",
    team_id: TEAM,
    api_app_id: APP_ID,
    type: "event_callback",
    event_id: fields.eventId,
    event_time: Math.floor(Date.now() / 1000),
    ...(fields.authorizations === false
      ? {}
      : {
          authorizations: [
            {
              enterprise_id: null,
              team_id: TEAM,
              user_id: BOT_USER,
              is_bot: true,
              is_enterprise_install: false,
            },
          ],
        }),
    event: {
      type: fields.type ?? "message",
      channel: fields.channel,
      ...(fields.type === "app_mention" ? {} : { channel_type: fields.channelType }),
      user: fields.user ?? "UHUMAN1",
      text: fields.text,
      ts: fields.ts,
      event_ts: fields.ts,
      ...(fields.threadTs ? { thread_ts: fields.threadTs } : {}),
      ...fields.extra,
    },
  });
}

export interface FakeSlackCall {
  method: string;
  args: Record<string, unknown>;
  token: string;
}

export async function slackCalls(method?: string, channel?: string): Promise<FakeSlackCall[]> {
  const query = new URLSearchParams();
  if (method) query.set("method", method);
  if (channel) query.set("channel", channel);
  const res = await fetch(`${fakeSlack()}/_control/calls?${query}`);
  return (await res.json()) as FakeSlackCall[];
}

export async function slackMessages(
  channel: string,
): Promise<Array<{ ts: string; text: string; thread_ts?: string; deleted?: boolean }>> {
  const res = await fetch(`${fakeSlack()}/_control/messages?channel=${channel}`);
  return (await res.json()) as Array<{
    ts: string;
    text: string;
    thread_ts?: string;
    deleted?: boolean;
  }>;
}

export async function scriptSlack(script: {
  method: string;
  channel?: string;
  times?: number;
  status?: number;
  retryAfter?: number;
  error?: string;
  dropConnection?: boolean;
  token?: string;
  delayMs?: number;
}) {
  await fetch(`${fakeSlack()}/_control/script`, { method: "POST", body: JSON.stringify(script) });
}

export { script as scriptModel, newScenario } from "../../agent/model-helpers.ts";

/**
 * Removes this stranger's pending pairing request when the test ends (passed or failed). An account
 * holds at most 3 pending requests for an hour, and every test file that DMs "ops" as a stranger
 * shares that cap: left behind, three strangers would silence the fourth test's stranger.
 */

export { settle, waitFor } from "../wait.ts";
export const forgetPairingWhenDone = pairingForgetter("slack", "ops");

import * as z from "zod";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import {
  apiUrl,
  basicAuth,
  messagesUrl,
  sendResultFromResponse,
  type TwilioCredentials,
} from "./client.ts";
import { smsSecrets, type SmsAccount, type SmsSecrets } from "./config.ts";
import { markdownToSms, mmsBody } from "./format.ts";

/**
 * One reply chunk out through the Messages API (`POST /2010-04-01/Accounts/{Sid}/Messages.json`,
 * form `To`, `From` or `MessagingServiceSid`, `Body`, `StatusCallback`). Never retries on its own.
 * Twilio has no idempotency key, so a send whose outcome is unknown is reconciled by looking for
 * the message in the account's log (`reconcileSms`), never repeated blindly.
 */

export interface SmsTarget {
  account: SmsAccount;
  secrets: SmsSecrets;
  credentials: TwilioCredentials;
}

export function smsTarget(
  accountId: string,
  ctx: SendContext<SmsAccount>,
): SmsTarget | { error: string } {
  const account = ctx.account;
  if (!account) return { error: `channels.sms has no account ${accountId}` };
  const secrets = smsSecrets(account, ctx.env);
  if (!secrets.accountSid || !secrets.authToken)
    return { error: `no Twilio accountSid/authToken for sms account ${accountId}` };
  return {
    account,
    secrets,
    credentials: {
      accountSid: secrets.accountSid,
      authToken: secrets.authToken,
      apiBaseUrl: account.apiBaseUrl,
    },
  };
}

/**
 * The StatusCallback URL given with each message: the public webhook URL with `/status` added to
 * its path (query kept), plus a connection override asking Twilio to retry a 5xx (Twilio does not
 * sign the `#…` part). None without `publicWebhookUrl`: the Worker cannot know its public address.
 */
export function statusCallbackUrl(publicWebhookUrl: string): string {
  const hash = publicWebhookUrl.indexOf("#");
  const withoutFragment = hash === -1 ? publicWebhookUrl : publicWebhookUrl.slice(0, hash);
  const query = withoutFragment.indexOf("?");
  const path = query === -1 ? withoutFragment : withoutFragment.slice(0, query);
  const search = query === -1 ? "" : withoutFragment.slice(query);
  return `${path.replace(/\/+$/, "")}/status${search}`;
}
const STATUS_CALLBACK_OVERRIDES = "#rc=3&rp=5xx";

export async function sendSms(
  message: OutboundMessage,
  ctx: SendContext<SmsAccount>,
): Promise<SendResult> {
  // SMS has no previews to take back.
  if (message.retract) return { ok: true };
  const target = smsTarget(message.route.accountId, ctx);
  if ("error" in target) return { ok: false, retryable: false, error: target.error };
  const sender = senderParams(target.secrets);
  if (!sender)
    return {
      ok: false,
      retryable: false,
      error: `no fromNumber or messagingServiceSid for sms account ${target.account.accountId}`,
    };
  const body = markdownToSms(message.text);
  if (!body) return { ok: true };

  return createTwilioMessage(
    target,
    new URLSearchParams({ To: message.route.to, ...sender, Body: body }),
    ctx.signal,
  );
}

/**
 * One Messages create call with `form` (To, sender, Body, and MediaUrl for a file), plus the
 * StatusCallback when the public webhook URL is known. No answer at all is an unknown outcome.
 */
export async function createTwilioMessage(
  target: SmsTarget,
  form: URLSearchParams,
  signal: AbortSignal | undefined,
): Promise<SendResult> {
  if (target.secrets.publicWebhookUrl)
    form.set(
      "StatusCallback",
      statusCallbackUrl(target.secrets.publicWebhookUrl) + STATUS_CALLBACK_OVERRIDES,
    );
  let response: Response;
  try {
    response = await fetch(messagesUrl(target.credentials), {
      method: "POST",
      headers: {
        authorization: basicAuth(target.credentials),
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: form.toString(),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      ok: false,
      outcomeUnknown: true,
      error: `twilio request failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return sendResultFromResponse(response);
}

/** `From` wins over a Messaging Service when both are configured (OpenClaw). */
export function senderParams(secrets: SmsSecrets): Record<string, string> | undefined {
  if (secrets.fromNumber) return { From: secrets.fromNumber };
  if (secrets.messagingServiceSid) return { MessagingServiceSid: secrets.messagingServiceSid };
  return undefined;
}

const listedMessage = z
  .object({
    sid: z.string(),
    body: z.string().nullable().optional(),
    direction: z.string().optional(),
    date_created: z.string().nullable().optional(),
    messaging_service_sid: z.string().nullable().optional(),
    num_media: z.string().nullable().optional(),
  })
  .loose();
const messagePage = z
  .object({ messages: z.array(listedMessage), next_page_uri: z.string().nullable().optional() })
  .loose();

/** Pages of 50 read back per reconcile, newest first; a reply older than that many of our messages is not looked for. */
export const RECONCILE_MAX_PAGES = 4;
const RECONCILE_PAGE_SIZE = 50;
/** Clock difference tolerated between the Worker and Twilio's `date_created` (whole seconds). */
const CLOCK_SKEW_MS = 60_000;
/** Trial accounts prefix every body with this (Twilio); the rest is what was sent. */
const TRIAL_PREFIX = "Sent from your Twilio trial account - ";

/**
 * Did an earlier attempt of this chunk reach Twilio? Lists the account's messages to the recipient
 * (from our number when sending `From`; `date_sent` is not used as a filter because a queued
 * message has none yet), newest first, back to when the chunk was queued, and looks for an
 * outbound message with exactly this body. SMS carries no hidden marker, so the same text sent to
 * the same number since then counts as this one: the cost is a missing repeat of an identical
 * text, never a duplicate. Throws when Twilio cannot be asked (the outbox asks again later).
 */
export async function reconcileSms(
  message: OutboundMessage,
  ctx: SendContext<SmsAccount>,
): Promise<ReconcileResult> {
  const target = smsTarget(message.route.accountId, ctx);
  if ("error" in target) throw new Error(target.error);
  // A file went as an MMS whose Body is its caption or name (send-file.ts), with media.
  const body = message.file
    ? mmsBody(message.text, message.file.name)
    : markdownToSms(message.text);
  if (message.retract || !body) return { outcome: "landed" };
  const since = (message.queuedAt ?? Date.now() - 24 * 60 * 60 * 1000) - CLOCK_SKEW_MS;
  const first = messagesUrl(target.credentials);
  first.searchParams.set("To", message.route.to);
  if (target.secrets.fromNumber) first.searchParams.set("From", target.secrets.fromNumber);
  first.searchParams.set("PageSize", String(RECONCILE_PAGE_SIZE));
  let url: URL | undefined = first;
  for (let page = 0; url && page < RECONCILE_MAX_PAGES; page++) {
    const response = await fetch(url, {
      headers: { authorization: basicAuth(target.credentials), accept: "application/json" },
      redirect: "manual",
      signal: ctx.signal,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`twilio message list answered HTTP ${response.status}`);
    }
    const parsed = messagePage.safeParse(await response.json());
    if (!parsed.success) throw new Error("twilio message list: unexpected answer");
    let reachedOlder = false;
    for (const listed of parsed.data.messages) {
      const created = Date.parse(listed.date_created ?? "");
      if (Number.isFinite(created) && created < since) {
        reachedOlder = true;
        break;
      }
      if (!listed.direction?.startsWith("outbound")) continue;
      if (message.file && !(Number(listed.num_media ?? 0) > 0)) continue;
      if (
        !target.secrets.fromNumber &&
        target.secrets.messagingServiceSid &&
        listed.messaging_service_sid !== target.secrets.messagingServiceSid
      )
        continue;
      const sent = listed.body ?? "";
      if (
        sent === body ||
        (sent.startsWith(TRIAL_PREFIX) && sent.slice(TRIAL_PREFIX.length) === body)
      )
        return { outcome: "landed", platformMessageId: listed.sid };
    }
    if (reachedOlder || !parsed.data.next_page_uri) return { outcome: "missing" };
    url = apiUrl(target.credentials, parsed.data.next_page_uri);
  }
  // RECONCILE_MAX_PAGES pages without reaching the time the chunk was queued: asking again will not tell.
  return {
    outcome: "untraceable",
    reason: "too many messages to this number since the reply was queued",
    idempotent: false,
  };
}

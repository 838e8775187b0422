import type { InboundAttachment, InboundEnvelope } from "../../core/envelope.ts";
import type { SmsAccount, SmsSecrets } from "./config.ts";
import { readUtf8Body } from "../parse-json-body.ts";

/**
 * Twilio's incoming-message webhook (https://www.twilio.com/docs/messaging/guides/webhook-request):
 * an `application/x-www-form-urlencoded` POST with `MessageSid`, `AccountSid`, `From`, `To`, `Body`,
 * `NumMedia` and `MediaUrl<n>` / `MediaContentType<n>` per attachment (plus geo fields, and
 * parameters Twilio may add at any time — all of them are signed, none is required here beyond the
 * ones read).
 */

export type TwilioParams = Array<[string, string]>;

/** The form parameters, in the order received (names may repeat). Lenient: used for the signature. */
export function formParams(raw: Uint8Array): TwilioParams {
  return [...new URLSearchParams(new TextDecoder().decode(raw))];
}

/** Strict reading for parse: a form body in UTF-8, or why not. */
export function readForm(
  raw: Uint8Array,
  contentType: string | null,
): { ok: true; params: TwilioParams } | { ok: false; reason: string } {
  if (!/^application\/x-www-form-urlencoded\b/i.test(contentType ?? ""))
    return { ok: false, reason: `expected a form body, got ${contentType ?? "no content type"}` };
  const text = readUtf8Body(raw);
  return text.ok ? { ok: true, params: [...new URLSearchParams(text.value)] } : text;
}

const SID = /^[A-Z]{2}[0-9a-f]{32}$/i;
/** Twilio sends at most 10 media per MMS. */
export const MAX_MMS_MEDIA = 10;

/**
 * Keywords Twilio answers itself on long codes and Messaging Services (opt-out: STOP and its
 * synonyms; opt-in START/UNSTOP; HELP/INFO). The message is Twilio's business: nothing is stored,
 * so the agent never answers (after STOP it could not deliver anyway, error 21610). "YES" is also
 * one of Twilio's opt-in words but it is a normal answer in a conversation, so it reaches the agent.
 * With Advanced Opt-Out Twilio names the keyword type itself (`OptOutType`), which then decides.
 */
const TWILIO_KEYWORDS = new Set([
  "STOP",
  "STOPALL",
  "UNSUBSCRIBE",
  "CANCEL",
  "END",
  "QUIT",
  "REVOKE",
  "OPTOUT",
  "START",
  "UNSTOP",
  "HELP",
  "INFO",
]);

export type SmsInbound =
  | { kind: "message"; envelope: InboundEnvelope }
  | { kind: "dropped"; reason: string }
  | { kind: "malformed"; reason: string };

export function parseInboundMessage(
  params: TwilioParams,
  ctx: { account: SmsAccount; secrets: SmsSecrets; receivedAt: number },
): SmsInbound {
  const get = (name: string) => params.find(([key]) => key === name)?.[1];
  const messageSid = get("MessageSid") ?? get("SmsSid");
  const from = get("From")?.trim();
  const to = get("To")?.trim();
  const accountSid = get("AccountSid");
  if (!messageSid || !SID.test(messageSid))
    return { kind: "malformed", reason: "missing or malformed MessageSid" };
  if (!accountSid || !SID.test(accountSid))
    return { kind: "malformed", reason: "missing or malformed AccountSid" };
  if (!from) return { kind: "malformed", reason: "missing From" };
  if (!to) return { kind: "malformed", reason: "missing To" };

  const identity = identityMismatch(
    { accountSid, to, messagingServiceSid: get("MessagingServiceSid") },
    ctx.secrets,
  );
  if (identity) return { kind: "dropped", reason: identity };

  const body = get("Body") ?? "";
  if (get("OptOutType") || TWILIO_KEYWORDS.has(body.trim().toUpperCase()))
    return { kind: "dropped", reason: "opt-out/help keyword: handled by Twilio" };

  const declared = Number(get("NumMedia") ?? "0");
  const count = Number.isInteger(declared) && declared > 0 ? Math.min(declared, MAX_MMS_MEDIA) : 0;
  const attachments: InboundAttachment[] = [];
  for (let index = 0; index < count; index++) {
    const url = get(`MediaUrl${index}`);
    if (!url) continue;
    const mimeType = get(`MediaContentType${index}`);
    attachments.push({
      name: `MMS attachment ${index + 1}`,
      url,
      ...(mimeType ? { mimeType } : {}),
    });
  }

  const accountId = ctx.account.accountId;
  const envelope: InboundEnvelope = {
    dedupKey: `sms:${accountId}:${messageSid}`,
    // No timestamp in Twilio's signature: the MessageSid must outlive any replay that could verify.
    replayGuardMs: ctx.account.messageSidRetentionDays * 86_400_000,
    kind: "message",
    channel: "sms",
    accountId,
    chatType: "direct",
    peerId: from,
    senderId: from,
    messageId: messageSid,
    text: body,
    ...(attachments.length ? { attachments } : {}),
    receivedAt: ctx.receivedAt,
    route: { channel: "sms", accountId, to: from, replyToMessageId: messageSid },
  };
  return { kind: "message", envelope };
}

/**
 * A signed callback for another account or sender than this one's (a shared auth token, a number
 * moved between accounts): never dispatched. With neither `fromNumber` nor `messagingServiceSid`
 * resolved the account cannot check `To`, and only `AccountSid` is compared.
 */
function identityMismatch(
  given: { accountSid: string; to: string; messagingServiceSid?: string },
  secrets: SmsSecrets,
): string | undefined {
  if (secrets.accountSid && given.accountSid !== secrets.accountSid)
    return "AccountSid is not this account's";
  if (!secrets.fromNumber && !secrets.messagingServiceSid) return undefined;
  if (secrets.fromNumber && given.to === secrets.fromNumber) return undefined;
  if (secrets.messagingServiceSid && given.messagingServiceSid === secrets.messagingServiceSid)
    return undefined;
  return "To / MessagingServiceSid is not this account's sender";
}

/** A delivery status callback (`StatusCallback` of an outbound message): what is worth a log line. */
export interface DeliveryStatus {
  messageSid: string;
  status: string;
  errorCode?: string;
}

export function parseStatusCallback(
  params: TwilioParams,
  secrets: SmsSecrets,
): { ok: true; status: DeliveryStatus } | { ok: false; reason: string } {
  const get = (name: string) => params.find(([key]) => key === name)?.[1];
  const messageSid = get("MessageSid") ?? get("SmsSid");
  const status = get("MessageStatus") ?? get("SmsStatus");
  if (!messageSid || !SID.test(messageSid) || !status)
    return { ok: false, reason: "missing MessageSid or MessageStatus" };
  const accountSid = get("AccountSid");
  if (!accountSid || (secrets.accountSid && accountSid !== secrets.accountSid))
    return { ok: false, reason: "AccountSid is not this account's" };
  const errorCode = get("ErrorCode");
  return {
    ok: true,
    status: {
      messageSid,
      status: status.slice(0, 32),
      ...(errorCode ? { errorCode: errorCode.slice(0, 16) } : {}),
    },
  };
}

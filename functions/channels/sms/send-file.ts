import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import type { OutboundFileRef } from "../../media/outbound.ts";
import { mediaUrlUnavailable, signMediaUrl } from "../../media/signed-url.ts";
import type { SmsAccount } from "./config.ts";
import { mmsBody } from "./format.ts";
import { createTwilioMessage, senderParams, smsTarget } from "./send.ts";

/**
 * A file out as an MMS: Twilio takes media only as `MediaUrl`, a public link it fetches (GET,
 * after a HEAD) when it sends the message, and checks the `Content-Type` it gets against the bytes.
 * The link is this Worker's signed media route (functions/media/signed-url.ts), good for 4 hours,
 * Twilio's default `ValidityPeriod` (a message not sent by then is dropped by Twilio anyway).
 *
 * The Body is the row's caption or the file's name (mmsBody). Twilio has no idempotency key, so a
 * send whose outcome is lost is reconciled like a text: the account's log is read for an outbound
 * message to that number, since the row was queued, with that Body and media (send.ts
 * reconcileSms), and it is never sent again blindly.
 *
 * MMS reaches US and Canadian numbers; elsewhere Twilio turns it into an SMS with a link to the
 * media (its "MMS Converter"), which still works through this route while the link lives.
 */
export const MMS_MAX_BYTES = 5 * 1024 * 1024;
const MMS_URL_TTL_SECONDS = 4 * 60 * 60;

/** Twilio's accepted text types; another text document (Markdown, JSON, YAML) goes as plain text. */
const MMS_TEXT_TYPES = new Set([
  "text/plain",
  "text/csv",
  "text/calendar",
  "text/vcard",
  "text/richtext",
]);

export function smsFileRefusal(
  _file: Pick<OutboundFileRef, "mimeType">,
  ctx: SendContext<SmsAccount>,
): string | undefined {
  return mediaUrlUnavailable(ctx.config, ctx.env);
}

export async function sendSmsFile(
  message: OutboundFileMessage,
  _bytes: Uint8Array,
  ctx: SendContext<SmsAccount>,
): Promise<SendResult> {
  const target = smsTarget(message.route.accountId, ctx);
  if ("error" in target) return { ok: false, retryable: false, error: target.error };
  const sender = senderParams(target.secrets);
  if (!sender)
    return {
      ok: false,
      retryable: false,
      error: `no fromNumber or messagingServiceSid for sms account ${target.account.accountId}`,
    };
  const { file } = message;
  let url: string;
  try {
    url = await signMediaUrl(
      ctx.config,
      ctx.env,
      { ...file, mimeType: mmsContentType(file.mimeType) },
      MMS_URL_TTL_SECONDS,
    );
  } catch (error) {
    return { ok: false, retryable: false, error: `sms file: ${(error as Error).message}` };
  }
  const form = new URLSearchParams({
    To: message.route.to,
    ...sender,
    Body: mmsBody(message.text, file.name),
    MediaUrl: url,
  });
  return createTwilioMessage(target, form, ctx.signal);
}

/** The type the link serves the file as: its own, except text documents Twilio does not list. */
export function mmsContentType(mimeType: string): string {
  if (
    mimeType.startsWith("text/") ||
    mimeType === "application/json" ||
    mimeType === "application/yaml"
  )
    return MMS_TEXT_TYPES.has(mimeType) ? mimeType : "text/plain";
  return mimeType;
}

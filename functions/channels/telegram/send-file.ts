import type { TelegramAccount } from "./config.ts";
import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import { callBotApi } from "./client.ts";
import { markdownToTelegramHtml } from "./format.ts";
import { replyParams, telegramTarget, threadParams } from "./route.ts";
import { sendResultFromFailure } from "./send.ts";

/** The Bot API's upload bounds (core.telegram.org/bots/api#sending-files): 10 MB a photo, 50 MB any other file. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
export const TELEGRAM_UPLOAD_MAX_BYTES = 50 * 1024 * 1024;

/**
 * One file out to Telegram as a multipart upload, with the method that shows it best: a voice
 * note (`sendVoice`: OGG/Opus, MP3 or M4A) when asked for one, a photo (`sendPhoto`) for a JPEG,
 * PNG or WebP within 10 MB, an audio file (`sendAudio`) for MP3/M4A, and `sendDocument` for the
 * rest. The caption is HTML like a text chunk's, at most 1024 characters. Like sendMessage, no
 * idempotency key exists: a lost answer is reconciled as untraceable (send.ts), never repeated.
 */
export async function sendTelegramFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<TelegramAccount>,
): Promise<SendResult> {
  const target = telegramTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.telegram is not configured" };
  if (!target.botToken)
    return {
      ok: false,
      retryable: false,
      error: `no Telegram bot token for account ${message.route.accountId}`,
    };
  const { method, field } = uploadMethod(message.file, bytes.byteLength);
  const form = new FormData();
  form.set("chat_id", message.route.to);
  const extra = {
    ...threadParams(message.route, "message"),
    ...replyParams(message.route, target.account, message.chunkIndex),
  };
  for (const [key, value] of Object.entries(extra))
    form.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  const caption = message.text.trim();
  if (caption) {
    form.set("caption", markdownToTelegramHtml(caption).slice(0, 1024));
    form.set("parse_mode", "HTML");
  }
  form.set(
    field,
    new Blob([bytes as Uint8Array<ArrayBuffer>], { type: message.file.mimeType }),
    message.file.name,
  );
  const sent = await callBotApi<{ message_id: number }>(
    target.account.apiRoot,
    target.botToken,
    method,
    form,
    ctx.signal,
  );
  return sent.ok
    ? { ok: true, platformMessageId: String(sent.result.message_id) }
    : sendResultFromFailure(sent);
}

function uploadMethod(
  file: OutboundFileMessage["file"],
  size: number,
): { method: string; field: string } {
  const mime = file.mimeType;
  const voiceable = mime === "audio/ogg" || mime === "audio/mpeg" || mime === "audio/mp4";
  if (file.voice && voiceable) return { method: "sendVoice", field: "voice" };
  if (/^image\/(jpeg|png|webp)$/.test(mime) && size <= PHOTO_MAX_BYTES)
    return { method: "sendPhoto", field: "photo" };
  if (mime === "audio/mpeg" || mime === "audio/mp4") return { method: "sendAudio", field: "audio" };
  return { method: "sendDocument", field: "document" };
}

import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import type { OutboundFileRef } from "../../media/outbound.ts";
import { audioDurationMs } from "../../media/audio-duration.ts";
import { mediaUrlUnavailable, signMediaUrl } from "../../media/signed-url.ts";
import { callLineApi, firstSentMessageId, sendResultFromAnswer } from "./api.ts";
import type { LineAccount } from "./config.ts";
import { lineTextMessages, markdownToLineText } from "./format.ts";
import { lineRetryKey } from "./send.ts";
import { lineTarget } from "./target.ts";

/**
 * A file out to LINE. A bot cannot upload to LINE: an image or audio message names an HTTPS link
 * that LINE's app fetches (messaging-api `originalContentUrl`), so the file goes as a signed link
 * to this Worker's media route (functions/media/signed-url.ts), good for `mediaUrlTtlHours`:
 *
 * - JPEG or PNG → an `image` message, the same link as `previewImageUrl` (LINE: JPEG/PNG, 10 MB).
 * - MP3 or M4A whose length can be read → an `audio` message with `duration` in ms (required).
 * - Anything else (LINE bots have no file message; a video needs a preview image we do not have)
 *   → a text message with the file's name and the link, which LINE shows as a tappable URL.
 *
 * Always a push with `X-Line-Retry-Key` from the outbox row id, never the reply token: a repeat
 * after a lost answer is dropped by LINE (409), so a file is never shown twice, and the send is
 * simply retried rather than reconciled. A caption (the row's text) goes first in the same call.
 */
export const LINE_IMAGE_MAX_BYTES = 10 * 1024 * 1024;
const LINE_IMAGE_TYPES = new Set(["image/jpeg", "image/png"]);

export function lineFileRefusal(
  _file: Pick<OutboundFileRef, "mimeType">,
  ctx: SendContext<LineAccount>,
): string | undefined {
  return mediaUrlUnavailable(ctx.config, ctx.env);
}

export async function sendLineFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<LineAccount>,
): Promise<SendResult> {
  const target = lineTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.line is not configured" };
  if (!target.accessToken)
    return {
      ok: false,
      retryable: false,
      error: `no LINE channel access token for account ${message.route.accountId}`,
    };
  const { account } = target;
  const { file } = message;
  let url: string;
  try {
    url = await signMediaUrl(ctx.config, ctx.env, file, account.mediaUrlTtlHours * 3600);
  } catch (error) {
    return { ok: false, retryable: false, error: `line file: ${(error as Error).message}` };
  }
  const caption = message.text
    ? lineTextMessages(markdownToLineText(message.text), account.textChunkLimit, "length")
        .slice(0, 4)
        .map((text) => ({ type: "text", text }))
    : [];
  const answer = await callLineApi(
    { apiBaseUrl: account.apiBaseUrl, accessToken: target.accessToken },
    "v2/bot/message/push",
    { to: message.route.to, messages: [...caption, lineFileMessage(file, bytes, url)] },
    {
      headers: { "x-line-retry-key": await lineRetryKey(message.route.accountId, message.id) },
      signal: ctx.signal,
    },
  );
  if (answer.ok) return { ok: true, platformMessageId: firstSentMessageId(answer.body) };
  if (answer.status === 409)
    return {
      ok: true,
      platformMessageId: answer.headers.get("x-line-accepted-request-id") ?? undefined,
    };
  return sendResultFromAnswer(answer, "push file", true);
}

/** The one LINE message that carries the file (see the list above). */
export function lineFileMessage(
  file: OutboundFileRef,
  bytes: Uint8Array,
  url: string,
): Record<string, unknown> {
  if (LINE_IMAGE_TYPES.has(file.mimeType) && bytes.byteLength <= LINE_IMAGE_MAX_BYTES)
    return { type: "image", originalContentUrl: url, previewImageUrl: url };
  const duration = audioDurationMs(bytes, file.mimeType);
  if (duration !== undefined && duration > 0)
    return { type: "audio", originalContentUrl: url, duration };
  return { type: "text", text: `📎 ${file.name}\n${url}` };
}

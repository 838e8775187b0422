import type { SendContext } from "../adapter.ts";
import type { InboundAttachment, ReplyRoute } from "../../core/envelope.ts";
import type { FetchedAttachment } from "../adapter.ts";
import { attachmentText, mediaMaxMbLimit } from "../attachment-download.ts";
import { callBotApi } from "./client.ts";
import { botFileUrl, type TelegramAccount } from "./config.ts";
import { TELEGRAM_FILE_URL_PREFIX, TELEGRAM_GETFILE_MAX_BYTES } from "./parse.ts";
import { telegramTarget } from "./route.ts";

/**
 * Downloads a file a user sent (by its `file_id`): `getFile` gives a `file_path`, valid for at least
 * an hour, served at `<apiRoot>/file/bot<token>/<file_path>`. The token is part of that URL, so it
 * only ever goes to the configured `apiRoot`, and redirects are not followed. Bounded by
 * `mediaMaxMb` and the Bot API's own 20 MB getFile limit: a larger declared size is refused before
 * any byte is read, and at most MAX_ATTACHMENT_PREFIX_BYTES are kept.
 */
export async function fetchTelegramFile(
  attachment: InboundAttachment,
  _route: ReplyRoute,
  ctx: SendContext<TelegramAccount>,
): Promise<FetchedAttachment> {
  const target = telegramTarget(ctx);
  if (!target?.botToken) return { skipped: "no Telegram bot token to download it with" };
  if (!attachment.url?.startsWith(TELEGRAM_FILE_URL_PREFIX))
    return { skipped: "not a Telegram file" };
  const fileId = attachment.url.slice(TELEGRAM_FILE_URL_PREFIX.length);
  const { account, botToken } = target;
  const media = mediaMaxMbLimit(account.mediaMaxMb);
  const limit =
    media.maxBytes < TELEGRAM_GETFILE_MAX_BYTES
      ? media
      : {
          maxBytes: TELEGRAM_GETFILE_MAX_BYTES,
          tooLarge: "larger than the Bot API's 20 MB download limit",
        };
  const tooLarge = { skipped: limit.tooLarge };
  if (attachment.sizeBytes !== undefined && attachment.sizeBytes > limit.maxBytes) return tooLarge;

  const file = await callBotApi<{ file_path?: string; file_size?: number }>(
    account.apiRoot,
    botToken,
    "getFile",
    { file_id: fileId },
    ctx.signal,
  );
  if (!file.ok)
    return {
      skipped:
        file.kind === "lost"
          ? `getFile failed: ${file.error}`
          : `getFile refused: ${file.description}`,
    };
  if (!file.result.file_path) return { skipped: "Telegram gave no download path" };
  if (file.result.file_size !== undefined && file.result.file_size > limit.maxBytes)
    return tooLarge;

  const response = await fetch(botFileUrl(account.apiRoot, botToken, file.result.file_path), {
    redirect: "manual",
    signal: ctx.signal,
  });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { skipped: `download answered HTTP ${response.status}` };
  }
  return attachmentText(response, limit, attachment);
}

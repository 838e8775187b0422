import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import { mattermostApi, mattermostBot, type MattermostPostRecord } from "./api.ts";
import type { MattermostAccount } from "./config.ts";
import { failure, OUTBOX_PROP, postKey } from "./send.ts";

/**
 * One file out to Mattermost (REST v4): `POST /files` (multipart `channel_id`, `files`,
 * `client_ids`) stores it and answers its `file_infos[].id`; then `POST /posts` with that id in
 * `file_ids` shows it, with the caption as `message` and the same `pending_post_id` and outbox
 * props as a text chunk, so a lost post is found by reconcile (send.ts) and never posted twice.
 * An uploaded file belongs to no post until the post is made: a failure before that is invisible
 * and simply retried (the orphaned upload is the server's to clean up).
 */
export async function sendMattermostFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<MattermostAccount>,
): Promise<SendResult> {
  const bot = mattermostBot(ctx);
  if ("missing" in bot) return { ok: false, retryable: false, error: bot.missing };
  const key = await postKey(message);
  const form = new FormData();
  form.set("channel_id", message.route.to);
  form.set("client_ids", key);
  form.set(
    "files",
    new Blob([bytes as Uint8Array<ArrayBuffer>], { type: message.file.mimeType }),
    message.file.name,
  );
  const uploaded = await mattermostApi<{ file_infos?: Array<{ id: string }> }>(
    bot,
    "POST",
    "/files",
    form,
  );
  if (!uploaded.ok) {
    const failed = failure(uploaded);
    // Nothing is visible before the post: a lost upload is safe to make again.
    return "outcomeUnknown" in failed
      ? { ok: false, retryable: true, error: failed.error }
      : failed;
  }
  const fileId = uploaded.value.file_infos?.[0]?.id;
  if (!fileId)
    return { ok: false, retryable: true, error: "mattermost /files answered no file id" };
  const posted = await mattermostApi<MattermostPostRecord>(bot, "POST", "/posts", {
    channel_id: message.route.to,
    message: message.text,
    file_ids: [fileId],
    ...(message.route.threadId ? { root_id: message.route.threadId } : {}),
    pending_post_id: key,
    props: { [OUTBOX_PROP]: key },
  });
  return posted.ok ? { ok: true, platformMessageId: posted.value.id } : failure(posted);
}

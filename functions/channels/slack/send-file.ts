import type { SlackAccount } from "./config.ts";
import type { OutboundFileMessage, SendContext, SendResult } from "../adapter.ts";
import { sendResultFromError, slackClient } from "./client.ts";
import { markdownToMrkdwn } from "./format.ts";
import { slackTarget, threadTsFor } from "./route.ts";

/** Slack's own upload limit for one file (1 GB); `mediaMaxMb` (20) normally bounds it first. */
export const SLACK_UPLOAD_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * The block id a file's share message carries: `files.completeUploadExternal` takes no message
 * metadata, so the outbox id rides in the one block of the share message (its caption, or the
 * file's name), where reconcile (send.ts) looks for it in the conversation's history.
 */
export function fileBlockId(outboxId: string): string {
  return `edgeclaw_file:${outboxId}`.slice(0, 255);
}

/**
 * One file out to Slack with its upload API (the replacement of files.upload):
 * 1. `files.getUploadURLExternal` (filename, length) → an upload URL and a file id;
 * 2. the bytes POSTed to that URL — pre-signed, so the bot token is not sent, and only to Slack's
 *    own HTTPS hosts or the configured Web API origin (the fake in tests);
 * 3. `files.completeUploadExternal` shares it in the route's conversation (and thread), with one
 *    section block tagged by the outbox id as the share message.
 * Until step 3 nothing is visible, so a failure before it is simply retried; step 3's lost answer
 * is reconciled by the tagged block (an unshared upload left behind is invisible and expires).
 */
export async function sendSlackFile(
  message: OutboundFileMessage,
  bytes: Uint8Array,
  ctx: SendContext<SlackAccount>,
): Promise<SendResult> {
  const { route } = message;
  if (route.extra?.responseUrl)
    return {
      ok: false,
      retryable: false,
      error: "a slash-command reply (response_url) cannot carry a file",
    };
  const target = slackTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.slack is not configured" };
  if (!target.botToken)
    return {
      ok: false,
      retryable: false,
      error: `no Slack bot token for account ${route.accountId}`,
    };
  const client = slackClient(target.botToken, target.account.apiBaseUrl);

  let upload: { upload_url?: string; file_id?: string };
  try {
    upload = await client.files.getUploadURLExternal({
      filename: message.file.name,
      length: bytes.byteLength,
    });
  } catch (error) {
    return nothingShared(sendResultFromError(error));
  }
  if (!upload.upload_url || !upload.file_id)
    return { ok: false, retryable: true, error: "files.getUploadURLExternal gave no upload URL" };
  const uploadUrl = new URL(upload.upload_url);
  if (!isSlackUploadHost(uploadUrl, new URL(target.account.apiBaseUrl).origin))
    return {
      ok: false,
      retryable: false,
      error: `refusing to upload to ${uploadUrl.hostname} (not a Slack host)`,
    };
  try {
    const response = await fetch(uploadUrl, {
      method: "POST",
      headers: { "content-type": message.file.mimeType },
      body: bytes as Uint8Array<ArrayBuffer>,
      redirect: "manual",
      signal: ctx.signal,
    });
    await response.body?.cancel();
    if (!response.ok)
      return {
        ok: false,
        retryable: response.status >= 500 || response.status === 429,
        error: `Slack file upload answered HTTP ${response.status}`,
      };
  } catch (error) {
    // Nothing is shared before step 3: a lost upload is safe to make again.
    return {
      ok: false,
      retryable: true,
      error: `Slack file upload: ${error instanceof Error ? error.message : String(error)}`,
    };
  }

  const threadTs = threadTsFor(route, target.account, 0);
  const caption = message.text.trim() ? markdownToMrkdwn(message.text) : message.file.name;
  try {
    const done = await client.files.completeUploadExternal({
      files: [{ id: upload.file_id, title: message.file.name }],
      channel_id: route.to,
      ...(threadTs ? { thread_ts: threadTs } : {}),
      blocks: [
        {
          type: "section",
          block_id: fileBlockId(message.id),
          text: { type: "mrkdwn", text: caption.slice(0, 3000) },
        },
      ],
    });
    return { ok: true, platformMessageId: done.files?.[0]?.id ?? upload.file_id };
  } catch (error) {
    return sendResultFromError(error);
  }
}

/** Before the share, a lost answer changed nothing anyone sees: retry instead of reconciling. */
function nothingShared(result: Extract<SendResult, { ok: false }>): SendResult {
  return "outcomeUnknown" in result ? { ok: false, retryable: true, error: result.error } : result;
}

function isSlackUploadHost(url: URL, apiOrigin: string): boolean {
  if (url.origin === apiOrigin) return true;
  if (url.protocol !== "https:") return false;
  return ["slack.com", "slack-gov.com"].some(
    (domain) => url.hostname === domain || url.hostname.endsWith(`.${domain}`),
  );
}

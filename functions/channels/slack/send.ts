import type { SlackAccount } from "./config.ts";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { commitPreview } from "../preview-stream.ts";
import { platformErrorCode, sendResultFromError, slackClient } from "./client.ts";
import { markdownToMrkdwn } from "./format.ts";
import { findTaggedMessages } from "./lookup.ts";
import { fileBlockId } from "./send-file.ts";
import { adoptPendingPreview, hasPendingPreview, removePreview } from "./preview.ts";
import { REPLY_EVENT_TYPE, replyMetadata, slackTarget, threadTsFor } from "./route.ts";

/**
 * One reply chunk out to Slack. Never retries on its own (the outbox does, honouring Retry-After).
 *
 * - Slash-command routes answer through `response_url` (ephemeral unless configured otherwise).
 * - The first chunk of a run that left a live preview (`progressState.previewTs`) or a native stream
 *   (`streamTs`) edits that message into the final text instead of posting a second one; if the edit
 *   is refused, the chunk is posted normally and the stale preview deleted (best effort), so the
 *   user sees one answer, not two.
 * - A run's preview posted but never recorded (crash between post and record) is looked up by its
 *   metadata first and adopted (preview.ts); a `retract` message removes the preview, posts nothing.
 * - Every post carries `metadata.event_payload.outbox_id`, which `reconcileSlackMessage` looks for.
 */
export async function sendSlackMessage(
  message: OutboundMessage,
  ctx: SendContext<SlackAccount>,
): Promise<SendResult> {
  const { route } = message;
  const text = markdownToMrkdwn(message.text);
  if (route.extra?.responseUrl)
    return postToResponseUrl(route.extra.responseUrl, route.extra.responseType, text, ctx.signal);

  const target = slackTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.slack is not configured" };
  if (!target.botToken)
    return {
      ok: false,
      retryable: false,
      error: `no Slack bot token for account ${route.accountId}`,
    };
  const client = slackClient(target.botToken, target.account.apiBaseUrl);
  let state = message.progressState ?? {};
  if ((message.chunkIndex === 0 || message.retract) && hasPendingPreview(state)) {
    // A preview posted just before a crash (or whose answer was lost) is found first, so the final
    // text replaces it instead of appearing beside it. Cannot ask Slack now: try again later.
    try {
      state = await adoptPendingPreview({
        client,
        route,
        account: target.account,
        botToken: target.botToken,
        state,
        runId: message.runId,
      });
    } catch (error) {
      return {
        ok: false,
        retryable: true,
        error: `preview lookup failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
  if (message.retract) {
    try {
      await removePreview(client, state);
      return { ok: true };
    } catch (error) {
      return sendResultFromError(error);
    }
  }

  if (message.chunkIndex === 0 && state.streamTs && state.streamChannel) {
    // Close the native stream first; its streamed text is then replaced by the final chunk.
    await client.chat
      .stopStream({ channel: state.streamChannel, ts: state.streamTs })
      .catch(() => undefined);
  }
  const previewChannel = state.streamChannel ?? state.previewChannel ?? route.to;
  return commitPreview({
    previewId: message.chunkIndex === 0 ? (state.streamTs ?? state.previewTs) : undefined,
    edit: async (ts) => {
      try {
        await client.chat.update({ channel: previewChannel, ts, text });
        return { ok: true };
      } catch (error) {
        // Slack refused the edit (deleted, too old, …): a normal post instead.
        return platformErrorCode(error) ? "gone" : sendResultFromError(error);
      }
    },
    post: async () => {
      try {
        const threadTs = threadTsFor(route, target.account, message.chunkIndex);
        const result = await client.chat.postMessage({
          channel: route.to,
          text,
          mrkdwn: true,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          unfurl_links: target.account.unfurlLinks,
          ...(target.account.unfurlMedia !== undefined
            ? { unfurl_media: target.account.unfurlMedia }
            : {}),
          metadata: replyMetadata(message),
        });
        return { ok: true, platformMessageId: result.ts };
      } catch (error) {
        return sendResultFromError(error);
      }
    },
    discard: (ts) => client.chat.delete({ channel: previewChannel, ts }),
  });
}

/**
 * Did an earlier attempt of this chunk reach Slack? Searches the conversation (or the chunk's thread)
 * for our metadata marker (a file: its share message's tagged block), from the moment the chunk was queued to now, page by page
 * (`findTaggedMessages`), so a busy channel cannot hide a landed post. Throws when it cannot tell
 * (Slack unreachable): the outbox then asks again later instead of re-sending. A `response_url`
 * reply leaves no trace to look for and Slack does not drop repeats, so it is "untraceable".
 */
export async function reconcileSlackMessage(
  message: OutboundMessage,
  ctx: SendContext<SlackAccount>,
): Promise<ReconcileResult> {
  const { route } = message;
  if (route.extra?.responseUrl)
    return {
      outcome: "untraceable",
      reason: "a slash-command response_url reply cannot be looked up",
      idempotent: false,
    };
  const target = slackTarget(ctx);
  if (!target?.botToken) throw new Error("Slack is not configured for this route");
  const client = slackClient(target.botToken, target.account.apiBaseUrl);
  const threadTs = threadTsFor(route, target.account, message.chunkIndex);
  const [found] = await findTaggedMessages(
    client,
    { channel: route.to, threadTs, sinceMs: message.queuedAt ?? Date.now() - 24 * 60 * 60 * 1000 },
    (tagged) =>
      message.file
        ? tagged.blockIds.includes(fileBlockId(message.id))
        : tagged.eventType === REPLY_EVENT_TYPE && tagged.payload.outbox_id === message.id,
    { firstOnly: true },
  );
  // Not there: safe to send. (A first chunk that edits its preview is idempotent anyway.)
  return found ? { outcome: "landed", platformMessageId: found.ts } : { outcome: "missing" };
}

/** `response_url` takes up to five replies within 30 minutes; each is a plain JSON POST, no token. */
async function postToResponseUrl(
  url: string,
  responseType: string | undefined,
  text: string,
  signal?: AbortSignal,
): Promise<SendResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        response_type: responseType === "in_channel" ? "in_channel" : "ephemeral",
        replace_original: false,
        text,
      }),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      ok: false,
      outcomeUnknown: true,
      error: `response_url: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  await response.body?.cancel();
  if (response.ok) return { ok: true };
  if (response.status === 429) {
    const seconds = Number(response.headers.get("retry-after") ?? "1");
    return {
      ok: false,
      retryable: true,
      retryAfterMs: (Number.isFinite(seconds) ? seconds : 1) * 1000,
      error: "response_url rate limited",
    };
  }
  // 404 = the URL expired (30 min) or was used up: nothing to retry.
  return {
    ok: false,
    retryable: response.status >= 500,
    error: `response_url http ${response.status}`,
  };
}

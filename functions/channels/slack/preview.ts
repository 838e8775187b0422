import type { WebClient } from "@slack/web-api";
import type { ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import type { SlackAccount } from "./config.ts";
import { slackBotIdentity } from "./identity.ts";
import { findTaggedMessages } from "./lookup.ts";
import { REPLY_EVENT_TYPE, threadTsFor } from "./route.ts";

/**
 * The life of a run's live preview (a posted message edited in place, or a native stream), made
 * crash-proof. Before a preview is posted its pending time goes into the run's stored progress
 * state (`previewPendingAt` / `streamPendingAt`); a posted preview carries metadata with the run id.
 * If the process dies (or the answer is lost) between the post and the recorded ts, whoever touches
 * the preview next — the next text delta of the resumed run, the final send, or the retract of a
 * silent/aborted run — first looks it up and adopts it, so the user never sees a stray half answer.
 *
 * `chat.startStream` takes no metadata, so an unrecorded native stream is recognised as the bot's own
 * untagged message in the reply thread since the pending time: every other message the bot posts
 * there (previews, replies, notices) is tagged, and one run at a time posts in a session's thread.
 */

export const PREVIEW_EVENT_TYPE = "edgeclaw_preview";

export function previewMetadata(runId: string) {
  return { event_type: PREVIEW_EVENT_TYPE, event_payload: { run_id: runId } };
}

/** Whether a preview may exist that the state does not name yet. */
export function hasPendingPreview(state: ProgressState): boolean {
  return Boolean(state.previewPendingAt || state.streamPendingAt);
}

/**
 * Finds this run's previews posted but not recorded, adopts one (when none is recorded) and deletes
 * any other, and clears the pending marks. Throws when Slack cannot be asked (the marks stay).
 */
export async function adoptPendingPreview(args: {
  client: WebClient;
  route: ReplyRoute;
  account: SlackAccount;
  botToken: string;
  state: ProgressState;
  runId: string | undefined;
}): Promise<ProgressState> {
  const { client, route, account, runId } = args;
  const next: ProgressState = { ...args.state };
  const replyThread = threadTsFor(route, account, 0);
  if (next.previewPendingAt) {
    const found = runId
      ? await findTaggedMessages(
          client,
          { channel: route.to, threadTs: replyThread, sinceMs: Number(next.previewPendingAt) },
          (message) => message.eventType === PREVIEW_EVENT_TYPE && message.payload.run_id === runId,
        )
      : [];
    for (const message of found) {
      if (!next.previewTs) {
        next.previewTs = message.ts;
        next.previewChannel = route.to;
      } else if (message.ts !== next.previewTs) {
        await client.chat.delete({ channel: route.to, ts: message.ts }).catch(() => undefined);
      }
    }
    delete next.previewPendingAt;
  }
  if (next.streamPendingAt) {
    const identity = await slackBotIdentity(args.botToken, account.apiBaseUrl);
    const ours = (message: { user?: string; botId?: string }) =>
      Boolean(
        (identity.botId && message.botId === identity.botId) ||
          (identity.userId && message.user === identity.userId),
      );
    if (!identity.botId && !identity.userId)
      throw new Error("bot identity unknown; cannot look for an unrecorded stream");
    const found = replyThread
      ? await findTaggedMessages(
          client,
          { channel: route.to, threadTs: replyThread, sinceMs: Number(next.streamPendingAt) },
          (message) =>
            message.ts !== replyThread &&
            ours(message) &&
            message.eventType !== REPLY_EVENT_TYPE &&
            message.eventType !== PREVIEW_EVENT_TYPE,
        )
      : [];
    for (const message of found) {
      if (!next.streamTs) {
        next.streamTs = message.ts;
        next.streamChannel = route.to;
      } else if (message.ts !== next.streamTs) {
        await client.chat.stopStream({ channel: route.to, ts: message.ts }).catch(() => undefined);
        await client.chat.delete({ channel: route.to, ts: message.ts }).catch(() => undefined);
      }
    }
    delete next.streamPendingAt;
  }
  return next;
}

/** Removes the run's preview and stops and removes its native stream (each best effort, already-gone is fine). */
export async function removePreview(client: WebClient, state: ProgressState): Promise<void> {
  if (state.streamTs && state.streamChannel) {
    await client.chat
      .stopStream({ channel: state.streamChannel, ts: state.streamTs })
      .catch(() => undefined);
    await deleteMessage(client, state.streamChannel, state.streamTs);
  }
  if (state.previewTs && state.previewChannel)
    await deleteMessage(client, state.previewChannel, state.previewTs);
}

async function deleteMessage(client: WebClient, channel: string, ts: string): Promise<void> {
  try {
    await client.chat.delete({ channel, ts });
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    if (code !== "message_not_found") throw error;
  }
}

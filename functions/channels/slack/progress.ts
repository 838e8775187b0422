import type { SlackAccount } from "./config.ts";
import * as z from "zod";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  postTracked,
  streamPreview,
  trackedKeys,
  type PostOutcome,
  type PreviewPlatform,
} from "../preview-stream.ts";
import { sendResultFromError, slackClient } from "./client.ts";
import { adoptPendingPreview, hasPendingPreview, previewMetadata } from "./preview.ts";
import { markdownToMrkdwn } from "./format.ts";
import { routeChatType, slackTarget, threadTsFor } from "./route.ts";

/**
 * Live feedback while the agent works, all best effort (a failure never throws and never blocks the
 * reply):
 * - `accepted`: `ackReaction` on the inbound message, within `messages.ackReactionScope`;
 * - `run-started`: `typingReaction` added, `assistant.threads.setStatus` when the reply has a thread;
 * - text (`streaming.mode`): partial/block → Slack native streaming (chat.startStream/appendStream)
 *   when `nativeTransport` and a reply thread exist, else a posted preview edited in place at most
 *   once a second; progress → a status message listing tool steps, the answer posted separately;
 * - `run-finished`: typing reaction removed, thread status cleared, status message marked done.
 * Preview / stream ids go into the returned state so the final send edits instead of posting again;
 * a pending mark is checkpointed before each preview post and a preview carries the run id in its
 * metadata, so one posted just before a crash is found again (preview.ts). A failing stream or
 * preview sets `previewBroken`: nothing more is streamed and the final send falls back to a normal post.
 */

const messagesView = z
  .object({
    ackReaction: z.string().optional(),
    ackReactionScope: z
      .enum(["group-mentions", "group-all", "direct", "all", "off", "none"])
      .default("group-mentions"),
  })
  .loose();

const PREVIEW_EDIT_INTERVAL_MS = 1000;
const PREVIEW_KEYS = trackedKeys("preview", "previewTs");
/** A native stream is posted once like a preview (then appended to, not edited): its own id and mark. */
const STREAM_KEYS = trackedKeys("stream", "streamTs", "streamStartedAt");

export async function slackProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<SlackAccount>,
): Promise<ProgressState> {
  if (route.extra?.responseUrl) return state; // slash commands: nothing to react to or stream into
  const target = slackTarget(ctx);
  if (!target?.botToken) return state;
  const { account } = target;
  const client = slackClient(target.botToken, account.apiBaseUrl);
  const next: ProgressState = { ...state };
  const attempt = async (what: string, call: () => Promise<unknown>): Promise<boolean> => {
    try {
      await call();
      return true;
    } catch (error) {
      console.warn(`slack progress ${what} failed`, error instanceof Error ? error.message : error);
      return false;
    }
  };
  const replyThread = threadTsFor(route, account, 0);
  const mode = account.streaming.mode;

  switch (event.type) {
    case "accepted": {
      const messages = messagesView.parse(ctx.config.messages ?? {});
      const emoji = account.ackReaction ?? messages.ackReaction ?? "eyes";
      if (emoji && route.replyToMessageId && ackInScope(messages.ackReactionScope, route)) {
        if (
          await attempt("ack reaction", () =>
            client.reactions.add({
              channel: route.to,
              timestamp: route.replyToMessageId!,
              name: emoji,
            }),
          )
        ) {
          next.ackReaction = emoji;
        }
      }
      return next;
    }
    case "run-started": {
      if (account.typingReaction && route.replyToMessageId) {
        const name = account.typingReaction;
        if (
          await attempt("typing reaction", () =>
            client.reactions.add({ channel: route.to, timestamp: route.replyToMessageId!, name }),
          )
        ) {
          next.typingReaction = name;
        }
      }
      if (
        replyThread &&
        (await attempt("thread status", () =>
          client.assistant.threads.setStatus({
            channel_id: route.to,
            thread_ts: replyThread,
            status: "is thinking…",
          }),
        ))
      ) {
        next.statusThread = replyThread;
      }
      if (mode === "progress") {
        await attempt("status message", async () => {
          const posted = await client.chat.postMessage({
            channel: route.to,
            text: "_Working…_",
            ...(replyThread ? { thread_ts: replyThread } : {}),
          });
          if (posted.ts) next.statusTs = posted.ts;
        });
      }
      return next;
    }
    case "text-delta": {
      if ((mode !== "partial" && mode !== "block") || next.previewBroken) return next;
      // Block mode only refreshes at paragraph ends, so a reader sees whole blocks appear.
      if (mode === "block" && !event.soFar.endsWith("\n\n") && next.previewTs) return next;
      if (hasPendingPreview(next)) {
        // A preview was posted but its ts never recorded (crash, lost answer): find it before posting another.
        try {
          Object.assign(
            next,
            await adoptPendingPreview({
              client,
              route,
              account,
              botToken: target.botToken,
              state: next,
              runId: ctx.runId,
            }),
          );
          ctx.checkpoint?.(next);
        } catch (error) {
          console.warn(
            "slack preview lookup failed",
            error instanceof Error ? error.message : error,
          );
          return next;
        }
      }
      const native =
        account.streaming.nativeTransport && mode === "partial" && replyThread !== undefined;
      if (native) {
        if (next.streamTs) {
          if (
            !(await attempt("appendStream", () =>
              client.chat.appendStream({
                channel: next.streamChannel!,
                ts: next.streamTs!,
                markdown_text: event.text,
              }),
            ))
          )
            next.previewBroken = "1";
          return next;
        }
        // Recorded before the start, so a crash before its ts is stored leaves a trace (see preview.ts).
        const start = async (): Promise<PostOutcome> => {
          try {
            const started = await client.chat.startStream({
              channel: route.to,
              thread_ts: replyThread,
              markdown_text: event.soFar,
              ...(routeChatType(route) !== "direct" && route.extra?.senderId && route.extra.teamId
                ? { recipient_user_id: route.extra.senderId, recipient_team_id: route.extra.teamId }
                : {}),
            });
            return started.ts
              ? { ok: true, id: started.ts, extra: { streamChannel: started.channel ?? route.to } }
              : { ok: false, landed: "maybe" };
          } catch (error) {
            return failedPost(error, "startStream");
          }
        };
        return postTracked(next, STREAM_KEYS, start, ctx);
      }
      const preview: PreviewPlatform<string> = {
        render: (shown) => markdownToMrkdwn(shown) || "…",
        post: async (text) => {
          try {
            const posted = await client.chat.postMessage({
              channel: route.to,
              text,
              unfurl_links: false,
              ...(replyThread ? { thread_ts: replyThread } : {}),
              ...(ctx.runId ? { metadata: previewMetadata(ctx.runId) } : {}),
            });
            // Posted but no ts to edit: it may stand there; the mark stays so the final send finds it.
            return posted.ts
              ? { ok: true, id: posted.ts, extra: { previewChannel: posted.channel ?? route.to } }
              : { ok: false, landed: "maybe" };
          } catch (error) {
            return failedPost(error, "preview post");
          }
        },
        edit: (ts, text) =>
          attempt("preview edit", () =>
            client.chat.update({ channel: next.previewChannel!, ts, text }),
          ),
      };
      // Slack's preview is not cut: an over-long answer is split by the final send, whose first chunk replaces it.
      const limits = {
        editIntervalMs: PREVIEW_EDIT_INTERVAL_MS,
        maxChars: Number.POSITIVE_INFINITY,
        overflow: "cut" as const,
        block: mode === "block",
      };
      return streamPreview(next, event.soFar, preview, limits, PREVIEW_KEYS, ctx);
    }
    case "tool": {
      if (
        mode === "progress" &&
        next.statusTs &&
        event.phase === "start" &&
        account.streaming.progress.toolProgress
      ) {
        const steps = `${next.statusSteps ? `${next.statusSteps}\n` : ""}• ${event.name}`
          .split("\n")
          .slice(-10)
          .join("\n");
        next.statusSteps = steps;
        await attempt("status edit", () =>
          client.chat.update({
            channel: route.to,
            ts: next.statusTs!,
            text: `_Working…_\n${steps}`,
          }),
        );
      }
      return next;
    }
    case "run-finished": {
      if (next.typingReaction && route.replyToMessageId) {
        const name = next.typingReaction;
        await attempt("typing reaction removal", () =>
          client.reactions.remove({ channel: route.to, timestamp: route.replyToMessageId!, name }),
        );
        delete next.typingReaction;
      }
      if (next.statusThread) {
        const thread = next.statusThread;
        await attempt("thread status clear", () =>
          client.assistant.threads.setStatus({
            channel_id: route.to,
            thread_ts: thread,
            status: "",
          }),
        );
        delete next.statusThread;
      }
      if (next.statusTs) {
        const steps = next.statusSteps ? `\n${next.statusSteps}` : "";
        await attempt("status done", () =>
          client.chat.update({ channel: route.to, ts: next.statusTs!, text: `_Done._${steps}` }),
        );
      }
      return next;
    }
  }
}

/**
 * A preview post or stream start failed: nothing more is streamed. If Slack refused it, it did not
 * land and the pending mark goes; if the answer was lost (network), the mark stays, so the final
 * send or the retract looks the post up instead of leaving it beside the answer.
 */
function failedPost(error: unknown, what: string): PostOutcome {
  console.warn(`slack progress ${what} failed`, error instanceof Error ? error.message : error);
  return { ok: false, landed: "outcomeUnknown" in sendResultFromError(error) ? "maybe" : "no" };
}

/** `messages.ackReactionScope`: group-mentions (default) reacts in groups only when the bot was mentioned. */
function ackInScope(
  scope: z.infer<typeof messagesView>["ackReactionScope"],
  route: ReplyRoute,
): boolean {
  const direct = routeChatType(route) === "direct";
  switch (scope) {
    case "all":
      return true;
    case "direct":
      return direct;
    case "group-all":
      return !direct;
    case "group-mentions":
      return !direct && route.extra?.mentioned === "1";
    case "off":
    case "none":
      return false;
  }
}

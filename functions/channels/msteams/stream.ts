import type { MsTeamsAccount } from "./config.ts";
import type { ProgressContext, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { streamPreview, trackedKeys, type PreviewPlatform } from "../preview-stream.ts";
import {
  activitiesPath,
  activityPath,
  requestConnector,
  type ConnectorAnswer,
  type ConnectorTarget,
} from "./api.ts";
import { markdownToTeams } from "./format.ts";

/**
 * A run's live reply in Teams, in the two shapes Teams allows
 * (learn.microsoft.com/microsoftteams/platform/bots/streaming-ux):
 *
 * - Personal chats stream natively. The first update is a `typing` activity with a `streaminfo`
 *   entity (streamType `informative` for a progress line, `streaming` for answer text, streamSequence
 *   1); the connector answers with the stream id, which every later update names, each with the next
 *   sequence number and the whole text so far (Teams refuses text that does not extend what it
 *   showed). The reply's first chunk ends the stream: a `message` with streamType `final` (send.ts).
 * - Group chats and channels cannot stream: a message is posted with the text so far and edited in
 *   place (`PUT …/activities/{id}`); the reply's first chunk is the last edit.
 *
 * Updates go out at most once per `STREAM_INTERVAL_MS` (Teams throttles streaming to about one
 * request a second, and edits count against the per-thread rate limit); text that arrives in between
 * waits for the next update or the final text. A pending mark is checkpointed before the first post,
 * because Teams lets a bot neither tag an activity nor read a conversation back: if the answer to
 * that post is lost, nothing more is streamed and the reply is posted as a message of its own (the
 * lost post may stay visible beside it). Any refusal (the user pressed Stop, the stream timed out)
 * also stops the updates (`streamBroken` / `previewBroken`); the final text still goes out.
 */

export const STREAM_INTERVAL_MS = 1000;

/** Informative lines are capped by Teams at 1000 characters. */
const INFORMATIVE_MAX = 1000;

function idOf(answer: ConnectorAnswer): { id?: string } | undefined {
  return answer.kind === "answered" && answer.status >= 200 && answer.status < 300
    ? { id: answer.id }
    : undefined;
}

function due(state: ProgressState, key: string, now: number): boolean {
  return now - Number(state[key] ?? 0) >= STREAM_INTERVAL_MS;
}

/**
 * One native stream update in a personal chat: `informative` (progress text) or `streaming` (the
 * answer so far). Returns the new state; never throws.
 */
export async function pushStreamUpdate(
  target: ConnectorTarget,
  route: ReplyRoute,
  state: ProgressState,
  update: { streamType: "informative" | "streaming"; text: string },
  ctx: ProgressContext<MsTeamsAccount>,
  now = Date.now(),
): Promise<ProgressState> {
  const next = { ...state };
  if (next.streamBroken || (next.streamPendingAt && !next.streamId)) return next;
  if (update.streamType === "informative" && Number(next.streamedChars ?? 0) > 0) return next; // informative lines only before the answer starts
  if (next.streamId && !due(next, "streamAt", now)) return next;
  const sequence = Number(next.streamSequence ?? 0) + 1;
  const text =
    update.streamType === "informative" ? update.text.slice(0, INFORMATIVE_MAX) : update.text;
  const info = {
    streamType: update.streamType,
    streamSequence: sequence,
    ...(next.streamId ? { streamId: next.streamId } : {}),
  };
  const body = {
    type: "typing",
    text,
    ...(next.streamId ? { id: next.streamId } : {}),
    entities: [{ type: "streaminfo", ...info }],
    channelData: info,
  };
  if (!next.streamId) {
    next.streamPendingAt = String(now);
    ctx.checkpoint?.(next);
  }
  const answer = await requestConnector(
    target,
    "POST",
    activitiesPath(route),
    body,
    ctx.signal,
  ).catch((error: unknown) => ({ kind: "no-answer" as const, error: String(error) }));
  const posted = idOf(answer);
  if (posted) {
    if (!next.streamId) {
      if (!posted.id) {
        next.streamBroken = "no stream id in the answer";
        return next;
      }
      next.streamId = posted.id;
      delete next.streamPendingAt;
    }
    next.streamSequence = String(sequence);
    next.streamAt = String(now);
    if (update.streamType === "streaming") next.streamedChars = String(text.length);
    return next;
  }
  // Refused (Stop pressed, stream over, throttled): no more updates this run. Lost answer: the
  // pending mark stays, so nothing more is posted into a stream whose id is unknown.
  next.streamBroken =
    answer.kind === "answered" ? `HTTP ${answer.status}` : answer.error.slice(0, 100);
  if (answer.kind !== "no-answer" && !next.streamId) delete next.streamPendingAt;
  console.warn(`msteams stream update not sent: ${next.streamBroken}`);
  return next;
}

const PREVIEW_KEYS = trackedKeys("preview", "previewId", "previewAt");

/** Group chats and channels: the answer so far as a posted message, edited in place (preview-stream.ts). */
export async function pushPreview(
  target: ConnectorTarget,
  route: ReplyRoute,
  state: ProgressState,
  soFar: string,
  ctx: ProgressContext<MsTeamsAccount>,
  now = Date.now(),
): Promise<ProgressState> {
  const failed = (answer: ConnectorAnswer) => {
    const reason =
      answer.kind === "answered"
        ? `HTTP ${answer.status}`
        : answer.kind === "no-token"
          ? answer.error
          : answer.error.slice(0, 100);
    console.warn(`msteams preview not updated: ${reason}`);
  };
  const preview: PreviewPlatform<string> = {
    render: (shown) => markdownToTeams(shown) || undefined,
    post: async (text) => {
      const answer = await requestConnector(
        target,
        "POST",
        activitiesPath(route),
        { type: "message", text, textFormat: "markdown" },
        ctx.signal,
      );
      const posted = idOf(answer);
      if (posted?.id) return { ok: true, id: posted.id };
      if (posted) console.warn("msteams preview not updated: no activity id in the answer");
      else failed(answer);
      // No answer, or no id in it: the post may stand in the conversation; the mark stays.
      return { ok: false, landed: posted || answer.kind === "no-answer" ? "maybe" : "no" };
    },
    edit: async (id, text) => {
      const answer = await requestConnector(
        target,
        "PUT",
        activityPath(route, id),
        { type: "message", id, text, textFormat: "markdown" },
        ctx.signal,
      );
      if (idOf(answer)) return true;
      failed(answer);
      return false;
    },
  };
  // Text past the first chunk is not streamed: the final text replaces the preview with that chunk.
  const limits = {
    editIntervalMs: STREAM_INTERVAL_MS,
    maxChars: target.account.textChunkLimit,
    overflow: "stop" as const,
    block: false,
  };
  return streamPreview(state, soFar, preview, limits, PREVIEW_KEYS, ctx, now);
}

/** The final `message` that ends a native stream: the reply's first chunk, formatted. */
export function finalStreamActivity(streamId: string, text: string): Record<string, unknown> {
  const info = { streamId, streamType: "final" };
  return {
    type: "message",
    id: streamId,
    text,
    textFormat: "markdown",
    entities: [{ type: "streaminfo", ...info }],
    channelData: info,
  };
}

import {
  reasoningLevelSchema,
  thinkLevelSchema,
  type ThinkLevel,
} from "../../../functions/config/agents-schema.ts";
import {
  reasoningMessage,
  resolveReasoningLevel,
} from "../../../functions/agent/thinking-level.ts";
import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { enqueueReply } from "../outbox/replies.ts";
import { settings } from "../settings.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * A run's thinking, as the session and the message chose it: the levels handed to the run's
 * model calls, and with /reasoning on the thinking of the run's answer sent as its own message
 * before the reply.
 */

/** The message's inline /think (kept in the run's options) and the session's override. */
export function thinkingLayers(
  s: SessionState,
  run: RunRow,
): { message?: ThinkLevel; session?: ThinkLevel } {
  const message = thinkLevelSchema.safeParse(run.options.oneShot?.thinkLevel);
  const session = settings(s).thinkLevel;
  return {
    ...(message.success ? { message: message.data } : {}),
    ...(session ? { session } : {}),
  };
}

/**
 * With /reasoning on (or stream, which has no separate preview lane here and is delivered the same
 * way), the run's thinking goes to the outbox ahead of the reply. Called inside finishRun's
 * transaction, so it is recorded once with the reply or not at all; its outbox id is keyed by the
 * run, so a repeated finish cannot send it twice. It carries the run's id, so on a channel that
 * streamed a live preview it is the thinking that takes the preview's place, and the caller posts
 * the answer after it as a new message (returns true then): the chat reads thinking, then answer.
 */
export function enqueueReasoning(s: SessionState, run: RunRow, now: number): boolean {
  if (HTTP_CHANNELS.has(run.route.channel)) return false;
  const agentId = s.store.meta.get("agentId") ?? "main";
  const message = reasoningLevelSchema.safeParse(run.options.oneShot?.reasoningLevel);
  const level = resolveReasoningLevel(s.config, agentId, {
    ...(message.success ? { message: message.data } : {}),
    session: settings(s).reasoningLevel,
  });
  if (level === "off") return false;
  const texts = s.store.transcript
    .ofRun(run.runId)
    .flatMap((row) =>
      row.message.role === "assistant"
        ? (row.message.thinking ?? []).flatMap((block) =>
            block.type === "thinking" ? [block.text] : [],
          )
        : [],
    );
  const text = reasoningMessage(texts);
  if (!text) return false;
  enqueueReply(s, `reasoning:${run.runId}`, run.runId, run.route, text, now);
  return true;
}

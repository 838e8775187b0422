import type { GoogleChatAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { chatTarget, clientMessageId } from "./api.ts";
import { createMessage } from "./send.ts";

/**
 * Google Chat's typing indicator (`typingIndicator: "message"`, the default): when a run starts, a
 * placeholder "_Typing…_" is posted in the conversation (in the thread for spaces), and the reply's
 * first chunk replaces its text (send.ts) — one message, not two. Google Chat has no typing API for
 * apps, and reactions need user authentication, so `reaction` falls back to `message` (OpenClaw does
 * the same). The placeholder's id is derived from the run, and recorded before it is posted: a crash
 * in between leaves a name the reply (or the retraction) can still find. Best effort: never throws.
 */
export const TYPING_TEXT = "_Typing…_";

let warnedReaction = false;

export async function googleChatProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<GoogleChatAccount>,
): Promise<ProgressState> {
  if (event.type !== "run-started" || state.placeholder || !ctx.runId) return state;
  const target = chatTarget(ctx);
  if ("error" in target || target.account.typingIndicator === "none") return state;
  if (target.account.typingIndicator === "reaction" && !warnedReaction) {
    warnedReaction = true;
    console.error(
      'channels.googlechat.typingIndicator "reaction" needs user OAuth; using "message"',
    );
  }
  try {
    const messageId = await clientMessageId(route.accountId, `typing:${ctx.runId}`);
    const placeholder = `${route.to}/messages/${messageId}`;
    const next = { ...state, placeholder };
    ctx.checkpoint?.(next);
    const sent = await createMessage(
      target,
      route.to,
      route.threadId,
      TYPING_TEXT,
      messageId,
      ctx.signal,
    );
    if (!sent.ok) console.warn(`googlechat typing placeholder not posted: ${sent.error}`);
    return next;
  } catch (error) {
    console.warn(
      "googlechat typing placeholder failed",
      error instanceof Error ? error.message : error,
    );
    return state;
  }
}

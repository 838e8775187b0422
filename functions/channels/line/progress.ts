import type { LineAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { callLineApi } from "./api.ts";
import { lineTarget } from "./target.ts";

/**
 * LINE's loading animation while the agent works (POST /v2/bot/chat/loading/start): shown in 1:1
 * chats only (LINE refuses group and room ids), for `loadingSeconds`, and cleared by LINE as soon as
 * the bot's message arrives. Started when the event is accepted and again when the run starts;
 * renewed on later steps once it has run out, so a long run keeps showing it. LINE shows no partial
 * text, so streamed text is not forwarded (the reply goes out whole). Best effort: never throws.
 */
export async function lineProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<LineAccount>,
): Promise<ProgressState> {
  if (
    route.extra?.chatType !== "direct" ||
    event.type === "text-delta" ||
    event.type === "run-finished"
  )
    return state;
  const target = lineTarget(ctx);
  if (!target?.accessToken) return state;
  const seconds = target.account.loadingSeconds;
  if (seconds <= 0) return state;
  const now = Date.now();
  // Still showing (with a second to spare): nothing to renew.
  if (Number(state.loadingUntil ?? 0) > now + 1000) return state;
  const answer = await callLineApi(
    { apiBaseUrl: target.account.apiBaseUrl, accessToken: target.accessToken },
    "v2/bot/chat/loading/start",
    { chatId: route.to, loadingSeconds: seconds },
    { signal: ctx.signal },
  );
  if (!answer.ok) {
    console.warn(`line loading animation failed: ${answer.status} ${answer.message}`);
    return state;
  }
  return { ...state, loadingUntil: String(now + seconds * 1000) };
}

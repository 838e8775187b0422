import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../envelope.ts";
import { activitiesPath, callConnector, connectorTarget } from "./api.ts";

/**
 * A typing activity when a run starts (`typingIndicator`, default on): Teams shows "… is typing"
 * for a few seconds. Best effort: a failure is logged, never thrown. Teams' native streaming
 * (streaminfo entities) is personal-chat only and not used here: replies arrive whole.
 */
export async function msTeamsProgress(route: ReplyRoute, event: ProgressEvent, state: ProgressState, ctx: ProgressContext): Promise<ProgressState> {
  if (event.type !== "run-started") return state;
  try {
    const target = connectorTarget(route, ctx);
    if ("error" in target || !target.account.typingIndicator) return state;
    const sent = await callConnector(target, "POST", activitiesPath(route), { type: "typing" }, "typing", ctx.signal);
    if (!sent.ok) console.warn(`msteams typing not sent: ${sent.error}`);
  } catch (error) {
    console.warn("msteams typing failed", error instanceof Error ? error.message : error);
  }
  return state;
}

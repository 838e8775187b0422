import type { MsTeamsAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { activitiesPath, callConnector, connectorTarget, isPersonalChat } from "./api.ts";
import { pushPreview, pushStreamUpdate } from "./stream.ts";

/**
 * Live progress while the agent works (best effort: a failure is logged, never thrown):
 * - `run-started`: a typing activity (`typingIndicator`, default on) — in a personal chat with
 *   `streaming.mode: "progress"` the informative stream line "Working…" instead;
 * - text (`streaming.mode: "partial"`, the default): personal chats stream natively, groups and
 *   channels get a message edited in place (stream.ts); the reply's first chunk ends either (send.ts);
 * - `tool` (`progress` mode, `streaming.progress.toolProgress`): the informative line names the tool.
 * `block` and `off` show only the typing activity; the answer arrives whole. Text is only streamed
 * while it fits into the reply's first chunk (`textChunkLimit`), which is what the final replaces it with.
 */
export async function msTeamsProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<MsTeamsAccount>,
): Promise<ProgressState> {
  if (event.type === "accepted" || event.type === "run-finished") return state;
  try {
    const target = connectorTarget(route, ctx);
    if ("error" in target) return state;
    const { account } = target;
    const mode = account.streaming.mode;
    const personal = isPersonalChat(route);
    switch (event.type) {
      case "run-started": {
        if (personal && mode === "progress")
          return await pushStreamUpdate(
            target,
            route,
            state,
            { streamType: "informative", text: "Working…" },
            ctx,
          );
        if (!account.typingIndicator) return state;
        const sent = await callConnector(
          target,
          "POST",
          activitiesPath(route),
          { type: "typing" },
          "typing",
          ctx.signal,
        );
        if (!sent.ok) console.warn(`msteams typing not sent: ${sent.error}`);
        return state;
      }
      case "tool": {
        if (
          !personal ||
          mode !== "progress" ||
          event.phase !== "start" ||
          account.streaming.progress?.toolProgress === false
        )
          return state;
        return await pushStreamUpdate(
          target,
          route,
          state,
          { streamType: "informative", text: `Working… (${event.name})` },
          ctx,
        );
      }
      case "text-delta": {
        if (mode !== "partial" || event.soFar.length > account.textChunkLimit) return state;
        if (personal)
          return await pushStreamUpdate(
            target,
            route,
            state,
            { streamType: "streaming", text: event.soFar },
            ctx,
          );
        return await pushPreview(target, route, state, event.soFar, ctx);
      }
    }
  } catch (error) {
    console.warn("msteams progress failed", error instanceof Error ? error.message : error);
  }
  return state;
}

import type { SessionToolsHost } from "../../../functions/agent/tools/session-tools-host.ts";
import { sanitizeLabel } from "../../../functions/agent/untrusted-text.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { childrenOf, childView, depthOf, findChild, parentOf } from "./children.ts";
import { killChild } from "./kill.ts";
import { spawnChild, type Spawner } from "./spawn.ts";
import { historyOf, listSessions, sendToSession } from "./sessions.ts";
import { sendMessageTo } from "./message.ts";
import type { OnBehalfOf } from "./shapes.ts";

/** The session tools' host for one run of this session (SessionToolsHost). */
export function sessionToolsHost(
  s: SessionState,
  run: Pick<RunRow, "runId" | "route" | "options">,
): SessionToolsHost {
  const sessionKey = s.store.meta.get("sessionKey") ?? "";
  const parent = parentOf(s.store);
  const spawner: Spawner = {
    runId: run.runId,
    route: run.route,
    senderIsOwner: run.options.senderIsOwner ?? false,
    ...onBehalfOfRun(s, run),
  };
  return {
    sessionKey,
    depth: depthOf(s.store),
    ...(parent
      ? {
          childContext: [
            `You are a sub-agent: session ${sessionKey}, spawned by ${parent.parentKey}${parent.label ? ` for "${sanitizeLabel(parent.label)}"` : ""}.`,
            "Your task is in the [Subagent Task] message. Work on it alone; nobody answers questions here.",
            "Your final reply is handed to the session that spawned you as your result (it is not shown to a user): make it complete and self-contained.",
          ].join("\n"),
        }
      : {}),
    spawn: (request, toolCallId) => spawnChild(s, spawner, request, toolCallId),
    children: () => childrenOf(s.store).map(childView),
    kill: async (target) => {
      const child = findChild(s.store, target);
      return typeof child === "string" ? child : killChild(s, child);
    },
    list: (filter) => listSessions(s, spawner, filter),
    history: (key, limit) => historyOf(s, spawner, key, limit),
    send: (key, message, toolCallId, timeoutSeconds) =>
      sendToSession(s, spawner, key, message, toolCallId, timeoutSeconds ?? 0),
    message: (request, toolCallId) => sendMessageTo(s, spawner, request, toolCallId),
  };
}

/**
 * The person the run works for: the sender of its first trigger, or, for a run nobody sent (a
 * child's task, a report), the person its trigger carries. Its sender budget scope covers children.
 */
export function onBehalfOfRun(
  s: SessionState,
  run: Pick<RunRow, "runId">,
): { onBehalfOf?: OnBehalfOf } {
  const event = s.store.inbox.byRun(run.runId)[0]?.event;
  if (!event) return {};
  if (event.automation?.onBehalfOf) return { onBehalfOf: event.automation.onBehalfOf };
  if (event.automation) return {};
  return { onBehalfOf: { channel: event.envelope.channel, senderId: event.envelope.senderId } };
}

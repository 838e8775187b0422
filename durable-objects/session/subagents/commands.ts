import type { SessionControl } from "../../../functions/commands/session-control.ts";
import type { SessionState } from "../state.ts";
import { childrenOf, childView, findChild } from "./children.ts";
import { killChild } from "./kill.ts";

/** What `/subagents` may do here (functions/commands/subagents-command.ts): this session's children only. */
export function subagentControl(
  s: SessionState,
): Pick<SessionControl, "subagents" | "subagentLog" | "killSubagent"> {
  return {
    subagents: async () => childrenOf(s.store).map(childView),
    subagentLog: async (target, limit) => {
      const child = findChild(s.store, target);
      if (typeof child === "string") return child;
      const entries = await s.env.SESSIONS.get(s.env.SESSIONS.idFromName(child.childKey)).history(
        limit,
      );
      return {
        child: childView(child),
        turns: entries.map((entry) => ({ role: entry.role, text: entry.text, at: entry.at })),
      };
    },
    killSubagent: async (target) => {
      const child = findChild(s.store, target);
      return typeof child === "string" ? child : killChild(s, child);
    },
  };
}

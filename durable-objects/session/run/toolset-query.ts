import type { ToolsQuery } from "../../../functions/commands/session-control.ts";
import type { AgentTool } from "../../../functions/agent/types.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { status } from "../status.ts";
import type { SessionState } from "../state.ts";
import { sessionToolset } from "./toolset.ts";
import { sessionToolsHost } from "../subagents/host.ts";

/** The toolset the next run here would get, for this sender and conversation (/tools, /skill, /context). */
export function toolsetFor(s: SessionState, query: ToolsQuery): AgentTool[] {
  const route: ReplyRoute = query.route ?? {
    channel: query.sender.channel,
    accountId: query.sender.accountId,
    to: "",
  };
  return sessionToolset({
    env: s.env,
    config: s.config,
    agentId: query.agentId,
    route,
    senderIsOwner: query.senderIsOwner,
    modelRef: status(s).model,
    // The same session tools a run here gets (a preview host: listing them calls nothing).
    sessionTools: sessionToolsHost(s, {
      runId: "tools-preview",
      route,
      options: { senderIsOwner: query.senderIsOwner },
    }),
  });
}

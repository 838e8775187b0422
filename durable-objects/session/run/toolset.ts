import type { Env } from "../../env.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import type { AgentTool } from "../../../functions/agent/types.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { createToolset } from "../../../functions/agent/tools/index.ts";
import { createCronTool } from "../../../functions/agent/tools/cron.ts";
import { conversationToolLayer } from "../../../functions/agent/tools/conversation-policy.ts";
import type { SessionToolsHost } from "../../../functions/agent/tools/session-tools-host.ts";
import { sessionToolsFor } from "../../../functions/agent/tools/session-tools.ts";
import { schedulerStub } from "../../scheduler-stub.ts";

/**
 * The tools one run of this session gets — the one place that decides it, so `/tools` lists
 * exactly what the next run will have: the registry's tools its config enables (web_search only
 * with a provider set up, so the Worker env goes in), the session's cron tool and session tools
 * (sub-agents, other sessions), narrowed by the tool policy, this conversation's layer, the
 * sub-agent layer of a child session and the sender's ownership.
 */
export function sessionToolset(input: {
  env: Env;
  config: EdgeclawConfig;
  agentId: string;
  route: ReplyRoute;
  senderIsOwner: boolean;
  modelRef: string | undefined;
  sessionTools?: SessionToolsHost;
}): AgentTool[] {
  return createToolset(input.config, input.agentId, {
    senderIsOwner: input.senderIsOwner,
    extraTools: [
      createCronTool(input.config, schedulerStub(input.env)),
      ...(input.sessionTools ? sessionToolsFor(input.config, input.sessionTools) : []),
    ],
    conversationLayer: conversationToolLayer(input.config, input.route),
    modelRef: input.modelRef,
    env: input.env as unknown as Record<string, unknown>,
    subagentDepth: input.sessionTools?.depth ?? 0,
  });
}

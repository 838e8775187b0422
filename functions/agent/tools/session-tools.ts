import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";
import { createSessionsSpawnTool } from "./sessions-spawn.ts";
import { createSessionsYieldTool } from "./sessions-yield.ts";
import { createSubagentsTool } from "./subagents.ts";
import { createSessionsListTool } from "./sessions-list.ts";
import { createSessionsHistoryTool } from "./sessions-history.ts";
import { createSessionsSendTool } from "./sessions-send.ts";
import { createMessageTool } from "./message.ts";

/**
 * The tools that need the session they run in (SessionToolsHost): built per run by the session's
 * toolset (durable-objects/session/run/toolset.ts), then narrowed by the same policy as every tool.
 */
export function sessionToolsFor(_config: EdgeclawConfig, host: SessionToolsHost): AgentTool[] {
  return [
    createSessionsSpawnTool(host),
    createSessionsYieldTool(host),
    createSubagentsTool(host),
    createSessionsListTool(host),
    createSessionsHistoryTool(host),
    createSessionsSendTool(host),
    createMessageTool(host),
  ];
}

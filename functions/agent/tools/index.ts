import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool, ToolCall, ToolContext, ToolResult } from "../types.ts";
import { boundToolOutput, errorResult } from "./common.ts";
import { createApplyPatchTool } from "./apply-patch.ts";
import { createBrowserTool } from "./browser.ts";
import { createEditTool } from "./edit.ts";
import { createExecTool } from "./exec.ts";
import { createEnvTools } from "./env-tools.ts";
import { createProcessTool } from "./process.ts";
import { createMemoryGetTool } from "./memory-get.ts";
import { createMemorySearchTool } from "./memory-search.ts";
import { isToolAllowed, resolveToolPolicy, type ToolPolicyLayer } from "./policy.ts";
import { createReadTool } from "./read.ts";
import { createSessionStatusTool } from "./session-status.ts";
import { createWebFetchTool } from "./web-fetch.ts";
import { createWebSearchTool } from "./web-search.ts";
import { createWriteTool } from "./write.ts";
import { subagentToolLayers } from "./subagent-policy.ts";
import { createAgentsListTool } from "./agents-list.ts";
import { createGatewayTool } from "./gateway.ts";

/**
 * The tool registry. Adding a tool is one file plus one line in TOOL_FACTORIES; a factory returns
 * null when its own config switches it off (`tools.web.fetch.enabled: false`).
 */
export type ToolFactory = (
  config: EdgeclawConfig,
  agentId: string,
  options: ToolsetOptions,
) => AgentTool | null;

const TOOL_FACTORIES: readonly ToolFactory[] = [
  () => createReadTool(),
  () => createWriteTool(),
  () => createEditTool(),
  (config, _agentId, options) => createApplyPatchTool(config, options.modelRef),
  (config) => createSessionStatusTool(config),
  (config) => createWebFetchTool(config),
  (config, _agentId, options) => createBrowserTool(config, options.env),
  (config, _agentId, options) => createWebSearchTool(config, options.env),
  (config) => createMemorySearchTool(config),
  (config) => createMemoryGetTool(config),
  (config, agentId) => createExecTool(config, agentId),
  (config, agentId) => createProcessTool(config, agentId),
  (config, agentId, options) => createAgentsListTool(config, agentId, options.env),
  (config) => createGatewayTool(config),
];

export interface ToolsetOptions {
  /** Whether the sender of this turn is the owner; owner-only tools are left out otherwise. */
  senderIsOwner?: boolean;
  /** Tools built elsewhere (memory, messaging, cron, …) that go through the same policy. */
  extraTools?: readonly AgentTool[];
  /** A further narrowing layer for the conversation this run answers (conversation-policy.ts). */
  conversationLayer?: ToolPolicyLayer;
  /** The model this run asks first (tools.exec.applyPatch.allowModels). */
  modelRef?: string;
  /** The Worker env, for tools offered only when their credential is set (web_search). */
  env?: Record<string, unknown>;
  /** How deep this session was spawned (0 or absent: not a child); children get the sub-agent layer. */
  subagentDepth?: number;
}

/**
 * The tools the model receives for one run of `agentId`: every registered tool that its config
 * enables and the tool policy allows, minus owner-only tools when the sender is not the owner.
 */
export function createToolset(
  config: EdgeclawConfig,
  agentId: string,
  options: ToolsetOptions = {},
): AgentTool[] {
  const layers = [
    ...resolveToolPolicy(config, agentId),
    ...(options.conversationLayer ? [options.conversationLayer] : []),
    ...subagentToolLayers(config, options.subagentDepth ?? 0, agentId),
  ];
  const candidates = [
    ...TOOL_FACTORIES.map((factory) => factory(config, agentId, options)).filter(
      (tool): tool is AgentTool => tool !== null,
    ),
    ...createEnvTools(config, agentId),
    ...(options.extraTools ?? []),
  ];
  const seen = new Set<string>();
  return candidates.filter((tool) => {
    if (seen.has(tool.name)) return false;
    seen.add(tool.name);
    if (tool.ownerOnly && !options.senderIsOwner) return false;
    return isToolAllowed(layers, tool.name);
  });
}

/**
 * Runs one tool call against the run's toolset. Never throws: unknown tools, owner-only refusals,
 * bad arguments and failures become error results the model can read, and every result is bounded.
 */
export async function runTool(
  tools: readonly AgentTool[],
  call: Pick<ToolCall, "name" | "arguments">,
  ctx: ToolContext,
): Promise<ToolResult> {
  const tool = tools.find((candidate) => candidate.name === call.name);
  if (!tool) {
    return {
      content: `Tool "${call.name}" is not available in this run. Available: ${tools.map((t) => t.name).join(", ") || "none"}.`,
      isError: true,
    };
  }
  if (tool.ownerOnly && !ctx.senderIsOwner) {
    return { content: `${tool.name} is restricted to the owner of this assistant.`, isError: true };
  }
  try {
    const result = await tool.execute(call.arguments, ctx);
    return { ...result, content: boundToolOutput(result.content) };
  } catch (error) {
    const result = errorResult(tool.name, error);
    return { ...result, content: boundToolOutput(result.content) };
  }
}

export { TOOL_GROUPS, TOOL_PROFILES, isToolAllowed, resolveToolPolicy } from "./policy.ts";
export { MAX_TOOL_RESULT_CHARS } from "./common.ts";

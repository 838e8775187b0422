import type { Env } from "../../env.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import type { RunLoopDeps } from "../../../functions/agent/run-loop.ts";
import type { ModelRequest, ModelResult, ToolContext } from "../../../functions/agent/types.ts";
import { callModel, type CallModelArgs } from "../../../functions/agent/model-call.ts";
import { mediaStoreFor } from "../../../functions/media/store.ts";
import type { ModelCallKind, ModelCallMeter } from "../../../functions/agent/metering.ts";
import {
  modelSelectionFor,
  resolveModel,
  type ModelSelection,
} from "../../../functions/agent/model-resolve.ts";
import { costUsd } from "../../../functions/agent/model-cost.ts";
import { modelFallbackNotice } from "../../../functions/agent/model-notices.ts";
import { isSilentReply } from "../../../functions/agent/prompt.ts";
import { loadSystemPrompt } from "../../../functions/agent/prompt-load.ts";
import { isMainPrivateSession } from "../../../functions/agent/private-session.ts";
import { MAX_TOOL_RESULT_CHARS } from "../../../functions/agent/tools/index.ts";
import { sessionToolset } from "./toolset.ts";
import { agentLoopDetection } from "../../../functions/config/loop-detection-schema.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import type { ThinkLevel } from "../../../functions/config/agents-schema.ts";
import { modelReasons, resolveThinkLevel } from "../../../functions/agent/thinking-level.ts";
import type { ChatType } from "../../../functions/core/envelope.ts";
import type { SessionToolsHost } from "../../../functions/agent/tools/session-tools-host.ts";
import { activeSubagentsBlock } from "../../../functions/agent/active-subagents.ts";

export interface RunDepsInput {
  env: Env;
  config: EdgeclawConfig;
  agentId: string;
  sessionKey: string;
  sessionId: string;
  route: ReplyRoute;
  chatType: ChatType | undefined;
  /** The model chosen for this run by /model, /new <model> or x-openclaw-model: strict, no fallbacks. */
  modelOverride: string | undefined;
  senderIsOwner: boolean;
  signal: AbortSignal;
  status: ToolContext["status"];
  onStreamReset: () => void;
  onNotice: (text: string) => void;
  /** True once a tool ran in this run: then a whole-chain overload retry could repeat work. */
  toolHasRun: () => boolean;
  /** Every model attempt's outcome and timing (metrics, spans). */
  onAttempt?: CallModelArgs["onAttempt"];
  /** What this run's main calls are metered as ("turn" unless the run is a heartbeat, cron, …). */
  callKind: ModelCallKind;
  /** The session's meter for a kind of call (durable-objects/session/upkeep/metering.ts). */
  meterFor: (kind: ModelCallKind) => ModelCallMeter;
  /** The first run after /new or /reset: the prompt gets today's and yesterday's notes. */
  startupContext?: boolean;
  /** The thinking levels the message and the session chose; resolved here against the model. */
  thinking: { message?: ThinkLevel; session?: ThinkLevel };
  /** The session's sandbox commands for exec/process (exec-step.ts), given the run's privacy. */
  execHost?: (mainPrivateSession: boolean) => ToolContext["exec"];
  /** The session tools' host (sub-agents, other sessions); a child runs with the minimal prompt. */
  sessionTools?: SessionToolsHost;
  /** Auth-profile cooldowns and this session's sticky profile (run/auth-profiles.ts). */
  authProfiles?: CallModelArgs["authProfiles"];
}

export type CallModelFn = (request: ModelRequest) => Promise<ModelResult>;

/** The model selection in force: an explicit pick is strict, else the agent's chain (or the default a key or the demo switch gives). */
export function selectionFor(
  config: EdgeclawConfig,
  env: Env,
  agentId: string,
  modelOverride: string | undefined,
): ModelSelection {
  return modelOverride
    ? { primary: modelOverride, fallbacks: [], origin: "config" }
    : modelSelectionFor(config, env, agentId);
}

/** Everything the agent loop needs for one run: prompt, tools, and the model with failover. */
export async function buildRunDeps(input: RunDepsInput): Promise<
  RunLoopDeps & {
    isSilent: (text: string) => boolean;
    callModel: CallModelFn;
    callModelAs: (kind: ModelCallKind) => CallModelFn;
    /** The run's own model selection (what its turns call). */
    selection: ModelSelection;
    /** A call to other models than the run's (an image model describing an image), metered as `kind`. */
    callModelWith: (kind: ModelCallKind, selection: ModelSelection) => CallModelFn;
  }
> {
  const { env, config, agentId } = input;
  // Images reach the model from the media store, read per request (functions/agent/media-request.ts).
  const media = mediaStoreFor(env as Record<string, unknown>);
  const selection = selectionFor(config, env, agentId, input.modelOverride);
  const tools = sessionToolset({
    env,
    config,
    agentId,
    route: input.route,
    senderIsOwner: input.senderIsOwner,
    modelRef: selection.primary,
    sessionTools: input.sessionTools,
  });
  const child = (input.sessionTools?.depth ?? 0) > 0;
  const agent = config.agents.list.find((entry) => entry.id === agentId);
  const think = resolveThinkLevel(config, agentId, {
    ...input.thinking,
    modelReasons: modelReasons(config, env, selection.primary),
  });
  // One answer for both the prompt and the file tools: MEMORY.md is neither injected nor readable elsewhere.
  const mainPrivateSession = isMainPrivateSession({
    chatType: input.chatType,
    senderIsOwner: input.senderIsOwner,
  });
  const prompt = await loadSystemPrompt(
    env,
    config,
    { id: agentId, name: agent?.name },
    {
      now: new Date(),
      channel: input.route.channel,
      chatType: input.chatType,
      mainPrivateSession,
      modelRef: selection.primary,
      tools,
      thinking: think.level,
      activeSubagents: input.sessionTools
        ? activeSubagentsBlock(input.sessionTools.children(), Date.now())
        : undefined,
      // A child gets the minimal prompt (AGENTS.md only) and the context of its task.
      ...(child
        ? { promptMode: "minimal" as const, extraContext: input.sessionTools?.childContext }
        : {}),
    },
    { startupContext: input.startupContext },
  );
  return {
    system: prompt.text,
    systemCacheBoundary: prompt.stable.length,
    tools,
    toolContext: {
      env,
      config,
      agentId,
      sessionKey: input.sessionKey,
      sessionId: input.sessionId,
      senderIsOwner: input.senderIsOwner,
      mainPrivateSession,
      status: input.status,
      exec: input.execHost?.(mainPrivateSession),
      meterFor: input.meterFor,
    },
    maxToolIterations: config.agents.defaults.maxToolIterations,
    loopDetection: agentLoopDetection(config, agentId),
    thinkLevel: think.level,
    maxToolResultChars: MAX_TOOL_RESULT_CHARS,
    signal: input.signal,
    isSilent: isSilentReply,
    callModel: callModelAs(input.callKind),
    callModelAs,
    selection,
    callModelWith,
  };

  function callModelAs(kind: ModelCallKind): CallModelFn {
    return callModelWith(kind, selection);
  }

  function callModelWith(kind: ModelCallKind, chosen: ModelSelection): CallModelFn {
    const meter = input.meterFor(kind);
    return async (request) => {
      const result = await callModel({
        config,
        env,
        selection: chosen,
        request,
        meter,
        onStreamReset: input.onStreamReset,
        onNotice: input.onNotice,
        ...(input.authProfiles ? { authProfiles: input.authProfiles } : {}),
        ...(media ? { loadMedia: (ref: string) => media.get(ref) } : {}),
        ...(input.onAttempt ? { onAttempt: input.onAttempt } : {}),
        ...(input.toolHasRun() ? { overloadChainRetries: 0 } : {}),
      });
      if (result.fallback)
        input.onNotice(
          modelFallbackNotice(result.modelRef, result.fallback.selected, result.fallback.reason),
        );
      return result;
    };
  }
}

/** USD for a run's usage at the configured price of the model that answered (0 if unknown). */
export function costOfRun(
  config: EdgeclawConfig,
  env: Env,
  modelRef: string,
  usage: Parameters<typeof costUsd>[0],
): number {
  if (!modelRef) return 0;
  try {
    const cost = resolveModel(config, env, modelRef).cost;
    return cost ? costUsd(usage, cost) : 0;
  } catch {
    return 0;
  }
}

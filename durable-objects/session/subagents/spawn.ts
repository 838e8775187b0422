import type {
  SpawnAnswer,
  SpawnRequest,
} from "../../../functions/agent/tools/session-tools-host.ts";
import { childSessionKey, childUuid } from "../../../functions/agent/subagent-keys.ts";
import { scopesFor } from "../../../functions/agent/budget-scopes.ts";
import { inboundEnvelopeSchema, type ReplyRoute } from "../../../functions/core/envelope.ts";
import { AUTOMATION_CHANNEL } from "../../../functions/core/operator-channels.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import type { RoutedEvent } from "../../session-api.ts";
import { budgetStub } from "../upkeep/metering.ts";
import { subagentLimitsFor } from "../../../functions/agent/subagent-limits.ts";
import { forkedConversation } from "./fork.ts";
import type { SessionState } from "../state.ts";
import { activeChildren, childrenOf, depthOf, removeChild, saveChild } from "./children.ts";
import type { OnBehalfOf, SubagentChild, SubagentParent } from "./shapes.ts";

/** The spawning run, as the spawn needs it. */
export interface Spawner {
  runId: string;
  route: ReplyRoute;
  senderIsOwner: boolean;
  onBehalfOf?: OnBehalfOf;
}

const TASK_CHARS_KEPT = 500;

/**
 * `sessions_spawn` inside the parent. Exactly once per tool call: the child's key derives from the
 * run and tool-call id, the record is written before the child is asked, and the child stores its
 * task by a dedup key of that key — so a run resumed after an eviction finds the record (or asks
 * the child again, which stores nothing twice) and never starts a second child. It returns as soon
 * as the child has stored its task; the child's result comes back as an inbox event (announce.ts).
 * The limits and the budget are checked before anything is recorded: a refused spawn leaves no trace.
 */
export async function spawnChild(
  s: SessionState,
  spawner: Spawner,
  request: SpawnRequest,
  toolCallId: string,
): Promise<SpawnAnswer> {
  const config = s.config;
  const parentAgentId = s.store.meta.get("agentId") ?? "main";
  const limits = subagentLimitsFor(config, parentAgentId);
  const parentKey = s.store.meta.get("sessionKey") ?? "";
  const uuid = await childUuid(spawner.runId, toolCallId);
  const known = childrenOf(s.store).find((child) => child.uuid === uuid);
  if (known) {
    if (known.state === "starting") return deliverTask(s, known, spawner);
    return accepted(known);
  }

  const depth = depthOf(s.store);
  if (depth >= limits.maxSpawnDepth)
    return refused(
      depth === 0
        ? "sessions_spawn is not allowed here"
        : `a sub-agent at depth ${depth} may not spawn (maxSpawnDepth is ${limits.maxSpawnDepth}: agents.defaults.subagents, or this agent's agents.list[].subagents)`,
    );
  const agentId = request.agentId ?? parentAgentId;
  const agentRefusal = targetAgentRefusal(s, limits.allowAgents, agentId);
  if (agentRefusal) return refused(agentRefusal);
  const active = activeChildren(s.store).length;
  if (active >= limits.maxChildrenPerAgent)
    return refused(
      `this session already has ${active} active sub-agents (maxChildrenPerAgent is ${limits.maxChildrenPerAgent}); wait for one to report (sessions_yield)`,
    );
  if (active >= limits.maxConcurrent)
    return refused(
      `${active} sub-agents are running (agents.defaults.subagents.maxConcurrent is ${limits.maxConcurrent}); wait for one to report (sessions_yield)`,
    );
  const childKey = childSessionKey(parentKey, agentId, uuid);
  const budget = await budgetRefusal(s, agentId, childKey, spawner.onBehalfOf);
  if (budget) return refused(budget);

  const now = Date.now();
  const child: SubagentChild = {
    childKey,
    uuid,
    callId: toolCallId,
    parentRunId: spawner.runId,
    agentId,
    // Whole until the child has stored it (a resumed spawn sends it again), then shortened.
    task: request.task,
    ...(request.label ? { label: request.label } : {}),
    ...(request.taskName ? { taskName: request.taskName } : {}),
    ...(request.context === "fork" ? { context: "fork" as const } : {}),
    state: "starting",
    createdAt: now,
  };
  saveChild(s.store, child, limits.archiveAfterMinutes, now);
  return deliverTask(s, child, spawner, request);
}

/** Hands the child its task (idempotent by the child's key) and marks the record running. */
async function deliverTask(
  s: SessionState,
  child: SubagentChild,
  spawner: Spawner,
  request?: SpawnRequest,
): Promise<SpawnAnswer> {
  const limits = subagentLimitsFor(s.config, s.store.meta.get("agentId") ?? "main");
  const parent: SubagentParent = {
    parentKey: s.store.meta.get("sessionKey") ?? "",
    parentAgentId: s.store.meta.get("agentId") ?? "main",
    childKey: child.childKey,
    uuid: child.uuid,
    depth: depthOf(s.store) + 1,
    senderIsOwner: spawner.senderIsOwner,
    ...(spawner.onBehalfOf ? { onBehalfOf: spawner.onBehalfOf } : {}),
    ...(child.label ? { label: child.label } : {}),
    ...(child.taskName ? { taskName: child.taskName } : {}),
    requesterRoute: spawner.route,
  };
  const model = request?.model ?? limits.model;
  const forkContext = child.context === "fork" ? forkedConversation(s) : undefined;
  const timeout = request?.runTimeoutSeconds ?? limits.runTimeoutSeconds;
  const event: RoutedEvent = {
    agentId: child.agentId,
    sessionKey: child.childKey,
    envelope: inboundEnvelopeSchema.parse({
      dedupKey: `subagent-task:${child.childKey}`,
      channel: AUTOMATION_CHANNEL,
      chatType: "direct",
      peerId: "subagent",
      senderId: "subagent",
      text: child.task,
      receivedAt: child.createdAt,
      route: { channel: AUTOMATION_CHANNEL, accountId: "default", to: "subagent" },
    }),
    automation: {
      source: "subagent",
      action: "agent-turn",
      subagent: { kind: "task", parent, ...(forkContext ? { forkContext } : {}) },
      ...(timeout > 0 ? { timeoutSeconds: timeout } : {}),
      ...(spawner.onBehalfOf ? { onBehalfOf: spawner.onBehalfOf } : {}),
    },
    ...(model ? { overrides: { model } } : {}),
  };
  try {
    const stub = s.env.SESSIONS.get(s.env.SESSIONS.idFromName(child.childKey));
    await stub.accept(event);
  } catch (error) {
    removeChild(s.store, child.childKey);
    return refused(`the sub-agent could not be started: ${describeError(error)}`);
  }
  const running: SubagentChild = {
    ...child,
    task: child.task.slice(0, TASK_CHARS_KEPT),
    state: "running",
  };
  // The child may already have reported (a resumed spawn): never step an ended record back.
  const current = childrenOf(s.store).find((known) => known.childKey === child.childKey);
  if (current?.state === "starting")
    saveChild(s.store, running, limits.archiveAfterMinutes, Date.now());
  return accepted(running, model);
}

function accepted(child: SubagentChild, model?: string): SpawnAnswer {
  return {
    status: "accepted",
    runId: child.uuid,
    childSessionKey: child.childKey,
    ...(model ? { resolvedModel: model } : {}),
  };
}

function refused(error: string): SpawnAnswer {
  return { status: "refused", error };
}

/** `agentId` other than the requester's needs `allowAgents` (the requester's, else the default) and a configured agent. */
function targetAgentRefusal(
  s: SessionState,
  allowAgents: string[] | undefined,
  target: string,
): string | undefined {
  if (target === (s.store.meta.get("agentId") ?? "main")) return undefined;
  const allow = allowAgents ?? [];
  const configured = s.config.agents.list.some((entry) => entry.id === target);
  if (!configured) return `agent "${target}" is not configured (agents.list)`;
  if (!allow.includes("*") && !allow.includes(target))
    return `spawning under agent "${target}" is not allowed (agents.defaults.subagents.allowAgents)`;
  return undefined;
}

/**
 * A spawn that a budget would refuse is refused before the child starts: the child's calls count
 * against the same global, agent and sender scopes as its parent's (and its own session scope), so
 * a scope with no room left for them refuses the spawn. Fails closed: no answer, no child.
 */
async function budgetRefusal(
  s: SessionState,
  agentId: string,
  childKey: string,
  onBehalfOf: OnBehalfOf | undefined,
): Promise<string | undefined> {
  const now = Date.now();
  const sender = onBehalfOf ? `${onBehalfOf.channel}:${onBehalfOf.senderId}` : undefined;
  const scopes = scopesFor(s.config.budgets, { agentId, sessionKey: childKey, sender }, now);
  for (const scope of scopes) {
    let states;
    try {
      states = await budgetStub(s, scope.scope).state({ windows: scope.windows, now });
    } catch (error) {
      return `the budget check is unavailable (${describeError(error)}); no sub-agent was started`;
    }
    for (const window of states) {
      const usedUsd = window.spentUsd + window.reservedUsd;
      const usedTokens = window.spentTokens + window.reservedTokens;
      const full =
        (window.limitUsd !== undefined && usedUsd >= window.limitUsd) ||
        (window.limitTokens !== undefined && usedTokens >= window.limitTokens);
      if (full)
        return `budget ${scope.scope} has no room left this ${window.period} (resets ${new Date(window.resetsAt).toISOString()}): the sub-agent was not started`;
    }
  }
  return undefined;
}

import type { ChildView } from "../../../functions/agent/tools/session-tools-host.ts";
import type { SessionStore } from "../storage.ts";
import type { SubagentAdminRow, SubagentChild, SubagentParent } from "./shapes.ts";

/**
 * The parent's list of its children (meta `subagentChildren`): every active child, and ended ones
 * for `archiveAfterMinutes` (at most KEEP_ENDED of them), which is what `/subagents`, the
 * `subagents` tool and the spawn limits read.
 */
const KEY = "subagentChildren";
const KEEP_ENDED = 50;

export function childrenOf(store: SessionStore): SubagentChild[] {
  return store.meta.getJson(KEY) ?? [];
}

export function activeChildren(store: SessionStore): SubagentChild[] {
  return childrenOf(store).filter((child) => child.state !== "ended");
}

/** Adds or replaces the record of `child.childKey`, and drops ended records past their keep time. */
export function saveChild(
  store: SessionStore,
  child: SubagentChild,
  archiveAfterMinutes: number,
  now: number,
): void {
  const others = childrenOf(store).filter((known) => known.childKey !== child.childKey);
  const keepFrom = now - archiveAfterMinutes * 60_000;
  const ended = others.filter(
    (known) => known.state === "ended" && (known.endedAt ?? 0) >= keepFrom,
  );
  const kept = [
    ...others.filter((known) => known.state !== "ended"),
    ...ended.slice(-KEEP_ENDED),
    child,
  ].sort((a, b) => a.createdAt - b.createdAt);
  store.meta.setJson(KEY, kept);
}

export function removeChild(store: SessionStore, childKey: string): void {
  store.meta.setJson(
    KEY,
    childrenOf(store).filter((known) => known.childKey !== childKey),
  );
}

/** This session's parent, when it is a child (set from its task event, never from a channel). */
export function parentOf(store: SessionStore): SubagentParent | undefined {
  return store.meta.getJson("subagentParent");
}

/** How deep this session was spawned: 0 for a session nobody spawned. */
export function depthOf(store: SessionStore): number {
  return parentOf(store)?.depth ?? 0;
}

/** A child as the tools and /subagents show it. */
export function childView(child: SubagentChild): ChildView {
  return {
    childSessionKey: child.childKey,
    runId: child.uuid,
    agentId: child.agentId,
    ...(child.label ? { label: child.label } : {}),
    ...(child.taskName ? { taskName: child.taskName } : {}),
    task: child.task,
    state: child.state,
    ...(child.outcome ? { outcome: child.outcome } : {}),
    ...(child.result !== undefined ? { result: child.result } : {}),
    startedAt: new Date(child.createdAt).toISOString(),
    ...(child.endedAt ? { endedAt: new Date(child.endedAt).toISOString() } : {}),
    ...(child.stats ? { runtimeMs: child.stats.runtimeMs } : {}),
  };
}

/** A child as the control page shows it: the tools' view and the tokens it used. */
export function childAdminView(child: SubagentChild): SubagentAdminRow {
  return {
    ...childView(child),
    ...(child.stats
      ? { inputTokens: child.stats.inputTokens, outputTokens: child.stats.outputTokens }
      : {}),
    ...(child.stats?.modelRef ? { modelRef: child.stats.modelRef } : {}),
    ...(child.killRequested ? { killRequested: true } : {}),
  };
}

/** A child named by `/subagents` or the `subagents` tool: #index (1-based), runId, key, taskName or a unique prefix. */
export function findChild(store: SessionStore, target: string): SubagentChild | string {
  const children = childrenOf(store);
  const wanted = target.trim().replace(/^#/, "");
  if (/^\d+$/.test(wanted)) {
    const child = children[Number(wanted) - 1];
    return child ?? `no sub-agent #${wanted} (this session has ${children.length})`;
  }
  if (wanted === "last") return children.at(-1) ?? "this session has no sub-agents";
  const exact = children.find(
    (child) => child.uuid === wanted || child.childKey === wanted || child.taskName === wanted,
  );
  if (exact) return exact;
  const prefixed = children.filter(
    (child) =>
      child.uuid.startsWith(wanted) ||
      child.taskName?.startsWith(wanted) ||
      child.label?.toLowerCase().startsWith(wanted.toLowerCase()),
  );
  if (prefixed.length === 1) return prefixed[0]!;
  return prefixed.length
    ? `"${target}" is ambiguous: use the list index or the runId`
    : `no sub-agent matches "${target}"`;
}

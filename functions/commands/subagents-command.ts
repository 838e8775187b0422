import type { SessionControl, SubagentSummary } from "./session-control.ts";

/**
 * `/subagents list | log <id|#> [limit] | info <id|#> | kill <id|#|all>` (tools/subagents): this
 * session's own children. A target is the list index (#1), the runId, the child session key, the
 * taskName or an unambiguous prefix. `log` shows the child's recent user/assistant turns (tool
 * calls are not shown; sessions_history is the agent's bounded view). Nothing here calls a model.
 */
const USAGE = "Usage: /subagents list | log <id|#> [limit] | info <id|#> | kill <id|#|all>";

export async function subagentsCommand(args: string, session: SessionControl): Promise<string> {
  const [action = "list", target, third] = args.trim().split(/\s+/).filter(Boolean);
  switch (action.toLowerCase()) {
    case "list":
      return listReply(await session.subagents());
    case "info": {
      if (!target) return USAGE;
      const found = pick(await session.subagents(), target);
      return typeof found === "string" ? found : infoReply(found);
    }
    case "log": {
      if (!target) return USAGE;
      const limit = third && /^\d+$/.test(third) ? Math.min(50, Number(third)) : 10;
      const log = await session.subagentLog(target, limit);
      if (typeof log === "string") return log;
      const lines = log.turns.map(
        (turn) =>
          `${turn.role === "user" ? "→" : "←"} ${turn.text.length > 600 ? `${turn.text.slice(0, 600)}…` : turn.text}`,
      );
      return [`🧵 ${nameOf(log.child)} — last ${log.turns.length} turn(s)`, ...lines].join("\n");
    }
    case "kill": {
      if (!target) return USAGE;
      if (target === "all") {
        const active = (await session.subagents()).filter((child) => child.state !== "ended");
        if (!active.length) return "No sub-agent is running.";
        const answers = [];
        for (const child of active) answers.push(await session.killSubagent(child.runId));
        return answers.join("\n");
      }
      return session.killSubagent(target);
    }
    default:
      return USAGE;
  }
}

function nameOf(child: SubagentSummary): string {
  return child.label ?? child.taskName ?? child.childSessionKey;
}

function listReply(children: SubagentSummary[]): string {
  if (!children.length) return "No sub-agents in this session.";
  return [
    "🤖 Sub-agents of this session:",
    ...children.map((child, index) => {
      const when = child.runtimeMs !== undefined ? ` · ${Math.round(child.runtimeMs / 1000)}s` : "";
      const state = child.state === "ended" ? `ended (${child.outcome ?? "unknown"})` : child.state;
      return `#${index + 1} ${nameOf(child)} — ${state}${when} · ${child.runId.slice(0, 8)}`;
    }),
  ].join("\n");
}

function infoReply(child: SubagentSummary): string {
  return [
    `🤖 ${nameOf(child)}`,
    `Session: ${child.childSessionKey}`,
    `Run: ${child.runId} · agent ${child.agentId}`,
    `State: ${child.state}${child.outcome ? ` (${child.outcome})` : ""}`,
    `Started: ${child.startedAt}${child.endedAt ? ` · ended ${child.endedAt}` : ""}`,
    `Task: ${child.task.length > 300 ? `${child.task.slice(0, 300)}…` : child.task}`,
    ...(child.result
      ? [`Result: ${child.result.length > 500 ? `${child.result.slice(0, 500)}…` : child.result}`]
      : []),
  ].join("\n");
}

/** The same rules the session uses for a target (#index, runId, key, taskName, unique prefix). */
function pick(children: SubagentSummary[], target: string): SubagentSummary | string {
  const wanted = target.replace(/^#/, "");
  if (/^\d+$/.test(wanted)) return children[Number(wanted) - 1] ?? `No sub-agent #${wanted}.`;
  const exact = children.find(
    (child) =>
      child.runId === wanted || child.childSessionKey === wanted || child.taskName === wanted,
  );
  if (exact) return exact;
  const prefixed = children.filter(
    (child) => child.runId.startsWith(wanted) || child.taskName?.startsWith(wanted),
  );
  if (prefixed.length === 1) return prefixed[0]!;
  return prefixed.length
    ? `"${target}" is ambiguous: use the list index.`
    : `No sub-agent matches "${target}".`;
}

import { containerCostUsd } from "../../functions/sandbox/container-prices.ts";
import { sandboxConfigFor, sandboxPlacement } from "../../functions/sandbox/placement.ts";
import type {
  SandboxCommandView,
  SandboxReport,
  SandboxUsageView,
} from "../../functions/sandbox/report.ts";
import { viewOf } from "./exec-backend.ts";
import { ExecStore, type ExecRow } from "./exec-store.ts";
import type { SessionState } from "./state.ts";

/**
 * The session's sandbox for operators and for /usage: its metered time (meta `sandboxUsage:<id>`,
 * added once per finished command, in the transaction that records the end — a command is never
 * counted twice, whatever re-reads its result), the commands it ran and runs, and for the container
 * backend the scope's container as its SandboxDO describes it.
 */

/** Adds a finished command's wall time to its session's sandbox usage (call inside the finish's transaction). */
export function meterExecEnd(s: SessionState, row: ExecRow, durationMs: number): void {
  const key = `sandboxUsage:${row.sessionId}` as const;
  const usage = s.store.meta.getJson(key) ?? { commands: 0, ms: 0, containerMs: 0 };
  usage.commands += 1;
  usage.ms += Math.max(0, durationMs);
  if (sandboxConfigFor(s.config, row.request.agentId).backend === "container")
    usage.containerMs += Math.max(0, durationMs);
  s.store.meta.setJson(key, usage);
}

export function sandboxUsage(s: SessionState, sessionId: string): SandboxUsageView {
  const usage = s.store.meta.getJson(`sandboxUsage:${sessionId}`) ?? {
    commands: 0,
    ms: 0,
    containerMs: 0,
  };
  const instanceType = s.config.agents.defaults.sandbox.container.instanceType;
  return {
    commands: usage.commands,
    seconds: usage.ms / 1000,
    containerSeconds: usage.containerMs / 1000,
    estimatedUsd: containerCostUsd(instanceType, usage.containerMs / 1000) ?? 0,
  };
}

export async function sandboxReport(s: SessionState): Promise<SandboxReport> {
  const sessionId = s.store.meta.get("sessionId") ?? "";
  const agentId = s.store.meta.get("agentId") ?? "main";
  const sessionKey = s.store.meta.get("sessionKey") ?? "";
  const placement = sandboxPlacement(s.config, agentId, sessionKey) ?? null;
  const commands: SandboxCommandView[] = new ExecStore(s.ctx.storage.sql)
    .list()
    .filter((row) => row.sessionId === sessionId)
    .map((row) => {
      const view = viewOf(row);
      return {
        id: row.callId,
        command: row.command.slice(0, 500),
        state: view.state,
        exitCode: view.exitCode,
        signal: view.signal,
        timedOut: view.timedOut,
        background: row.background,
        startedAt: row.createdAt,
        finishedAt: row.finishedAt,
        durationMs: row.result?.durationMs ?? null,
      };
    });
  const report: SandboxReport = { placement, commands, usage: sandboxUsage(s, sessionId) };
  if (placement?.backend === "container")
    report.container = await containerState(s, placement.scope);
  return report;
}

async function containerState(
  s: SessionState,
  scope: string,
): Promise<NonNullable<SandboxReport["container"]>> {
  const namespace = s.env as unknown as {
    SANDBOX?: { getByName(name: string): { describe(): Promise<unknown> } };
    EDGECLAW_SANDBOX_CONTAINER?: string;
  };
  if (!namespace.SANDBOX || namespace.EDGECLAW_SANDBOX_CONTAINER !== "1")
    return { error: "this Worker was deployed without the sandbox container" };
  try {
    return (await namespace.SANDBOX.getByName(scope).describe()) as NonNullable<
      SandboxReport["container"]
    >;
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

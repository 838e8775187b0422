import { sandboxBackend, type SandboxBackend } from "../../functions/sandbox/backend.ts";
import type { ExecView } from "../../functions/sandbox/exec-host.ts";
import type { ExecStatus } from "../../functions/sandbox/wire.ts";
import type { ExecFinal, ExecRow } from "./exec-store.ts";
import type { SessionState } from "./state.ts";
import { sandboxConfigFor } from "../../functions/sandbox/placement.ts";

/** The backend that serves a scope under the session's config (companion or container). */
export function backendFor(s: SessionState, scope: string, agentId: string): SandboxBackend {
  const kind = sandboxConfigFor(s.config, agentId).backend;
  return sandboxBackend(
    kind,
    s.config.companion,
    s.env as unknown as Record<string, unknown>,
    scope,
  );
}

/** The next background poll after `count` polls: 1 s, 2 s, 4 s … at most 30 s. */
export function pollDelayMs(count: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(count, 5));
}

export function finalFrom(
  status: ExecStatus,
  sync: Pick<ExecFinal, "written" | "conflicts" | "skipped">,
): ExecFinal {
  return {
    state: status.state === "running" ? "exited" : status.state,
    exitCode: status.exitCode,
    signal: status.signal,
    timedOut: status.timedOut,
    output: status.output,
    outputChars: status.outputChars,
    droppedChars: status.droppedChars,
    omittedChars: status.omittedChars,
    durationMs:
      status.startedAt !== null && status.finishedAt !== null
        ? status.finishedAt - status.startedAt
        : 0,
    ...sync,
  };
}

export function viewOf(row: ExecRow, live?: ExecStatus): ExecView {
  const base = {
    id: row.callId,
    command: row.command,
    background: row.background,
    written: [] as string[],
    conflicts: [] as string[],
    skipped: [] as string[],
  };
  if (row.state === "approval")
    return {
      ...base,
      state: "approval-pending",
      exitCode: null,
      signal: null,
      timedOut: false,
      output: "",
      omittedChars: 0,
      droppedChars: 0,
      durationMs: null,
    };
  if (row.state === "denied")
    return {
      ...base,
      state: "denied",
      exitCode: null,
      signal: null,
      timedOut: false,
      output: "",
      omittedChars: 0,
      droppedChars: 0,
      durationMs: null,
    };
  if (row.state === "finished" && row.result) {
    const result = row.result;
    return {
      ...base,
      state: result.state,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      output: result.output,
      omittedChars: result.omittedChars,
      droppedChars: result.droppedChars,
      durationMs: result.durationMs,
      written: result.written,
      conflicts: result.conflicts,
      skipped: result.skipped,
      ...(result.killedByStop ? { killedByStop: true } : {}),
    };
  }
  return {
    ...base,
    state: "running",
    exitCode: null,
    signal: null,
    timedOut: false,
    output: live?.output ?? "",
    omittedChars: live?.omittedChars ?? 0,
    droppedChars: live?.droppedChars ?? 0,
    durationMs: live?.startedAt ? Date.now() - live.startedAt : null,
  };
}

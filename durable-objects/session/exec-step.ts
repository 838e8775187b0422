import type { ExecHost, ExecStartInput, ExecView } from "../../functions/sandbox/exec-host.ts";
import {
  execStatusSchema,
  logAnswerSchema,
  type ExecStatus,
} from "../../functions/sandbox/wire.ts";
import { SandboxError } from "../../functions/sandbox/backend.ts";
import { sandboxConfigFor, sandboxPlacement } from "../../functions/sandbox/placement.ts";
import { backendFor, finalFrom, pollDelayMs, viewOf } from "./exec-backend.ts";
import { commitSandboxChanges, filesForSandbox } from "./exec-sync.ts";
import { ExecStore, type ExecRequest, type ExecRow } from "./exec-store.ts";
import { scheduleAlarm } from "./schedule.ts";
import { notifyExecEnded } from "./exec-notify.ts";
import { meterExecEnd } from "./exec-report.ts";
import { admitSandboxTime, flushSandboxCharges, queueSandboxCharge } from "./exec-budget.ts";
import type { SessionState } from "./state.ts";
import { recordAuditEvent } from "./audit.ts";
import { describeError } from "../../functions/core/describe-error.ts";

/**
 * The session side of `exec`/`process` (the ExecHost the tools get). Exactly once: the row is in
 * SQLite before the sandbox is asked, and the host it asks never starts a known exec id twice, so a
 * resumed run (eviction, crash, deploy) asks again and gets the same command's status, never a
 * second run. The object waits at most `yieldMs` (the request's waitMs); a command still running
 * then continues in the background and is polled from the alarm (1 s … 30 s apart) until its end
 * is recorded and, with notifyOnExit, announced by one inbox event.
 */
export interface ExecRunContext {
  sessionId: string;
  agentId: string;
  sessionKey: string;
  mainPrivateSession: boolean;
}

export function execStore(s: SessionState): ExecStore {
  return new ExecStore(s.ctx.storage.sql);
}

export function sessionExecHost(s: SessionState, run: ExecRunContext): ExecHost | undefined {
  const placement = sandboxPlacement(s.config, run.agentId, run.sessionKey);
  if (!placement) return undefined;
  const store = execStore(s);
  const find = (id: string): ExecRow | undefined => store.byCallId(id);

  return {
    async start(input: ExecStartInput): Promise<ExecView> {
      const execId = `${run.sessionId}:${input.callId}`;
      const known = store.get(execId);
      if (known) {
        if (known.state === "starting" || known.state === "running")
          return startOrReconcile(s, known, input.background ? 0 : input.yieldMs);
        return viewOf(known);
      }
      const exec = s.config.tools.exec;
      const sandbox = sandboxConfigFor(s.config, run.agentId);
      const request: ExecRequest = {
        op: "start",
        scope: placement.scope,
        execId,
        command: input.command,
        workdir: input.workdir,
        env: input.env,
        timeoutSeconds: input.timeoutSeconds,
        pty: input.pty,
        waitMs: input.background ? 0 : input.yieldMs,
        network: placement.network,
        allowedHosts: placement.network ? sandbox.docker.allowedHosts : [],
        isolation: placement.isolation,
        maxOutputChars: exec.maxOutputChars,
        pendingMaxOutputChars: exec.pendingMaxOutputChars,
        syncBack: sandbox.workspaceAccess === "rw",
        syncMaxFiles: sandbox.sync.maxFiles,
        syncMaxBytes: sandbox.sync.maxBytes,
        resume: false,
        ...(sandbox.docker.setupCommand ? { setupCommand: sandbox.docker.setupCommand } : {}),
        agentId: run.agentId,
        sessionKey: run.sessionKey,
        mainPrivateSession: run.mainPrivateSession,
      };
      const row = {
        execId,
        callId: input.callId,
        sessionId: run.sessionId,
        scope: placement.scope,
        state: input.needsApproval ? ("approval" as const) : ("starting" as const),
        command: input.command,
        request,
        background: input.background,
        notify: exec.notifyOnExit,
        createdAt: Date.now(),
      };
      store.insert(row);
      if (input.needsApproval) {
        // Audited when asked, so the control page finds the sessions with commands waiting.
        await recordAuditEvent(s.env, "exec.approval_requested", {
          sessionKey: run.sessionKey,
          agentId: run.agentId,
          id: input.callId,
          command: input.command.slice(0, 500),
        }).catch((error: unknown) =>
          console.warn("exec: the approval request was not audited", describeError(error)),
        );
        return { ...viewOf(store.get(execId)!), approvalReason: input.needsApproval.reason };
      }
      return startOrReconcile(s, store.get(execId)!, request.waitMs);
    },

    async poll(id, waitMs) {
      const row = find(id);
      if (!row) return undefined;
      if (row.state !== "running" && row.state !== "starting") return viewOf(row);
      const status = await backendFor(s, row.scope, row.request.agentId).call(
        { op: "poll", scope: row.scope, execId: row.execId, waitMs, offset: row.outputSeen },
        execStatusSchema,
      );
      store.setOutputSeen(row.execId, row.outputSeen + status.output.length);
      if (status.state === "running") return viewOf(row, status);
      const ended = await finalize(s, row, status);
      // poll shows what is new; the record keeps the tail.
      return { ...viewOf(ended), output: status.output };
    },

    async log(id, offset, limit) {
      const row = find(id);
      if (!row) return undefined;
      try {
        return await backendFor(s, row.scope, row.request.agentId).call(
          { op: "log", scope: row.scope, execId: row.execId, offset, limit },
          logAnswerSchema,
        );
      } catch (error) {
        if (!(error instanceof SandboxError) || !row.result) throw error;
        const lines = row.result.output.replace(/\n$/, "").split("\n");
        const start = offset ?? Math.max(0, lines.length - (limit ?? 200));
        return {
          execId: row.execId,
          lines: lines.slice(start, limit !== undefined ? start + limit : undefined),
          offset: start,
          totalLines: lines.length,
          state: row.result.state,
          exitCode: row.result.exitCode,
        };
      }
    },

    async write(id, data, eof) {
      const row = find(id);
      if (!row) return undefined;
      if (row.state !== "running") return viewOf(row);
      const status = await backendFor(s, row.scope, row.request.agentId).call(
        { op: "write", scope: row.scope, execId: row.execId, data, eof },
        execStatusSchema,
      );
      return viewOf(row, status);
    },

    async kill(id) {
      const row = find(id);
      if (!row) return undefined;
      if (row.state === "approval") {
        store.deny(row.execId, Date.now());
        return viewOf(store.get(row.execId)!);
      }
      if (row.state !== "running" && row.state !== "starting") return viewOf(row);
      return viewOf(await killExec(s, row, false));
    },

    async list() {
      return store
        .list()
        .filter((row) => row.sessionId === run.sessionId)
        .map((row) => viewOf(row));
    },

    async clear(id, killFirst) {
      const row = find(id);
      if (!row) return "missing";
      if (row.state === "running" || row.state === "starting") {
        if (!killFirst) return "running";
        await killExec(s, row, false);
      }
      store.remove(row.execId);
      return "cleared";
    },
  };
}

/** Sends the start (again: the host answers a known id with its status) and records the answer. */
export async function startOrReconcile(
  s: SessionState,
  row: ExecRow,
  waitMs: number,
): Promise<ExecView> {
  const store = execStore(s);
  const request = row.request;
  const sandbox = sandboxConfigFor(s.config, request.agentId);
  if (row.state === "starting") {
    try {
      // budgets' sandbox time: a scope with none left starts nothing (fail closed).
      await admitSandboxTime(s, row);
    } catch (error) {
      store.remove(row.execId);
      throw error;
    }
  }
  let files;
  if (sandbox.workspaceAccess !== "none" && row.state === "starting")
    files = await filesForSandbox(s.env, request.agentId, sandbox, request.mainPrivateSession);
  const { agentId: _a, sessionKey: _k, mainPrivateSession: _m, ...op } = request;
  let status: ExecStatus;
  try {
    status = await backendFor(s, row.scope, row.request.agentId).call(
      { ...op, waitMs, ...(files ? { files } : {}) },
      execStatusSchema,
    );
  } catch (error) {
    // Refused or unavailable: the host did not start it; forget the row so the error is the answer
    // (and give its admitted sandbox time back).
    if (error instanceof SandboxError && error.code !== "unreachable") {
      s.ctx.storage.transactionSync(() => {
        store.remove(row.execId);
        queueSandboxCharge(s, row, 0);
      });
      await flushSandboxCharges(s);
    } else {
      store.markRunning(row.execId, Date.now() + pollDelayMs(0), 0);
      await scheduleAlarm(s);
    }
    throw error;
  }
  if (status.state === "running") {
    store.markRunning(row.execId, Date.now() + pollDelayMs(0), status.outputChars);
    await scheduleAlarm(s);
    return viewOf(store.get(row.execId)!, status);
  }
  return viewOf(await finalize(s, row, status));
}

/**
 * Records a command's end: its changes go to Postgres first (idempotent: a change already there
 * is recognised), then the row is finished, then — for background commands with notifyOnExit —
 * one inbox event. A crash anywhere in between repeats only the steps not yet recorded.
 */
export async function finalize(
  s: SessionState,
  row: ExecRow,
  status: ExecStatus,
  extra: { killedByStop?: boolean; quiet?: boolean } = {},
): Promise<ExecRow> {
  const store = execStore(s);
  const sync =
    status.changes && row.request.syncBack
      ? await commitSandboxChanges(
          s.env,
          row.request.agentId,
          status.changes,
          row.request.mainPrivateSession,
          `-${row.callId.replace(/[^A-Za-z0-9_-]/g, "").slice(-12)}`,
        )
      : { written: [], conflicts: [], skipped: [] };
  sync.skipped.push(...(status.skipped ?? []));
  const current = store.get(row.execId) ?? row;
  if (current.state === "finished") return current;
  const { quiet, ...marks } = extra;
  const final = { ...finalFrom(status, sync), ...marks };
  // The end and its metering in one transaction: a command is counted exactly once.
  s.ctx.storage.transactionSync(() => {
    store.finish(row.execId, final, Date.now());
    meterExecEnd(s, current, final.durationMs);
    queueSandboxCharge(s, current, final.durationMs);
  });
  await flushSandboxCharges(s);
  const ended = store.get(row.execId)!;
  // A command the agent killed itself (process kill) needs no news of its end.
  if (ended.background && !quiet) await notifyExecEnded(s, ended);
  return ended;
}

export async function killExec(s: SessionState, row: ExecRow, byStop: boolean): Promise<ExecRow> {
  const status = await backendFor(s, row.scope, row.request.agentId).call(
    { op: "kill", scope: row.scope, execId: row.execId, signal: "SIGKILL" },
    execStatusSchema,
  );
  return finalize(
    s,
    row,
    status.state === "running" ? { ...status, state: "exited" } : status,
    byStop ? { killedByStop: true } : { quiet: true },
  );
}

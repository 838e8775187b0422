import { execStatusSchema } from "../../functions/sandbox/wire.ts";
import { SandboxError } from "../../functions/sandbox/backend.ts";
import { recordAuditEvent } from "./audit.ts";
import { backendFor, pollDelayMs } from "./exec-backend.ts";
import { notifyExecDenied } from "./exec-notify.ts";
import { execStore, finalize, killExec, startOrReconcile } from "./exec-step.ts";
import type { SessionState } from "./state.ts";
import {
  TrustLimitError,
  trustCommand,
  type TrustOutcome,
} from "../../functions/sandbox/trusted-commands.ts";

/**
 * The session's commands outside a tool call: the alarm's poll of background commands, /stop
 * (kills every running command of the session), and /approve (starts or refuses a command that
 * waited for approval, with an audit record either way).
 */

/** Polls every background command that is due (without waiting on any) and records the ends. */
export async function pollBackgroundExecs(s: SessionState): Promise<void> {
  const store = execStore(s);
  const now = Date.now();
  store.prune(now, s.config.tools.exec.cleanupMs);
  for (const row of store.duePolls(now)) {
    try {
      const status = await backendFor(s, row.scope, row.request.agentId).call(
        { op: "poll", scope: row.scope, execId: row.execId, waitMs: 0, offset: 0 },
        execStatusSchema,
      );
      if (status.state === "running") {
        store.markRunning(row.execId, Date.now() + pollDelayMs(row.pollCount), 0);
        continue;
      }
      // unknown on a poll: the host never got the start (its answer was lost before it arrived).
      await finalize(s, row, status.state === "unknown" ? { ...status, state: "lost" } : status);
    } catch (error) {
      // Unreachable for now: try again later, never give up on a running command silently.
      store.markRunning(row.execId, Date.now() + pollDelayMs(row.pollCount), 0);
      if (!(error instanceof SandboxError)) throw error;
    }
  }
}

/** /stop: every running command of this session is killed; waiting approvals are refused. */
export async function stopSessionExecs(s: SessionState): Promise<number> {
  const store = execStore(s);
  let stopped = 0;
  for (const row of store.open()) {
    if (row.state === "approval") {
      store.deny(row.execId, Date.now());
      stopped++;
      continue;
    }
    try {
      await killExec(s, row, true);
      stopped++;
    } catch (error) {
      console.warn(
        "/stop: killing a command failed",
        error instanceof Error ? error.message : String(error),
      );
    }
  }
  return stopped;
}

export type ApproveDecision = "allow-once" | "allow-always" | "deny";

/**
 * /approve <id> allow-once|allow-always|deny from the owner: an approved command starts now in the
 * background (its end arrives as the notifyOnExit event); a denied one never runs and the agent is
 * told. `allow-always` also stores the command's segments for the agent (trusted-commands.ts), so
 * the same command runs without asking from then on (not under ask "always"); one it cannot bind to
 * runs once and the reply says why. Audited either way, with what was stored.
 */
export async function approveExec(
  s: SessionState,
  id: string,
  decision: ApproveDecision,
  approver: string,
): Promise<string> {
  const store = execStore(s);
  const row = store.byCallId(id);
  if (row?.state !== "approval") return `No command waits for approval under id ${id}.`;
  // Stored before the command starts: a crash after this leaves the trust, never a second run.
  let trust: TrustOutcome | undefined;
  if (decision === "allow-always") {
    try {
      trust = await trustCommand(s.env, row.request.agentId, row.command, approver);
    } catch (error) {
      if (!(error instanceof TrustLimitError)) throw error;
      return `Not approved: ${error.message}.`;
    }
  }
  await recordAuditEvent(
    s.env,
    "exec.approval",
    {
      sessionKey: row.request.sessionKey,
      id,
      decision,
      command: row.command.slice(0, 500),
      ...(trust?.kind === "stored" ? { alwaysAllowed: trust.segments } : {}),
      ...(trust?.kind === "unbindable" ? { storedNothing: trust.reason } : {}),
    },
    approver,
  );
  if (decision === "deny") {
    store.deny(row.execId, Date.now());
    await notifyExecDenied(s, store.get(row.execId)!, approver);
    return `❌ Denied: \`${row.command.slice(0, 200)}\` will not run.`;
  }
  // Approved commands run in the background and always report their end (OpenClaw's Exec finished).
  store.approve(row.execId);
  const started = store.get(row.execId)!;
  const always =
    trust?.kind === "stored"
      ? ` From now on it runs without asking (${trust.segments.map((segment) => `\`${segment}\``).join(", ")}; revoke with \`edgeclaw approvals revoke\`).`
      : trust?.kind === "unbindable"
        ? ` Allowed once only: ${trust.reason}.`
        : "";
  try {
    const view = await startOrReconcile(s, started, 0);
    return view.state === "running"
      ? `✅ Approved: \`${row.command.slice(0, 200)}\` is running (id ${id}); its result arrives when it ends.${always}`
      : `✅ Approved: \`${row.command.slice(0, 200)}\` ran (exit ${view.exitCode ?? "?"}).${always}`;
  } catch (error) {
    return `Approved, but the sandbox could not start it: ${error instanceof Error ? error.message : String(error)}`;
  }
}

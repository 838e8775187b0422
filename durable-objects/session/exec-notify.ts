import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { AUTOMATION_CHANNEL } from "../../functions/core/operator-channels.ts";
import { mainSessionKey } from "../../functions/routing/session-key.ts";
import { schedulerStub } from "../scheduler-stub.ts";
import type { RoutedEvent } from "../session-api.ts";
import type { ExecRow } from "./exec-store.ts";
import { scheduleAlarm } from "./schedule.ts";
import type { SessionState } from "./state.ts";

/**
 * `tools.exec.notifyOnExit`: a background command's end becomes ONE system event in its session's
 * inbox (dedup key `exec-exit:<execId>`, so a repeated poll, a retried alarm or a crash between
 * recording the end and raising the event stores it once), context for the session's next run —
 * and, in the agent's main session, a heartbeat wake (idempotent by the same id), so the agent
 * hears of it without waiting for the next message, as OpenClaw's "request a heartbeat".
 */
export async function notifyExecEnded(s: SessionState, row: ExecRow): Promise<void> {
  const exec = s.config.tools.exec;
  const result = row.result;
  if (!row.notify || !exec.notifyOnExit || !result) return;
  const quietSuccess = result.state === "exited" && result.exitCode === 0 && !result.output.trim();
  if (quietSuccess && !exec.notifyOnExitEmptySuccess) return;
  const how =
    result.state === "lost"
      ? "was lost: the sandbox host restarted while it ran (it was not run again)"
      : result.killedByStop
        ? "was killed by /stop"
        : result.timedOut
          ? "timed out (tools.exec.timeoutSeconds)"
          : result.signal
            ? `ended by ${result.signal}`
            : `exited with code ${result.exitCode}`;
  const tail = result.output.length > 400 ? `…${result.output.slice(-400)}` : result.output;
  const text = `Exec finished (id ${row.callId}): \`${row.command.slice(0, 200)}\` ${how}.${tail.trim() ? ` Output tail:\n${tail.trimEnd()}` : ""}`;
  await raiseExecEvent(s, row, `exec-exit:${row.execId}`, text);
}

/** Exec denied at /approve: the agent learns it in the session that asked. */
export async function notifyExecDenied(s: SessionState, row: ExecRow, by: string): Promise<void> {
  await raiseExecEvent(
    s,
    row,
    `exec-denied:${row.execId}`,
    `Exec denied (id ${row.callId}) by ${by}: \`${row.command.slice(0, 200)}\` did not run.`,
  );
}

async function raiseExecEvent(
  s: SessionState,
  row: ExecRow,
  dedupKey: string,
  text: string,
): Promise<void> {
  const now = Date.now();
  const event: RoutedEvent = {
    agentId: row.request.agentId,
    sessionKey: row.request.sessionKey,
    envelope: inboundEnvelopeSchema.parse({
      dedupKey,
      kind: "system",
      channel: AUTOMATION_CHANNEL,
      chatType: "direct",
      peerId: "exec",
      senderId: "exec",
      text,
      receivedAt: now,
      route: { channel: AUTOMATION_CHANNEL, accountId: "default", to: "exec" },
    }),
    automation: { source: "exec", action: "system-event" },
  };
  s.store.inbox.insert(event, now);
  await scheduleAlarm(s);
  if (row.request.sessionKey === mainSessionKey(row.request.agentId)) {
    try {
      await schedulerStub(s.env).wake(row.request.agentId, dedupKey);
    } catch (error) {
      console.warn(
        "exec notify: heartbeat wake failed",
        error instanceof Error ? error.message : String(error),
      );
    }
  }
}

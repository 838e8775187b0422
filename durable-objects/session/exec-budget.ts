import { sandboxScopesFor } from "../../functions/agent/budget-scopes.ts";
import { SandboxError } from "../../functions/sandbox/backend.ts";
import type { SandboxVerdict } from "../rpc.ts";
import type { ExecRow } from "./exec-store.ts";
import type { SessionState } from "./state.ts";
import { budgetStub, notifyOperator } from "./upkeep/metering.ts";

/**
 * The sandbox-time cap of `budgets` (`<scope>.day|month.sandboxSeconds`, and every session's
 * `budgets.sandboxSecondsPerSessionDay`): a command starts only if each capped scope (global, the
 * agent, the session) has time left, as its BudgetDO counts it (durable-objects/budget-sandbox.ts).
 *
 * - admit, before the sandbox is asked to start a command: fail closed — a refusal or a budget
 *   object that does not answer means the command does not start, and the tool says why.
 * - charge, when its end is recorded: queued in the same transaction as the end (meta
 *   `sandboxCharges`), then sent; a charge the object did not confirm is sent again before the
 *   session's next command. A charge that never arrives is charged its whole bound by the budget
 *   object itself when that passes.
 */

/** Slack past a command's own timeout before an uncharged run counts its whole bound. */
const HOLD_SLACK_MS = 60_000;
/** The bound of a command with no timeout (timeout 0). */
const NO_TIMEOUT_HOLD_MS = 24 * 3_600_000;

function partiesOf(row: ExecRow) {
  return { agentId: row.request.agentId, sessionKey: row.request.sessionKey };
}

/** Throws SandboxError when a scope's sandbox time is used up or cannot be checked. */
export async function admitSandboxTime(s: SessionState, row: ExecRow): Promise<void> {
  const now = Date.now();
  const scopes = sandboxScopesFor(s.config.budgets, partiesOf(row), now);
  if (!scopes.length) return;
  await flushSandboxCharges(s);
  const timeout = row.request.timeoutSeconds;
  const holdUntil = now + (timeout > 0 ? timeout * 1000 + HOLD_SLACK_MS : NO_TIMEOUT_HOLD_MS);
  const answers = await Promise.allSettled(
    scopes.map((scope) =>
      budgetStub(s, scope.scope).admitSandbox({
        id: row.execId,
        windows: scope.windows,
        now,
        holdUntil,
      }),
    ),
  );
  const admitted = scopes.filter((_, index) => {
    const answer = answers[index]!;
    return answer.status === "fulfilled" && answer.value.ok;
  });
  if (admitted.length === scopes.length) return;
  // Nothing starts: the scopes that admitted it let the time go again.
  await Promise.allSettled(
    admitted.map((scope) =>
      budgetStub(s, scope.scope).chargeSandbox({ id: row.execId, ms: 0, now }),
    ),
  );
  const failed = answers.findIndex((answer) => answer.status === "rejected");
  if (failed >= 0) {
    const reason = (answers[failed] as PromiseRejectedResult).reason;
    throw new SandboxError(
      "unavailable",
      `the sandbox time budget (${scopes[failed]!.scope}) could not be checked, so the command did not run: ${reason instanceof Error ? reason.message : String(reason)}. Try again shortly`,
    );
  }
  const index = answers.findIndex((answer) => answer.status === "fulfilled" && !answer.value.ok);
  const verdict = (answers[index] as PromiseFulfilledResult<SandboxVerdict>).value;
  if (verdict.ok) return;
  const scope = scopes[index]!.scope;
  const text = capText(scope, verdict);
  if (verdict.alert)
    notifyOperator(
      s,
      `sandbox-budget-alert:${scope}:${scopes[index]!.windows.find((w) => w.period === verdict.period)?.key}`,
      `🛑 Sandbox time cap reached — ${text} (agent ${row.request.agentId}, first refused in session ${row.request.sessionKey}).`,
    );
  throw new SandboxError("refused", `the command did not run: sandbox time cap reached — ${text}`);
}

/** Queues the charge of a finished command (call inside the transaction that records its end). */
export function queueSandboxCharge(s: SessionState, row: ExecRow, ms: number): void {
  const scopes = sandboxScopesFor(s.config.budgets, partiesOf(row), Date.now());
  if (!scopes.length) return;
  const pending = s.store.meta.getJson("sandboxCharges") ?? [];
  if (pending.some((charge) => charge.id === row.execId)) return;
  pending.push({ id: row.execId, scopes: scopes.map((scope) => scope.scope), ms });
  s.store.meta.setJson("sandboxCharges", pending);
}

/** Sends every queued charge; one a budget object did not confirm stays queued. Never throws. */
export async function flushSandboxCharges(s: SessionState): Promise<void> {
  const pending = s.store.meta.getJson("sandboxCharges") ?? [];
  if (!pending.length) return;
  const now = Date.now();
  const done = new Set<string>();
  await Promise.all(
    pending.map(async (charge) => {
      try {
        await Promise.all(
          charge.scopes.map((scope) =>
            budgetStub(s, scope).chargeSandbox({ id: charge.id, ms: charge.ms, now }),
          ),
        );
        done.add(charge.id);
      } catch (error) {
        console.warn(
          `sandbox budget: charging ${charge.id} failed (sent again before the next command): ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }),
  );
  // Re-read: a charge queued while these were in flight stays.
  const left = (s.store.meta.getJson("sandboxCharges") ?? []).filter(
    (charge) => !done.has(charge.id),
  );
  if (left.length) s.store.meta.setJson("sandboxCharges", left);
  else s.store.meta.delete("sandboxCharges");
}

function capText(scope: string, verdict: Extract<SandboxVerdict, { ok: false }>): string {
  const period = verdict.period === "day" ? "daily" : "monthly";
  const key = scope.startsWith("session:")
    ? `budgets.session.${verdict.period}.sandboxSeconds (default for a session's day: budgets.sandboxSecondsPerSessionDay)`
    : scope.startsWith("agent:")
      ? `budgets.agents.${scope.slice("agent:".length)}.${verdict.period}.sandboxSeconds (or budgets.agent)`
      : `budgets.global.${verdict.period}.sandboxSeconds`;
  return `${scope} has used ${duration(verdict.usedSeconds)} of its ${period} ${duration(verdict.limitSeconds)} of sandbox command time. New commands are refused until ${new Date(verdict.resetsAt).toISOString()}; running ones finish. The operator can raise it: ${key}, or for this period npx edgeclaw budgets raise ${scope} ${verdict.period} --sandbox-seconds <n>`;
}

function duration(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

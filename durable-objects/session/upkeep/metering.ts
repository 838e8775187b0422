import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { scopesFor, type ScopeCheck } from "../../../functions/agent/budget-scopes.ts";
import {
  BudgetExceededError,
  describeRefusal,
  totalTokens,
  worstCase,
  type BudgetRefusal,
  type MeterOutcome,
  type MeterStart,
  type MeterTicket,
  type ModelCallKind,
  type ModelCallMeter,
  UnpricedModelError,
} from "../../../functions/agent/metering.ts";
import { ModelError } from "../../../functions/agent/types.ts";
import type { ReserveVerdict, WarnCrossing } from "../../rpc.ts";
import { enqueueReply } from "../outbox/replies.ts";
import { scheduleAlarm } from "../schedule.ts";
import type { SessionState } from "../state.ts";

/**
 * THE METER OF EVERY MODEL CALL A SESSION MAKES. `callModel` (functions/agent/model-call.ts) cannot
 * be called without a meter, and inside a SessionDO that meter comes from here: a run's turns,
 * compaction (proactive and /compact), and any other kind of call (memory flush, heartbeat, cron,
 * sub-runs) — pass `sessionMeter(s, { kind: "<your kind>", … })` and the call is metered and
 * budget-checked like every other.
 *
 * Per attempt sent to a provider:
 *  admit   — when `budgets` caps any scope of this call (global, agent, session, sender), its worst
 *            case (metering.ts `worstCase`) is reserved in each scope's BudgetDO, all at once. One
 *            refusal releases the others and throws BudgetExceededError: the provider sees nothing.
 *            The first refusal of a period in a scope alerts the operator (once: the BudgetDO
 *            decides who is first). With no caps configured nothing leaves this object.
 *            A model with no price is refused by any BudgetDO with a USD cap for it (the config's
 *            or one raised at run time): its cost cannot be known, so the call is not made
 *            (UnpricedModelError), unless `budgets.allowUnpricedModels` lets it through at $0
 *            (token caps still count it).
 *  settle  — the attempt's actual usage and price (`models.providers.*.models[].cost`) is written to
 *            model_calls and the session's spend in one transaction (the mirror copies it to
 *            Postgres), then each reservation is settled with the actual cost; a first crossing of
 *            `warnAt` warns the operator. Settling never throws: a reservation left behind by a
 *            crash expires after `budgets.reservationTtlSeconds`.
 */

export interface MeterContext {
  kind: ModelCallKind;
  runId: string | null;
  sessionId: string;
  /** The conversation's channel and the person the call answers (absent for cron/heartbeat). */
  channel?: string;
  senderId?: string;
}

export function sessionMeter(s: SessionState, context: MeterContext): ModelCallMeter {
  const held = new Map<string, ScopeCheck[]>();
  const agentId = s.store.meta.get("agentId") ?? "main";
  const sessionKey = s.store.meta.get("sessionKey") ?? "";
  const sender =
    context.channel && context.senderId ? `${context.channel}:${context.senderId}` : undefined;

  return {
    async admit(start: MeterStart): Promise<MeterTicket> {
      const now = Date.now();
      const ticket = { id: start.id ?? crypto.randomUUID(), startedAt: now };
      const budgets = s.config.budgets;
      const scopes = scopesFor(budgets, { agentId, sessionKey, sender }, now);
      if (!scopes.length) return ticket;
      const cost = start.worstCase ?? worstCase(start.model, start.request);
      // No price: each BudgetDO refuses it under a USD cap (the config's or a raise stored there).
      const unpriced = !start.model.cost && !budgets.allowUnpricedModels;
      const ttlMs = budgets.reservationTtlSeconds * 1000;
      let verdicts;
      try {
        verdicts = await Promise.all(
          scopes.map((scope) =>
            budgetStub(s, scope.scope).reserve({
              id: ticket.id,
              windows: scope.windows,
              usd: cost.usd,
              tokens: cost.tokens,
              now,
              ttlMs,
              unpriced,
            }),
          ),
        );
      } catch (error) {
        // Fail closed: with no answer from a budget object, no money is spent. Transient, so retried later.
        await release(s, scopes, ticket.id, now);
        throw new ModelError(
          "server",
          `budget check unavailable: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const refusedAt = verdicts.findIndex((verdict) => !verdict.ok);
      if (refusedAt < 0) {
        held.set(ticket.id, scopes);
        return ticket;
      }
      await release(
        s,
        scopes.filter((_, index) => verdicts[index]!.ok),
        ticket.id,
        now,
      );
      refuseUnpriced(start, scopes, verdicts);
      let first: BudgetRefusal | undefined;
      for (const [index, verdict] of verdicts.entries()) {
        if (verdict.ok || verdict.unpriced) continue;
        const refusal: BudgetRefusal = {
          scope: scopes[index]!.scope,
          period: verdict.period,
          unit: verdict.unit,
          limit: verdict.limit,
          spent: verdict.spent,
          resetsAt: verdict.resetsAt,
        };
        first ??= refusal;
        if (verdict.alert)
          notifyOperator(
            s,
            `budget-alert:${refusal.scope}:${scopes[index]!.windows.find((w) => w.period === verdict.period)?.key}`,
            alertText(refusal, agentId, sessionKey),
          );
      }
      throw new BudgetExceededError(first!);
    },

    async settle(ticket: MeterTicket, start: MeterStart, outcome: MeterOutcome): Promise<void> {
      const now = Date.now();
      const usage = outcome.ok
        ? outcome.usage
        : { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      let costUsd = outcome.ok ? outcome.costUsd : 0;
      let tokens = totalTokens(usage);
      try {
        const fresh = s.ctx.storage.transactionSync(() =>
          s.store.modelCalls.record({
            id: ticket.id,
            runId: context.runId,
            sessionId: context.sessionId,
            kind: context.kind,
            provider: start.model.providerId,
            model: start.model.modelId,
            channel: context.channel ?? null,
            senderId: context.senderId ?? null,
            usage,
            costUsd,
            outcome: outcome.ok ? "ok" : "error",
            ...(outcome.ok && outcome.billedMs !== undefined ? { billedMs: outcome.billedMs } : {}),
            durationMs:
              outcome.ok && outcome.billedMs !== undefined
                ? outcome.billedMs
                : now - ticket.startedAt,
            at: ticket.startedAt,
          }),
        );
        // Settled before (a resumed run asking a tool's call again): its reservation only goes.
        if (!fresh) [costUsd, tokens] = [0, 0];
      } catch (error) {
        console.error(
          `metering: could not record model call ${ticket.id}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const scopes = held.get(ticket.id);
      held.delete(ticket.id);
      if (!scopes) return;
      await Promise.all(
        scopes.map(async (scope) => {
          try {
            const crossings = await budgetStub(s, scope.scope).settle({
              id: ticket.id,
              windows: scope.windows,
              usd: costUsd,
              tokens,
              now,
            });
            for (const crossing of crossings)
              notifyOperator(
                s,
                `budget-warn:${scope.scope}:${crossing.key}`,
                warnText(scope.scope, crossing),
              );
          } catch (error) {
            console.error(
              `metering: settling ${ticket.id} in ${scope.scope} failed (its reservation expires): ${error instanceof Error ? error.message : String(error)}`,
            );
          }
        }),
      );
    },
  };
}

/** Throws UnpricedModelError when a BudgetDO refused the call because its model has no price. */
function refuseUnpriced(start: MeterStart, scopes: ScopeCheck[], verdicts: ReserveVerdict[]): void {
  const index = verdicts.findIndex((verdict) => !verdict.ok && verdict.unpriced);
  const verdict = verdicts[index];
  if (!verdict || verdict.ok) return;
  const scope = scopes[index]!.scope;
  console.warn(JSON.stringify({ event: "budget_unpriced_model", scope, model: start.model.ref }));
  throw new UnpricedModelError({
    scope,
    period: verdict.period,
    modelRef: start.model.ref,
    catalogKey: `models.providers.${start.model.providerId}.models[]`,
  });
}

export function budgetStub(s: { env: SessionState["env"] }, scope: string) {
  return s.env.BUDGETS.get(s.env.BUDGETS.idFromName(scope));
}

async function release(
  s: SessionState,
  scopes: ScopeCheck[],
  id: string,
  now: number,
): Promise<void> {
  await Promise.all(
    scopes.map((scope) =>
      budgetStub(s, scope.scope)
        .settle({ id, windows: scope.windows, usd: 0, tokens: 0, now })
        .catch(() => undefined),
    ),
  );
}

/**
 * One message to the operator (`budgets.alertTarget`) through this session's outbox: durable,
 * retried, and sent once — the outbox id is per scope and period, and the BudgetDO hands the
 * "first" flag to one caller only. Without a target (or a target the outbox cannot post to) it is
 * a structured log line.
 */
export function notifyOperator(s: SessionState, id: string, text: string): void {
  const target = s.config.budgets.alertTarget;
  console.warn(JSON.stringify({ event: "budget_notice", id, text }));
  if (!target || HTTP_CHANNELS.has(target.channel)) return;
  const route: ReplyRoute = {
    channel: target.channel,
    accountId: target.accountId ?? "default",
    to: target.to,
    ...(target.threadId ? { threadId: target.threadId } : {}),
  };
  const now = Date.now();
  // INSERT OR IGNORE by id: a second notice for the same scope and period is never queued.
  s.ctx.storage.transactionSync(() => enqueueReply(s, id, null, route, text, now));
  void scheduleAlarm(s);
}

function alertText(refusal: BudgetRefusal, agentId: string, sessionKey: string): string {
  return `🛑 Budget cap reached — ${refusal.scope}: the ${describeRefusal(refusal)}. Model calls in this scope are refused until ${new Date(refusal.resetsAt).toISOString()} (agent ${agentId}, first refused in session ${sessionKey}). Raise or reset: npx edgeclaw budgets raise|reset ${refusal.scope} ${refusal.period}`;
}

function warnText(scope: string, crossing: WarnCrossing): string {
  const amount = (value: number) =>
    crossing.unit === "usd" ? `$${value.toFixed(2)}` : `${Math.round(value)} tokens`;
  return `⚠️ Budget warning — ${scope}: ${amount(crossing.spent)} of the ${crossing.period === "day" ? "daily" : "monthly"} ${amount(crossing.limit)} used (${crossing.key}).`;
}

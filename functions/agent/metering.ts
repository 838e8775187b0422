import type { ResolvedModel } from "./providers/types.ts";
import { ModelError, type ModelRequest, type Usage } from "./types.ts";
import type { BudgetPeriod } from "./budget-periods.ts";

/**
 * The contract between `callModel` (model-call.ts) and whoever pays for the call. `callModel`
 * requires a meter and calls it around EVERY request it sends to a provider (each attempt, each
 * fallback), so a new kind of model call — memory flush, heartbeat, cron, a sub-run — is metered
 * and budget-checked by construction: there is no way to reach a provider without one. The
 * SessionDO's meter (durable-objects/session/upkeep/metering.ts) records the call durably and reserves its
 * worst case in the budget objects before the request leaves.
 */

/** What a call is for; the caller names it (reported per kind in /usage cost, metrics, charts). */
export type ModelCallKind =
  | "turn"
  | "compaction"
  | "silent"
  | "memory_flush"
  | "heartbeat"
  | "cron"
  | "subrun"
  | (string & {});

export interface WorstCase {
  tokens: number;
  usd: number;
}

export interface MeterStart {
  /**
   * The call's own id, when it has one that survives a crash (a tool call's): the attempt is then
   * recorded once however often a resumed run settles it.
   */
  id?: string;
  model: ResolvedModel;
  request: ModelRequest;
  /**
   * The attempt's bound when it is not a chat request (a transcription: transcribe-meter.ts);
   * otherwise `worstCase(model, request)`.
   */
  worstCase?: WorstCase;
}

export type MeterOutcome =
  | {
      ok: true;
      usage: Usage;
      costUsd: number;
      /**
       * A call billed by time (the browser: Browser Run bills the time a browser is open): the
       * billed ms, recorded as the call's duration and summed per kind in the session's spend.
       */
      billedMs?: number;
    }
  | { ok: false; error: ModelError };

/** An attempt the meter admitted; handed back to `settle`. */
export interface MeterTicket {
  id: string;
  startedAt: number;
}

export interface ModelCallMeter {
  /**
   * Before the request leaves. Throws BudgetExceededError when a budget has no room for the
   * attempt's worst case: the provider then sees nothing.
   */
  admit(start: MeterStart): Promise<MeterTicket>;
  /** After the attempt, with what it actually used. Never throws (an unsettled reservation expires). */
  settle(ticket: MeterTicket, start: MeterStart, outcome: MeterOutcome): Promise<void>;
}

/** Meters nothing and limits nothing: for code paths with no session behind them (tests, scripts). */
export const UNMETERED: ModelCallMeter = {
  admit: async () => ({ id: crypto.randomUUID(), startedAt: Date.now() }),
  settle: async () => undefined,
};

/**
 * The most one attempt can cost. Input: the UTF-8 bytes of everything sent (system, messages and
 * tool specs as JSON) — byte-level BPE tokenizers never make more tokens than bytes, and the JSON
 * framing covers the provider's per-message overhead — priced at the dearest input rate (plain,
 * cache read or cache write). Output: the request's `maxTokens` (else the model's) at the output
 * rate. Settling charges the actual usage and releases the rest. A model with no price reserves
 * no USD (a BudgetDO with a USD cap refuses its call outright, unless the operator allowed
 * unpriced models with `budgets.allowUnpricedModels`); its tokens are reserved all the same.
 */
export function worstCase(model: ResolvedModel, request: ModelRequest): WorstCase {
  const bytes = new TextEncoder().encode(
    request.system + JSON.stringify(request.messages) + JSON.stringify(request.tools),
  ).length;
  const output = request.maxTokens ?? model.maxTokens;
  const cost = model.cost;
  if (!cost) return { tokens: bytes + output, usd: 0 };
  const inputRate = Math.max(cost.input, cost.cacheRead, cost.cacheWrite);
  return {
    tokens: bytes + output,
    usd: (bytes * inputRate + output * cost.output) / 1_000_000,
  };
}

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

export interface BudgetRefusal {
  /** `global`, `agent:<id>`, `session:<key>` or `sender:<channel>:<id>`. */
  scope: string;
  period: BudgetPeriod;
  unit: "usd" | "tokens";
  limit: number;
  spent: number;
  resetsAt: number;
}

/** A budget had no room: the run stops before the call. Not retryable, no failover. */
export class BudgetExceededError extends ModelError {
  constructor(readonly refusal: BudgetRefusal) {
    super("budget", `budget reached: ${describeRefusal(refusal)}`);
    this.name = "BudgetExceededError";
  }
}

export function describeRefusal(refusal: BudgetRefusal): string {
  const amount = (value: number) =>
    refusal.unit === "usd"
      ? `$${value.toFixed(2)}`
      : `${Math.round(value).toLocaleString("en-US")} tokens`;
  const scope = refusal.scope === "global" ? "gateway" : refusal.scope.split(":")[0];
  return `${scope} ${refusal.period === "day" ? "daily" : "monthly"} limit of ${amount(refusal.limit)} (spent ${amount(refusal.spent)})`;
}

/** The one notice a user gets when a run stops at a budget. */
export function budgetNotice(refusal: BudgetRefusal): string {
  const resets = new Date(refusal.resetsAt).toISOString().replace("T", " ").slice(0, 16);
  return `⚠️ The ${describeRefusal(refusal)} has been reached, so I can't answer right now. It resets at ${resets} UTC, or the operator can raise it.`;
}

/** A USD cap applies to a call whose model has no price: its cost cannot be known, so it is not made. */
export interface UnpricedRefusal {
  /** The first scope whose USD cap the call would have counted against. */
  scope: string;
  period: BudgetPeriod;
  modelRef: string;
  /** The config key that prices the model: `models.providers.<id>.models[]`. */
  catalogKey: string;
}

/**
 * A model with no price under a USD cap (DESIGN: a money guard fails closed). Kind "budget": the
 * run stops before the call, no retry and no failover, like a cap with no room.
 */
export class UnpricedModelError extends ModelError {
  constructor(readonly refusal: UnpricedRefusal) {
    super(
      "budget",
      `${refusal.modelRef} has no price, and the ${refusal.scope} scope has a USD cap: set ${refusal.catalogKey} { id, cost } or budgets.allowUnpricedModels: true`,
    );
    this.name = "UnpricedModelError";
  }
}

/** The one notice a user gets when a run stops because its model has no price under a USD cap. */
export function unpricedNotice(refusal: UnpricedRefusal): string {
  const modelId = refusal.modelRef.slice(refusal.modelRef.indexOf("/") + 1);
  const scope = refusal.scope === "global" ? "gateway" : refusal.scope.split(":")[0];
  return `⚠️ I can't answer: a ${scope} ${refusal.period === "day" ? "daily" : "monthly"} spending limit is set, but the model ${refusal.modelRef} has no price, so what a call costs cannot be counted. The operator can price it in the config — ${refusal.catalogKey}: { id: "${modelId}", cost: { input, output, cacheRead, cacheWrite } } (USD per million tokens) — or allow unpriced models with budgets.allowUnpricedModels: true.`;
}

/** The notice for a run (or a compaction) stopped by a budget, or undefined for any other error. */
export function budgetStopNotice(error: unknown): string | undefined {
  if (error instanceof BudgetExceededError) return budgetNotice(error.refusal);
  if (error instanceof UnpricedModelError) return unpricedNotice(error.refusal);
  return undefined;
}

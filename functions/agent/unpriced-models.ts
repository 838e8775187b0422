import type { BudgetsConfig, ScopeLimits } from "../config/budgets.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import type { SecretEnv } from "../config/secret-ref.ts";
import { modelChoices } from "../commands/models.ts";
import { modelPriceFor, modelSelectionFor, parseModelRef } from "./model-resolve.ts";

/**
 * For `config check` (CLI, admin API, control page, `npm run config:check`): every budget scope
 * with a USD cap, named by its config key, with the models it can be charged for that have no price.
 * Under such a cap their calls are refused (durable-objects/session/upkeep/metering.ts), so the
 * operator hears it here rather than from a user; with `budgets.allowUnpricedModels` they are let
 * through at $0, so the cap does not limit them — said as well.
 *
 * The models of a scope are every model a session can call: each agent's primary and fallbacks
 * (including a built-in provider's default when only its key is set) and every model /model can
 * pick (the catalog, agent models, aliases). A scope of one agent can reach them all too, through
 * /model, so each capped scope lists the same models.
 */
export function unpricedModelWarnings(config: EdgeclawConfig, env: SecretEnv): string[] {
  const scopes = usdCappedScopes(config.budgets);
  if (!scopes.length) return [];
  const unpriced = reachableModels(config, env).filter((ref) => !modelPriceFor(config, ref));
  if (!unpriced.length) return [];
  const models = unpriced.join(", ");
  const keys = [
    ...new Set(
      unpriced.map((ref) => `models.providers.${parseModelRef(ref)?.providerId}.models[].cost`),
    ),
  ].join(", ");
  return scopes.map(({ key, periods }) => {
    const cap = `${key} caps USD per ${periods.join(" and per ")}, but ${models} ${unpriced.length === 1 ? "has" : "have"} no price`;
    return config.budgets.allowUnpricedModels
      ? `${cap}: budgets.allowUnpricedModels lets those calls through at $0, so this cap does not limit them (a tokens cap does); set ${keys}`
      : `${cap}, so ${unpriced.length === 1 ? "its" : "their"} calls are refused under this cap; set ${keys} (USD per million tokens), or budgets.allowUnpricedModels: true`;
  });
}

interface CappedScope {
  /** The config key of the scope's limits, e.g. `budgets.session`, `budgets.agents.ops`. */
  key: string;
  periods: Array<"day" | "month">;
}

function usdCappedScopes(budgets: BudgetsConfig): CappedScope[] {
  const candidates: Array<[string, ScopeLimits | undefined]> = [
    ["budgets.global", budgets.global],
    ["budgets.agent", budgets.agent],
    ...Object.entries(budgets.agents).map(
      ([id, limits]) => [`budgets.agents.${id}`, limits] as [string, ScopeLimits],
    ),
    ["budgets.session", budgets.session],
    ["budgets.sender", budgets.sender],
  ];
  return candidates.flatMap(([key, limits]) => {
    const periods = (["day", "month"] as const).filter(
      (period) => limits?.[period]?.usd !== undefined,
    );
    return periods.length ? [{ key, periods: [...periods] }] : [];
  });
}

function reachableModels(config: EdgeclawConfig, env: SecretEnv): string[] {
  const refs = new Set(modelChoices(config));
  for (const agentId of [undefined, ...config.agents.list.map((agent) => agent.id)]) {
    const selection = modelSelectionFor(config, env, agentId);
    for (const ref of [selection.primary, ...selection.fallbacks]) if (ref) refs.add(ref);
  }
  return [...refs];
}

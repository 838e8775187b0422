import type { ModelCost } from "./types.ts";

/**
 * Published list prices (USD per million tokens) of the built-in providers' default models — the
 * models a key alone selects (built-in-providers.ts BUILT_IN_PROVIDERS), so the README's key-only quick
 * start is priced and a USD budget counts what it spends. A `cost` in the catalog
 * (`models.providers.<id>.models[]`) always wins over this table; any other model has no price
 * until the catalog gives it one, and a USD cap then refuses its calls (docs/concepts/cost.md).
 *
 * Keep one row per default model, each with where its price comes from and when it was read.
 * When a provider's price changes, change the row, its source line and its date together.
 * Where a provider publishes a temporary price beside its list price, the row keeps the list price:
 * a guard that under-prices lets spend pass its cap, one that over-prices only stops early.
 */
export const BUILT_IN_MODEL_PRICES: Readonly<Record<string, ModelCost>> = {
  // Anthropic, "Claude Sonnet 5" model page (https://platform.claude.com/docs/en/models/sonnet-5/overview,
  // read 2026-12-02): input $2, output $10, 5-minute cache write $2.50, cache read $0.20 per MTok.
  // The $3/$15 from 2026-09-01 that OpenClaw's Anthropic page announces is not on Anthropic's own
  // page, which still lists $2/$10 since Sonnet 5.5 replaced it as current. Cache writes are the
  // 5-minute price: anthropic.ts marks the system prompt `ephemeral` without a TTL (5 minutes).
  "anthropic/claude-sonnet-5": { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
  // OpenAI, "GPT-5.6 Sol" model page (https://developers.openai.com/api/docs/models/gpt-5.6-sol,
  // read 2026-12-02): list price input $5, cached input $0.50, output $30 per 1M tokens (since
  // 2026-07-09); cache writes are billed at 1.25× uncached input ($6.25). The page's promotional
  // $4 / $0.40 / $20 is stated to run "at least through 2026-11-21"; that date has passed and no
  // extension is published, so the list price stands. Prompts over 272K input tokens bill 2× input
  // and 1.5× output; this table has one tier, which holds because a model the catalog does not
  // list gets a 200,000-token context window (model-resolve.ts DEFAULT_CONTEXT_WINDOW) and
  // compaction keeps prompts inside it. A catalog entry that raises contextWindow past 272K
  // should give its own `cost` (docs/concepts/cost.md).
  "openai/gpt-5.6-sol": { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 6.25 },
  // Workers AI, "aura-1" model page (https://developers.cloudflare.com/workers-ai/models/aura-1/,
  // read 2026-12-03): $0.015 per 1,000 characters. The default voice of tts provider
  // "workers-ai" (tts-workers-ai.ts), which meters a text of n characters as n/4 input tokens, so
  // $0.015 per 1,000 characters is $60 per million of those tokens.
  "workers-ai/@cf/deepgram/aura-1": { input: 60, output: 0, cacheRead: 0, cacheWrite: 0 },
};

/** The table's price for `providerId/modelId` (ids as the resolver normalised them), if it has one. */
export function builtInModelPrice(providerId: string, modelId: string): ModelCost | undefined {
  const price = BUILT_IN_MODEL_PRICES[`${providerId}/${modelId}`];
  return price ? { ...price } : undefined;
}

import type { ModelCost } from "./providers/types.ts";
import type { Usage } from "./types.ts";

/** USD for one call: `models.providers.<id>.models[].cost` is priced per million tokens. */
export function costUsd(usage: Usage, cost: ModelCost): number {
  const micro =
    usage.inputTokens * cost.input +
    usage.outputTokens * cost.output +
    usage.cacheReadTokens * cost.cacheRead +
    usage.cacheWriteTokens * cost.cacheWrite;
  return micro / 1_000_000;
}

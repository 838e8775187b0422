import { runInDurableObject } from "cloudflare:test";
import { testEnv } from "../agent/model-helpers.ts";
import { sessionStub } from "./helpers.ts";
import type { Env } from "../../workers/env.ts";

/**
 * Budget and metering tests run sessions under a config of their own: the suite's config (the fake
 * model providers at their configured prices) plus the given keys, set on each object they use as a
 * deployment's bindings would be. Each test names scopes of its own (a unique agent id, session key
 * or sender), so the budget objects it fills are never shared with another test.
 */
export function configWith(extra: Record<string, unknown>): string {
  const base = JSON.parse(testEnv.EDGECLAW_CONFIG ?? "{}") as Record<string, unknown>;
  return JSON.stringify({ ...base, ...extra });
}

/** `extraEnv`: Worker secrets the test's deployment has beyond the suite's (e.g. a provider key). */
export async function sessionWithConfig(
  sessionKey: string,
  config: string,
  extraEnv: Record<string, string> = {},
) {
  const stub = sessionStub(sessionKey);
  const env: Env = { ...testEnv, ...extraEnv, EDGECLAW_CONFIG: config };
  await runInDurableObject(stub, (instance) => {
    Object.defineProperty(instance, "env", { value: env, configurable: true, writable: true });
  });
  return stub;
}

export interface StoredCall {
  kind: string;
  provider: string;
  model: string;
  channel: string | null;
  sender_id: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  outcome: string;
}

export async function storedCalls(sessionKey: string): Promise<StoredCall[]> {
  return runInDurableObject(
    sessionStub(sessionKey),
    (_instance, state) =>
      state.storage.sql
        .exec(`SELECT * FROM model_calls ORDER BY at`)
        .toArray() as unknown as StoredCall[],
  );
}

export function budgetStub(scope: string) {
  return testEnv.BUDGETS.get(testEnv.BUDGETS.idFromName(scope));
}

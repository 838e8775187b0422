import { randomBytes } from "node:crypto";
import { resolveSecret, type SecretInput } from "../../functions/config/secret-ref.ts";

/**
 * The value a simulated platform signs with (or the fake checks) for one secret: what the block's
 * SecretRef — or, when the block sets none, the channel's env fallback — already resolves to in
 * `env`; otherwise a generated test value, returned in `add` under the name the Worker will read.
 * Generated values are fake (they only ever meet the fake platform).
 */
export function simulatedSecret(
  input: unknown,
  fallbackEnvName: string,
  env: Readonly<Record<string, string>>,
  prefix = "sim-",
): { value: string; add: Record<string, string> } {
  const given =
    input === undefined
      ? resolveSecret({ source: "env", id: fallbackEnvName }, env)
      : resolveSecret(input as SecretInput, env);
  if (given) return { value: given, add: {} };
  const value = `${prefix}${randomBytes(16).toString("hex")}`;
  if (input === undefined) return { value, add: { [fallbackEnvName]: value } };
  if (typeof input === "object" && input !== null && "id" in input)
    return { value, add: { [String((input as { id: unknown }).id)]: value } };
  const whole = typeof input === "string" ? /^\$\{([A-Z0-9_]+)\}$/.exec(input) : null;
  return whole ? { value, add: { [whole[1]!]: value } } : { value: String(input), add: {} };
}

/** A unique id for events the simulator makes up (event ids, message ids). */
export function simulatedId(prefix: string): string {
  return `${prefix}${Date.now().toString(36).toUpperCase()}${randomBytes(3).toString("hex").toUpperCase()}`;
}

import * as z from "zod";

/**
 * A secret in the config: either a plain string (accepted, as in OpenClaw) or a SecretRef that
 * names a Worker secret / env var. Resolution happens at use, never at parse, so a missing secret
 * only fails the feature that needs it.
 */
export const secretRefSchema = z.object({
  source: z.literal("env"),
  id: z.string().min(1),
  provider: z.string().optional(),
});
export const secretInputSchema = z.union([z.string(), secretRefSchema]);
export type SecretInput = z.infer<typeof secretInputSchema>;

export type SecretEnv = Record<string, unknown>;

/** Resolves a SecretInput against the Worker env; `${VAR}` strings are substituted as in OpenClaw. */
export function resolveSecret(input: SecretInput | undefined, env: SecretEnv): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input === "string") {
    const whole = /^\$\{([A-Z0-9_]+)\}$/.exec(input);
    if (whole) return stringOrUndefined(env[whole[1]!]);
    return input;
  }
  return stringOrUndefined(env[input.id]);
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/**
 * The env var a process outside the Worker (the companion) reads this secret from: a SecretRef's
 * id, or VAR of a whole `${VAR}` string. A literal secret in the config has no name to hand over
 * (secrets never travel to the companion): undefined.
 */
export function secretEnvName(input: SecretInput | undefined): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "string") return input.id;
  return /^\$\{([A-Z0-9_]+)\}$/.exec(input)?.[1];
}

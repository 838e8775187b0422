import type { EdgeclawConfig } from "../../config/schema.ts";
import { resolveSecret } from "../../config/secret-ref.ts";
import { accountsForKey, type AssignedAccount } from "./socket-accounts.ts";

type IngressKey = EdgeclawConfig["companion"]["ingressKeys"][number];

/** One companion deployment that serves socket accounts: one container instance, signing with `key`. */
export interface ContainerDeployment {
  deployment: string;
  /** The first listed key of the deployment that speaks for some socket account (list the new key first to rotate). */
  key: IngressKey;
  accounts: AssignedAccount[];
}

/**
 * The companion deployments that need a running companion: those whose keys speak for at least one
 * enabled socket account. Empty = no container is wanted (and `npm run deploy` adds none).
 */
export function containerDeployments(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): ContainerDeployment[] {
  const byName = new Map<string, ContainerDeployment>();
  for (const key of config.companion.ingressKeys) {
    const deployment = key.deployment ?? key.id;
    if (byName.has(deployment)) continue;
    const accounts = accountsForKey(config, env, key);
    if (accounts.length) byName.set(deployment, { deployment, key, accounts });
  }
  return [...byName.values()];
}

/** The companion's listening port in the image (companion/Dockerfile EDGECLAW_COMPANION_PORT). */
export const COMPANION_CONTAINER_PORT = 8790;

/** `missingSecrets`: platform secrets not set in the Worker; their connectors report it, the others still run. */
export type ContainerEnvPlan =
  | { ok: true; vars: Record<string, string>; missingSecrets: string[] }
  | { ok: false; reason: string };

/**
 * The environment one deployment's container starts with (COMPANION.md "Companion process"): where
 * the Worker is, the key it signs with, the outbound key it accepts, and each account's platform
 * secrets under the env names the account names. Secrets come from the Worker's own secrets, so
 * they are set once (`wrangler secret put`) and never written into the image.
 */
export function containerEnv(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  deployment: string,
): ContainerEnvPlan {
  const planned = containerDeployments(config, env).find(
    (candidate) => candidate.deployment === deployment,
  );
  if (!planned)
    return {
      ok: false,
      reason: `no socket account is served by companion deployment "${deployment}"`,
    };
  const workerUrl = config.companion.container.workerUrl;
  if (!workerUrl)
    return {
      ok: false,
      reason:
        "companion.container.workerUrl is not set (the Worker's public URL the container posts to)",
    };
  const ingressSecret = resolveSecret(planned.key.secret, env);
  if (!ingressSecret)
    return {
      ok: false,
      reason: `the secret of companion ingress key "${planned.key.id}" is not set`,
    };
  const vars: Record<string, string> = {
    EDGECLAW_WORKER_URL: workerUrl,
    EDGECLAW_COMPANION_KEY_ID: planned.key.id,
    EDGECLAW_COMPANION_INGRESS_SECRET: ingressSecret,
  };
  const outbound = config.companion.outboundKeys
    .map((key) => ({ id: key.id, secret: resolveSecret(key.secret, env) }))
    .find((key) => key.secret);
  if (outbound?.secret) {
    vars.EDGECLAW_COMPANION_OUTBOUND_KEY_ID = outbound.id;
    vars.EDGECLAW_COMPANION_OUTBOUND_SECRET = outbound.secret;
  }
  const missing: string[] = [];
  for (const account of planned.accounts) {
    for (const name of Object.values(account.secretEnv)) {
      const value = env[name];
      if (typeof value === "string" && value.length > 0) vars[name] = value;
      else missing.push(`${name} (${account.channel}/${account.accountId})`);
    }
  }
  return { ok: true, vars, missingSecrets: [...new Set(missing)] };
}

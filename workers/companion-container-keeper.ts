import type { Env } from "./env.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { containerDeployments } from "../functions/channels/companion/container-plan.ts";
import { companionStub } from "./companion-signed.ts";

/** "1" when `npm run deploy` added the companion's `[[containers]]` entry, "0" when it did not (scripts/lib/deploy-config.ts). */
export function companionContainerDeployed(env: Env): boolean {
  return env.EDGECLAW_COMPANION_CONTAINER === "1";
}

/**
 * Tells every companion deployment's Durable Object whether its container should run: wanted while
 * the deploy added the container and one of its keys speaks for an enabled socket account, not
 * wanted otherwise (a running one is then stopped). Run by the cron trigger the deploy adds and by
 * the first request an isolate serves; each call is idempotent, and the restarts between calls are
 * the Durable Object's own alarm.
 */
export async function keepCompanionContainers(env: Env): Promise<void> {
  // Unset: not deployed by `npm run deploy` (npm run dev, tests): no container exists to keep.
  // "0": deployed without one, so one a previous deploy started is told to stop.
  if (env.EDGECLAW_COMPANION_CONTAINER !== "1" && env.EDGECLAW_COMPANION_CONTAINER !== "0") return;
  const config = configFromEnv(env);
  const revision = await configRevision(config);
  const wanted = new Set(
    companionContainerDeployed(env) && config.companion.container.enabled
      ? containerDeployments(config, env).map((planned) => planned.deployment)
      : [],
  );
  const all = new Set(config.companion.ingressKeys.map((key) => key.deployment ?? key.id));
  const results = await Promise.allSettled(
    [...all].map((deployment) =>
      companionStub(env, deployment).keepContainer(deployment, wanted.has(deployment), revision),
    ),
  );
  for (const result of results)
    if (result.status === "rejected")
      console.warn(
        "companion container keep failed",
        result.reason instanceof Error ? result.reason.message : result.reason,
      );
}

/** A fingerprint of the deployed config: a deploy that changes it closes an open crash-loop breaker. */
async function configRevision(config: unknown): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(JSON.stringify(config)),
  );
  return [...new Uint8Array(digest).slice(0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
}

import { generatedSecret } from "./dev-secret-file.ts";
import { resolveSecret } from "../../functions/config/secret-ref.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { knownAgentIds } from "../../functions/routing/agents.ts";
import { sandboxConfigFor } from "../../functions/sandbox/placement.ts";

/**
 * What the Worker sends to the companion under `npm run dev`: an agent's exec sandbox whose backend
 * is "companion" (`POST /v1/sandbox`; dev then starts the companion even with no socket account),
 * and the replies of a channel whose session lives in the companion (`POST /v1/outbound`: Signal,
 * WhatsApp; `repliesThroughCompanion`). Either way dev hands the companion the outbound key the
 * Worker signs with (the configured one when its secret is set, else one generated and kept in the
 * data dir, like the ingress key), and points `companion.url` at it when the config leaves it
 * unset. Decided from the config alone; dev-companion-plan.ts folds it in.
 */

export const GENERATED_OUTBOUND_SECRET_FILE = "companion-outbound-secret";
export const GENERATED_OUTBOUND_KEY_ID = "dev-local";
export const GENERATED_OUTBOUND_SECRET_VAR = "EDGECLAW_COMPANION_DEV_OUTBOUND_SECRET";

/** The outbound key the Worker signs its commands to the dev companion with, and where it sends them. */
export interface DevOutboundPlan {
  outboundKey: { id: string; source: "configured" | "generated"; file?: string };
  /** companion.url as configured; unset: dev points it at the companion it starts. */
  configuredUrl: string | undefined;
}

export interface DevSandboxPlan extends DevOutboundPlan {
  /** The agents whose commands the dev companion runs. */
  agents: string[];
}

/** Agents whose `exec` runs on the companion (agents.defaults.sandbox or their own agents.list[].sandbox). */
export function companionSandboxAgents(config: EdgeclawConfig): string[] {
  return [...knownAgentIds(config)].filter(
    (agentId) => sandboxConfigFor(config, agentId).backend === "companion",
  );
}

/**
 * Nothing when no agent's sandbox is the companion and no account replies through it (`replying`:
 * their labels). Otherwise the outbound part, with the companion's env (the outbound key) written
 * into `env` and a generated key's secret into `vars` (the Worker's env file); `raw` comes back with
 * the generated key added to `companion.outboundKeys`; `sandbox` too when an agent's exec runs there.
 */
export function planDevOutbound(input: {
  raw: Record<string, unknown>;
  config: EdgeclawConfig;
  vars: Record<string, string>;
  shellEnv: NodeJS.ProcessEnv;
  dataDir: string;
  env: Record<string, string>;
  warnings: string[];
  replying: string[];
}): { raw: Record<string, unknown>; outbound?: DevOutboundPlan; sandbox?: DevSandboxPlan } {
  const { config, vars, shellEnv } = input;
  const agents = companionSandboxAgents(config);
  if (!agents.length && !input.replying.length) return { raw: input.raw };
  const configured = config.companion.outboundKeys[0];
  const lookup = { ...shellEnv, ...vars } as Record<string, string>;
  const secret = configured ? resolveSecret(configured.secret, lookup) : undefined;
  let raw = input.raw;
  let outboundKey: DevSandboxPlan["outboundKey"];
  if (configured && secret) {
    outboundKey = { id: configured.id, source: "configured" };
    input.env.EDGECLAW_COMPANION_OUTBOUND_SECRET = secret;
    input.env.EDGECLAW_COMPANION_OUTBOUND_KEY_ID = configured.id;
    const name = (configured.secret as { id?: string }).id;
    if (name && !vars[name]) vars[name] = secret;
  } else {
    if (configured && !isSchemaDefaultKey(input.raw))
      input.warnings.push(
        `companion.outboundKeys "${configured.id}": its secret is not set (in .dev.vars or the shell); the dev companion uses a generated key instead`,
      );
    const generated = generatedSecret(input.dataDir, GENERATED_OUTBOUND_SECRET_FILE);
    outboundKey = { id: GENERATED_OUTBOUND_KEY_ID, source: "generated", file: generated.file };
    vars[GENERATED_OUTBOUND_SECRET_VAR] = generated.secret;
    input.env.EDGECLAW_COMPANION_OUTBOUND_SECRET = generated.secret;
    input.env.EDGECLAW_COMPANION_OUTBOUND_KEY_ID = GENERATED_OUTBOUND_KEY_ID;
    raw = withCompanionKeys(raw, {
      outboundKeys: [
        {
          id: GENERATED_OUTBOUND_KEY_ID,
          secret: { source: "env", id: GENERATED_OUTBOUND_SECRET_VAR },
        },
      ],
    });
  }
  const outbound = { outboundKey, configuredUrl: config.companion.url };
  return { raw, outbound, ...(agents.length ? { sandbox: { ...outbound, agents } } : {}) };
}

/** The config with `companion.url` pointing at the companion dev started (only when unset). */
export function withCompanionUrl(
  raw: Record<string, unknown>,
  url: string,
): Record<string, unknown> {
  return withCompanionKeys(raw, { url });
}

function withCompanionKeys(
  raw: Record<string, unknown>,
  keys: Record<string, unknown>,
): Record<string, unknown> {
  const companion = isRecord(raw.companion) ? raw.companion : {};
  return { ...raw, companion: { ...companion, ...keys } };
}

/** No outboundKeys in the file: the schema's default entry (EDGECLAW_COMPANION_OUTBOUND_SECRET) is not the user's. */
function isSchemaDefaultKey(raw: Record<string, unknown>): boolean {
  return !(isRecord(raw.companion) && Array.isArray(raw.companion.outboundKeys));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

import { generatedSecret } from "./dev-secret-file.ts";
import { authorizeSocketAccount } from "../../functions/channels/companion/authorize.ts";
import { allSocketAccounts } from "../../functions/channels/companion/socket-accounts.ts";
import { resolveSecret } from "../../functions/config/secret-ref.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import {
  companionSandboxAgents,
  planDevOutbound,
  type DevOutboundPlan,
  type DevSandboxPlan,
} from "./dev-companion-sandbox.ts";

/**
 * What `npm run dev` needs to run the companion next to the local Worker, decided from the config
 * alone: whether any account is a socket account (the Worker's own rule, `definition.socket.accounts`)
 * or any agent's exec sandbox is the companion (dev-companion-sandbox.ts), which ingress key the
 * companion signs with (none for a sandbox alone: it then runs no connector and takes no lease),
 * and which env vars it must get. No process is started here (dev-companion.ts does that).
 */

/** File under the data dir that keeps the generated ingress secret across restarts (like the gateway token). */
export const GENERATED_INGRESS_SECRET_FILE = "companion-ingress-secret";
/** Key id and Worker env var of the generated key: dev's own, so they never collide with a configured key. */
export const GENERATED_KEY_ID = "dev-local";
export const GENERATED_SECRET_VAR = "EDGECLAW_COMPANION_DEV_SECRET";

/**
 * Shell variables the companion inherits besides its own settings and the platform secrets
 * (EDGECLAW_SANDBOX_CONDA_PREFIX: the host conda its sandbox binds for agents.defaults.computeEnv).
 */
const INHERITED_ENV =
  /^(PATH|HOME|TMPDIR|TZ|LANG|LC_[A-Z]+|NODE_EXTRA_CA_CERTS|NODE_USE_ENV_PROXY|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|EDGECLAW_COMPANION_[A-Z0-9_]+|EDGECLAW_SANDBOX_CONDA_PREFIX)$/;

export interface DevCompanionPlan {
  /** The config to bundle: the one given, or with generated keys added (`companion.ingressKeys`, `outboundKeys`). */
  raw: Record<string, unknown>;
  /** The ingress key; none when the companion serves only the sandbox (no socket account). */
  key?: { id: string; secret: string; source: "configured" | "generated"; file?: string };
  /** When the Worker sends the companion commands (exec, replies): the key it signs them with. */
  outbound?: DevOutboundPlan;
  /** When an agent's sandbox backend is "companion": for whom, and the outbound key it verifies. */
  sandbox?: DevSandboxPlan;
  /** Labels of the accounts the companion will run ("Discord", "Slack (account ops)"). */
  accounts: string[];
  /** Env of the companion process except the settings only known once running (Worker URL, port, data dir). */
  env: Record<string, string>;
  /** Things to tell the user (accounts no usable key covers, a configured key without its secret). */
  warnings: string[];
}

export interface DevCompanionInput {
  raw: Record<string, unknown>;
  config: EdgeclawConfig;
  /** The Worker's secrets (written to its env file); platform secrets found only in the shell are added. */
  vars: Record<string, string>;
  shellEnv: NodeJS.ProcessEnv;
  dataDir: string;
}

/** undefined when no account is served over the companion and no agent's sandbox is: dev then starts none. */
export function planDevCompanion(input: DevCompanionInput): DevCompanionPlan | undefined {
  const { config, vars, shellEnv } = input;
  const accounts = allSocketAccounts(config, vars);
  if (!accounts.length) {
    if (!companionSandboxAgents(config).length) return undefined;
    return withOutbound(
      input,
      { raw: input.raw, accounts: [], env: inheritedEnv(shellEnv), warnings: [] },
      [],
      {
        EDGECLAW_COMPANION_SANDBOX_ONLY: "1",
      },
    );
  }
  const warnings: string[] = [];

  // The Worker resolves the same names to parse and reply (e.g. DISCORD_BOT_TOKEN, the default
  // account's fallback, which the config itself never names): both processes get them.
  const platformEnv: Record<string, string> = {};
  for (const { account } of accounts) {
    for (const name of Object.values(account.connector.secretEnv)) {
      const value = vars[name] || shellEnv[name];
      if (!value) {
        warnings.push(
          `${account.label}: ${name} is not set (in .dev.vars or the shell); its connector cannot start`,
        );
        continue;
      }
      vars[name] ??= value;
      platformEnv[name] = value;
    }
  }

  const covers = (grant: EdgeclawConfig["companion"]["ingressKeys"][number]) =>
    accounts.filter(
      ({ definition, account }) =>
        authorizeSocketAccount(grant, definition.id, account.accountId).ok,
    );
  const usable = config.companion.ingressKeys
    .map((grant) => ({ grant, secret: resolveSecret(grant.secret, vars), served: covers(grant) }))
    .filter((candidate) => candidate.served.length > 0);
  for (const { grant, secret } of usable) {
    if (!secret)
      warnings.push(
        `companion.ingressKeys "${grant.id}": its secret is not set (in .dev.vars or the shell); not used`,
      );
  }
  const best = usable
    .filter((candidate) => candidate.secret)
    .sort((a, b) => b.served.length - a.served.length)[0];

  let raw = input.raw;
  let key: DevCompanionPlan["key"];
  let served = accounts;
  if (best) {
    key = { id: best.grant.id, secret: best.secret!, source: "configured" };
    served = best.served;
    for (const { account } of accounts) {
      if (!served.some((entry) => entry.account === account))
        warnings.push(
          `${account.label}: ingress key "${best.grant.id}" may not speak for it; the dev companion does not run it`,
        );
    }
  } else {
    const channels = [...new Set(accounts.map(({ definition }) => definition.id))];
    const generated = generatedSecret(input.dataDir, GENERATED_INGRESS_SECRET_FILE);
    const id = uniqueKeyId(config);
    key = { id, secret: generated.secret, source: "generated", file: generated.file };
    vars[GENERATED_SECRET_VAR] = generated.secret;
    raw = withIngressKey(input.raw, {
      id,
      secret: { source: "env", id: GENERATED_SECRET_VAR },
      channels,
    });
  }

  const env = inheritedEnv(shellEnv);
  Object.assign(env, platformEnv, {
    EDGECLAW_COMPANION_KEY_ID: key.id,
    EDGECLAW_COMPANION_INGRESS_SECRET: key.secret,
  });
  const replying = served
    .filter(({ definition }) => definition.socket?.repliesThroughCompanion)
    .map(({ account }) => account.label);
  return withOutbound(
    input,
    { raw, key, accounts: served.map(({ account }) => account.label), env, warnings },
    replying,
    {},
  );
}

/**
 * Adds the outbound part (the key the Worker signs its commands with, a generated one into the
 * config) when an agent's sandbox or an account's replies (`replying`) go through the companion.
 */
function withOutbound(
  input: DevCompanionInput,
  plan: DevCompanionPlan,
  replying: string[],
  extraEnv: Record<string, string>,
): DevCompanionPlan {
  const { raw, outbound, sandbox } = planDevOutbound({
    raw: plan.raw,
    config: input.config,
    vars: input.vars,
    shellEnv: input.shellEnv,
    dataDir: input.dataDir,
    env: plan.env,
    warnings: plan.warnings,
    replying,
  });
  Object.assign(plan.env, extraEnv);
  return { ...plan, raw, ...(outbound ? { outbound } : {}), ...(sandbox ? { sandbox } : {}) };
}

function inheritedEnv(shellEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(shellEnv))
    if (value !== undefined && INHERITED_ENV.test(name)) env[name] = value;
  return env;
}

function uniqueKeyId(config: EdgeclawConfig): string {
  const taken = new Set(config.companion.ingressKeys.map((key) => key.id));
  let id = GENERATED_KEY_ID;
  for (let n = 2; taken.has(id); n++) id = `${GENERATED_KEY_ID}-${n}`;
  return id;
}

/** The config with one more ingress key; keys the user wrote stay (the schema default k1 speaks for nothing, so it is dropped). */
function withIngressKey(
  raw: Record<string, unknown>,
  key: Record<string, unknown>,
): Record<string, unknown> {
  const companion = isRecord(raw.companion) ? raw.companion : {};
  const written = Array.isArray(companion.ingressKeys) ? companion.ingressKeys : [];
  return { ...raw, companion: { ...companion, ingressKeys: [...written, key] } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

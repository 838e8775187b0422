import { missingCredentials } from "../channels/credential-check.ts";
import { webhookRouteTable } from "../channels/webhook-routes.ts";
import { effectiveChannelAccess } from "../config/channel-access.ts";
import { ConfigError } from "../config/load.ts";
import { parseConfig } from "../channels/gateway-config.ts";
import { requiredSecrets } from "./required-secrets.ts";
import { plainSecretPaths } from "../config/secret-scan.ts";
import { checkConfig, type ConfigCheckReport } from "../routing/config-check.ts";

/**
 * The control page's config check: what `npm run config:check` reports about the config file
 * (validation errors, unknown keys, bindings to unknown agents, plain secrets bundled into the
 * script), here about the config the Worker actually runs with — plus which Worker secrets that
 * config needs and whether each is set (names only, never a value), and which channels and
 * accounts are enabled and what each enabled one still lacks.
 */
export interface ConfigReport extends ConfigCheckReport {
  secrets: Array<{ name: string; why: string; present: boolean }>;
  /** `webhookPath`: the path this Worker serves for the account (null: not served over HTTP — disabled, or a companion channel). */
  channels: Array<{
    channel: string;
    accountId: string;
    enabled: boolean;
    dmPolicy: string;
    groupPolicy: string;
    webhookPath: string | null;
    /** The credentials this account lacks, as env names (or config keys where no env var can supply one). */
    missing: string[];
  }>;
}

export function configReport(raw: unknown, env: Record<string, unknown>): ConfigReport {
  const check = checkConfig(raw, env);
  const warnings = [
    ...check.warnings,
    ...plainSecretPaths(raw).map(
      (path) =>
        `${path}: a plain secret string is bundled into the Worker script; prefer { source: "env", id: "…" } and a Worker secret`,
    ),
  ];
  let config;
  try {
    config = parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return { ...check, warnings, secrets: [], channels: [] };
    throw error;
  }
  const rawRecord = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const isSet = (name: string) => typeof env[name] === "string" && (env[name] as string).length > 0;
  const secrets = requiredSecrets(config, rawRecord).map(({ name, why, alternatives }) => ({
    name,
    why,
    present: isSet(name) || (alternatives ?? []).some(isSet),
  }));
  const missing = missingCredentials(config, env);
  const served = [...webhookRouteTable(config).values()].map(({ definition, route }) => ({
    channel: definition.id,
    accountId: route.accountId,
    path: route.path,
  }));
  const channels = Object.entries(config.channels).flatMap(([channel, block]) => {
    const accounts =
      block &&
      typeof block === "object" &&
      "accounts" in block &&
      block.accounts &&
      typeof block.accounts === "object"
        ? Object.keys(block.accounts)
        : [];
    return ["default", ...accounts.filter((id) => id !== "default")].map((accountId) => {
      const access = effectiveChannelAccess(block, accountId);
      const webhookPath =
        served.find((entry) => entry.channel === channel && entry.accountId === accountId)?.path ??
        null;
      return {
        channel,
        accountId,
        enabled: access.enabled,
        dmPolicy: access.dmPolicy,
        groupPolicy: access.groupPolicy,
        webhookPath,
        missing: missing
          .filter((entry) => entry.channel === channel && entry.accountId === accountId)
          .map((entry) => (entry.env.length ? entry.env.join(" or ") : entry.keys.join(" or "))),
      };
    });
  });
  return { ...check, warnings, secrets, channels };
}

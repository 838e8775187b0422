import type { EdgeclawConfig } from "../config/schema.ts";
import type { AccountRequirements, CredentialNeed } from "./credentials.ts";
import { channelDefinitions } from "./registry.ts";
import { withRoot } from "./channel-account.ts";

/**
 * The channels' declared requirements (credentials.ts) read against an environment: what is
 * missing, in the words config check, the dev banner and the control page print, and the secret
 * names a deployment must set. One reader, so the four never disagree.
 */

/** One credential an enabled account lacks. */
export interface MissingCredential {
  channel: string;
  accountId: string;
  /** `channels.line` or `channels.line.accounts.biz`. */
  accountKey: string;
  what: string;
  without: string;
  /** Env vars (Worker secrets) that would supply it, any one; empty when only the config can. */
  env: string[];
  /** Config keys that would hold it, any one. */
  keys: string[];
}

/** Every enabled account of every configured channel, with its channel id. */
export function channelRequirements(
  config: EdgeclawConfig,
): Array<AccountRequirements & { channel: string }> {
  return channelDefinitions().flatMap((definition) =>
    withRoot(definition, config, (root) => definition.requirements(root)).map((account) => ({
      ...account,
      channel: definition.id,
    })),
  );
}

function isSet(env: Record<string, unknown>, name: string): boolean {
  const value = env[name];
  return typeof value === "string" && value.length > 0;
}

function satisfied(need: CredentialNeed, env: Record<string, unknown>): boolean {
  return need.anyOf.some(
    (source) => source.inConfig || source.env.some((name) => isSet(env, name)),
  );
}

/** What the enabled accounts lack in `env` (the Worker's env, or what dev hands it). */
export function missingCredentials(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): MissingCredential[] {
  return channelRequirements(config).flatMap((account) =>
    account.needs
      .filter((need) => !satisfied(need, env))
      .map((need) => ({
        channel: account.channel,
        accountId: account.accountId,
        accountKey: account.key,
        what: need.what,
        without: need.without,
        env: [...new Set(need.anyOf.flatMap((source) => source.env))],
        keys: need.anyOf.map((source) => source.key),
      })),
  );
}

/**
 * The config check's line for one missing credential, e.g. `channels.line: no channel secret
 * (LINE_CHANNEL_SECRET is not set, nor channels.line.channelSecret): every LINE webhook is refused (401)`.
 */
export function describeMissing(missing: MissingCredential): string {
  const keys = missing.keys.join(" or ");
  const where = !missing.env.length
    ? `set ${keys}`
    : missing.env.length === 1
      ? `${missing.env[0]} is not set, nor ${keys}`
      : `none of ${missing.env.join(", ")} is set, nor ${keys}`;
  return `${missing.accountKey}: no ${missing.what} (${where}): ${missing.without}`;
}

/** Accounts that are enabled but not served by this Worker: why, and the key that serves them. */
export function notServedLines(config: EdgeclawConfig): string[] {
  return channelRequirements(config).flatMap((account) =>
    account.notServed ? [`${account.key}: ${account.notServed}`] : [],
  );
}

/** A Worker secret the configured channels read; `alternatives` stand in for it (any one is enough). */
export interface ChannelSecretName {
  name: string;
  alternatives: string[];
  why: string;
}

/**
 * The env names the enabled accounts read their credentials from, for deploy's secret list, the
 * control page and dev's pass-through of shell variables. A need written into the config, or one
 * no env var can meet, names none.
 */
export function channelSecretNames(config: EdgeclawConfig): ChannelSecretName[] {
  const names: ChannelSecretName[] = [];
  for (const account of channelRequirements(config)) {
    for (const need of account.needs) {
      if (need.anyOf.some((source) => source.inConfig)) continue;
      const [name, ...alternatives] = [...new Set(need.anyOf.flatMap((source) => source.env))];
      if (!name || names.some((entry) => entry.name === name)) continue;
      names.push({ name, alternatives, why: `${account.key}: ${need.what}` });
    }
  }
  return names;
}

/**
 * One line per enabled account that cannot work as configured (the dev banner): what it lacks,
 * each with what fails without it, and accounts this Worker does not serve.
 */
export function accountProblemLines(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  whereToSet: string,
): string[] {
  const lines = notServedLines(config).map((line) => line.replace(": ", ": not served — "));
  const byAccount = new Map<string, MissingCredential[]>();
  for (const missing of missingCredentials(config, env))
    byAccount.set(missing.accountKey, [...(byAccount.get(missing.accountKey) ?? []), missing]);
  for (const [key, missing] of byAccount) {
    const items = missing.map(
      (entry) =>
        `${entry.env.length ? entry.env.join(" or ") : entry.keys.join(" or ")} (${entry.what}; without it ${entry.without})`,
    );
    lines.push(`${key}: missing ${items.join(", ")}; ${whereToSet}`);
  }
  return lines;
}

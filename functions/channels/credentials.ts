import { secretEnvName, type SecretInput } from "../config/secret-ref.ts";

/**
 * What one channel account cannot work without: its secrets (and the few settings the platform's
 * checks need), each with the config key that holds it and the env vars it is read from. Each
 * channel declares its list in its own folder (`<channel>/credentials.ts`, ChannelDefinition
 * `requirements`); config check, the dev banner, the control page and deploy's secret list all read
 * it (credential-check.ts), so a channel without credentials is named everywhere, not only in the
 * one log line of its first refused request.
 */

/** Where one credential can come from. */
export interface CredentialSource {
  /** The config key that holds it: `channels.line.channelSecret`, `channels.line.accounts.biz.channelSecret`. */
  key: string;
  /** Written into the config as a value (not a SecretRef): set, nothing to look up. */
  inConfig: boolean;
  /**
   * The env vars (Worker secrets) it is read from, the first set one wins: a SecretRef's id (or
   * `${VAR}`), else the channel's env fallbacks — for the default account only. Empty when only
   * the config can supply it.
   */
  env: string[];
}

/** A credential an account needs; any one of `anyOf` satisfies it (Feishu: encryptKey or verificationToken). */
export interface CredentialNeed {
  /** What it is, for people: "channel secret". */
  what: string;
  /** What fails without it: "LINE's webhooks are refused (401)". */
  without: string;
  anyOf: CredentialSource[];
}

/** One enabled account of a channel and what it needs. */
export interface AccountRequirements {
  accountId: string;
  /** The account's place in the config: `channels.line`, or `channels.line.accounts.biz`. */
  key: string;
  needs: CredentialNeed[];
  /** Set when the account is enabled but this Worker does not serve it: why, and the key that would. */
  notServed?: string;
}

/**
 * A parsed `channels.<id>` block as far as this file reads it (accounts.ts's AccountsRoot, said
 * again here so that the contract in channel.ts, which names AccountRequirements, and accounts.ts,
 * which names channel.ts's WebhookRoute, do not import each other through this file).
 */
type ChannelBlock = { accounts?: Record<string, object> };

/** `channels.<id>`, or `channels.<id>.accounts.<account>` when the block lists its accounts. */
export function accountKey(channel: string, root: ChannelBlock, accountId: string): string {
  return root.accounts && accountId in root.accounts
    ? `channels.${channel}.accounts.${accountId}`
    : `channels.${channel}`;
}

/**
 * Where `field` of an account comes from: the account's own block, else the root's (the merged
 * account holds whichever applies), else the env fallbacks the channel reads for its default
 * account. A literal value (a string that is not `${VAR}`, or an inline object such as a service
 * account key) is set in the config.
 */
export function credentialSource(
  channel: string,
  root: ChannelBlock,
  account: { accountId: string; isDefault: boolean },
  field: string,
  fallbackEnv: readonly string[] = [],
): CredentialSource {
  const own = (root.accounts?.[account.accountId] as Record<string, unknown> | undefined)?.[field];
  const inherited = (root as unknown as Record<string, unknown>)[field];
  const value = own ?? inherited;
  const key =
    own === undefined && inherited !== undefined
      ? `channels.${channel}.${field}`
      : `${accountKey(channel, root, account.accountId)}.${field}`;
  if (value === undefined)
    return { key, inConfig: false, env: account.isDefault ? [...fallbackEnv] : [] };
  const isRef = typeof value === "object" && value !== null && "source" in value;
  if (typeof value === "string" || isRef) {
    const name = secretEnvName(value as SecretInput);
    return name ? { key, inConfig: false, env: [name] } : { key, inConfig: true, env: [] };
  }
  return { key, inConfig: true, env: [] };
}

/** A need met by one source. */
export function need(what: string, without: string, ...anyOf: CredentialSource[]): CredentialNeed {
  return { what, without, anyOf };
}

import type { SecretEnv } from "../config/secret-ref.ts";
import type { WebhookRoute } from "./channel.ts";

/**
 * The account rules every channel shares (OpenClaw: channels/accounts). A `channels.<id>` block is
 * the settings of its default account; `accounts.<id>` blocks take the same keys without defaults
 * and inherit every key they leave unset from the root. Env fallbacks stand in for the default
 * account only, so a second account never borrows the first one's credentials. What differs per
 * channel (which accounts the Worker serves, which keys an account replaces whole, the env names)
 * is said at each channel's call site.
 */

/** The account of a channel that names none (OpenClaw: `defaultAccount`, else `default`). */
export const DEFAULT_ACCOUNT_ID = "default";

/** What every parsed channel root has (channelAccessSchema): the on/off switch and the accounts. */
export interface AccountsRoot {
  enabled: boolean;
  defaultAccount?: string;
  accounts?: Record<string, object>;
}

/** The settings in force for one account: the root with the account's own block over it. */
export type MergedAccount<Root> = Root & { accountId: string; isDefault: boolean };

/** How an account's block goes over the root. By default objects merge one level deep. */
export interface MergeRules {
  /** Keys an account replaces whole: id → entry maps (`groups`), where an account's map is its whole list. */
  replace?: readonly string[];
  /** Object values an account replaces whole wherever they stand (a SecretRef is one value, not settings). */
  replaceWhen?: (value: Record<string, unknown>) => boolean;
  /** false: no object merges; every key the account sets replaces the root's value. */
  mergeObjects?: boolean;
}

/** Called for an account whose webhook path another account already holds. */
export type ClashHandler = (accountId: string, path: string) => void;

export function defaultAccountId(root: AccountsRoot): string {
  return root.defaultAccount ?? DEFAULT_ACCOUNT_ID;
}

/** Each `accounts.<id>`, or the root alone (as the default account) when there are none. */
export function accountIds(root: AccountsRoot): string[] {
  const ids = Object.keys(root.accounts ?? {});
  return ids.length ? ids : [defaultAccountId(root)];
}

/** One account's settings: its own block over the root's, by `rules`; unset keys inherit. */
export function mergedAccount<Root extends AccountsRoot>(
  root: Root,
  accountId: string,
  rules: MergeRules = {},
): MergedAccount<Root> {
  const own = (root.accounts?.[accountId] ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...(root as object) };
  for (const [key, value] of Object.entries(own)) {
    if (value === undefined) continue;
    const base = merged[key];
    const deep =
      rules.mergeObjects !== false &&
      isPlainObject(base) &&
      isPlainObject(value) &&
      !rules.replace?.includes(key) &&
      !rules.replaceWhen?.(value);
    merged[key] = deep ? { ...base, ...value } : value;
  }
  return { ...(merged as Root), accountId, isDefault: accountId === defaultAccountId(root) };
}

/** Enabled accounts (none while the channel is off) that `keep` picks, e.g. the companion's socket-mode ones. */
export function enabledAccounts<Account extends { enabled: boolean }>(
  root: AccountsRoot,
  accountOf: (accountId: string) => Account,
  keep: (account: Account) => boolean = () => true,
): Account[] {
  if (!root.enabled) return [];
  return accountIds(root)
    .map(accountOf)
    .filter((account) => account.enabled && keep(account));
}

/**
 * The accounts the Worker serves, by webhook path: enabled ones (and none while the channel is
 * off) whose `pathOf` is defined — undefined means the account is not the Worker's (Socket Mode, a
 * long connection: the companion runs it). A second account on a path already taken is not
 * served: the first keeps it, and `onClash` hears of the second.
 */
export function webhookAccounts<Account extends { enabled: boolean; accountId: string }>(
  root: AccountsRoot,
  accountOf: (accountId: string) => Account,
  pathOf: (account: Account) => string | undefined,
  onClash?: ClashHandler,
): Map<string, Account> {
  const byPath = new Map<string, Account>();
  for (const account of enabledAccounts(root, accountOf)) {
    const path = pathOf(account);
    if (path === undefined) continue;
    if (byPath.has(path)) onClash?.(account.accountId, path);
    else byPath.set(path, account);
  }
  return byPath;
}

/** The clash log line: `channels.<id>: account <a> reuses <key> <path>; not served`. */
export function logClash(channelId: string, pathKey: string): ClashHandler {
  return (accountId, path) =>
    console.error(
      `channels.${channelId}: account ${accountId} reuses ${pathKey} ${path}; not served`,
    );
}

/** One webhook route per served account, labelled for people: `LINE`, or `LINE (account biz)` once there are several. */
export function webhookRoutes<Account extends { accountId: string }>(
  name: string,
  byPath: Map<string, Account>,
): WebhookRoute<Account>[] {
  return [...byPath].map(([path, account]) => ({
    path,
    accountId: account.accountId,
    label: accountLabel(name, account.accountId, byPath.size),
    account,
  }));
}

/** `Slack`, or `Slack (account ops)` when the channel serves `count` > 1 accounts this way. */
export function accountLabel(name: string, accountId: string, count: number): string {
  return count > 1 ? `${name} (account ${accountId})` : name;
}

/**
 * Env variables that stand in for settings the config leaves unset — for the default account only:
 * the first of `names` that holds a non-empty string, else undefined.
 */
export function defaultAccountEnv(
  account: { isDefault: boolean },
  env: SecretEnv,
): (...names: string[]) => string | undefined {
  return (...names) => {
    if (!account.isDefault) return undefined;
    for (const name of names) {
      const value = env[name];
      if (typeof value === "string" && value) return value;
    }
    return undefined;
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

import type { EdgeclawConfig } from "../../config/schema.ts";
import type { ChannelDefinition, SocketAccount, SocketPieces } from "../channel.ts";
import { withRoot } from "../channel-account.ts";
import { channelDefinitions, channelDefinition } from "../registry.ts";
import { authorizeSocketAccount, type IngressKeyGrant } from "./authorize.ts";

/** What `GET /internal/companion/accounts` lists for one account (companion/src/connector.ts ConnectorAccount). */
export interface AssignedAccount {
  channel: string;
  accountId: string;
  label: string;
  settings: Record<string, unknown>;
  secretEnv: Record<string, string>;
}

/** Every enabled socket account of every registered channel (an account is webhook or socket, never both). */
export function allSocketAccounts(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): Array<{ definition: ChannelDefinition; account: SocketAccount }> {
  return channelDefinitions().flatMap((definition) => {
    const socket = definition.socket;
    if (!socket) return [];
    return withRoot(definition, config, (root) => socket.accounts(root, env)).map((account) => ({
      definition,
      account,
    }));
  });
}

/** The socket accounts a key may run: only its channels and accounts; the account's own settings never leave the Worker. */
export function accountsForKey(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  grant: IngressKeyGrant,
): AssignedAccount[] {
  return allSocketAccounts(config, env)
    .filter(
      ({ definition, account }) =>
        authorizeSocketAccount(grant, definition.id, account.accountId).ok,
    )
    .map(({ definition, account }) => ({
      channel: definition.id,
      accountId: account.accountId,
      label: account.label,
      settings: account.connector.settings,
      secretEnv: account.connector.secretEnv,
    }));
}

/** The socket half and account a companion event names; undefined when it is no socket account (404). */
export function findSocketAccount(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  channel: string,
  accountId: string,
): { definition: ChannelDefinition; socket: SocketPieces; account: SocketAccount } | undefined {
  const definition = channelDefinition(channel);
  const socket = definition?.socket;
  if (!definition || !socket) return undefined;
  const account = withRoot(definition, config, (root) => socket.accounts(root, env)).find(
    (candidate) => candidate.accountId === accountId,
  );
  return account ? { definition, socket, account } : undefined;
}

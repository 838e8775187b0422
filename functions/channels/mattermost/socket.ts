import type { SocketAccount, SocketPieces } from "../channel.ts";
import {
  mattermostAccounts,
  mattermostAllowsPrivateNetwork,
  mattermostBaseUrl,
  mattermostBotTokenEnv,
  type MattermostAccount,
  type MattermostChannelConfig,
} from "./config.ts";
import { parseMattermostEvent } from "./parse.ts";
import { mattermostSocketPayloadSchema } from "./payloads.ts";
import { parsePayload } from "../parse-json-body.ts";

/**
 * Mattermost is served by the companion's WebSocket connector (functions/channels/mattermost/companion/connector.ts):
 * every enabled account. The connector gets the server URL, whether it may be a private address, and the env var name of the bot token;
 * the token itself never travels. Events come back raw and are parsed here (parse.ts).
 */
export const mattermostSocket: SocketPieces<MattermostAccount, MattermostChannelConfig> = {
  accounts(root: MattermostChannelConfig, env) {
    const accounts = mattermostAccounts(root);
    return accounts.flatMap((account): SocketAccount<MattermostAccount>[] => {
      const baseUrl = mattermostBaseUrl(account, env);
      const tokenEnv = mattermostBotTokenEnv(account);
      if (!baseUrl) {
        console.error(
          `channels.mattermost (account ${account.accountId}): no baseUrl (or MATTERMOST_URL for the default account); not connected`,
        );
        return [];
      }
      if (!tokenEnv)
        console.error(
          `channels.mattermost (account ${account.accountId}): botToken must be a SecretRef or "\${VAR}" for the companion to read it`,
        );
      return [
        {
          accountId: account.accountId,
          label: accounts.length > 1 ? `Mattermost (account ${account.accountId})` : "Mattermost",
          account,
          // The connector applies the private-network guard itself, to every address the server resolves to.
          connector: {
            settings: {
              baseUrl,
              dangerouslyAllowPrivateNetwork: mattermostAllowsPrivateNetwork(account),
            },
            secretEnv: tokenEnv ? { botToken: tokenEnv } : {},
          },
        },
      ];
    });
  },
  parse(event, socketAccount) {
    const payload = parsePayload(
      event.payload,
      mattermostSocketPayloadSchema,
      "a Mattermost socket event",
    );
    if (!payload.ok) return { kind: "malformed", reason: payload.reason };
    return parseMattermostEvent({
      ...payload.value,
      account: socketAccount.account,
      receivedAt: event.receivedAt,
    });
  },
};

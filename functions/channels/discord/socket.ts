import type { SocketAccount, SocketPieces } from "../channel.ts";
import { accountLabel } from "../accounts.ts";
import {
  discordAccounts,
  discordApiBase,
  discordBotToken,
  discordBotUserId,
  discordTokenEnvName,
  type DiscordAccount,
  type DiscordChannelConfig,
} from "./config.ts";
import { parseDiscordDispatch } from "./parse.ts";

/**
 * Discord messages arrive over the Gateway, a socket the companion holds
 * (functions/channels/discord/companion/). Every enabled account whose token is a Worker secret / env
 * var is a socket account; the companion reads the same env var itself (the token never travels).
 * A plain-string token in the config cannot be handed over, so that account is not served (logged).
 */

/** Gateway intent bits (https://discord.com/developers/docs/events/gateway#gateway-intents). */
export const INTENTS = {
  GUILDS: 1 << 0,
  GUILD_MEMBERS: 1 << 1,
  GUILD_PRESENCES: 1 << 8,
  GUILD_MESSAGES: 1 << 9,
  GUILD_MESSAGE_REACTIONS: 1 << 10,
  DIRECT_MESSAGES: 1 << 12,
  DIRECT_MESSAGE_REACTIONS: 1 << 13,
  MESSAGE_CONTENT: 1 << 15,
} as const;

export function discordIntents(account: DiscordAccount): number {
  const { intents } = account;
  let bits = INTENTS.GUILDS | INTENTS.GUILD_MESSAGES | INTENTS.DIRECT_MESSAGES;
  if (intents.messageContent) bits |= INTENTS.MESSAGE_CONTENT;
  if (intents.guildMembers) bits |= INTENTS.GUILD_MEMBERS;
  if (intents.presence) bits |= INTENTS.GUILD_PRESENCES;
  if (intents.reactions) bits |= INTENTS.GUILD_MESSAGE_REACTIONS | INTENTS.DIRECT_MESSAGE_REACTIONS;
  return bits;
}

/** What the connector needs (non-secret): REST base for GET /gateway/bot, and the intents to IDENTIFY with. */
export interface DiscordConnectorSettings {
  apiBaseUrl: string;
  intents: number;
}

export const discordSocket: SocketPieces<DiscordAccount, DiscordChannelConfig> = {
  accounts(discord: DiscordChannelConfig): SocketAccount<DiscordAccount>[] {
    const accounts: SocketAccount<DiscordAccount>[] = [];
    const all = discordAccounts(discord);
    for (const account of all) {
      const { accountId } = account;
      const tokenEnv = discordTokenEnvName(account);
      if (!tokenEnv) {
        if (account.token !== undefined)
          console.error(
            `channels.discord: account ${accountId} has a plain-text token; the companion needs it as an env SecretRef`,
          );
        continue;
      }
      const settings: DiscordConnectorSettings = {
        apiBaseUrl: discordApiBase(account),
        intents: discordIntents(account),
      };
      accounts.push({
        accountId,
        label: accountLabel("Discord", accountId, all.length),
        account,
        connector: { settings: { ...settings }, secretEnv: { token: tokenEnv } },
      });
    }
    return accounts;
  },
  parse(event, account, env) {
    const token = discordBotToken(account.account, env);
    return parseDiscordDispatch(event.payload, {
      account: account.account,
      botUserId: discordBotUserId(token, account.account),
      receivedAt: event.receivedAt,
    });
  },
};

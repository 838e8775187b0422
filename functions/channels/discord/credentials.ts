import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { DISCORD_BOT_TOKEN_ENV, discordAccounts, type DiscordChannelConfig } from "./config.ts";

/** What each enabled Discord account needs: the bot token (the companion's Gateway connection, replies). */
export function discordRequirements(discord: DiscordChannelConfig): AccountRequirements[] {
  return discordAccounts(discord).map((account) => ({
    accountId: account.accountId,
    key: accountKey("discord", discord, account.accountId),
    needs: [
      need(
        "bot token",
        "the companion cannot connect and replies cannot be sent",
        credentialSource("discord", discord, account, "token", [DISCORD_BOT_TOKEN_ENV]),
      ),
    ],
  }));
}

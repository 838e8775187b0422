import type { SocketAccount, SocketPieces } from "../channel.ts";
import { accountLabel, enabledAccounts } from "../accounts.ts";
import {
  botIdFromToken,
  telegramAccount,
  TELEGRAM_ENV,
  telegramSecrets,
  type TelegramAccount,
  type TelegramChannelConfig,
} from "./config.ts";
import { parseTelegramUpdate } from "./parse.ts";

/**
 * Telegram long polling through the companion (`mode: "polling"`): the companion's connector calls
 * getUpdates and forwards each raw Update; the Worker parses it with the webhook's own parser, so
 * dedup keys (update_id per bot, chat:message_id alias) are the same in both modes. An account is
 * in one mode only: webhook.ts serves no path for a polling account, and the connector refuses to
 * poll while Telegram still has a webhook registered for the bot.
 */
export const telegramSocket: SocketPieces<TelegramAccount, TelegramChannelConfig> = {
  accounts(telegram: TelegramChannelConfig): SocketAccount<TelegramAccount>[] {
    const accounts = enabledAccounts(
      telegram,
      (accountId) => telegramAccount(telegram, accountId),
      (account) => account.mode === "polling",
    );
    return accounts.map((account) => ({
      accountId: account.accountId,
      label: accountLabel("Telegram", account.accountId, accounts.length),
      account,
      connector: {
        settings: { apiRoot: account.apiRoot, pollTimeoutSeconds: account.pollTimeoutSeconds },
        secretEnv: { botToken: botTokenEnvName(account) },
      },
    }));
  },
  parse(event, socketAccount, env) {
    const account = socketAccount.account;
    const botId = botIdFromToken(telegramSecrets(account, env).botToken);
    return parseTelegramUpdate(new TextEncoder().encode(JSON.stringify(event.payload)), {
      account,
      botId,
      receivedAt: event.receivedAt,
    });
  },
};

/**
 * The env var the companion reads the bot token from: the SecretRef's id, else OpenClaw's
 * TELEGRAM_BOT_TOKEN for the default account, else TELEGRAM_BOT_TOKEN_<ACCOUNT> (a token written into
 * the config file itself never travels to the companion; give it the same value under that name).
 */
export function botTokenEnvName(account: TelegramAccount): string {
  const token = account.botToken;
  if (token !== undefined && typeof token !== "string") return token.id;
  const substituted =
    typeof token === "string" ? /^\$\{([A-Z0-9_]+)\}$/.exec(token)?.[1] : undefined;
  if (substituted) return substituted;
  if (account.isDefault) return TELEGRAM_ENV.botToken;
  return `TELEGRAM_BOT_TOKEN_${account.accountId.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

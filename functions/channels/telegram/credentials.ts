import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { TELEGRAM_ENV, telegramAccount, type TelegramChannelConfig } from "./config.ts";

/** What each enabled Telegram account needs: the bot token, and in webhook mode the webhook secret. */
export function telegramRequirements(telegram: TelegramChannelConfig): AccountRequirements[] {
  return enabledAccounts(telegram, (id) => telegramAccount(telegram, id)).map((account) => {
    const source = (field: keyof typeof TELEGRAM_ENV) =>
      credentialSource("telegram", telegram, account, field, [TELEGRAM_ENV[field]]);
    const needs = [need("bot token", "replies cannot be sent", source("botToken"))];
    if (account.mode === "webhook")
      needs.push(
        need("webhook secret", "every Telegram update is refused (401)", source("webhookSecret")),
      );
    return {
      accountId: account.accountId,
      key: accountKey("telegram", telegram, account.accountId),
      needs,
    };
  });
}

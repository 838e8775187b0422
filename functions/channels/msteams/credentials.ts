import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { MSTEAMS_ENV, msTeamsAccount, type MsTeamsChannelConfig } from "./config.ts";

/**
 * What each enabled Microsoft Teams account needs: the app id (the token audience), the client
 * secret (replies), and the tenant when the bot is SingleTenant by `appType`.
 */
export function msTeamsRequirements(teams: MsTeamsChannelConfig): AccountRequirements[] {
  return enabledAccounts(teams, (id) => msTeamsAccount(teams, id)).map((account) => {
    const source = (field: keyof typeof MSTEAMS_ENV) =>
      credentialSource("msteams", teams, account, field, [MSTEAMS_ENV[field]]);
    const needs = [
      need("app id", "every Teams request is refused (401)", source("appId")),
      need("app password", "replies cannot be sent", source("appPassword")),
    ];
    if (account.appType === "SingleTenant")
      needs.push(
        need(
          "tenant id",
          "a SingleTenant bot's tokens cannot be checked: every Teams request is refused (401)",
          source("tenantId"),
        ),
      );
    return {
      accountId: account.accountId,
      key: accountKey("msteams", teams, account.accountId),
      needs,
    };
  });
}

import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { MATTERMOST_ENV, mattermostAccounts, type MattermostChannelConfig } from "./config.ts";

/** What each enabled Mattermost account needs: the server URL and the bot token. */
export function mattermostRequirements(root: MattermostChannelConfig): AccountRequirements[] {
  return mattermostAccounts(root).map((account) => {
    const source = (field: keyof typeof MATTERMOST_ENV) =>
      credentialSource("mattermost", root, account, field, [MATTERMOST_ENV[field]]);
    return {
      accountId: account.accountId,
      key: accountKey("mattermost", root, account.accountId),
      needs: [
        need("server URL", "the companion cannot connect", source("baseUrl")),
        need(
          "bot token",
          "the companion cannot connect and replies cannot be sent",
          source("botToken"),
        ),
      ],
    };
  });
}

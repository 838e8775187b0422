import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { LINE_ENV, lineAccount, type LineChannelConfig } from "./config.ts";

/** What each enabled LINE account needs: the channel secret (verify) and access token (reply). */
export function lineRequirements(line: LineChannelConfig): AccountRequirements[] {
  return enabledAccounts(line, (id) => lineAccount(line, id)).map((account) => {
    const source = (field: keyof typeof LINE_ENV) =>
      credentialSource("line", line, account, field, [LINE_ENV[field]]);
    return {
      accountId: account.accountId,
      key: accountKey("line", line, account.accountId),
      needs: [
        need("channel secret", "every LINE webhook is refused (401)", source("channelSecret")),
        need("channel access token", "replies cannot be sent", source("channelAccessToken")),
      ],
    };
  });
}

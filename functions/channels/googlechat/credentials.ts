import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import {
  GOOGLE_CHAT_SERVICE_ACCOUNT_ENV,
  googleChatAccount,
  type GoogleChatChannelConfig,
} from "./config.ts";

/**
 * What each enabled Google Chat account needs: the token audience (audienceType and audience,
 * settings, not secrets: without them every request is refused) and the service account key
 * (replies).
 */
export function googleChatRequirements(chat: GoogleChatChannelConfig): AccountRequirements[] {
  return enabledAccounts(chat, (id) => googleChatAccount(chat, id)).map((account) => {
    const key = accountKey("googlechat", chat, account.accountId);
    return {
      accountId: account.accountId,
      key,
      needs: [
        need("token audience", "every Google Chat request is refused (401)", {
          key: `${key}.audienceType and ${key}.audience`,
          inConfig: account.audienceType !== undefined && account.audience !== undefined,
          env: [],
        }),
        need(
          "service account key",
          "replies cannot be sent",
          credentialSource("googlechat", chat, account, "serviceAccount", [
            GOOGLE_CHAT_SERVICE_ACCOUNT_ENV,
          ]),
        ),
      ],
    };
  });
}

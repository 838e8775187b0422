import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import {
  WHATSAPP_CLOUD_ENV,
  whatsappCloudAccount,
  type WhatsAppCloudChannelConfig,
} from "./config.ts";

/** What each enabled account needs: the app secret, verify token, access token and phone number ID. */
export function whatsappCloudRequirements(root: WhatsAppCloudChannelConfig): AccountRequirements[] {
  return enabledAccounts(root, (id) => whatsappCloudAccount(root, id)).map((account) => ({
    accountId: account.accountId,
    key: accountKey("whatsappcloud", root, account.accountId),
    needs: (
      [
        ["appSecret", "app secret", "every webhook is refused (401)"],
        ["verifyToken", "verify token", "Meta's webhook handshake is refused (403)"],
        ["accessToken", "access token", "replies cannot be sent"],
        ["phoneNumberId", "phone number ID", "no webhook is taken and no reply sent"],
      ] as const
    ).map(([field, what, without]) =>
      need(
        what,
        without,
        credentialSource("whatsappcloud", root, account, field, [WHATSAPP_CLOUD_ENV[field]]),
      ),
    ),
  }));
}

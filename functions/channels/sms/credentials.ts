import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { SMS_ENV, smsAccount, type SmsChannelConfig } from "./config.ts";

/**
 * What each enabled Twilio SMS account needs: the auth token (verify and send), the account SID
 * (send), and a sender — a phone number or a Messaging Service.
 */
export function smsRequirements(sms: SmsChannelConfig): AccountRequirements[] {
  return enabledAccounts(sms, (id) => smsAccount(sms, id)).map((account) => {
    const source = (field: keyof typeof SMS_ENV) =>
      credentialSource("sms", sms, account, field, SMS_ENV[field]);
    return {
      accountId: account.accountId,
      key: accountKey("sms", sms, account.accountId),
      needs: [
        need(
          "auth token",
          "every Twilio request is refused and replies cannot be sent",
          source("authToken"),
        ),
        need("account SID", "replies cannot be sent", source("accountSid")),
        need(
          "sender number or Messaging Service",
          "replies cannot be sent",
          source("fromNumber"),
          source("messagingServiceSid"),
        ),
      ],
    };
  });
}

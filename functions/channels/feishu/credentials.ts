import { enabledAccounts } from "../accounts.ts";
import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { FEISHU_ENV, feishuAccount, type FeishuChannelConfig } from "./config.ts";

/**
 * What each enabled Feishu / Lark account needs: the app id and secret (tokens for replies) and
 * an encrypt key or a verification token (verify). An account in "websocket" mode (OpenClaw's
 * default) is not served here at all: its events would get 404, so that is said too.
 */
export function feishuRequirements(feishu: FeishuChannelConfig): AccountRequirements[] {
  return enabledAccounts(feishu, (id) => feishuAccount(feishu, id)).map((account) => {
    const key = accountKey("feishu", feishu, account.accountId);
    const source = (field: keyof typeof FEISHU_ENV) =>
      credentialSource("feishu", feishu, account, field, [FEISHU_ENV[field]]);
    return {
      accountId: account.accountId,
      key,
      needs: [
        need("app id", "replies cannot be sent", source("appId")),
        need("app secret", "replies cannot be sent", source("appSecret")),
        need(
          "encrypt key or verification token",
          "every Feishu event is refused (401)",
          source("encryptKey"),
          source("verificationToken"),
        ),
      ],
      ...(account.connectionMode === "webhook"
        ? {}
        : {
            notServed: `connectionMode is "${account.connectionMode}" (OpenClaw's default), so this Worker serves no webhook for it and Feishu's events get 404; set ${key}.connectionMode: "webhook"`,
          }),
    };
  });
}

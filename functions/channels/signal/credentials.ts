import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { SIGNAL_ACCOUNT_ENV, signalAccounts, type SignalChannelConfig } from "./config.ts";

/**
 * What each enabled Signal account needs: the bot's number (`account`, or SIGNAL_ACCOUNT for the
 * default account: the signal-cli account the companion's daemon serves). No secret: signal-cli keeps the account's keys in its own data
 * directory beside the companion, and the transport's daemon URL has a default. A `container`
 * transport is not served (socket.ts).
 */
export function signalRequirements(root: SignalChannelConfig): AccountRequirements[] {
  return signalAccounts(root).map((account) => ({
    accountId: account.accountId,
    key: accountKey("signal", root, account.accountId),
    needs: [
      need(
        "bot phone number (account)",
        "the companion cannot receive and replies cannot be sent",
        credentialSource("signal", root, account, "account", [SIGNAL_ACCOUNT_ENV]),
      ),
    ],
    ...(account.transport.kind === "container"
      ? {
          notServed: `transport.kind "container" (bbernhard/signal-cli-rest-api) is not served: use "managed-native" or "external-native" (${accountKey("signal", root, account.accountId)}.transport)`,
        }
      : {}),
  }));
}

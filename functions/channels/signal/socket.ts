import type { SocketAccount, SocketPieces } from "../channel.ts";
import { parsePayload } from "../parse-json-body.ts";
import {
  daemonUrl,
  signalAccounts,
  signalMediaMaxBytes,
  signalNumber,
  type SignalAccount,
  type SignalChannelConfig,
} from "./config.ts";
import { parseSignalEnvelope } from "./parse.ts";
import { signalSocketPayloadSchema } from "./payloads.ts";

/**
 * Signal is served by the companion's connector (functions/channels/signal/companion/connector.ts),
 * which talks to a signal-cli JSON-RPC daemon: every enabled account with a number and a native
 * transport. The connector gets the number, the daemon's URL, whether to start the daemon itself
 * (managed-native: the CLI path, config dir, bind address and start-up wait) and what to read of
 * attachments; signal-cli holds the account's keys itself, so no secret travels. Envelopes come
 * back raw and are parsed here (parse.ts).
 */
export const signalSocket: SocketPieces<SignalAccount, SignalChannelConfig> = {
  repliesThroughCompanion: true,
  accounts(root, env) {
    const accounts = signalAccounts(root);
    return accounts.flatMap((account): SocketAccount<SignalAccount>[] => {
      const where = `channels.signal (account ${account.accountId})`;
      const { transport } = account;
      const number = signalNumber(account, env);
      if (!number) {
        console.error(
          `${where}: no account (the bot's E.164 number, or SIGNAL_ACCOUNT); not connected`,
        );
        return [];
      }
      if (transport.kind === "container") {
        console.error(
          `${where}: transport.kind "container" (bbernhard/signal-cli-rest-api) is not served; use "managed-native" or "external-native"; not connected`,
        );
        return [];
      }
      const url = daemonUrl(transport);
      if (!url) {
        console.error(
          `${where}: transport.kind "external-native" needs transport.url; not connected`,
        );
        return [];
      }
      if (transport.receiveMode === "on-start")
        console.error(
          `${where}: transport.receiveMode "on-start" is not used: the companion receives with --receive-mode manual (an awaited receive call per batch)`,
        );
      return [
        {
          accountId: account.accountId,
          label: accounts.length > 1 ? `Signal (account ${account.accountId})` : "Signal",
          account,
          connector: {
            settings: {
              number,
              ...(account.accountUuid ? { uuid: account.accountUuid } : {}),
              url,
              managed:
                transport.kind === "managed-native"
                  ? {
                      cliPath: transport.cliPath,
                      ...(transport.configPath ? { configPath: transport.configPath } : {}),
                      httpHost: transport.httpHost,
                      httpPort: transport.httpPort,
                      startupTimeoutMs: transport.startupTimeoutMs,
                      ignoreStories: transport.ignoreStories,
                    }
                  : null,
              ignoreAttachments: account.ignoreAttachments,
              mediaMaxBytes: signalMediaMaxBytes(account),
            },
            secretEnv: {},
          },
        },
      ];
    });
  },
  parse(event, socketAccount) {
    const payload = parsePayload(event.payload, signalSocketPayloadSchema, "a Signal envelope");
    if (!payload.ok) return { kind: "malformed", reason: payload.reason };
    return parseSignalEnvelope({
      ...payload.value,
      account: socketAccount.account,
      receivedAt: event.receivedAt,
    });
  },
};

import * as z from "zod";
import type { ParseResult, SocketAccount, SocketPieces } from "../channel.ts";
import { secretEnvName } from "../../config/secret-ref.ts";
import { accountLabel } from "../accounts.ts";
import {
  SLACK_ENV,
  slackSocketAccounts,
  type SlackAccount,
  type SlackChannelConfig,
} from "./config.ts";
import { parsedSlackRequest } from "./ingress.ts";
import {
  classifySlackEventsBody,
  classifySlackInteraction,
  classifySlackSlashCommand,
} from "./classify.ts";
import { parsePayload } from "../parse-json-body.ts";

/**
 * Slack Socket Mode, Worker side. The companion (functions/channels/slack/companion/connector.ts) holds the
 * WebSocket and forwards each Socket Mode envelope unchanged; its `payload` is exactly what the
 * Request URL would have received (an Events API body, an interactivity payload, the slash command's
 * fields as JSON), so it goes through the same classification and parsing as HTTP mode and yields
 * the same dedup keys: an event Slack delivers both ways is stored once.
 */

/** A Socket Mode envelope as Slack sends it over the socket (docs.slack.dev "Using Socket Mode"). */
const socketEnvelopeSchema = z
  .object({
    type: z.string(),
    envelope_id: z.string().optional(),
    payload: z.unknown().optional(),
  })
  .loose();

export const slackSocket: SocketPieces<SlackAccount, SlackChannelConfig> = {
  accounts(slack) {
    const socketAccounts = slackSocketAccounts(slack);
    return socketAccounts.map((account): SocketAccount<SlackAccount> => {
      // SLACK_APP_TOKEN is the default account's fallback only (channels/slack, "Token model").
      const appTokenEnv =
        secretEnvName(account.appToken) ??
        (account.appToken === undefined && account.isDefault ? SLACK_ENV.appToken : undefined);
      if (!appTokenEnv)
        console.error(
          `channels.slack (account ${account.accountId}): Socket Mode needs appToken as a SecretRef or "\${VAR}" (the companion reads it from its own environment)`,
        );
      return {
        accountId: account.accountId,
        label: accountLabel("Slack", account.accountId, socketAccounts.length),
        account,
        connector: {
          // apps.connections.open lives beside the other Web API methods.
          settings: { apiBaseUrl: account.apiBaseUrl },
          secretEnv: appTokenEnv ? { appToken: appTokenEnv } : {},
        },
      };
    });
  },
  parse(event, socketAccount): ParseResult {
    const envelope = parsePayload(event.payload, socketEnvelopeSchema, "a Socket Mode envelope");
    if (!envelope.ok) return { kind: "malformed", reason: envelope.reason };
    const { type, payload } = envelope.value;
    const account = socketAccount.account;
    switch (type) {
      case "events_api":
        return parsedSlackRequest(
          classifySlackEventsBody(payload),
          account,
          event.receivedAt,
          "socket",
        );
      case "interactive":
        return parsedSlackRequest(
          classifySlackInteraction(payload),
          account,
          event.receivedAt,
          "socket",
        );
      case "slash_commands":
        return parsedSlackRequest(
          classifySlackSlashCommand(payload),
          account,
          event.receivedAt,
          "socket",
        );
      default:
        // hello / disconnect are the connection's own business and never forwarded; anything newer is not ours yet.
        return {
          kind: "envelopes",
          envelopes: [],
          dropped: [`Socket Mode envelope type ${JSON.stringify(type).slice(0, 40)}`],
        };
    }
  },
};

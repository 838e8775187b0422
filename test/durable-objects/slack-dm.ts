import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { slackMessageKeys } from "../../functions/channels/slack/parse.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { TEAM, uniqueId } from "../channels/slack/helpers.ts";

/**
 * A Slack DM as the Slack parser builds it for the suite's "plain" account (DMs open, streaming
 * off), keyed by the message's own id, in the session `sessionKey`.
 */
export function plainSlackDm(
  sessionKey: string,
  channel: string,
  text: string,
  senderId: string,
): RoutedEvent {
  const ts = `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  const envelope = inboundEnvelopeSchema.parse({
    ...slackMessageKeys(TEAM, channel, ts, uniqueId("Ev")),
    channel: "slack",
    accountId: "plain",
    chatType: "direct",
    peerId: senderId,
    teamId: TEAM,
    senderId,
    messageId: ts,
    text,
    receivedAt: Date.now(),
    route: {
      channel: "slack",
      accountId: "plain",
      to: channel,
      replyToMessageId: ts,
      extra: { teamId: TEAM, senderId, chatType: "direct", mentioned: "0" },
    },
  });
  return { envelope, agentId: "main", sessionKey };
}

import { signSlackRequest } from "../../../../functions/channels/slack/verify.ts";
import {
  messageEvent,
  OPS_SIGNING_SECRET,
  SIGNING_SECRET,
  slackMessages,
  uniqueId,
} from "../../slack/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

/** Slack Events API: v0 HMAC over `v0:<timestamp>:<body>`, five-minute window. */

export async function signed(
  body: string,
  options: { path?: string; secret?: string; timestamp?: number } = {},
): Promise<WireRequest> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    path: options.path ?? "/slack/events",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": await signSlackRequest(
        options.secret ?? SIGNING_SECRET,
        timestamp,
        body,
      ),
    },
    body,
  };
}

function dmBody(text: string, channel: string, user: string): string {
  return messageEvent({
    eventId: uniqueId("Ev"),
    channel,
    channelType: "im",
    user,
    text,
    ts: `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`,
  });
}

export const slackKit: ChannelKit = {
  channel: "slack",
  async dm(who, text) {
    const channel = uniqueId("D");
    const user = uniqueId("U");
    // The default account has open DMs; "ops" pairs unknown senders.
    const request =
      who === "allowed"
        ? await signed(dmBody(text, channel, user))
        : await signed(dmBody(text, channel, user), {
            path: "/slack/ops/events",
            secret: OPS_SIGNING_SECRET,
          });
    return {
      request,
      conversation: channel,
      senderId: user,
      accountId: who === "allowed" ? "default" : "ops",
    };
  },
  async forged(text) {
    const body = dmBody(text, uniqueId("D"), uniqueId("U"));
    return { request: await signed(body, { secret: "not-the-secret" }), twin: await signed(body) };
  },
  async stale(text) {
    const body = dmBody(text, uniqueId("D"), uniqueId("U"));
    return {
      request: await signed(body, { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 }),
      twin: await signed(body),
    };
  },
  async oversized(text, bytes) {
    const body = dmBody(text, uniqueId("D"), uniqueId("U"));
    return { request: await signed(body + " ".repeat(bytes)), twin: await signed(body) };
  },
  malformed: () => signed("{not json"),
  async replies(conversation) {
    return (await slackMessages(conversation)).filter((m) => !m.deleted).map((m) => m.text);
  },
};

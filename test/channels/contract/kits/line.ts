import { signLineBody } from "../../../../functions/channels/line/verify.ts";
import {
  issueReplyToken,
  lineEvent,
  lineId,
  lineMessages,
  TEST_LINE,
  textMessage,
  uniqueToken,
  webhookBody,
} from "../../line/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

/** LINE Messaging API webhooks: X-Line-Signature, HMAC-SHA256 of the body with the channel secret. */

// "biz" has open DMs; the default account pairs unknown senders (test/setup/test-config.ts).
const ACCOUNTS = {
  allowed: { path: "/line/biz", secret: TEST_LINE.bizChannelSecret, accountId: "biz" },
  stranger: { path: "/line/webhook", secret: TEST_LINE.channelSecret, accountId: "default" },
} as const;

async function signed(path: string, secret: string, body: string): Promise<WireRequest> {
  return {
    path,
    headers: {
      "content-type": "application/json",
      "x-line-signature": await signLineBody(secret, body),
    },
    body,
  };
}

async function dmEvent(
  user: string,
  text: string,
  extra: { timestamp?: number; webhookEventId?: string } = {},
) {
  const replyToken = uniqueToken();
  await issueReplyToken(replyToken, user);
  return lineEvent({
    source: { type: "user", userId: user },
    replyToken,
    message: textMessage(text),
    ...extra,
  });
}

export const lineKit: ChannelKit = {
  channel: "line",
  async dm(who, text) {
    const user = lineId("U");
    const account = ACCOUNTS[who];
    const body = webhookBody([await dmEvent(user, text)]);
    return {
      request: await signed(account.path, account.secret, body),
      conversation: user,
      senderId: user,
      accountId: account.accountId,
    };
  },
  async forged(text) {
    const { path, secret } = ACCOUNTS.allowed;
    const body = webhookBody([await dmEvent(lineId("U"), text)]);
    return {
      request: await signed(path, "not-the-secret", body),
      twin: await signed(path, secret, body),
    };
  },
  exceptions: {
    stale: {
      reason:
        "LINE's signature has no time; an event whose own signed timestamp is older than channels.line.eventMaxAgeSeconds is dropped with 200 (a non-2xx makes LINE redeliver it), nothing stored",
      insteadStatus: 200,
    },
  },
  async oversized(text, bytes) {
    const { path, secret } = ACCOUNTS.allowed;
    const body = webhookBody([await dmEvent(lineId("U"), text)]);
    return {
      request: await signed(path, secret, body + " ".repeat(bytes)),
      twin: await signed(path, secret, body),
    };
  },
  async stale(text) {
    const { path, secret } = ACCOUNTS.allowed;
    const user = lineId("U");
    const fresh = await dmEvent(user, text);
    const old = { ...fresh, timestamp: Date.now() - 2 * 24 * 3600_000 };
    return {
      request: await signed(path, secret, webhookBody([old])),
      twin: await signed(path, secret, webhookBody([fresh])),
    };
  },
  malformed: () => signed(ACCOUNTS.allowed.path, ACCOUNTS.allowed.secret, "not json"),
  async replies(conversation) {
    return (await lineMessages(conversation)).map((m) => m.text);
  },
};

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
import type { Conversation, Delivery, SenderlessEvent, SystemEventKit } from "../system-kit.ts";

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

// ---- System events (system-events.test.ts) ----

type LineAccountUrl = { path: string; secret: string };
const BIZ: LineAccountUrl = ACCOUNTS.allowed;
const DEFAULT: LineAccountUrl = ACCOUNTS.stranger;

async function lineDelivery(
  url: LineAccountUrl,
  event: Record<string, unknown>,
): Promise<Delivery> {
  return {
    via: "webhook",
    request: await signed(url.path, url.secret, webhookBody([event])),
  };
}

type Source =
  | { type: "user"; userId: string }
  | { type: "group"; groupId: string; userId?: string };

/** Events a user causes: the user in `source` (or, for membership changes, in `joined`/`left`). */
function lineUserEvents(url: LineAccountUrl, source: (sender: string) => Source, inGroup: boolean) {
  const at = (sender: string, type: string, extra: Record<string, unknown> = {}) =>
    lineDelivery(
      url,
      lineEvent({ type, source: source(sender), replyToken: uniqueToken(), extra }),
    );
  const common = {
    unsend: (sender: string) => at(sender, "unsend", { unsend: { messageId: uniqueToken("m") } }),
    postback: (sender: string) =>
      at(sender, "postback", { postback: { data: `action=${uniqueToken("pb")}` } }),
  };
  if (!inGroup)
    return {
      ...common,
      follow: (sender: string) => at(sender, "follow", { follow: { isUnblocked: false } }),
      unfollow: (sender: string) => at(sender, "unfollow"),
    };
  // LINE names who joined or left in `joined` / `left`; the source is the group alone.
  const group = (sender: string) => {
    const { userId: _who, ...where } = source(sender) as Source & { userId?: string };
    return where as Source;
  };
  const members = (sender: string, type: "memberJoined" | "memberLeft") =>
    lineDelivery(
      url,
      lineEvent({
        type,
        source: group(sender),
        extra: {
          [type === "memberJoined" ? "joined" : "left"]: {
            members: [{ type: "user", userId: sender }],
          },
        },
      }),
    );
  return {
    ...common,
    memberJoined: (sender: string) => members(sender, "memberJoined"),
    memberLeft: (sender: string) => members(sender, "memberLeft"),
  };
}

/** The bot joining or leaving a group: LINE names no user, the envelope's sender is "line". */
function botMembership(url: LineAccountUrl, groupId: string) {
  const of = (type: "join" | "leave"): SenderlessEvent => ({
    sender: "line",
    build: () =>
      lineDelivery(
        url,
        lineEvent({
          type,
          source: { type: "group", groupId },
          ...(type === "join" ? { replyToken: uniqueToken() } : {}),
        }),
      ),
  });
  return { join: of("join"), leave: of("leave") };
}

function lineConversation(
  name: string,
  url: LineAccountUrl,
  source: (sender: string) => Source,
  senders: { allowed?: string; refused?: string },
  groupId?: string,
): Conversation {
  return {
    name,
    ...senders,
    message: (sender) =>
      lineDelivery(
        url,
        lineEvent({ source: source(sender), message: textMessage("an ordinary message") }),
      ),
    events: {
      ...lineUserEvents(url, source, groupId !== undefined),
      ...(groupId ? botMembership(url, groupId) : {}),
    },
  };
}

const inGroup = (groupId: string) => (sender: string) =>
  ({ type: "group", groupId, userId: sender }) as Source;

const UNLISTED_GROUP = lineId("C");

export const lineSystemKit: SystemEventKit = {
  channel: "line",
  kinds: [
    "follow",
    "unfollow",
    "join",
    "leave",
    "memberJoined",
    "memberLeft",
    "unsend",
    "postback",
  ],
  conversations: [
    lineConversation(
      "a 1:1 chat (biz: dmPolicy open)",
      BIZ,
      (sender) => ({ type: "user", userId: sender }),
      {
        allowed: lineId("U"),
      },
    ),
    lineConversation(
      "a 1:1 chat (default: dmPolicy pairing)",
      DEFAULT,
      (sender) => ({ type: "user", userId: sender }),
      { refused: lineId("U") },
    ),
    lineConversation(
      "a group that admits only MEMBER (biz)",
      BIZ,
      inGroup(TEST_LINE.groupMembers),
      { allowed: TEST_LINE.member, refused: lineId("U") },
      TEST_LINE.groupMembers,
    ),
    lineConversation(
      "a listed open group (biz)",
      BIZ,
      inGroup(TEST_LINE.groupOpen),
      { allowed: lineId("U") },
      TEST_LINE.groupOpen,
    ),
    lineConversation(
      "an unlisted group (default)",
      DEFAULT,
      inGroup(UNLISTED_GROUP),
      { refused: lineId("U") },
      UNLISTED_GROUP,
    ),
  ],
};

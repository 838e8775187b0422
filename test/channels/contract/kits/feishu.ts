import {
  control,
  eventBody,
  feishuId,
  feishuMessages,
  feishuRequest,
  holdMessage,
  messageEvent,
  plainMessage,
  TEST_FEISHU,
} from "../../feishu/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * Feishu / Lark event subscriptions. The default account encrypts and signs (X-Lark-Signature over
 * timestamp + nonce + Encrypt Key + body, within signatureMaxAgeSeconds); "plain" is token-only
 * with open DMs; "strangers" is a token-only app of its own for pairing (test/setup/test-config.ts).
 */

const STRANGERS = { appId: TEST_FEISHU.strangersAppId, token: "test-feishu-strangers-token" };

async function wire(
  path: string,
  body: Record<string, unknown>,
  options: Parameters<typeof feishuRequest>[1] = { encryptKey: null },
): Promise<WireRequest> {
  const { raw, headers } = await feishuRequest(body, options);
  return { path, headers, body: raw };
}

/** A p2p message the fake holds, so the bot's reply to it lands in `chat`. */
async function heldDm(sender: string, text: string, app?: { appId: string; token: string }) {
  const chat = feishuId("oc");
  const messageId = feishuId("om");
  await holdMessage(messageId, chat);
  const fields = { sender, chatId: chat, messageId, content: { text } };
  const body = app ? messageEvent({ ...fields, ...app }) : plainMessage(fields);
  return { chat, body };
}

export const feishuKit: ChannelKit = {
  channel: "feishu",
  async dm(who, text) {
    const sender = feishuId("ou");
    if (who === "allowed") {
      const { chat, body } = await heldDm(sender, text);
      return {
        request: await wire("/feishu/plain", body),
        conversation: chat,
        senderId: sender,
        accountId: "plain",
      };
    }
    // The fake issues tenant tokens only to apps it knows.
    await control("app", { app_id: STRANGERS.appId, app_secret: "test-feishu-strangers-secret" });
    const { chat, body } = await heldDm(sender, text, STRANGERS);
    return {
      request: await wire("/feishu/strangers", body),
      conversation: chat,
      senderId: sender,
      accountId: "strangers",
    };
  },
  // Token-only app: the Verification Token inside the body is what authenticates it.
  async forged(text) {
    const { body } = await heldDm(feishuId("ou"), text);
    const header = { ...(body.header as Record<string, unknown>), token: "not-the-token" };
    return {
      request: await wire("/feishu/plain", { ...body, header }),
      twin: await wire("/feishu/plain", body),
    };
  },
  // The signing (default) account: a signature made ten minutes ago.
  async stale(text) {
    const body = messageEvent({ sender: feishuId("ou"), content: { text } });
    const old = String(Math.floor(Date.now() / 1000) - 10 * 60);
    return {
      request: await wire("/feishu/events", body, { timestamp: old }),
      twin: await wire("/feishu/events", body, {}),
    };
  },
  async oversized(text, bytes) {
    const { body } = await heldDm(feishuId("ou"), text);
    const plain = await wire("/feishu/plain", body);
    return { request: { ...plain, body: plain.body + " ".repeat(bytes) }, twin: plain };
  },
  malformed: () =>
    wire("/feishu/plain", {
      schema: "2.0",
      header: {
        event_type: "im.message.receive_v1",
        token: TEST_FEISHU.plainVerificationToken,
        app_id: TEST_FEISHU.plainAppId,
      },
      event: {},
    }),
  async replies(conversation) {
    return (await feishuMessages(conversation)).map((m) => m.text);
  },
};

// ---- System events (system-events.test.ts) ----

/** An app's webhook as the suite's config serves it: "plain" (token only) or the default (encrypted, signed). */
const FEISHU_APPS = {
  plain: {
    path: "/feishu/plain",
    ids: { appId: TEST_FEISHU.plainAppId, token: TEST_FEISHU.plainVerificationToken },
    options: { encryptKey: null } as Parameters<typeof feishuRequest>[1],
  },
  default: {
    path: "/feishu/events",
    ids: { appId: TEST_FEISHU.appId, token: TEST_FEISHU.verificationToken },
    options: {} as Parameters<typeof feishuRequest>[1],
  },
} as const;
type FeishuApp = (typeof FEISHU_APPS)[keyof typeof FEISHU_APPS];

async function feishuDelivery(app: FeishuApp, body: Record<string, unknown>): Promise<Delivery> {
  return { via: "webhook", request: await wire(app.path, body, app.options) };
}

/** A group chat of `app`: a plain message there, and the bot added to or removed from it by `sender`. */
function feishuGroup(
  name: string,
  app: FeishuApp,
  chatId: string,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const membership = (type: string) => (sender: string) =>
    feishuDelivery(
      app,
      eventBody(
        type,
        {
          chat_id: chatId,
          operator_id: { open_id: sender, union_id: "on_x", user_id: null },
          external: false,
          operator_tenant_key: "tk",
          name: "Test group",
        },
        app.ids,
      ),
    );
  return {
    name,
    ...senders,
    message: (sender) =>
      feishuDelivery(
        app,
        messageEvent({
          sender,
          chatId,
          chatType: "group",
          content: { text: "an ordinary message" },
          ...app.ids,
        }),
      ),
    events: {
      "im.chat.member.bot.added_v1": membership("im.chat.member.bot.added_v1"),
      "im.chat.member.bot.deleted_v1": membership("im.chat.member.bot.deleted_v1"),
    },
  };
}

export const feishuSystemKit: SystemEventKit = {
  channel: "feishu",
  kinds: ["im.chat.member.bot.added_v1", "im.chat.member.bot.deleted_v1"],
  conversations: [
    feishuGroup(
      "a group that admits only MEMBER (plain)",
      FEISHU_APPS.plain,
      TEST_FEISHU.groupMembers,
      {
        allowed: TEST_FEISHU.member,
        refused: feishuId("ou"),
      },
    ),
    feishuGroup("a listed open group (plain)", FEISHU_APPS.plain, TEST_FEISHU.groupOpen, {
      allowed: feishuId("ou"),
    }),
    feishuGroup(
      "an unlisted group (default: groupPolicy allowlist, none listed)",
      FEISHU_APPS.default,
      feishuId("oc"),
      {
        refused: feishuId("ou"),
      },
    ),
  ],
};

import {
  control,
  feishuId,
  feishuMessages,
  feishuRequest,
  holdMessage,
  messageEvent,
  plainMessage,
  TEST_FEISHU,
} from "../../feishu/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

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

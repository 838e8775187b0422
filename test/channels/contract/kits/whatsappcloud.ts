import {
  BIZ_NUMBER,
  DEFAULT_NUMBER,
  TEST_WHATSAPP_CLOUD,
  graphMessages,
  signedRequest,
  textMessage,
  waId,
  waMessage,
  wamid,
  webhookBody,
  type Business,
} from "../../whatsappcloud/helpers.ts";
import type { ChannelKit } from "../kit.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/** WhatsApp Cloud API webhooks: X-Hub-Signature-256, hex HMAC-SHA256 of the body with the app secret. */

// "biz" has open DMs; the default account pairs unknown senders (functions/channels/whatsappcloud/test-kit.ts).
const NUMBERS = { allowed: BIZ_NUMBER, stranger: DEFAULT_NUMBER } as const;

const signed = (business: Business, body: string) => signedRequest(body, business);

export const whatsappCloudKit: ChannelKit = {
  channel: "whatsappcloud",
  async dm(who, text) {
    const user = waId();
    const business = NUMBERS[who];
    return {
      request: await signed(
        business,
        webhookBody(business, { messages: [textMessage(user, text)] }),
      ),
      conversation: user,
      senderId: `+${user}`,
      accountId: business.accountId,
    };
  },
  async forged(text) {
    const body = webhookBody(BIZ_NUMBER, { messages: [textMessage(waId(), text)] });
    return {
      request: await signedRequest(body, { ...BIZ_NUMBER, secret: "not-the-app-secret" }),
      twin: await signed(BIZ_NUMBER, body),
    };
  },
  exceptions: {
    stale: {
      reason:
        "Meta's X-Hub-Signature-256 covers no time; a message whose own timestamp is older than a day is dropped with 200 (a non-2xx makes Meta redeliver it for days), nothing stored",
      insteadStatus: 200,
    },
  },
  async stale(text) {
    const user = waId();
    const fresh = textMessage(user, text);
    const old = { ...fresh, timestamp: String(Math.floor(Date.now() / 1000) - 2 * 24 * 3600) };
    return {
      request: await signed(BIZ_NUMBER, webhookBody(BIZ_NUMBER, { messages: [old] })),
      twin: await signed(BIZ_NUMBER, webhookBody(BIZ_NUMBER, { messages: [fresh] })),
    };
  },
  async oversized(text, bytes) {
    const body = webhookBody(BIZ_NUMBER, { messages: [textMessage(waId(), text)] });
    return {
      request: await signed(BIZ_NUMBER, body + " ".repeat(bytes)),
      twin: await signed(BIZ_NUMBER, body),
    };
  },
  // Signed by the app, but not a WhatsApp Business Account notification.
  malformed: () => signed(BIZ_NUMBER, JSON.stringify({ object: "page", entry: "nope" })),
  async replies(conversation) {
    return (await graphMessages(conversation)).map((m) => m.text);
  },
};

// ---- System events (system-events.test.ts) ----

async function delivery(business: Business, message: Record<string, unknown>): Promise<Delivery> {
  return {
    via: "webhook",
    request: await signed(business, webhookBody(business, { messages: [message] })),
  };
}

function waConversation(
  name: string,
  business: Business,
  groupId: string | undefined,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const where = groupId ? { group_id: groupId } : {};
  const digits = (sender: string) => sender.replace(/^\+/, "");
  return {
    name,
    ...senders,
    message: (sender) =>
      delivery(business, textMessage(digits(sender), "an ordinary message", where)),
    events: {
      reaction: (sender) =>
        delivery(
          business,
          waMessage(
            digits(sender),
            "reaction",
            {
              reaction: { message_id: wamid(), emoji: "👍" },
            },
            where,
          ),
        ),
      system: (sender) =>
        delivery(
          business,
          waMessage(
            digits(sender),
            "system",
            {
              system: {
                body: `User ${digits(sender)} changed from ${digits(sender)} to 15559990000`,
                wa_id: "15559990000",
                type: "user_changed_number",
              },
            },
            where,
          ),
        ),
    },
  };
}

const UNLISTED_GROUP = "120363999999999999";

export const whatsappCloudSystemKit: SystemEventKit = {
  channel: "whatsappcloud",
  kinds: ["reaction", "system"],
  conversations: [
    waConversation("a DM (biz: dmPolicy open)", BIZ_NUMBER, undefined, {
      allowed: `+${waId()}`,
    }),
    waConversation("a DM (default: dmPolicy pairing)", DEFAULT_NUMBER, undefined, {
      refused: `+${waId()}`,
    }),
    waConversation(
      "a group that admits only MEMBER (biz)",
      BIZ_NUMBER,
      TEST_WHATSAPP_CLOUD.groupMembers,
      { allowed: `+${TEST_WHATSAPP_CLOUD.member}`, refused: `+${waId()}` },
    ),
    waConversation("a listed open group (biz)", BIZ_NUMBER, TEST_WHATSAPP_CLOUD.groupOpen, {
      allowed: `+${waId()}`,
    }),
    waConversation("an unlisted group (default)", DEFAULT_NUMBER, UNLISTED_GROUP, {
      refused: `+${waId()}`,
    }),
  ],
};

import { describe, expect, it } from "vitest";
import {
  whatsappCloudAccount,
  whatsappCloudChannelSchema,
} from "../../../functions/channels/whatsappcloud/config.ts";
import {
  envelopesFromChange,
  parseWhatsAppBody,
} from "../../../functions/channels/whatsappcloud/parse.ts";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import { BIZ_NUMBER, textMessage, waMessage, webhookBody } from "./helpers.ts";

/** Every message type the Cloud API posts, as the channel's parser turns it into envelopes. */

const account = whatsappCloudAccount(
  whatsappCloudChannelSchema.parse({ graphApiBaseUrl: "http://graph.test/" }),
  "default",
);
const USER = "15551112222";

function parse(messages: unknown[], statuses?: unknown[]) {
  const body = parseWhatsAppBody(
    new TextEncoder().encode(webhookBody(BIZ_NUMBER, { messages, statuses })),
  );
  if ("reason" in body) throw new Error(body.reason);
  const [change] = body.changes;
  if (!change || typeof change === "string") throw new Error(String(change));
  return envelopesFromChange(change, account, Date.now());
}

function one(message: Record<string, unknown>): InboundEnvelope {
  const [result] = parse([message]);
  if (!result || !("envelope" in result)) throw new Error(JSON.stringify(result));
  return result.envelope;
}

describe("WhatsApp Cloud API parse", () => {
  it("a text DM: sender and peer in E.164, dedup by wamid, reply route to the wa_id", () => {
    const message = textMessage(USER, "hello");
    const envelope = one(message);
    expect(envelope).toMatchObject({
      kind: "message",
      channel: "whatsappcloud",
      chatType: "direct",
      peerId: `+${USER}`,
      senderId: `+${USER}`,
      senderName: "Test User",
      text: "hello",
      dedupKey: `whatsappcloud:${BIZ_NUMBER.phoneNumberId}:${message.id}`,
      route: {
        to: USER,
        replyToMessageId: message.id,
        extra: {
          chatType: "direct",
          phoneNumberId: BIZ_NUMBER.phoneNumberId,
          messageId: message.id,
        },
      },
    });
  });

  it("media: the placeholder after the caption, and the Graph media node as the attachment", () => {
    const image = one(
      waMessage(USER, "image", { image: { id: "7001", mime_type: "image/jpeg", caption: "look" } }),
    );
    expect(image.text).toBe("look\n<media:image>");
    expect(image.attachments).toEqual([
      { name: "image 7001", mimeType: "image/jpeg", url: "http://graph.test/v24.0/7001" },
    ]);
    const voice = one(
      waMessage(USER, "audio", { audio: { id: "7002", mime_type: "audio/ogg", voice: true } }),
    );
    expect(voice.text).toBe("<media:audio>");
    const sticker = one(
      waMessage(USER, "sticker", { sticker: { id: "7003", mime_type: "image/webp" } }),
    );
    expect(sticker.text).toBe("<media:sticker>");
    const doc = one(
      waMessage(USER, "document", {
        document: { id: "7004", filename: "a.pdf", mime_type: "application/pdf" },
      }),
    );
    expect(doc.attachments?.[0]?.name).toBe("a.pdf");
  });

  it("location, contacts, reply buttons, list rows and template buttons become text", () => {
    expect(
      one(
        waMessage(USER, "location", {
          location: { latitude: 1.5, longitude: 2, name: "Cafe", address: "Main St" },
        }),
      ).text,
    ).toBe("[location: Cafe, Main St (1.5, 2)]");
    expect(
      one(
        waMessage(USER, "contacts", {
          contacts: [{ name: { formatted_name: "Ann" }, phones: [{ phone: "+1 555 0100" }] }],
        }),
      ).text,
    ).toBe("[contact: Ann, +1 555 0100]");
    expect(
      one(
        waMessage(USER, "interactive", {
          interactive: { type: "button_reply", button_reply: { id: "yes-1", title: "Yes" } },
        }),
      ).text,
    ).toBe("Yes [button_reply: yes-1]");
    expect(
      one(
        waMessage(USER, "interactive", {
          interactive: { type: "list_reply", list_reply: { id: "row-2", title: "Tuesday" } },
        }),
      ).text,
    ).toBe("Tuesday [list_reply: row-2]");
    expect(one(waMessage(USER, "button", { button: { payload: "STOP", text: "Stop" } })).text).toBe(
      "Stop [button: STOP]",
    );
  });

  it("reactions and system notices are system events; unsupported types and statuses are dropped", () => {
    const reaction = one(
      waMessage(USER, "reaction", { reaction: { message_id: "wamid.X", emoji: "👍" } }),
    );
    expect(reaction).toMatchObject({ kind: "system", senderId: `+${USER}` });
    expect(reaction.text).toContain("👍");
    const notice = one(
      waMessage(USER, "system", {
        system: { body: "User A changed from 1 to 2", type: "user_changed_number" },
      }),
    );
    expect(notice).toMatchObject({ kind: "system", text: "WhatsApp: User A changed from 1 to 2" });
    const results = parse(
      [waMessage(USER, "unsupported", { errors: [{ code: 131051 }] }), { from: "x", id: "y" }],
      [{ id: "wamid.S", status: "delivered", recipient_id: USER, timestamp: "1" }],
    );
    expect(results.every((r) => "dropped" in r)).toBe(true);
    expect(results).toHaveLength(3);
  });

  it("in a group: peer = the group; a reply to the business's own message counts as a mention", () => {
    const group = "120363000000000777";
    const plain = one(textMessage(USER, "hi all", { group_id: group }));
    expect(plain).toMatchObject({
      chatType: "group",
      peerId: group,
      senderId: `+${USER}`,
      wasMentioned: false,
    });
    expect(plain.route.to).toBe(group);
    expect(plain.route.extra?.chatType).toBe("group");
    const reply = one(
      textMessage(USER, "thanks", {
        group_id: group,
        context: { from: BIZ_NUMBER.display, id: "wamid.B" },
      }),
    );
    expect(reply.wasMentioned).toBe(true);
  });

  it("a message older than a day is dropped", () => {
    const old = {
      ...textMessage(USER, "late"),
      timestamp: String(Math.floor(Date.now() / 1000) - 25 * 3600),
    };
    expect(parse([old])[0]).toMatchObject({ dropped: expect.stringContaining("older") });
  });
});

describe("channels.whatsappcloud config", () => {
  it("takes allowFrom numbers in any common form as E.164, as OpenClaw does", () => {
    const root = whatsappCloudChannelSchema.parse({
      allowFrom: ["1 (555) 123-4567", "*", "+15550001111", 15550002222],
      accounts: { sales: { phoneNumberId: "42", groupAllowFrom: ["1555-000-3333"] } },
    });
    expect(root.allowFrom).toEqual(["+15551234567", "*", "+15550001111", "+15550002222"]);
    expect(whatsappCloudAccount(root, "sales").groupAllowFrom).toEqual(["+15550003333"]);
    expect(root).toMatchObject({
      dmPolicy: "pairing",
      textChunkLimit: 4000,
      mediaMaxMb: 50,
      sendReadReceipts: true,
      replyToMode: "off",
      webhookPath: "/whatsappcloud/webhook",
    });
    expect(whatsappCloudChannelSchema.safeParse({ dmPolicy: "open" }).success).toBe(false);
    expect(whatsappCloudChannelSchema.safeParse({ phoneNumberId: "+1555" }).success).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { lineAccount, lineChannelSchema } from "../../../functions/channels/line/config.ts";
import { envelopeFromLineEvent, parseLineBody } from "../../../functions/channels/line/parse.ts";
import { lineEvent, textMessage } from "./helpers.ts";

const account = lineAccount(
  lineChannelSchema.parse({ dataApiBaseUrl: "https://data.line.test/", mediaMaxMb: 1 }),
  "default",
);
const BOT = `U${"b0".repeat(16)}`;
const USER = `U${"11".repeat(16)}`;
const GROUP = `C${"22".repeat(16)}`;
const ROOM = `R${"33".repeat(16)}`;
const ctx = { account, destination: BOT, receivedAt: 1_700_000_000_000 };

function parse(event: Record<string, unknown>) {
  return envelopeFromLineEvent(event, ctx);
}
function envelopeOf(event: Record<string, unknown>) {
  const result = parse(event);
  if (!("envelope" in result)) throw new Error(`dropped: ${result.dropped}`);
  return result.envelope;
}

describe("LINE webhook parsing", () => {
  it("reads the body and refuses what is not a LINE webhook", () => {
    expect(
      parseLineBody(new TextEncoder().encode(JSON.stringify({ destination: BOT, events: [] }))),
    ).toEqual({ kind: "events", destination: BOT, events: [] });
    expect(parseLineBody(new TextEncoder().encode("not json")).kind).toBe("malformed");
    expect(parseLineBody(new TextEncoder().encode(JSON.stringify({ events: [] }))).kind).toBe(
      "malformed",
    );
    expect(
      parseLineBody(new TextEncoder().encode(JSON.stringify({ destination: BOT, events: {} })))
        .kind,
    ).toBe("malformed");
    expect(parseLineBody(new Uint8Array([0xff, 0xfe, 0x7b])).kind).toBe("malformed");
  });

  it("turns a 1:1 text message into a direct envelope keyed by its message id, with the reply token and its time", () => {
    const message = textMessage("hello", { id: "468789577898262530" });
    const envelope = envelopeOf(
      lineEvent({
        source: { type: "user", userId: USER },
        webhookEventId: "01HEVENT",
        replyToken: "tok1",
        timestamp: ctx.receivedAt - 2000,
        message,
      }),
    );
    expect(envelope).toMatchObject({
      dedupKey: `line:${BOT}:message:468789577898262530`,
      kind: "message",
      channel: "line",
      chatType: "direct",
      peerId: USER,
      senderId: USER,
      text: "hello",
      wasMentioned: false,
      route: {
        to: USER,
        replyToMessageId: "468789577898262530",
        extra: {
          replyToken: "tok1",
          replyTokenAt: String(ctx.receivedAt - 2000),
          chatType: "direct",
        },
      },
    });
  });

  it("drops the reply token of a redelivered event, keeps its dedup key", () => {
    const message = textMessage("hi");
    const envelope = envelopeOf(
      lineEvent({
        source: { type: "user", userId: USER },
        webhookEventId: "01HSAME",
        replyToken: "tok2",
        isRedelivery: true,
        message,
      }),
    );
    // The same message under another event id is still the same message: one key row, its id.
    expect(envelope.dedupKey).toBe(`line:${BOT}:message:${String(message.id)}`);
    expect(envelope.aliasKeys).toBeUndefined();
    expect(envelope.route.extra?.replyToken).toBeUndefined();
  });

  it("maps groups and rooms to group chats, detects the bot's mention by isSelf and cuts it out", () => {
    const text = "@Bot what time is it @Alice";
    const mention = {
      mentionees: [
        { index: 0, length: 4, type: "user", userId: BOT, isSelf: true },
        { index: 21, length: 6, type: "user", userId: USER, isSelf: false },
      ],
    };
    const inGroup = envelopeOf(
      lineEvent({
        source: { type: "group", groupId: GROUP, userId: USER },
        message: textMessage(text, { mention }),
      }),
    );
    expect(inGroup).toMatchObject({
      chatType: "group",
      peerId: GROUP,
      senderId: USER,
      wasMentioned: true,
      text: "what time is it @Alice",
      route: { to: GROUP },
    });
    const inRoom = envelopeOf(
      lineEvent({
        source: { type: "room", roomId: ROOM, userId: USER },
        message: textMessage("plain"),
      }),
    );
    expect(inRoom).toMatchObject({
      chatType: "group",
      peerId: ROOM,
      wasMentioned: false,
      route: { to: ROOM, extra: { sourceType: "room" } },
    });
    // @All and mentions of other people are not mentions of the bot.
    const all = envelopeOf(
      lineEvent({
        source: { type: "group", groupId: GROUP, userId: USER },
        message: textMessage("@All hi", {
          mention: { mentionees: [{ index: 0, length: 4, type: "all" }] },
        }),
      }),
    );
    expect(all.wasMentioned).toBe(false);
  });

  it("describes image, file, location and sticker messages; links media to the content API within mediaMaxMb", () => {
    const source = { type: "user" as const, userId: USER };
    const image = envelopeOf(
      lineEvent({
        source,
        message: { type: "image", id: "9001", contentProvider: { type: "line" }, quoteToken: "q" },
      }),
    );
    expect(image.text).toBe("[image]");
    expect(image.attachments?.[0]?.url).toBe("https://data.line.test/v2/bot/message/9001/content");
    const external = envelopeOf(
      lineEvent({
        source,
        message: {
          type: "image",
          id: "9002",
          contentProvider: { type: "external", originalContentUrl: "https://evil.test/x" },
          quoteToken: "q",
        },
      }),
    );
    expect(external.attachments?.[0]?.url).toBeUndefined();
    const file = envelopeOf(
      lineEvent({
        source,
        message: { type: "file", id: "9003", fileName: "notes.txt", fileSize: 120 },
      }),
    );
    expect(file).toMatchObject({
      text: "[file: notes.txt]",
      attachments: [
        {
          name: "notes.txt",
          sizeBytes: 120,
          url: "https://data.line.test/v2/bot/message/9003/content",
        },
      ],
    });
    const big = envelopeOf(
      lineEvent({
        source,
        message: { type: "file", id: "9004", fileName: "big.txt", fileSize: 2 * 1024 * 1024 },
      }),
    );
    expect(big.attachments?.[0]?.url).toBeUndefined();
    const place = envelopeOf(
      lineEvent({
        source,
        message: {
          type: "location",
          id: "9005",
          title: "Office",
          address: "1 Main St",
          latitude: 35.68,
          longitude: 139.76,
        },
      }),
    );
    expect(place.text).toBe("[location: Office, 1 Main St (35.68, 139.76)]");
    const sticker = envelopeOf(
      lineEvent({
        source,
        message: {
          type: "sticker",
          id: "9006",
          packageId: "1",
          stickerId: "2",
          stickerResourceType: "STATIC",
          keywords: ["happy", "cat"],
          quoteToken: "q",
        },
      }),
    );
    expect(sticker.text).toBe("[sticker: happy, cat]");
  });

  it("makes follow, unfollow, join, leave, memberJoined, memberLeft, unsend and postback system events", () => {
    const user = { type: "user" as const, userId: USER };
    const group = { type: "group" as const, groupId: GROUP };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        lineEvent({
          type: "follow",
          source: user,
          replyToken: "t",
          extra: { follow: { isUnblocked: false } },
        }),
        "direct",
        "added the bot as a friend",
      ],
      [lineEvent({ type: "unfollow", source: user }), "direct", "blocked the bot"],
      [
        lineEvent({ type: "join", source: group, replyToken: "t" }),
        "group",
        "the bot joined this group",
      ],
      [lineEvent({ type: "leave", source: group }), "group", "left"],
      [
        lineEvent({
          type: "memberJoined",
          source: group,
          replyToken: "t",
          extra: { joined: { members: [{ type: "user", userId: USER }] } },
        }),
        "group",
        `${USER} joined`,
      ],
      [
        lineEvent({
          type: "memberLeft",
          source: group,
          extra: { left: { members: [{ type: "user", userId: USER }] } },
        }),
        "group",
        `${USER} left`,
      ],
      [
        lineEvent({
          type: "unsend",
          source: { type: "group", groupId: GROUP, userId: USER },
          extra: { unsend: { messageId: "325708" } },
        }),
        "group",
        "unsent message 325708",
      ],
      [
        lineEvent({
          type: "postback",
          source: user,
          replyToken: "t",
          extra: { postback: { data: "action=buy&item=1" } },
        }),
        "direct",
        "data=action=buy&item=1",
      ],
    ];
    for (const [event, chatType, text] of cases) {
      const envelope = envelopeOf(event);
      expect(envelope.kind).toBe("system");
      expect(envelope.chatType).toBe(chatType);
      expect(envelope.text).toContain(text);
    }
    // A memberJoined names the member as its sender, so group sender allowlists apply to them.
    expect(envelopeOf(cases[4]![0]).senderId).toBe(USER);
  });

  it("drops standby events, unknown types, senderless DM events and messages LINE sent without a user", () => {
    expect(
      parse(
        lineEvent({
          source: { type: "user", userId: USER },
          mode: "standby",
          message: textMessage("x"),
        }),
      ),
    ).toHaveProperty("dropped");
    expect(
      parse(lineEvent({ type: "beacon", source: { type: "user", userId: USER } })),
    ).toHaveProperty("dropped");
    expect(parse(lineEvent({ type: "follow", source: { type: "user" } as never }))).toHaveProperty(
      "dropped",
    );
    expect(
      parse(
        lineEvent({ source: { type: "group", groupId: GROUP }, message: textMessage("anonymous") }),
      ),
    ).toHaveProperty("dropped");
    expect(parse({ type: "message" })).toHaveProperty("dropped");
  });
});

import { describe, expect, it } from "vitest";
import { slackAccount, slackChannelSchema } from "../../../functions/channels/slack/config.ts";
import { classifySlackRequest } from "../../../functions/channels/slack/classify.ts";
import { envelopeFromEvent } from "../../../functions/channels/slack/parse.ts";
import type { SlackParseResult } from "../../../functions/channels/slack/parse-context.ts";

const account = slackAccount(slackChannelSchema.parse({ replyToMode: "all" }), "default");
const bot = { userId: "UBOT", botId: "BBOT" };
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

function parse(event: Record<string, unknown>): SlackParseResult {
  const request = classifySlackRequest(
    bytes({ type: "event_callback", team_id: "T1", event_id: "Ev1", event }),
    "application/json",
  );
  if (request.kind !== "event") throw new Error(`not an event: ${JSON.stringify(request)}`);
  return envelopeFromEvent(request.callback, { account, bot, receivedAt: 1 });
}
const envelope = (result: SlackParseResult) => {
  if ("dropped" in result) throw new Error(result.dropped);
  return result.envelope;
};

describe("Slack event parsing", () => {
  it("treats a thread_broadcast as a user message in its thread, and a reply to the bot as a mention", () => {
    const e = envelope(
      parse({
        type: "message",
        subtype: "thread_broadcast",
        channel: "C1",
        channel_type: "channel",
        user: "U1",
        text: "also to channel",
        ts: "2.0",
        thread_ts: "1.0",
        parent_user_id: "UBOT",
      }),
    );
    expect(e).toMatchObject({
      kind: "message",
      chatType: "channel",
      peerId: "C1",
      threadId: "1.0",
      wasMentioned: true,
      // One key row per post (its channel and ts); the event id only names this delivery.
      dedupKey: "slack:T1:C1:2.0",
      deliveryKey: "slack:T1:Ev1",
    });
    expect(e.aliasKeys).toBeUndefined();
    expect(e.route).toMatchObject({ to: "C1", threadId: "1.0", replyToMessageId: "2.0" });
  });

  it("keys DMs by the sender and strips the bot mention from the text", () => {
    const e = envelope(
      parse({
        type: "message",
        channel: "D1",
        channel_type: "im",
        user: "U9",
        text: "<@UBOT> hi",
        ts: "3.0",
      }),
    );
    expect(e).toMatchObject({
      chatType: "direct",
      peerId: "U9",
      senderId: "U9",
      text: "hi",
      wasMentioned: true,
      threadId: undefined,
    });
  });

  it("seeds a thread session for a top-level mention when replies will be threaded", () => {
    const e = envelope(
      parse({ type: "app_mention", channel: "C2", user: "U1", text: "<@UBOT> go", ts: "5.0" }),
    );
    expect(e).toMatchObject({
      chatType: "channel",
      threadId: "5.0",
      parentPeerId: "C2",
      wasMentioned: true,
    });
    expect(e.route.threadId).toBeUndefined();
  });

  it("keeps file metadata from a user file_share", () => {
    const e = envelope(
      parse({
        type: "message",
        subtype: "file_share",
        channel: "D1",
        channel_type: "im",
        user: "U1",
        text: "",
        ts: "4.0",
        files: [
          {
            id: "F1",
            name: "a.pdf",
            mimetype: "application/pdf",
            size: 10,
            url_private: "https://files.slack.com/a.pdf",
          },
        ],
      }),
    );
    expect(e.attachments).toEqual([
      {
        name: "a.pdf (Slack file F1)",
        mimeType: "application/pdf",
        sizeBytes: 10,
        url: "https://files.slack.com/a.pdf",
      },
    ]);
  });

  it("turns edits into system events and drops what is not a user message", () => {
    const edit = envelope(
      parse({
        type: "message",
        subtype: "message_changed",
        channel: "C1",
        channel_type: "channel",
        ts: "6.0",
        message: { user: "U1", text: "new text", ts: "1.0" },
      }),
    );
    expect(edit).toMatchObject({ kind: "system", text: "Slack message edited by U1: new text" });
    expect(
      parse({
        type: "message",
        subtype: "channel_join",
        channel: "C1",
        channel_type: "channel",
        user: "U1",
        text: "joined",
        ts: "7.0",
      }),
    ).toEqual({ dropped: "message subtype channel_join is not a user message" });
    expect(
      parse({
        type: "message",
        channel: "C1",
        channel_type: "channel",
        bot_id: "BOTHER",
        text: "beep",
        ts: "8.0",
      }),
    ).toEqual({ dropped: "bot message (allowBots is off)" });
    expect(
      parse({
        type: "message",
        channel: "C1",
        channel_type: "channel",
        bot_id: "BBOT",
        text: "mine",
        ts: "9.0",
      }),
    ).toEqual({ dropped: "own message" });
    expect(
      parse({
        type: "message",
        channel: "G1",
        channel_type: "mpim",
        user: "U1",
        text: "hey",
        ts: "10.0",
      }),
    ).toEqual({ dropped: "group DMs are disabled (dm.groupEnabled)" });
  });

  it("lets reactions through per reactionNotifications: off, own (default: reactions on the bot's posts), all, allowlist", () => {
    const reactionBy = (user: string, itemUser: string, mode?: Record<string, unknown>) => {
      const acct = slackAccount(slackChannelSchema.parse({ ...mode }), "default");
      const request = classifySlackRequest(
        bytes({
          type: "event_callback",
          team_id: "T1",
          event_id: "Ev2",
          event: {
            type: "reaction_added",
            user,
            reaction: "eyes",
            item_user: itemUser,
            item: { type: "message", channel: "C1", ts: "1.0" },
          },
        }),
        "application/json",
      );
      if (request.kind !== "event") throw new Error("not an event");
      return envelopeFromEvent(request.callback, { account: acct, bot, receivedAt: 1 });
    };
    expect(envelope(reactionBy("U1", "UBOT"))).toMatchObject({
      kind: "system",
      senderId: "U1",
      text: expect.stringContaining(":eyes:"),
    });
    expect(reactionBy("U1", "U2")).toEqual({ dropped: "reaction on a message that is not ours" });
    expect(reactionBy("U1", "UBOT", { reactionNotifications: "off" })).toEqual({
      dropped: "reactionNotifications is off",
    });
    expect(envelope(reactionBy("U1", "U2", { reactionNotifications: "all" })).kind).toBe("system");
    expect(
      reactionBy("U1", "U2", { reactionNotifications: "allowlist", reactionAllowlist: ["U3"] }),
    ).toEqual({ dropped: "reacting user not in reactionAllowlist" });
    expect(
      envelope(
        reactionBy("U3", "U2", { reactionNotifications: "allowlist", reactionAllowlist: ["U3"] }),
      ).kind,
    ).toBe("system");
    expect(reactionBy("UBOT", "UBOT", { reactionNotifications: "all" })).toEqual({
      dropped: "own reaction",
    });
  });

  it("classifies slash commands and rejects unknown JSON types", () => {
    const form = new URLSearchParams({
      command: "/openclaw",
      text: "/help",
      team_id: "T1",
      channel_id: "C1",
      user_id: "U1",
      response_url: "https://hooks.slack.com/commands/T1/1/x",
      trigger_id: "1.2.3",
    });
    expect(
      classifySlackRequest(
        new TextEncoder().encode(form.toString()),
        "application/x-www-form-urlencoded",
      ).kind,
    ).toBe("slash");
    expect(
      classifySlackRequest(bytes({ type: "something_else" }), "application/json"),
    ).toMatchObject({ kind: "malformed" });
  });
});

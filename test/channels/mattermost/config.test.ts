import { describe, expect, it } from "vitest";
import {
  mattermostAccount,
  mattermostBaseUrl,
  mattermostBotToken,
  mattermostChannelSchema,
} from "../../../functions/channels/mattermost/config.ts";
import { effectiveChannelAccess } from "../../../functions/config/channel-access.ts";

/** channels.mattermost: OpenClaw's defaults, and how chatmode, requireMention and groups combine. */
describe("channels.mattermost config", () => {
  it("has OpenClaw's defaults: pairing DMs, allowlisted groups, chatmode oncall (mention required), 4000-char chunks, partial previews", () => {
    const root = mattermostChannelSchema.parse({});
    expect(root).toMatchObject({
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      chatmode: "oncall",
      oncharPrefixes: [">", "!"],
      requireMention: true,
      textChunkLimit: 4000,
      replyToMode: "off",
    });
    expect(root.streaming.mode).toBe("partial");
    expect(root.implicitMentions.threadParticipation).toBe(true);
  });

  it("chatmode onmessage turns mention gating off unless requireMention says otherwise; accounts resolve their own", () => {
    const access = (block: unknown, accountId = "default") =>
      effectiveChannelAccess(mattermostChannelSchema.parse(block), accountId).requireMention;
    expect(access({ chatmode: "onmessage" })).toBe(false);
    expect(access({ chatmode: "onmessage", requireMention: true })).toBe(true);
    expect(access({ chatmode: "onchar" })).toBe(true);
    expect(access({ requireMention: false })).toBe(false);
    expect(access({ accounts: { a: { chatmode: "onmessage" }, b: {} } }, "a")).toBe(false);
    expect(
      access({ chatmode: "onmessage", accounts: { a: {}, b: { chatmode: "oncall" } } }, "a"),
    ).toBe(false); // inherits the root
    expect(
      access({ chatmode: "onmessage", accounts: { a: {}, b: { chatmode: "oncall" } } }, "b"),
    ).toBe(true);
    // Parsing the parsed block again changes nothing (the loader's output is re-read by the channel).
    const once = mattermostChannelSchema.parse({
      chatmode: "onmessage",
      accounts: { b: { chatmode: "oncall" } },
    });
    expect(mattermostChannelSchema.parse(once)).toEqual(once);
  });

  it('rejects dmPolicy open without "*" in allowFrom, and unknown chatmodes', () => {
    expect(mattermostChannelSchema.safeParse({ dmPolicy: "open" }).success).toBe(false);
    expect(mattermostChannelSchema.safeParse({ chatmode: "always" }).success).toBe(false);
  });

  it("MATTERMOST_URL / MATTERMOST_BOT_TOKEN stand in for the default account only; /api/v4 is removed from baseUrl", () => {
    const root = mattermostChannelSchema.parse({
      accounts: { default: {}, alerts: { baseUrl: "https://alerts.example.com/api/v4/" } },
    });
    const env = { MATTERMOST_URL: "https://chat.example.com", MATTERMOST_BOT_TOKEN: "tok" };
    expect(mattermostBaseUrl(mattermostAccount(root, "default"), env)).toBe(
      "https://chat.example.com",
    );
    expect(mattermostBotToken(mattermostAccount(root, "default"), env)).toBe("tok");
    expect(mattermostBaseUrl(mattermostAccount(root, "alerts"), env)).toBe(
      "https://alerts.example.com",
    );
    expect(mattermostBotToken(mattermostAccount(root, "alerts"), env)).toBeUndefined();
  });
});

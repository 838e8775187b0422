import { describe, expect, it } from "vitest";
import { channelDefinitions } from "../../../functions/channels/registry.ts";
import { DM_KITS, SYSTEM_KITS } from "./kits/index.ts";

/**
 * Every case a channel cannot meet today is named here with its reason, so an exception is a
 * decision someone can read (and this test fails when a kit adds or drops one without saying so).
 * Cases with an `insteadStatus` still run with that status, nothing stored and no model call.
 */

const LISTED = [
  "telegram/stale: Telegram signs nothing with a time",
  "sms/stale: Twilio's signature covers the URL and the form only, no time",
  "sms/forged: a bad X-Twilio-Signature is answered 403",
  "line/stale: LINE's signature has no time",
  "whatsappcloud/stale: Meta's X-Hub-Signature-256 covers no time",
];

describe("contract exceptions", () => {
  it("are exactly the listed ones, each with its reason", () => {
    const actual = DM_KITS.flatMap((kit) =>
      Object.entries(kit.exceptions ?? {}).map(([name, exception]) => {
        expect(exception.reason.length, `${kit.channel}/${name} needs a reason`).toBeGreaterThan(
          20,
        );
        return `${kit.channel}/${name}: ${exception.reason}`;
      }),
    );
    expect(actual).toHaveLength(LISTED.length);
    for (const start of LISTED)
      expect(
        actual.some((line) => line.startsWith(start)),
        start,
      ).toBe(true);
  });

  it("system events held to no message are exactly the listed ones, each with its reason", () => {
    // What the platform leaves out of the event, so the cross-check (system-events.test.ts) has
    // nothing to place it by; everything else a channel parses is held to its message's decision.
    const listed = [
      "slack/a group DM (dm.groupEnabled off, the default)/reaction_added: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/reaction_removed: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/pin_added: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/pin_removed: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/block_actions: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/message_action: Slack sends no channel_type",
      "slack/a group DM (dm.groupEnabled off, the default)/interactive_message: Slack sends no channel_type",
      "mattermost/a thread in the members-only channel (team)/reaction_added: Mattermost's reaction names the post, not the thread",
      "mattermost/a thread in the members-only channel (team)/reaction_removed: Mattermost's reaction names the post, not the thread",
      "mattermost/a thread in the members-only channel (team)/button_click: Mattermost's button callback names the post, not its thread",
    ];
    const actual = SYSTEM_KITS.flatMap((kit) =>
      kit.conversations.flatMap((conversation) =>
        Object.entries(conversation.exceptions ?? {}).map(
          ([kind, reason]) => `${kit.channel}/${conversation.name}/${kind}: ${reason}`,
        ),
      ),
    );
    expect(actual).toHaveLength(listed.length);
    for (const start of listed)
      expect(
        actual.some((line) => line.startsWith(start)),
        start,
      ).toBe(true);
  });

  it("every webhook channel in the registry has a kit or is named as served by another suite file", () => {
    // Discord's webhook is its interactions endpoint and Mattermost's its slash commands: no DMs
    // arrive there (their DMs come through the companion), so the DM cases do not apply.
    // "relay" is the test-only channel test/setup/register-channels.ts adds, not a platform.
    const noDmWebhook = new Set(["discord", "mattermost", "relay"]);
    const withKit = new Set(DM_KITS.map((kit) => kit.channel));
    for (const definition of channelDefinitions())
      if (definition.webhook && !noDmWebhook.has(definition.id))
        expect(withKit.has(definition.id), `no contract kit for ${definition.id}`).toBe(true);
  });
});

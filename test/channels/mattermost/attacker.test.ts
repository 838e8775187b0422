import { describe, expect, it } from "vitest";
import { TEST_MATTERMOST } from "../../../functions/channels/mattermost/test-fixtures.ts";
import {
  FAKE_MATTERMOST_BOT,
  deliver,
  forgetPairingWhenDone,
  mattermostPosts,
  mmId,
  newScenario,
  postedEvent,
  recorded,
  scriptModel,
  setChannelType,
  settle,
  waitFor,
} from "./helpers.ts";

/**
 * Strangers on Mattermost under the defaults a user gets (default account: dmPolicy "pairing",
 * groupPolicy "allowlist" with nothing allowed): a DM earns one pairing code and nothing else; a
 * channel message, an edit or a reaction starts nothing, reaches no model and sends nothing.
 */

const botPosts = async (channel: string) =>
  (await mattermostPosts(channel)).filter((p) => p.user_id === FAKE_MATTERMOST_BOT.id);

function editedEvent(post: Record<string, unknown>, message: string) {
  return {
    event: "post_edited",
    data: { post: JSON.stringify({ ...post, message, edit_at: Date.now() }) },
    broadcast: { channel_id: post.channel_id },
    seq: 9,
  };
}

function reactionEvent(channelId: string, postId: string, userId: string) {
  return {
    event: "reaction_added",
    data: {
      reaction: JSON.stringify({
        user_id: userId,
        post_id: postId,
        emoji_name: "+1",
        create_at: Date.now(),
      }),
    },
    broadcast: { channel_id: channelId },
    seq: 10,
  };
}

describe("Mattermost strangers", () => {
  it("a stranger's DM under the defaults earns one pairing code, never a model call; a second DM stays silent", async () => {
    const scenario = newScenario("mm-stranger-dm");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const stranger = mmId("s");
    forgetPairingWhenDone(stranger);
    const channel = mmId("dm");
    await setChannelType(channel, "D");
    await deliver(
      "default",
      postedEvent({
        channelId: channel,
        channelType: "D",
        userId: stranger,
        message: `let me in [scenario:${scenario}]`,
      }).event,
    );
    const [code] = await waitFor(async () => {
      const posts = await botPosts(channel);
      return posts.length ? posts : undefined;
    });
    expect(code!.message).toMatch(/pairing/i);
    await deliver(
      "default",
      postedEvent({
        channelId: channel,
        channelType: "D",
        userId: stranger,
        message: `hello? [scenario:${scenario}]`,
      }).event,
    );
    await settle(2000);
    expect(await botPosts(channel)).toHaveLength(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("a stranger @-mentioning the bot in a channel under the defaults (allowlist, nothing listed) starts nothing", async () => {
    const scenario = newScenario("mm-stranger-channel");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const channel = mmId("ch");
    const { outcomes } = await deliver(
      "default",
      postedEvent({
        channelId: channel,
        channelType: "O",
        userId: mmId("s"),
        message: `@edgebot do it [scenario:${scenario}]`,
        mentionsBot: true,
      }).event,
    );
    expect(outcomes.map((o) => o.status)).toEqual(["accepted"]); // stored (durable), then refused by triage
    await settle(2500);
    expect(await botPosts(channel)).toEqual([]);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("in a channel that admits only listed members, a non-member's mention starts nothing", async () => {
    const scenario = newScenario("mm-non-member");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    await deliver(
      "team",
      postedEvent({
        channelId: TEST_MATTERMOST.membersChannel,
        channelType: "O",
        userId: mmId("s"),
        message: `@edgebot hi [scenario:${scenario}]`,
        mentionsBot: true,
      }).event,
    );
    await settle(2500);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("edits and reactions from strangers (DM and channel) start nothing, mint no pairing code, send nothing", async () => {
    const scenario = newScenario("mm-stranger-edits");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const stranger = mmId("s");
    forgetPairingWhenDone(stranger);
    const dm = mmId("dm");
    const channel = mmId("ch");
    const dmPost = postedEvent({
      channelId: dm,
      channelType: "D",
      userId: stranger,
      message: "x",
    }).post;
    const channelPost = postedEvent({
      channelId: channel,
      channelType: "O",
      userId: stranger,
      message: "x",
    }).post;
    const events = [
      [editedEvent(dmPost, `@edgebot edited [scenario:${scenario}]`), "D"],
      [reactionEvent(dm, dmPost.id, stranger), "D"],
      [editedEvent(channelPost, `@edgebot edited [scenario:${scenario}]`), "O"],
      [reactionEvent(channel, channelPost.id, stranger), "O"],
    ] as const;
    for (const [event, type] of events) {
      const { parsed, outcomes } = await deliver("default", event, type);
      expect(parsed.kind === "envelopes" && parsed.envelopes.map((e) => e.kind)).toEqual([
        "system",
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["accepted"]);
    }
    await settle(2500);
    expect(await botPosts(dm)).toEqual([]);
    expect(await botPosts(channel)).toEqual([]);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("an edit or reaction in a conversation of unknown type is dropped (fail closed), and the bot's own posts are never answered", async () => {
    const channel = mmId("ch");
    const post = postedEvent({
      channelId: channel,
      channelType: "O",
      userId: mmId("s"),
      message: "x",
    }).post;
    const unknown = await deliver("team", reactionEvent(channel, post.id, mmId("s")));
    expect(unknown.parsed).toMatchObject({
      kind: "envelopes",
      envelopes: [],
      dropped: ["event in a channel of unknown type"],
    });

    const scenario = newScenario("mm-self");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const own = await deliver(
      "chatty",
      postedEvent({
        channelId: channel,
        channelType: "O",
        userId: FAKE_MATTERMOST_BOT.id,
        message: `echo [scenario:${scenario}]`,
      }).event,
    );
    expect(own.parsed).toMatchObject({
      kind: "envelopes",
      envelopes: [],
      dropped: ["the bot's own post"],
    });
  });

  it("refuses a payload that is not a Mattermost event (no self, post not JSON)", async () => {
    const { channelDefinition } = await import("../../../functions/channels/registry.ts");
    const socket = channelDefinition("mattermost")!.socket!;
    const { configFromEnv } = await import("../../../functions/channels/gateway-config.ts");
    const { workerEnv } = await import("./helpers.ts");
    const { findSocketAccount } = await import(
      "../../../functions/channels/companion/socket-accounts.ts"
    );
    const account = findSocketAccount(
      configFromEnv(workerEnv),
      workerEnv as unknown as Record<string, unknown>,
      "mattermost",
      "team",
    )!.account;
    expect(
      (
        await socket.parse(
          { eventId: "1", payload: { event: { event: "posted", data: {} } }, receivedAt: 1 },
          account,
          workerEnv,
        )
      ).kind,
    ).toBe("malformed");
    const broken = {
      event: { event: "posted", data: { post: "{not json", channel_type: "O" } },
      self: { userId: FAKE_MATTERMOST_BOT.id, username: "edgebot" },
    };
    expect(
      (await socket.parse({ eventId: "2", payload: broken, receivedAt: 1 }, account, workerEnv))
        .kind,
    ).toBe("malformed");
  });
});

import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import {
  FAKE_MATTERMOST_BOT,
  botPostsSettled,
  deliver,
  mattermostCalls,
  mattermostPosts,
  mmId,
  newScenario,
  postedEvent,
  recorded,
  scriptMattermost,
  scriptModel,
  setChannelType,
  settle,
} from "./helpers.ts";

/**
 * A Mattermost WebSocket event, as the companion forwards it → Worker parse → durable accept →
 * agent run against the fake model → reply over REST v4 in the fake Mattermost. With the settings a
 * user gets (streaming partial: one preview post patched into the answer) unless a test says otherwise.
 */

const answer = (text: string) => [{ type: "text", text }];

describe("Mattermost end to end", () => {
  it("tells the companion to run every enabled account, with the server URL, its private-network flag and the token's env name — never the token", async () => {
    const path = "/internal/companion/accounts";
    const headers = await signRequest(
      { id: "sockmm", secret: "test-companion-sockmm-secret" },
      { method: "GET", path, body: new Uint8Array(), timestamp: Math.floor(Date.now() / 1000) },
    );
    const res = await SELF.fetch(`https://edgeclaw.test${path}`, { headers });
    const text = await res.text();
    expect(text).not.toContain("mm-test-token");
    const accounts = (
      JSON.parse(text) as {
        accounts: Array<{
          channel: string;
          accountId: string;
          settings: Record<string, unknown>;
          secretEnv: Record<string, string>;
        }>;
      }
    ).accounts.filter((a) => a.channel === "mattermost");
    expect(accounts.map((a) => a.accountId).sort()).toEqual([
      "chatty",
      "cmds",
      "default",
      "plain",
      "prefix",
      "team",
    ]);
    for (const account of accounts) {
      // /api/v4 removed; the private-network flag travels so the companion applies the same guard.
      expect(account.settings).toEqual({
        baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        dangerouslyAllowPrivateNetwork: true,
      });
      expect(account.secretEnv).toEqual({ botToken: "TEST_MATTERMOST_BOT_TOKEN" });
    }
  });

  it("answers a DM once, even when the same post is delivered three times", async () => {
    const scenario = newScenario("mm-dm");
    await scriptModel(scenario, answer("Hello from **edgeclaw**."));
    const channel = mmId("dm");
    await setChannelType(channel, "D");
    const { event } = postedEvent({
      channelId: channel,
      channelType: "D",
      userId: mmId("u"),
      message: `hi [scenario:${scenario}]`,
    });
    const deliveries = await Promise.all([
      deliver("team", event),
      deliver("team", event),
      deliver("team", event),
    ]);
    expect(deliveries.flatMap((d) => d.outcomes.map((o) => o.status)).sort()).toEqual([
      "accepted",
      "duplicate",
      "duplicate",
    ]);

    const posts = await botPostsSettled(channel, 1);
    expect(posts.map((p) => p.message)).toEqual(["Hello from **edgeclaw**."]); // Markdown as written
    expect(posts[0]!.root_id).toBe(""); // a top-level DM stays top-level (replyToMode off)
    expect((await recorded(scenario)).length).toBe(1);
    const typing = await mattermostCalls(`/users/${FAKE_MATTERMOST_BOT.id}/typing`);
    expect(typing.some((call) => call.body.channel_id === channel)).toBe(true);
  });

  it("answers an @-mention in a channel, in the post's thread when it came from one, and ignores unmentioned chatter", async () => {
    const scenario = newScenario("mm-mention");
    await scriptModel(scenario, answer("Thread answer."));
    const channel = mmId("ch");
    const quiet = newScenario("mm-quiet");
    await scriptModel(quiet, answer("Must not be said."));
    const unmentioned = postedEvent({
      channelId: channel,
      channelType: "O",
      userId: mmId("u"),
      message: `just chatting [scenario:${quiet}]`,
    });
    expect((await deliver("team", unmentioned.event)).outcomes.map((o) => o.status)).toEqual([
      "accepted",
    ]);

    const root = mmId("root");
    const mention = postedEvent({
      channelId: channel,
      channelType: "O",
      userId: mmId("u"),
      message: `@edgebot what now? [scenario:${scenario}]`,
      rootId: root,
      mentionsBot: true,
    });
    await deliver("team", mention.event);
    const posts = await botPostsSettled(channel, 1);
    expect(posts.map((p) => [p.message, p.root_id])).toEqual([["Thread answer.", root]]);
    expect(await recorded(quiet)).toEqual([]);
    // The model saw the request without the bot's own @name.
    expect(JSON.stringify((await recorded(scenario))[0])).not.toContain("@edgebot");

    // A follow-up in the thread the bot answered in needs no new mention (threadParticipation).
    const followUp = newScenario("mm-follow-up");
    await scriptModel(followUp, answer("Still here."));
    await deliver(
      "team",
      postedEvent({
        channelId: channel,
        channelType: "O",
        userId: mmId("u"),
        message: `and then? [scenario:${followUp}]`,
        rootId: root,
      }).event,
    );
    expect((await botPostsSettled(channel, 2)).map((p) => p.message)).toEqual([
      "Thread answer.",
      "Still here.",
    ]);
  });

  it("chatmode onmessage answers every channel message; onchar answers a trigger prefix only", async () => {
    const every = newScenario("mm-onmessage");
    await scriptModel(every, answer("Heard you."));
    const chattyChannel = mmId("ch");
    await deliver(
      "chatty",
      postedEvent({
        channelId: chattyChannel,
        channelType: "O",
        userId: mmId("u"),
        message: `no mention here [scenario:${every}]`,
      }).event,
    );
    expect((await botPostsSettled(chattyChannel, 1)).map((p) => p.message)).toEqual(["Heard you."]);

    const prefixed = newScenario("mm-onchar");
    await scriptModel(prefixed, answer("Prefix seen."));
    const unprefixed = newScenario("mm-onchar-plain");
    await scriptModel(unprefixed, answer("Must not be said."));
    const prefixChannel = mmId("ch");
    await deliver(
      "prefix",
      postedEvent({
        channelId: prefixChannel,
        channelType: "O",
        userId: mmId("u"),
        message: `plain talk [scenario:${unprefixed}]`,
      }).event,
    );
    await deliver(
      "prefix",
      postedEvent({
        channelId: prefixChannel,
        channelType: "O",
        userId: mmId("u"),
        message: `!status [scenario:${prefixed}]`,
      }).event,
    );
    expect((await botPostsSettled(prefixChannel, 1)).map((p) => p.message)).toEqual([
      "Prefix seen.",
    ]);
    expect(await recorded(unprefixed)).toEqual([]);
  });

  it("splits a long answer at textChunkLimit (4000) in the thread, one post per chunk", async () => {
    const scenario = newScenario("mm-long");
    const long = Array.from(
      { length: 180 },
      (_, i) => `Line ${i} of a long answer that keeps going on.`,
    ).join("\n");
    await scriptModel(scenario, answer(long));
    const channel = mmId("ch");
    const root = mmId("root");
    await deliver(
      "team",
      postedEvent({
        channelId: channel,
        channelType: "O",
        userId: mmId("u"),
        message: `@edgebot long please [scenario:${scenario}]`,
        rootId: root,
        mentionsBot: true,
      }).event,
    );
    const posts = await botPostsSettled(channel, 3);
    expect(posts.length).toBeGreaterThanOrEqual(Math.ceil(long.length / 4000));
    expect(posts.every((p) => p.message.length <= 4000 && p.root_id === root)).toBe(true);
    expect(posts.map((p) => p.message).join("\n")).toBe(long);
  });

  it("a preview post whose answer is lost is found by its run id and becomes the answer: one post (streaming partial)", async () => {
    const scenario = newScenario("mm-lost-preview");
    const text = Array.from({ length: 40 }, (_, i) => `Sentence ${i} of a streamed answer.`).join(
      " ",
    );
    await scriptModel(scenario, answer(text));
    const channel = mmId("dm");
    await setChannelType(channel, "D");
    await scriptMattermost({ method: "POST", path: "/posts", dropConnection: true }); // the preview lands, its answer is lost
    await deliver(
      "team",
      postedEvent({
        channelId: channel,
        channelType: "D",
        userId: mmId("u"),
        message: `stream it [scenario:${scenario}]`,
      }).event,
    );
    const posts = await botPostsSettled(channel, 1);
    await settle(1500);
    expect(
      (await mattermostPosts(channel))
        .filter((p) => p.user_id === FAKE_MATTERMOST_BOT.id && !p.delete_at)
        .map((p) => p.message),
    ).toEqual([text]);
    expect(posts[0]!.props.edgeclaw_preview_run).toEqual(expect.any(String)); // the preview, patched into the answer
  });

  it("a send whose answer is lost is found by its marker, not sent twice (streaming off)", async () => {
    const scenario = newScenario("mm-lost");
    await scriptModel(scenario, answer("Exactly once."));
    const channel = mmId("dm");
    await setChannelType(channel, "D");
    await scriptMattermost({ method: "POST", path: "/posts", dropConnection: true });
    await deliver(
      "plain",
      postedEvent({
        channelId: channel,
        channelType: "D",
        userId: mmId("u"),
        message: `hello [scenario:${scenario}]`,
      }).event,
    );
    const posts = await botPostsSettled(channel, 1);
    await settle(2000);
    expect(
      (await mattermostPosts(channel))
        .filter((p) => p.user_id === FAKE_MATTERMOST_BOT.id)
        .map((p) => p.message),
    ).toEqual(["Exactly once."]);
    expect(posts[0]!.props.edgeclaw_outbox_id).toEqual(expect.any(String));
    const lookups = await mattermostCalls(`/channels/${channel}/posts`);
    expect(lookups.length).toBeGreaterThan(0); // reconciled by looking
  });
});

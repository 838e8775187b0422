import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { mattermostConnector } from "../../../functions/channels/mattermost/companion/connector.ts";
import {
  FAKE_MATTERMOST_BOT,
  startFakeMattermost,
  type FakeMattermost,
} from "../../../functions/channels/mattermost/simulate/mattermost-api.ts";
import { MemoryContext, until } from "./memory-context.ts";

const TOKEN = "mm-test-token";
const fast = {
  backoff: { initialMs: 200, maxMs: 400, stableMs: 60_000 },
  pingIntervalMs: 100,
  pongTimeoutMs: 1_000,
  helloTimeoutMs: 2_000,
};
let ids = 0;
const id = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${(ids++).toString(36)}`.padEnd(26, "0").slice(0, 26);

type Forwarded = {
  event: { event: string; data: Record<string, unknown>; broadcast: Record<string, unknown> };
  self: { userId: string; username: string };
  channelType?: string;
  teamId?: string;
};

describe("Mattermost connector", () => {
  let fake: FakeMattermost;
  before(async () => (fake = await startFakeMattermost()));
  after(async () => fake.stop());

  const control = (path: string, body: unknown) =>
    fetch(`${fake.url}/_control/${path}`, { method: "POST", body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
  const userPost = (channel_id: string, message: string, extra: Record<string, unknown> = {}) =>
    control("user-post", {
      channel_id,
      channel_type: "O",
      user_id: "u1".padEnd(26, "0"),
      sender_name: "alice",
      message,
      ...extra,
    });
  // The fake listens on loopback, which the private-network guard refuses unless the account allows it.
  const account = (): ConnectorAccount => ({
    channel: "mattermost",
    accountId: "default",
    label: "Mattermost",
    settings: { baseUrl: `${fake.url}/api/v4`, dangerouslyAllowPrivateNetwork: true },
    secretEnv: { botToken: "MATTERMOST_BOT_TOKEN" },
  });
  const posts = (ctx: MemoryContext) =>
    ctx.stored
      .map((e) => e.payload as Forwarded)
      .filter((p) => p.event.event === "posted")
      .map((p) => JSON.parse(String(p.event.data.post)) as { id: string; message: string });

  async function started(token = TOKEN) {
    const ctx = new MemoryContext(account(), { MATTERMOST_BOT_TOKEN: token });
    const connector = mattermostConnector(ctx.account, fast);
    await connector.start(ctx);
    return { ctx, connector };
  }

  it("authenticates with the challenge, forwards a user's post raw with the bot's identity, and skips the bot's own posts", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    const sent = await userPost(channel, "@edgebot hello");
    await until(() => ctx.stored.length >= 1 || undefined, 5_000, "forwarded");
    const forwarded = ctx.stored[0]!;
    assert.equal(forwarded.eventId, `posted:${String(sent.id)}`);
    const payload = forwarded.payload as Forwarded;
    assert.deepEqual(payload.self, {
      userId: FAKE_MATTERMOST_BOT.id,
      username: FAKE_MATTERMOST_BOT.username,
    });
    assert.equal(payload.event.data.channel_type, "O");
    assert.equal(payload.event.data.mentions, JSON.stringify([FAKE_MATTERMOST_BOT.id])); // Mattermost's own mention list, untouched
    assert.equal(payload.channelType, undefined);

    // The bot's reply (and an edit of it, as a streaming preview makes), echoed over the socket, is not forwarded.
    const reply = (await (
      await fetch(`${fake.url}/api/v4/posts`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ channel_id: channel, message: "reply" }),
      })
    ).json()) as Record<string, unknown>;
    await control("event", {
      event: "post_edited",
      data: { post: JSON.stringify({ ...reply, message: "reply, edited" }) },
      broadcast: { channel_id: channel },
    });
    await userPost(channel, "second");
    await until(() => ctx.stored.length >= 2 || undefined, 5_000, "second post");
    assert.deepEqual(
      posts(ctx).map((p) => p.message),
      ["@edgebot hello", "second"],
    );
    await connector.stop("shutdown");
    assert.equal(ctx.state_, "stopped");
  });

  it("adds the channel's team to edits and reactions in a channel (DMs have none), as its posts name it", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    const dm = id("dm");
    await control("channel", { id: channel, type: "O" });
    await control("channel", { id: dm, type: "D" });
    const react = (where: string, n: number) =>
      control("event", {
        event: "reaction_added",
        data: {
          reaction: JSON.stringify({
            user_id: "u2".padEnd(26, "0"),
            post_id: `p${n}`.padEnd(26, "0"),
            emoji_name: "+1",
            create_at: n,
          }),
        },
        broadcast: { channel_id: where, team_id: "" },
      });
    await react(channel, 1);
    await react(dm, 2);
    await until(() => ctx.stored.length >= 2 || undefined, 5_000, "reactions forwarded");
    const [inChannel, inDm] = ctx.stored.map((e) => e.payload as Forwarded);
    assert.deepEqual([inChannel!.channelType, inChannel!.teamId], ["O", "team1"]);
    assert.deepEqual([inDm!.channelType, inDm!.teamId], ["D", undefined]);
    // A posted event names its team itself: nothing is added to it.
    await userPost(channel, "hello");
    await until(() => ctx.stored.length >= 3 || undefined, 5_000, "post forwarded");
    assert.equal((ctx.stored[2]!.payload as Forwarded).teamId, undefined);
    await connector.stop("shutdown");
  });

  it("adds the channel type to edits and reactions (which do not carry it), from GET /channels/{id}", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const dm = id("dm");
    await control("channel", { id: dm, type: "D" });
    const reaction = JSON.stringify({
      user_id: "u2".padEnd(26, "0"),
      post_id: "p1".padEnd(26, "0"),
      emoji_name: "+1",
      create_at: 1,
    });
    await control("event", {
      event: "reaction_added",
      data: { reaction },
      broadcast: { channel_id: dm },
    });
    await until(() => ctx.stored.length >= 1 || undefined, 5_000, "reaction forwarded");
    assert.equal((ctx.stored[0]!.payload as Forwarded).channelType, "D");
    await control("event", {
      event: "typing",
      data: { parent_id: "" },
      broadcast: { channel_id: dm },
    });
    await control("event", { event: "status_change", data: { status: "online" }, broadcast: {} });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(ctx.stored.length, 1, "typing and status events stay in the companion");
    await connector.stop("shutdown");
  });

  it("moves a channel's cursor only after submit() resolved", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    ctx.hold();
    await userPost(channel, "held");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(
      !(ctx.values.get("cursors") ?? "").includes(channel),
      "no cursor before the Worker stored the post",
    );
    ctx.release();
    await until(
      () => (ctx.values.get("cursors") ?? "").includes(channel) || undefined,
      5_000,
      "cursor stored",
    );
    await connector.stop("shutdown");
  });

  it("after a dropped connection, forwards the posts made meanwhile from REST (gap repair), in order", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    await userPost(channel, "before the drop");
    await until(
      () => (ctx.values.get("cursors") ?? "").includes(channel) || undefined,
      5_000,
      "cursor",
    );
    await control("drop-sockets", {});
    await until(() => ctx.state_ === "backoff" || undefined, 5_000, "noticed the drop");
    await userPost(channel, "missed one");
    await userPost(channel, "missed two");
    await until(() => posts(ctx).length >= 3 || undefined, 5_000, "missed posts repaired");
    assert.deepEqual(
      posts(ctx).map((p) => p.message),
      ["before the drop", "missed one", "missed two"],
    );
    await connector.stop("shutdown");
  });

  it("a gap in the server's sequence numbers repairs the missed posts from REST without reconnecting", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    await userPost(channel, "seen");
    await until(
      () => (ctx.values.get("cursors") ?? "").includes(channel) || undefined,
      5_000,
      "cursor",
    );
    await userPost(channel, "never broadcast", { broadcast: false });
    await control("event", {
      event: "status_change",
      data: { status: "online" },
      broadcast: {},
      skipSeq: true,
    });
    await until(() => posts(ctx).length >= 2 || undefined, 5_000, "gap repaired");
    assert.deepEqual(
      posts(ctx).map((p) => p.message),
      ["seen", "never broadcast"],
    );
    assert.equal(
      ctx.statuses.some((status) => status.state === "backoff"),
      false,
      "no reconnect was needed",
    );
    await connector.stop("shutdown");
  });

  it("a post the Worker did not store is not lost: the connection is dropped and the post repaired after reconnecting", async () => {
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const channel = id("ch");
    await userPost(channel, "first");
    await until(() => posts(ctx).length === 1 || undefined, 5_000, "first stored");
    ctx.failWith = new Error("worker answered 503");
    await userPost(channel, "not stored at first");
    await until(
      () => ctx.state_ === "backoff" || undefined,
      5_000,
      "dropped after the failed submit",
    );
    ctx.failWith = undefined;
    await until(() => posts(ctx).length === 2 || undefined, 5_000, "repaired");
    assert.deepEqual(
      posts(ctx).map((p) => p.message),
      ["first", "not stored at first"],
    );
    await connector.stop("shutdown");
  });

  it("stops for good on a refused token (no retry storm), and without a token", async () => {
    const { ctx } = await started("wrong-token");
    await until(() => ctx.state_ === "fatal", 5_000, "fatal");
    assert.match(ctx.statuses.at(-1)!.lastError!, /401/);
    assert.ok(!JSON.stringify(ctx.statuses).includes("wrong-token"));
    const tokenless = new MemoryContext(account(), {});
    await mattermostConnector(tokenless.account, fast).start(tokenless);
    await until(() => tokenless.state_ === "fatal", 5_000, "fatal without a token");
    assert.match(tokenless.statuses.at(-1)!.lastError!, /MATTERMOST_BOT_TOKEN/);
  });
});

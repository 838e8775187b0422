import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { matrixConnector } from "../../../functions/channels/matrix/companion/connector.ts";
import {
  startFakeHomeserver,
  type FakeHomeserver,
} from "../../../functions/channels/matrix/simulate/matrix-homeserver.ts";
import { FAKE_MATRIX_BOT } from "../../../functions/channels/matrix/simulate/matrix-identity.ts";
import { MemoryContext, until } from "./memory-context.ts";

/**
 * The Matrix /sync connector against the fake homeserver (client-server API on loopback): what it
 * forwards, when the `since` token moves, what it skips (its own events, encrypted rooms, history
 * before its first start) and how it treats invites under each `autoJoin`.
 */

const TOKEN = "mx-test-token";
let ids = 0;
const room = (name: string) =>
  `!${name}${Date.now().toString(36)}${(ids++).toString(36)}:fake.test`;

type Forwarded = {
  roomId: string;
  event: { event_id: string; type: string; sender: string; content: { body?: string } };
  self: { userId: string };
  direct: boolean;
  targetSender?: string;
};

describe("Matrix connector", () => {
  let fake: FakeHomeserver;
  before(async () => (fake = await startFakeHomeserver()));
  after(async () => fake.stop());

  const control = (path: string, body: unknown) =>
    fetch(`${fake.url}/_control/${path}`, { method: "POST", body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
  const say = (roomId: string, body: string, sender = "@alice:fake.test") =>
    control("message", { roomId, sender, body });
  const account = (settings: Record<string, unknown> = {}): ConnectorAccount => ({
    channel: "matrix",
    accountId: "default",
    label: "Matrix",
    settings: { homeserver: fake.url, dangerouslyAllowPrivateNetwork: true, ...settings },
    secretEnv: { accessToken: "MATRIX_ACCESS_TOKEN" },
  });
  const forwarded = (ctx: MemoryContext) => ctx.stored.map((e) => e.payload as Forwarded);

  async function started(settings: Record<string, unknown> = {}, token = TOKEN) {
    const ctx = new MemoryContext(account(settings), { MATRIX_ACCESS_TOKEN: token });
    const connector = matrixConnector(ctx.account, {
      pollTimeoutMs: 500,
      backoff: { initialMs: 100, maxMs: 200, stableMs: 60_000 },
    });
    await connector.start(ctx);
    return { ctx, connector };
  }

  it("skips what was said before its first start, forwards a user's message raw with the bot's identity, never its own, and moves `since` only after the Worker stored the batch", async () => {
    const roomId = room("r");
    await control("room", { roomId, joined: true });
    await say(roomId, "said before the bot ran");
    const { ctx, connector } = await started();
    await until(() => ctx.values.get("since"), 5_000, "the initial sync's token");
    assert.equal(ctx.stored.length, 0, "history before the first start is not answered");

    ctx.hold();
    const sent = await say(roomId, "hello bot");
    await until(() => fake.world.head > 0 && ctx.statuses.length > 0, 2_000, "sync");
    const before = ctx.values.get("since");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(
      ctx.values.get("since"),
      before,
      "the token waits while the Worker has not stored",
    );
    ctx.release();
    await until(() => ctx.stored.length >= 1 || undefined, 5_000, "forwarded");
    await until(() => ctx.values.get("since") !== before || undefined, 5_000, "token moved");
    const first = forwarded(ctx)[0]!;
    assert.equal(ctx.stored[0]!.eventId, sent.event_id);
    assert.equal(first.roomId, roomId);
    assert.deepEqual(first.self, { userId: FAKE_MATRIX_BOT.userId });
    assert.equal(first.event.content.body, "hello bot");
    assert.equal(first.direct, false);

    // The bot's own message comes back in the timeline and is not forwarded.
    await say(roomId, "the bot talking", FAKE_MATRIX_BOT.userId);
    await say(roomId, "after the bot");
    await until(() => ctx.stored.length >= 2 || undefined, 5_000, "second message");
    assert.deepEqual(
      forwarded(ctx).map((p) => p.event.content.body),
      ["hello bot", "after the bot"],
    );
    await connector.stop("shutdown");
  });

  it("resumes from the stored token after a restart: nothing said meanwhile is lost", async () => {
    const roomId = room("resume");
    await control("room", { roomId, joined: true });
    const first = await started();
    await until(() => first.ctx.values.get("since"), 5_000, "token");
    await first.connector.stop("shutdown");
    await say(roomId, "while the companion was down");
    const second = new MemoryContext(account(), { MATRIX_ACCESS_TOKEN: TOKEN });
    for (const [key, value] of first.ctx.values) second.values.set(key, value);
    const connector = matrixConnector(second.account, { pollTimeoutMs: 500 });
    await connector.start(second);
    await until(() => second.stored.length >= 1 || undefined, 5_000, "replayed");
    assert.equal(forwarded(second)[0]!.event.content.body, "while the companion was down");
    await connector.stop("shutdown");
  });

  it("skips an end-to-end encrypted room's events with one warning for the room", async () => {
    const secret = room("e2ee");
    const plain = room("plain");
    await control("room", { roomId: secret, joined: true, encrypted: true });
    await control("room", { roomId: plain, joined: true });
    const { ctx, connector } = await started();
    await until(() => ctx.values.get("since"), 5_000, "token");
    await say(secret, "ciphertext one");
    await say(secret, "ciphertext two");
    await say(plain, "in the clear");
    await until(() => ctx.stored.length >= 1 || undefined, 5_000, "plain message");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      forwarded(ctx).map((p) => p.roomId),
      [plain],
    );
    const warnings = ctx.logs.filter((l) => l.message.includes("end-to-end encrypted"));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.fields?.roomId, secret);
    await connector.stop("shutdown");
  });

  it("autoJoin off leaves invites pending; allowlist joins a listed room and an alias the homeserver resolves to it, never another; a DM invite joined goes into m.direct", async () => {
    const off = await started({ autoJoin: "off" });
    const ignored = room("ignored");
    await until(() => off.ctx.values.get("since"), 5_000, "token");
    await control("invite", { roomId: ignored, inviter: "@stranger:fake.test" });
    await until(
      () => off.ctx.logs.some((l) => l.message === "matrix invite left pending") || undefined,
      5_000,
      "invite seen",
    );
    await off.connector.stop("shutdown");
    assert.ok(!fake.world.joined.has(ignored));

    const listed = room("listed");
    const aliased = room("aliased");
    const other = room("other");
    const dm = room("dm");
    await control("room", { roomId: aliased, alias: "#support:fake.test" });
    // The unlisted room claims the listed alias in its invite state; only the homeserver's answer counts.
    await control("room", { roomId: other });
    const { ctx, connector } = await started({
      autoJoin: "allowlist",
      autoJoinAllowlist: [listed, "#support:fake.test", dm],
    });
    await until(() => ctx.values.get("since"), 5_000, "token");
    await control("invite", { roomId: listed, inviter: "@alice:fake.test" });
    await control("invite", { roomId: aliased, inviter: "@alice:fake.test" });
    await control("invite", { roomId: other, inviter: "@mallory:fake.test" });
    await control("invite", { roomId: dm, inviter: "@alice:fake.test", isDirect: true });
    await until(() => fake.world.accountData.get("m.direct"), 5_000, "joins and m.direct");
    assert.ok(fake.world.joined.has(listed));
    assert.ok(fake.world.joined.has(aliased));
    assert.ok(!fake.world.joined.has(other), "an unlisted room is not joined");
    assert.deepEqual(fake.world.accountData.get("m.direct"), { "@alice:fake.test": [dm] });
    await say(dm, "hi in our DM");
    await until(() => ctx.stored.length >= 1 || undefined, 5_000, "DM message");
    assert.equal(forwarded(ctx)[0]!.direct, true);
    await connector.stop("shutdown");
  });

  it("tells a reaction to the bot's own message from one to someone else's", async () => {
    const roomId = room("react");
    await control("room", { roomId, joined: true });
    const { ctx, connector } = await started();
    await until(() => ctx.values.get("since"), 5_000, "token");
    const own = await say(roomId, "the bot's answer", FAKE_MATRIX_BOT.userId);
    const theirs = await say(roomId, "alice's words");
    const react = (eventId: unknown) =>
      control("message", {
        roomId,
        sender: "@bob:fake.test",
        type: "m.reaction",
        content: { "m.relates_to": { rel_type: "m.annotation", event_id: eventId, key: "👍" } },
      });
    await react(own.event_id);
    await react(theirs.event_id);
    await until(() => ctx.stored.length >= 3 || undefined, 5_000, "reactions");
    const reactions = forwarded(ctx).filter((p) => p.event.type === "m.reaction");
    assert.deepEqual(
      reactions.map((p) => p.targetSender),
      [FAKE_MATRIX_BOT.userId, "@alice:fake.test"],
    );
    await connector.stop("shutdown");
  });

  it("a refused access token is fatal, with no token in the status", async () => {
    const { ctx, connector } = await started({}, "wrong-token");
    await until(() => ctx.state_ === "fatal" || undefined, 5_000, "fatal");
    assert.match(ctx.statuses.at(-1)!.lastError ?? "", /401 M_UNKNOWN_TOKEN/);
    assert.doesNotMatch(JSON.stringify(ctx.statuses), /wrong-token/);
    await connector.stop("shutdown");
  });
});

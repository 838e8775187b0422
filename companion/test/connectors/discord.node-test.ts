import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Connector, ConnectorAccount } from "../../src/connector.ts";
import { discordConnector } from "../../../functions/channels/discord/companion/connector.ts";
import {
  FakeDiscordGateway,
  messageCreateData,
} from "../../../functions/channels/discord/simulate/discord-gateway.ts";
import { MemoryContext, until } from "./memory-context.ts";

const TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeT.test-discord-token";
const INTENTS = 1 | (1 << 9) | (1 << 12) | (1 << 15);
const fast = {
  backoff: { initialMs: 20, maxMs: 80, stableMs: 60_000 },
  helloTimeoutMs: 2_000,
  readyTimeoutMs: 3_000,
  seqFlushMs: 20,
  invalidSessionDelayMs: [10, 30] as [number, number],
};

function account(apiBaseUrl: string): ConnectorAccount {
  return {
    channel: "discord",
    accountId: "default",
    label: "Discord",
    settings: { apiBaseUrl, intents: INTENTS },
    secretEnv: { token: "DISCORD_BOT_TOKEN" },
  };
}

describe("Discord Gateway connector", () => {
  let gateway: FakeDiscordGateway;
  const running: Connector[] = [];
  before(async () => (gateway = await new FakeDiscordGateway(TOKEN).listen()));
  after(async () => {
    for (const connector of running) await connector.stop("shutdown");
    await gateway.close();
  });

  async function started(
    ctx = new MemoryContext(account(gateway.apiBaseUrl), { DISCORD_BOT_TOKEN: TOKEN }),
  ) {
    const connector = discordConnector(ctx.account, fast);
    running.push(connector);
    const firstConnection = gateway.connections.length;
    await connector.start(ctx);
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    return { ctx, connector, connection: gateway.connections[firstConnection]! };
  }

  it("identifies with the token and intents, stores the session, forwards a message unchanged, and records its sequence only after submit resolved", async () => {
    const { ctx, connector, connection } = await started();
    assert.equal(gateway.gatewayBotCalls.at(-1)?.authorization, `Bot ${TOKEN}`);
    const identify = connection.received.find((frame) => frame.op === 2) as {
      d: { token: string; intents: number };
    };
    assert.equal(identify.d.token, TOKEN);
    assert.equal(identify.d.intents, INTENTS);
    assert.equal(ctx.values.get("session_id"), connection.sessionId);
    assert.match(ctx.values.get("resume_gateway_url") ?? "", /\/resume$/);

    ctx.hold();
    const d = messageCreateData("5001", "hello");
    const seq = gateway.dispatch("MESSAGE_CREATE", d);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.notEqual(
      ctx.values.get("seq"),
      String(seq),
      "no sequence recorded while the event is not stored",
    );
    ctx.release();
    await until(() => ctx.values.get("seq") === String(seq) || undefined, 3_000, "seq stored");
    assert.deepEqual(ctx.stored, [
      { eventId: "message:5001", payload: { op: 0, t: "MESSAGE_CREATE", s: seq, d } },
    ]);
    await connector.stop("shutdown");
    assert.equal(ctx.state_, "stopped");
  });

  it("heartbeats with the last sequence; a missing ACK (zombie) reconnects and RESUMEs with the stored session and sequence, losing nothing", async () => {
    const { ctx, connector, connection } = await started();
    await until(
      () => connection.received.some((frame) => frame.op === 1) || undefined,
      3_000,
      "a heartbeat",
    );
    const s1 = gateway.dispatch("MESSAGE_CREATE", messageCreateData("6001", "one"));
    await until(() => ctx.values.get("seq") === String(s1) || undefined, 3_000, "first stored");
    await until(
      () => connection.received.some((frame) => frame.op === 1 && frame.d === s1) || undefined,
      3_000,
      "heartbeat carries the sequence",
    );

    gateway.ackHeartbeats = false;
    // Dispatches that happen while the client is cut off are replayed on RESUME.
    const s2 = gateway.dispatch("MESSAGE_CREATE", messageCreateData("6002", "two"));
    await until(() => connection.closed || undefined, 3_000, "zombie connection dropped");
    gateway.ackHeartbeats = true;
    const sessionId = connection.sessionId!;
    const s3 = gateway.queue(sessionId, "MESSAGE_CREATE", messageCreateData("6003", "three"));
    const resumed = await until(
      () =>
        gateway.connections.find(
          (c) => c !== connection && c.received.some((frame) => frame.op === 6),
        ),
      5_000,
      "resume",
    );
    const resume = resumed.received.find((frame) => frame.op === 6) as {
      d: { session_id: string; seq: number };
    };
    assert.equal(resume.d.session_id, sessionId);
    assert.ok(
      resume.d.seq >= s1 && resume.d.seq <= s2,
      `resumed from a stored sequence (${resume.d.seq})`,
    );
    assert.equal(resumed.path, "/resume");
    await until(() => ctx.stored.length === 3 || undefined, 5_000, "replayed events");
    assert.deepEqual(
      ctx.stored.map((event) => event.eventId),
      ["message:6001", "message:6002", "message:6003"],
    );
    await until(
      () => Number(ctx.values.get("seq")) >= s3 || undefined,
      3_000,
      "seq advanced past the replay",
    );
    assert.equal(
      connection.closeCode === 1000 || connection.closeCode === 1001,
      false,
      "dropped without ending the session",
    );
    await connector.stop("shutdown");
  });

  it("resumes after a 4000 close, and a new companion with the stored state resumes where the last one stopped", async () => {
    const { ctx, connector, connection } = await started();
    const s1 = gateway.dispatch("MESSAGE_CREATE", messageCreateData("7001", "before"));
    await until(() => ctx.values.get("seq") === String(s1) || undefined, 3_000, "stored");
    gateway.closeWith(connection, 4000, "Unknown error");
    const second = await until(
      () =>
        gateway.connections.find(
          (c) => c !== connection && c.sessionId === connection.sessionId && !c.closed,
        ),
      5_000,
      "resumed connection",
    );
    assert.ok(second.received.some((frame) => frame.op === 6));
    assert.ok(!second.received.some((frame) => frame.op === 2), "no new IDENTIFY");

    await connector.stop("shutdown");
    const missed = gateway.queue(
      connection.sessionId!,
      "MESSAGE_CREATE",
      messageCreateData("7002", "while nobody listened"),
    );
    // A restart: a new connector on the same durable state (as the companion DO keeps it).
    const next = new MemoryContext(ctx.account, { DISCORD_BOT_TOKEN: TOKEN });
    for (const [key, value] of ctx.values) next.values.set(key, value);
    const connector2 = discordConnector(next.account, fast);
    running.push(connector2);
    await connector2.start(next);
    await until(
      () => next.stored.some((event) => event.eventId === "message:7002") || undefined,
      5_000,
      "missed event replayed",
    );
    assert.deepEqual(
      next.stored.map((event) => event.eventId),
      ["message:7002"],
      "resumed after the stored sequence: nothing already stored comes again",
    );
    await until(() => Number(next.values.get("seq")) >= missed || undefined, 3_000, "seq advanced");
    await connector2.stop("shutdown");
  });

  it("starts a new session after INVALID_SESSION (not resumable)", async () => {
    const { ctx, connector, connection } = await started();
    const oldSession = connection.sessionId;
    gateway.sessions.get(oldSession!)!.valid = false;
    gateway.send(connection, { op: 7, d: null }); // reconnect → RESUME → op 9 false → IDENTIFY
    await until(
      () =>
        gateway.connections.some((c) => c.sessionId && c.sessionId !== oldSession && !c.closed) ||
        undefined,
      6_000,
      "new session",
    );
    await until(
      () => (ctx.values.get("session_id") !== oldSession ? true : undefined),
      3_000,
      "new session stored",
    );
    await connector.stop("shutdown");
  });

  it("stops with a clear fatal error on close 4004 (bad token) and does not retry", async () => {
    const ctx = new MemoryContext(account(gateway.apiBaseUrl), {
      DISCORD_BOT_TOKEN: "bad.token.value",
    });
    // /gateway/bot refuses a wrong token before any socket: also fatal.
    const connector = discordConnector(ctx.account, fast);
    running.push(connector);
    await connector.start(ctx);
    await until(() => ctx.state_ === "fatal" || undefined, 5_000, "fatal");
    assert.match(ctx.statuses.at(-1)?.lastError ?? "", /refused the bot token/);
    assert.ok(
      !JSON.stringify(ctx.statuses).includes("bad.token.value"),
      "the token never appears in a status",
    );

    // A token /gateway/bot accepts but the Gateway refuses (4004 on IDENTIFY), via a stored resume URL.
    const ctx2 = new MemoryContext(account(gateway.apiBaseUrl), {
      DISCORD_BOT_TOKEN: "other.token.value",
    });
    ctx2.values.set("session_id", "session-unknown");
    ctx2.values.set("resume_gateway_url", `ws://127.0.0.1:${gateway.port}/resume`);
    const before = gateway.connections.length;
    const connector2 = discordConnector(ctx2.account, fast);
    running.push(connector2);
    await connector2.start(ctx2);
    await until(() => ctx2.state_ === "fatal" || undefined, 5_000, "fatal on 4004");
    assert.match(ctx2.statuses.at(-1)?.lastError ?? "", /4004/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(gateway.connections.length, before + 1, "no retry after a fatal close");
  });

  it("attaches a thread's parent and the bot's managed role learnt from GUILD_CREATE", async () => {
    const { ctx, connector } = await started();
    gateway.dispatch("GUILD_CREATE", {
      id: "1300000000000000001",
      channels: [{ id: "1300000000000000011", type: 0, name: "general" }],
      threads: [
        { id: "1400000000000000001", type: 11, parent_id: "1300000000000000011", name: "a thread" },
      ],
      roles: [
        { id: "1500000000000000001", name: "edgeclaw", tags: { bot_id: gateway.botUserId } },
        { id: "1500000000000000002", name: "mods" },
      ],
    });
    gateway.dispatch(
      "MESSAGE_CREATE",
      messageCreateData("8001", "in thread", { channel_id: "1400000000000000001" }),
    );
    await until(() => ctx.stored.length === 1 || undefined, 3_000, "forwarded");
    const payload = ctx.stored[0]!.payload as { context?: unknown };
    assert.deepEqual(payload.context, {
      channel: {
        id: "1400000000000000001",
        type: 11,
        parent_id: "1300000000000000011",
        name: "a thread",
      },
      botRoleIds: ["1500000000000000001"],
    });
    await connector.stop("shutdown");
  });

  it("a submit that fails drops the connection and resumes from the last stored sequence: the event comes again", async () => {
    const { ctx, connector, connection } = await started();
    ctx.failWith = new Error("worker answered 503");
    gateway.dispatch("MESSAGE_CREATE", messageCreateData("9001", "retry me"));
    await until(() => connection.closed || undefined, 3_000, "dropped");
    ctx.failWith = undefined;
    await until(
      () => ctx.stored.some((event) => event.eventId === "message:9001") || undefined,
      5_000,
      "stored after resume",
    );
    await connector.stop("shutdown");
  });
});

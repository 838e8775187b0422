import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { slackConnector } from "../../../functions/channels/slack/companion/connector.ts";
import {
  eventsApiEnvelope,
  FakeSlackSocketMode,
} from "../../../functions/channels/slack/simulate/slack-socket.ts";
import { MemoryContext, until } from "./memory-context.ts";

const APP_TOKEN = "xapp-1-A1-test-token";
const fast = {
  backoff: { initialMs: 20, maxMs: 80, stableMs: 60_000 },
  pingIntervalMs: 50,
  pongTimeoutMs: 300,
  helloTimeoutMs: 1_000,
  drainMs: 500,
};

function account(apiBaseUrl: string): ConnectorAccount {
  return {
    channel: "slack",
    accountId: "sock",
    label: "Slack",
    settings: { apiBaseUrl },
    secretEnv: { appToken: "SLACK_APP_TOKEN" },
  };
}

describe("Slack Socket Mode connector", () => {
  let fake: FakeSlackSocketMode;
  before(async () => (fake = await new FakeSlackSocketMode(APP_TOKEN).listen()));
  after(async () => fake.close());

  async function started(overrides: Partial<typeof fast> = {}) {
    const ctx = new MemoryContext(account(fake.apiBaseUrl), { SLACK_APP_TOKEN: APP_TOKEN });
    const connector = slackConnector(ctx.account, { ...fast, ...overrides });
    const firstConnection = fake.connections.length;
    await connector.start(ctx);
    return { ctx, connector, firstConnection };
  }

  it("acks an envelope only after submit() resolved (the Worker stored it), with exactly its envelope_id", async () => {
    const { ctx, connector, firstConnection } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    assert.equal(fake.opens.at(-1)?.authorization, `Bearer ${APP_TOKEN}`);
    const connection = fake.connections[firstConnection]!;
    ctx.hold();
    const envelope = eventsApiEnvelope("env-1", "Ev1");
    fake.send(connection, envelope);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(connection.received, [], "no ack while the event is not stored");
    ctx.release();
    await until(() => connection.received.length === 1 || undefined, 5_000, "ack");
    assert.deepEqual(connection.received, [{ envelope_id: "env-1" }]);
    assert.deepEqual(ctx.stored, [{ eventId: "event:Ev1", payload: envelope }]); // forwarded unchanged
    await connector.stop("shutdown");
    assert.equal(ctx.state_, "stopped");
    await until(() => connection.closed || undefined, 3_000, "socket closed on stop");
  });

  it("forwards and acks interactive and slash_commands envelopes; a failed submit leaves the envelope unacked", async () => {
    const { ctx, connector, firstConnection } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const connection = fake.connections[firstConnection]!;
    fake.send(connection, {
      envelope_id: "env-slash",
      type: "slash_commands",
      accepts_response_payload: true,
      payload: { command: "/openclaw", text: "hi", team_id: "T1" },
    });
    fake.send(connection, {
      envelope_id: "env-click",
      type: "interactive",
      accepts_response_payload: false,
      payload: { type: "block_actions", user: { id: "U1" } },
    });
    await until(() => connection.received.length === 2 || undefined, 5_000, "two acks");
    assert.deepEqual(
      new Set(connection.received.map((frame) => frame.envelope_id)),
      new Set(["env-slash", "env-click"]),
    );
    assert.deepEqual(ctx.stored.map((event) => event.eventId).sort(), [
      "envelope:env-click",
      "envelope:env-slash",
    ]);

    ctx.failWith = new Error("worker answered 503");
    fake.send(connection, eventsApiEnvelope("env-lost", "EvLost"));
    await until(
      () => ctx.logs.some((log) => log.message.startsWith("envelope not stored")) || undefined,
      5_000,
      "failure logged",
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(connection.received.length, 2, "never acked: Slack redelivers it");
    await connector.stop("shutdown");
  });

  it("on disconnect refresh_requested opens the next connection before closing the old, and keeps acking", async () => {
    const { ctx, connector, firstConnection } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    const old = fake.connections[firstConnection]!;
    const opensBefore = fake.opens.length;
    fake.send(old, {
      type: "disconnect",
      reason: "refresh_requested",
      debug_info: { host: "fake" },
    });
    const next = await until(
      () => fake.connections[firstConnection + 1],
      5_000,
      "second connection",
    );
    assert.equal(
      fake.opens.length,
      opensBefore + 1,
      "a fresh apps.connections.open URL (each is good for one connect)",
    );
    await until(() => old.closed || undefined, 3_000, "old connection closed after the switch");
    assert.ok(next.openedAt < old.closedAt!, "the new connection was up before the old one closed");
    fake.send(next, eventsApiEnvelope("env-2", "Ev2"));
    await until(() => next.received.length === 1 || undefined, 5_000, "ack on the new connection");
    assert.deepEqual(next.received, [{ envelope_id: "env-2" }]);
    assert.equal(
      ctx.statuses.some((status) => status.state === "backoff"),
      false,
      "a requested refresh is not a failure",
    );
    await connector.stop("shutdown");
  });

  it("reconnects with backoff when Slack drops the socket, and when pongs stop coming back", async () => {
    const { ctx, connector, firstConnection } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready");
    fake.connections[firstConnection]!.socket.terminate();
    const second = await until(() => fake.connections[firstConnection + 1], 5_000, "reconnected");
    await until(() => ctx.state_ === "ready", 5_000, "ready again");
    assert.ok(ctx.statuses.some((status) => status.state === "backoff"));
    second.socket.pause(); // a half-open link: no pong, no frames
    await until(
      () => fake.connections[firstConnection + 2],
      5_000,
      "reconnected after the pong timeout",
    );
    assert.ok(ctx.statuses.some((status) => status.lastError?.includes("no pong")));
    await connector.stop("shutdown");
  });

  it("stops for good on invalid auth, on a missing app token and on link_disabled (no retry storm)", async () => {
    const opensBefore = fake.opens.length;
    fake.openErrors.push("invalid_auth");
    const { ctx } = await started();
    await until(() => ctx.state_ === "fatal", 5_000, "fatal");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.opens.length, opensBefore + 1);
    assert.match(ctx.statuses.at(-1)!.lastError!, /invalid_auth/);
    assert.ok(!JSON.stringify(ctx.statuses).includes(APP_TOKEN));

    const tokenless = new MemoryContext(account(fake.apiBaseUrl), {});
    await slackConnector(tokenless.account, fast).start(tokenless);
    await until(() => tokenless.state_ === "fatal", 5_000, "fatal without a token");
    assert.match(tokenless.statuses.at(-1)!.lastError!, /SLACK_APP_TOKEN/);
    assert.equal(fake.opens.length, opensBefore + 1, "no call without a token");

    const disabled = await started();
    await until(() => disabled.ctx.state_ === "ready", 5_000, "ready");
    fake.send(fake.connections[disabled.firstConnection]!, {
      type: "disconnect",
      reason: "link_disabled",
    });
    await until(() => disabled.ctx.state_ === "fatal", 5_000, "fatal on link_disabled");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(fake.connections.length, disabled.firstConnection + 1, "no reconnect");
  });

  it("retries a transient apps.connections.open failure", async () => {
    fake.openErrors.push("internal_error");
    const { ctx, connector } = await started();
    await until(() => ctx.state_ === "ready", 5_000, "ready after a retry");
    assert.ok(ctx.statuses.some((status) => status.lastError?.includes("internal_error")));
    await connector.stop("shutdown");
  });
});

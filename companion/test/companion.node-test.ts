import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import {
  startFakeTelegramApi,
  type FakeTelegramApi,
} from "../../functions/channels/telegram/simulate/telegram-api.ts";
import { Companion } from "../src/companion.ts";
import { connectorSource } from "../src/connectors/index.ts";
import type { Connector, ConnectorFactory } from "../src/connector.ts";
import { OutboundRejectedError, type OutboundCommand } from "../src/outbound.ts";
import { sendCompanionCommand } from "../../functions/channels/companion/outbound-client.ts";
import { FakeWorker } from "./fake-worker.ts";
import {
  companionEnv,
  KEY,
  OUTBOUND,
  pollState,
  pushUpdates,
  quietLog,
  settings,
  telegramAccount,
  tempDir,
  until,
  update,
} from "./helpers.ts";

/**
 * The companion core with the Telegram polling connector, in process: fake Bot API (getUpdates long
 * poll, functions/channels/telegram/simulate/telegram-api.ts) → connector → durable outbox → signed batches → a loopback
 * Worker (fake-worker.ts, the same wire as /internal/companion/*). Lease, fencing, status and the
 * signed /v1/outbound with the Worker's own client.
 */

let telegram: FakeTelegramApi;
let worker: FakeWorker;
const running: Companion[] = [];

async function startCompanion(
  extraFactories: Record<string, ConnectorFactory> = {},
  extraEnv: Record<string, string> = {},
  dataDir = tempDir(),
): Promise<Companion> {
  const env = companionEnv(worker.url, dataDir, extraEnv);
  const companion = new Companion(settings(env), connectorSource(extraFactories), env, quietLog);
  await companion.start();
  running.push(companion);
  return companion;
}

async function stopAll() {
  for (const companion of running.splice(0)) await companion.stop().catch(() => undefined);
}

describe("companion with Telegram long polling", () => {
  before(async () => {
    telegram = await startFakeTelegramApi();
  });
  after(async () => {
    await stopAll();
    await worker.stop();
    await telegram.stop();
  });
  beforeEach(async () => {
    await stopAll();
    await worker?.stop();
    await fetch(`${telegram.url}/_control/reset`, { method: "POST" });
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [telegramAccount(telegram.url)],
      leaseTtlMs: 3_000,
    }).start();
  });

  it("forwards each update once and advances the offset only after the Worker stored the batch", async () => {
    const updates = [update("one"), update("two"), update("three")];
    await pushUpdates(telegram.url, updates);
    await startCompanion();
    await until(() => worker.stored.length === 3, 10_000, "3 stored");
    assert.deepEqual(
      worker.stored.map((s) => (s.payload as { message: { text: string } }).message.text),
      ["one", "two", "three"],
    );
    const last = updates[2]!.update_id;
    const write = await until(
      () => worker.stateWrites.find((w) => w.value === String(last + 1)),
      5_000,
      "offset write",
    );
    assert.ok(
      worker.stored.every((s) => s.storedAt <= write.at),
      "offset written after every update was stored",
    );
    await until(
      async () => (await pollState(telegram.url)).confirmedOffset === last + 1,
      5_000,
      "Telegram confirmed",
    );
    assert.equal(worker.state.get("telegram/poll/offset"), String(last + 1));
  });

  it("keeps the offset while the Worker is down; the retried batch is stored once", async () => {
    worker.failBatches = 3;
    const first = update("during outage");
    await pushUpdates(telegram.url, [first]);
    await startCompanion();
    await until(() => worker.stored.length === 1, 10_000, "stored after the outage");
    assert.ok(
      worker.received.filter((id) => id === String(first.update_id)).length >= 4,
      "sent again after each failure",
    );
    assert.ok(worker.stateWrites.every((w) => Number(w.value) <= first.update_id + 1));
    await until(
      () => worker.stateWrites.some((w) => w.value === String(first.update_id + 1)),
      5_000,
      "offset write",
    );
    assert.equal(
      worker.stateWrites.filter((w) => w.value === String(first.update_id + 1)).length,
      1,
    );
  });

  it("lets a second companion wait for the lease, then take over with a higher epoch from the stored offset", async () => {
    const a = await startCompanion();
    await until(() => a.lease.epoch, 5_000, "a holds the lease");
    await pushUpdates(telegram.url, [update("for a")]);
    await until(() => worker.stored.length === 1, 10_000, "a forwarded");
    const b = await startCompanion();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(b.lease.epoch, undefined, "b waits while a holds the lease");
    assert.deepEqual(b.supervisor.reports(), [], "b runs no connector");
    const epochA = a.lease.epoch!;
    await a.stop();
    const epochB = await until(() => b.lease.epoch, 8_000, "b takes the lease");
    assert.ok(epochB > epochA);
    await pushUpdates(telegram.url, [update("for b")]);
    await until(() => worker.stored.length === 2, 10_000, "b forwarded");
    assert.deepEqual(
      worker.stored.map((s) => (s.payload as { message: { text: string } }).message.text),
      ["for a", "for b"],
    );
  });

  it("stops its connectors when the lease is taken away (a stale epoch is refused)", async () => {
    const a = await startCompanion();
    await until(() => a.supervisor.reports()[0]?.state === "ready", 5_000, "ready");
    // Another instance takes over (e.g. the lease ran out during a partition).
    worker.lease = {
      holder: "intruder",
      epoch: ++worker.epochCounter,
      expiresAt: Date.now() + 60_000,
    };
    await until(() => a.lease.epoch === undefined, 5_000, "a noticed");
    await until(() => a.supervisor.reports().length === 0, 5_000, "a's connectors stopped");
  });

  it("refuses to poll while the bot has a webhook, and says so in its status", async () => {
    await fetch(`${telegram.url}/bot7000000099:companion-test-token/setWebhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "https://example.test/telegram-webhook" }),
    });
    const companion = await startCompanion();
    const report = await until(
      () => companion.supervisor.reports().find((r) => r.lastError?.includes("webhook is set")),
      5_000,
      "webhook error",
    );
    assert.equal(report.state, "backoff");
    const calls = (await (
      await fetch(`${telegram.url}/_control/calls?method=getUpdates`)
    ).json()) as unknown[];
    assert.equal(calls.length, 0, "never polled");
    await until(
      () => worker.statuses.some((s) => JSON.stringify(s).includes("webhook is set")),
      5_000,
      "reported to the Worker",
    );
  });

  it("marks a rejected token fatal without retrying", async () => {
    const companion = await startCompanion({}, { TG_TOKEN: "7000000099:invalid" });
    const report = await until(
      () => companion.supervisor.reports().find((r) => r.state === "fatal"),
      5_000,
      "fatal",
    );
    assert.match(report.lastError ?? "", /401/);
  });
});

describe("companion /v1/outbound with the Worker's client", () => {
  const sent: OutboundCommand[] = [];
  const loopback: ConnectorFactory = (account) => {
    const connector: Connector & {
      send(command: OutboundCommand): Promise<{ platformMessageIds: string[]; sentAt: number }>;
    } = {
      channel: account.channel,
      accountId: account.accountId,
      async start(ctx) {
        ctx.setStatus({ state: "ready" });
      },
      async stop() {},
      async send(command) {
        if (command.payload.text === "forbidden")
          throw new OutboundRejectedError("blocked", "the user blocked the bot");
        sent.push(command);
        return { platformMessageIds: [`m-${sent.length}`], sentAt: Date.now() };
      },
    };
    return connector;
  };

  before(async () => {
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [
        {
          channel: "loopback",
          accountId: "default",
          label: "Loopback",
          settings: {},
          secretEnv: {},
        },
      ],
    }).start();
  });
  after(async () => {
    await stopAll();
    await worker.stop();
  });

  it("sends a command once; a retry with the same commandId gets the receipt, not a second send", async () => {
    const companion = await startCompanion({ loopback });
    await until(() => companion.supervisor.reports()[0]?.state === "ready", 5_000, "ready");
    const config = {
      url: `http://127.0.0.1:${companion.port}`,
      outboundKeys: [{ id: OUTBOUND.id, secret: { source: "env" as const, id: "OUT" } }],
      outboundTimeoutMs: 5_000,
    };
    const env = { OUT: OUTBOUND.secret };
    const command = {
      commandId: "cmd-1",
      channel: "loopback",
      accountId: "default",
      op: "send" as const,
      target: { conversationId: "c1" },
      payload: { text: "hello" },
    };
    assert.deepEqual(await sendCompanionCommand(config, env, command), {
      outcome: "sent",
      duplicate: false,
      platformMessageIds: ["m-1"],
    });
    assert.deepEqual(await sendCompanionCommand(config, env, command), {
      outcome: "sent",
      duplicate: true,
      platformMessageIds: ["m-1"],
    });
    assert.equal(sent.length, 1);
    const concurrent = await Promise.all(
      [1, 2, 3].map(() => sendCompanionCommand(config, env, { ...command, commandId: "cmd-2" })),
    );
    assert.equal(sent.length, 2, "three concurrent deliveries of one command: one send");
    assert.ok(concurrent.every((r) => r.outcome === "sent"));
    assert.deepEqual(
      await sendCompanionCommand(config, env, {
        ...command,
        commandId: "cmd-3",
        payload: { text: "forbidden" },
      }),
      { outcome: "permanent", reason: "companion answered 422 rejected (blocked)" },
    );
    const offline = await sendCompanionCommand(config, env, {
      ...command,
      commandId: "cmd-4",
      accountId: "other",
    });
    assert.equal(offline.outcome, "transient");
    const forged = await sendCompanionCommand(
      config,
      { OUT: "wrong-secret" },
      { ...command, commandId: "cmd-5" },
    );
    assert.equal(forged.outcome, "permanent");
    assert.match((forged as { reason: string }).reason, /401/);
    assert.equal(sent.length, 2);
  });
});

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import {
  startFakeSignalDaemon,
  type FakeSignalDaemon,
} from "../../functions/channels/signal/simulate/signal-daemon.ts";
import { FAKE_SIGNAL_BOT } from "../../functions/channels/signal/simulate/signal-world.ts";
import { sampleRss, spawnCompanion } from "./companion-process.ts";
import { FakeWorker } from "./fake-worker.ts";
import { companionEnv, KEY, tempDir, until } from "./helpers.ts";

/**
 * The real companion process (node --import tsx src/main.ts) with the Signal connector against the
 * fake signal-cli daemon, killed with SIGKILL after a receive answered and its envelopes went to
 * the Worker but before the Worker's accept came back; restarted on the same data directory: every
 * envelope is stored exactly once, in order, though signal-cli has forgotten them (the companion's
 * outbox had them on disk). Then a burst through the restarted process gives the figures: events/s
 * to durable accept (the loopback Worker, companion/test/fake-worker.ts) and resident memory.
 */
const ALICE = "+15550002222";

describe("Signal through the companion across SIGKILL", () => {
  let daemon: FakeSignalDaemon;
  let worker: FakeWorker;
  const children: ChildProcess[] = [];
  before(async () => {
    daemon = await startFakeSignalDaemon();
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [
        {
          channel: "signal",
          accountId: "default",
          label: "Signal",
          settings: {
            number: FAKE_SIGNAL_BOT.number,
            url: daemon.url,
            managed: null,
            ignoreAttachments: false,
            mediaMaxBytes: 8 * 1024 * 1024,
          },
          secretEnv: {},
        },
      ],
      leaseTtlMs: 1_500,
    }).start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await worker.stop();
    await daemon.stop();
  });

  const say = (text: string) => daemon.world.incoming({ from: ALICE, text });
  const receives = async () =>
    ((await (await fetch(`${daemon.url}/_control/state`)).json()) as { receives: number }).receives;

  it("stores every envelope once after a kill between signal-cli's answer and the accept", {
    timeout: 120_000,
  }, async () => {
    const env = companionEnv(worker.url, tempDir());
    const first = spawnCompanion(env);
    children.push(first);
    await until(async () => ((await receives()) > 0 ? true : undefined), 30_000, "first receive");

    let release!: () => void;
    worker.hold = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (worker.onHeld = resolve));
    const ids = [say("before the crash"), say("also before")].map((t) => `${ALICE}:${t}`);
    await held; // the batch reached the Worker, which has not answered
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    assert.equal(worker.stored.length, 0, "nothing accepted yet");
    assert.equal(daemon.world.pending(), 0, "signal-cli has handed them over and forgotten them");
    worker.hold = undefined;
    release(); // the held request completes into a dead socket: stored, but the answer is lost

    const second = spawnCompanion(env);
    children.push(second);
    const after = say("after the restart");
    await until(() => worker.stored.length >= 3 || undefined, 30_000, "all stored");
    assert.deepEqual(
      worker.stored.map((s) => s.eventId),
      [...ids, `${ALICE}:${after}`],
      "each envelope stored exactly once, in order",
    );
    // The outbox sent the leftovers again after the restart; the Worker deduplicated them.
    assert.ok(worker.received.filter((id) => id === ids[0]).length >= 2);

    // Figures: a burst through the restarted process.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const memory = sampleRss(second.pid!);
    const burst = 1_000;
    const started = Date.now();
    for (let i = 0; i < burst; i += 1) say(`burst ${i}`);
    await until(() => worker.stored.length >= burst + 3 || undefined, 120_000, "the burst stored");
    const seconds = (Date.now() - started) / 1000;
    const { idle, peak } = memory.stop();
    assert.equal(new Set(worker.stored.map((s) => s.eventId)).size, burst + 3, "nothing doubled");
    console.log(
      `signal companion: ${burst} envelopes → durable accept in ${seconds.toFixed(2)} s = ${Math.round(burst / seconds)} events/s; resident memory idle ${idle.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB`,
    );

    second.kill("SIGTERM");
    await new Promise((resolve) => second.once("exit", resolve));
    assert.equal(second.exitCode, 0, "graceful stop on SIGTERM");
  });
});

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import {
  startFakeHomeserver,
  type FakeHomeserver,
} from "../../functions/channels/matrix/simulate/matrix-homeserver.ts";
import { sampleRss, spawnCompanion } from "./companion-process.ts";
import { FakeWorker } from "./fake-worker.ts";
import { companionEnv, KEY, tempDir, until } from "./helpers.ts";

/**
 * The real companion process (node --import tsx src/main.ts) with the Matrix connector against the
 * fake homeserver, killed with SIGKILL after it read a sync batch and sent it to the Worker but
 * before the Worker's accept came back; restarted on the same data directory: every event is
 * stored exactly once, in order, and the `since` token moves past the batch only after it was
 * stored. Then a burst through the restarted process gives the figures: events/s to durable accept
 * (the loopback Worker, companion/test/fake-worker.ts) and the process's resident memory.
 */
const ROOM = "!durable:fake.test";
const SINCE = "matrix/default/since";

describe("Matrix through the companion across SIGKILL", () => {
  let homeserver: FakeHomeserver;
  let worker: FakeWorker;
  const children: ChildProcess[] = [];
  before(async () => {
    homeserver = await startFakeHomeserver();
    homeserver.world.room(ROOM);
    homeserver.world.joined.add(ROOM);
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [
        {
          channel: "matrix",
          accountId: "default",
          label: "Matrix",
          settings: {
            homeserver: homeserver.url,
            dangerouslyAllowPrivateNetwork: true,
            autoJoin: "off",
            autoJoinAllowlist: [],
            initialSyncLimit: 0,
          },
          secretEnv: { accessToken: "MX_TOKEN" },
        },
      ],
      leaseTtlMs: 1_500,
    }).start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await worker.stop();
    await homeserver.stop();
  });

  const say = (body: string) =>
    homeserver.world.append(ROOM, {
      type: "m.room.message",
      sender: "@alice:fake.test",
      content: { msgtype: "m.text", body },
    }).event_id;

  it("stores every event once after a kill between the sync and the accept; `since` waits for the accept", {
    timeout: 120_000,
  }, async () => {
    const env = companionEnv(worker.url, tempDir(), { MX_TOKEN: "mx-test-token" });
    const first = spawnCompanion(env);
    children.push(first);
    const initial = await until(() => worker.state.get(SINCE), 30_000, "the initial sync");

    let release!: () => void;
    worker.hold = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (worker.onHeld = resolve));
    const ids = [say("before the crash"), say("also before")];
    await held; // the batch reached the Worker, which has not answered
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    assert.equal(worker.stored.length, 0, "nothing accepted yet");
    assert.equal(worker.state.get(SINCE), initial, "since never moved past the batch");
    worker.hold = undefined;
    release(); // the held request completes into a dead socket: stored, but the answer is lost

    const second = spawnCompanion(env);
    children.push(second);
    await until(() => worker.state.get(SINCE) !== initial || undefined, 30_000, "since advanced");
    assert.deepEqual(
      worker.stored.map((s) => s.eventId),
      ids,
      "each event stored exactly once, in order",
    );
    const write = worker.stateWrites.find((w) => w.key === "since" && w.value !== initial)!;
    assert.ok(
      worker.stored.every((s) => s.storedAt <= write.at),
      "since written only after the accept",
    );
    // Sent again after the restart (outbox leftovers and the replayed sync), deduplicated by the Worker.
    assert.ok(worker.received.filter((id) => id === ids[0]).length >= 2);

    // Figures: a burst through the restarted process.
    const memory = sampleRss(second.pid!);
    const burst = 1_000;
    const started = Date.now();
    for (let i = 0; i < burst; i += 1) say(`burst ${i}`);
    await until(() => worker.stored.length >= burst + 2 || undefined, 120_000, "the burst stored");
    const seconds = (Date.now() - started) / 1000;
    const { idle, peak } = memory.stop();
    assert.equal(new Set(worker.stored.map((s) => s.eventId)).size, burst + 2, "nothing doubled");
    console.log(
      `matrix companion: ${burst} room events → durable accept in ${seconds.toFixed(2)} s = ${Math.round(burst / seconds)} events/s; resident memory idle ${idle.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB`,
    );

    second.kill("SIGTERM");
    await new Promise((resolve) => second.once("exit", resolve));
    assert.equal(second.exitCode, 0, "graceful stop on SIGTERM");
  });
});

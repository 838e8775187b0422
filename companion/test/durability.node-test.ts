import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import {
  startFakeTelegramApi,
  type FakeTelegramApi,
} from "../../functions/channels/telegram/simulate/telegram-api.ts";
import { spawnCompanion } from "./companion-process.ts";
import { FakeWorker } from "./fake-worker.ts";
import {
  companionEnv,
  KEY,
  pollState,
  pushUpdates,
  telegramAccount,
  tempDir,
  until,
  update,
} from "./helpers.ts";

/**
 * The real companion process (node --import tsx src/main.ts), killed with SIGKILL after it read an
 * update from Telegram and sent it to the Worker but before the Worker's accept came back; restarted
 * on the same data directory: the update is stored exactly once, nothing is lost, and the offset
 * moves past it only after it was stored.
 */

describe("companion durability across SIGKILL", () => {
  let telegram: FakeTelegramApi;
  let worker: FakeWorker;
  const children: ChildProcess[] = [];
  before(async () => {
    telegram = await startFakeTelegramApi();
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [telegramAccount(telegram.url)],
      leaseTtlMs: 1_500,
    }).start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await worker.stop();
    await telegram.stop();
  });

  it("delivers an update once after a kill between receipt and accept; the offset waits for the accept", {
    timeout: 60_000,
  }, async () => {
    const dataDir = tempDir();
    const env = companionEnv(worker.url, dataDir);
    const updates = [update("before the crash"), update("also before")];
    let release!: () => void;
    worker.hold = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (worker.onHeld = resolve));
    const first = spawnCompanion(env);
    children.push(first);
    await pushUpdates(telegram.url, updates);
    await held; // the batch reached the Worker, which has not answered
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    assert.equal(worker.stored.length, 0, "nothing accepted yet");
    assert.equal(worker.stateWrites.length, 0, "offset never moved");
    assert.equal(
      (await pollState(telegram.url)).confirmedOffset,
      0,
      "Telegram still holds the updates",
    );
    worker.hold = undefined;
    release(); // the held request now completes into a dead socket: stored, but the answer is lost

    // The killed instance's lease must run out (ttl 1.5 s) before the new one may poll.
    const second = spawnCompanion(env);
    children.push(second);
    const last = updates[1]!.update_id;
    await until(
      () => worker.state.get("telegram/poll/offset") === String(last + 1),
      20_000,
      "offset advanced",
    );
    assert.deepEqual(
      worker.stored.map((s) => s.eventId),
      updates.map((u) => String(u.update_id)),
      "each update stored exactly once, in order",
    );
    const write = worker.stateWrites.find((w) => w.value === String(last + 1))!;
    assert.ok(
      worker.stored.every((s) => s.storedAt <= write.at),
      "offset written only after the accept",
    );
    // Sent again after the restart (outbox leftovers and Telegram's redelivery), deduplicated by the Worker.
    assert.ok(worker.received.filter((id) => id === String(updates[0]!.update_id)).length >= 2);

    await pushUpdates(telegram.url, [update("after the restart")]);
    await until(() => worker.stored.length === 3, 10_000, "new update after the restart");
    second.kill("SIGTERM");
    await new Promise((resolve) => second.once("exit", resolve));
    assert.equal(second.exitCode, 0, "graceful stop on SIGTERM");
  });
});

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WorkerClient } from "../src/worker-client.ts";
import { StaleEpochError, StateClient } from "../src/state-client.ts";
import { LeaseKeeper } from "../src/lease.ts";
import { WhatsAppAuthStore } from "../../functions/channels/whatsapp/companion/auth-store.ts";
import {
  linkTransition,
  type LinkState,
} from "../../functions/channels/whatsapp/companion/link-state.ts";
import {
  baileysRuntime,
  type WaAuthRuntime,
  type WaLogger,
} from "../../functions/channels/whatsapp/companion/wa-socket.ts";
import { FakeWorker } from "./fake-worker.ts";
import { KEY } from "./helpers.ts";

/**
 * The WhatsApp link state machine, transition by transition, and the Baileys auth state over the
 * real StateClient against the loopback Worker: written under the lease epoch, read back through
 * Baileys' key cache, large values chunked, and every write refused once another companion holds
 * the lease — a stale instance can never roll the session's keys back.
 */

const silent: WaLogger = {
  level: "silent",
  child: () => silent,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

describe("WhatsApp link state machine", () => {
  const close = (from: LinkState, statusCode: number | undefined) =>
    linkTransition(from, { type: "close", statusCode, now: 1_000, backoffMs: 500 });
  const linkedState: LinkState = { state: "linked", me: "1555:7@s.whatsapp.net" };

  it("moves unlinked → awaiting-qr → (515) reconnecting at once → connecting → linked", () => {
    let state: LinkState = { state: "unlinked" };
    state = linkTransition(state, { type: "socket", registered: false }).next;
    assert.equal(state.state, "unlinked");
    state = linkTransition(state, { type: "qr", qr: "2@a", now: 0, first: true }).next;
    assert.deepEqual(state, { state: "awaiting-qr", qr: "2@a", expiresAt: 60_000 });
    state = linkTransition(state, { type: "qr", qr: "2@b", now: 60_000, first: false }).next;
    assert.deepEqual(state, { state: "awaiting-qr", qr: "2@b", expiresAt: 80_000 });
    const restart = close(state, 515);
    assert.equal(restart.action, "reconnect-now");
    assert.deepEqual(restart.next, {
      state: "reconnecting",
      attempt: 0,
      retryAt: 1_000,
      reason: "restart required (515)",
    });
    state = linkTransition(restart.next, { type: "socket", registered: true }).next;
    assert.equal(state.state, "connecting");
    assert.deepEqual(
      linkTransition(state, { type: "open", me: "1555:7@s.whatsapp.net" }).next,
      linkedState,
    );
  });

  it("transient closes back off and count attempts; terminal closes stop and ignore what follows", () => {
    const lost = close(linkedState, 428);
    assert.equal(lost.action, "reconnect-later");
    assert.deepEqual(lost.next, {
      state: "reconnecting",
      attempt: 0,
      retryAt: 1_500,
      reason: "connection closed (428)",
    });
    assert.equal(
      close(lost.next, 408).next.state === "reconnecting" &&
        (close(lost.next, 408).next as { attempt: number }).attempt,
      1,
    );
    for (const code of [500, 503, undefined])
      assert.equal(close(linkedState, code).action, "reconnect-later");

    const out = close(linkedState, 401);
    assert.equal(out.action, "forget-and-stop");
    assert.equal(out.next.state, "logged-out");
    assert.equal(close(linkedState, 411).action, "forget-and-stop");
    assert.deepEqual(
      [close(linkedState, 403).action, close(linkedState, 403).next.state],
      ["stop", "logged-out"],
    );
    const replaced = close(linkedState, 440);
    assert.deepEqual([replaced.action, replaced.next.state], ["stop", "replaced"]);
    // Terminal: nothing moves it (a late QR or open from a dying socket).
    assert.deepEqual(linkTransition(out.next, { type: "open", me: "x" }), {
      next: out.next,
      action: "none",
    });
    assert.deepEqual(close(replaced.next, 515), { next: replaced.next, action: "none" });
  });
});

describe("WhatsApp auth state in the Worker's companion state", () => {
  let worker: FakeWorker;
  let helpers: WaAuthRuntime;
  before(async () => {
    helpers = await baileysRuntime();
    worker = await new FakeWorker({ keys: [KEY], accounts: [], leaseTtlMs: 30_000 }).start();
  });
  after(async () => worker.stop());

  const client = () => new WorkerClient(worker.url, KEY, 5_000);
  async function holder(instance: string) {
    const lease = new LeaseKeeper(client(), instance, () => undefined);
    await lease.acquire(new AbortController().signal, () => undefined);
    const state = new StateClient(
      client(),
      () => lease.epoch,
      (reason) => lease.lost(reason),
    );
    const scoped = {
      get: (key: string) => state.get("whatsapp", "default", key),
      put: (key: string, value: string | null) => state.put("whatsapp", "default", key, value),
      getMany: (keys: string[]) => state.getMany("whatsapp", "default", keys),
      putMany: (entries: Array<{ key: string; value: string | null }>) =>
        state.putMany("whatsapp", "default", entries),
    };
    return { lease, scoped };
  }

  it("writes creds and keys under the epoch, reads them back with their bytes, chunks a large value, and refuses every write from an instance that lost the lease", async () => {
    const a = await holder("companion-a");
    const store = new WhatsAppAuthStore(a.scoped, helpers);
    const auth = await store.load(silent);
    assert.equal(auth.creds.registered, false, "fresh creds for a device never linked");
    auth.creds.registered = true;
    await store.saveCreds();
    const session = new Uint8Array(2_000).fill(7);
    const appState = {
      version: 3,
      hash: Buffer.alloc(128, 1),
      indexValueMap: Object.fromEntries(
        Array.from({ length: 900 }, (_, i) => [
          `mac-${i}`,
          { valueMac: Buffer.alloc(32, i % 256) },
        ]),
      ),
    };
    await auth.keys.set({
      session: { "15551230000.0": session },
      "app-state-sync-version": { regular: appState },
      "pre-key": { "1": { public: new Uint8Array(32), private: new Uint8Array(32).fill(9) } },
    });
    const appStateRow = worker.state.get("whatsapp/default/auth:1:app-state-sync-version:regular")!;
    assert.match(appStateRow, /^\u0000chunks:\d+$/, "the large value is chunked");

    // Another reader (a restarted companion) sees exactly what was written.
    const reader = new WhatsAppAuthStore(a.scoped, helpers);
    const again = await reader.load(silent);
    assert.equal(again.creds.registered, true);
    const read = await again.keys.get("session", ["15551230000.0"]);
    assert.deepEqual(new Uint8Array(read["15551230000.0"] as Uint8Array), session);
    const version = (await again.keys.get("app-state-sync-version", ["regular"]))
      .regular as typeof appState;
    assert.equal(Object.keys(version.indexValueMap).length, 900);
    assert.equal(version.indexValueMap["mac-5"]!.valueMac[0], 5);

    // The lease goes to another instance; the first one's writes are refused and change nothing.
    await a.lease.release();
    const b = await holder("companion-b");
    assert.ok(b.lease.epoch! > 0);
    const before = worker.state.get("whatsapp/default/auth:1:session:15551230000.0");
    await assert.rejects(
      auth.keys.set({ session: { "15551230000.0": new Uint8Array(10) } }),
      StaleEpochError,
    );
    auth.creds.registered = false;
    await assert.rejects(store.saveCreds(), StaleEpochError);
    assert.equal(worker.state.get("whatsapp/default/auth:1:session:15551230000.0"), before);
    assert.equal(JSON.parse(worker.state.get("whatsapp/default/auth:1:creds")!).registered, true);
    await b.lease.release();
  });
});

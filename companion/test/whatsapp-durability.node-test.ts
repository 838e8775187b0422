import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import {
  startFakeWhatsAppServer,
  type FakeWhatsAppServer,
} from "../../functions/channels/whatsapp/simulate/fake-whatsapp-server.ts";
import { sampleRss, spawnCompanion } from "./companion-process.ts";
import { FakeWorker } from "./fake-worker.ts";
import { companionEnv, KEY, tempDir, until } from "./helpers.ts";

/**
 * The real companion process (node --import tsx src/main.ts) with the WhatsApp connector, its
 * Baileys socket replaced by the simulated WhatsApp on loopback (EDGECLAW_WHATSAPP_SIMULATOR_URL):
 * linked by a scan, the session kept in the loopback Worker's state, then killed with SIGKILL after
 * it handed two messages to the Worker and before the Worker's accept came back. Restarted on the
 * same data directory, it reconnects from the stored session without a QR code, and every message
 * is stored exactly once, in order — also the one WhatsApp delivers again as an offline message.
 * Then a burst gives the figures: messages/s to durable accept and the process's resident memory.
 */
const DM = "15551230000@s.whatsapp.net";

let ids = 0;
const message = (body: string) => ({
  key: {
    remoteJid: DM,
    id: `3EB0D${(ids++).toString(16).padStart(15, "0").toUpperCase()}`,
    fromMe: false,
  },
  messageTimestamp: Math.floor(Date.now() / 1000),
  pushName: "Alice",
  message: { conversation: body },
});

describe("WhatsApp through the companion across SIGKILL", () => {
  let whatsapp: FakeWhatsAppServer;
  let worker: FakeWorker;
  const children: ChildProcess[] = [];
  before(async () => {
    whatsapp = await startFakeWhatsAppServer();
    worker = await new FakeWorker({
      keys: [KEY],
      accounts: [
        {
          channel: "whatsapp",
          accountId: "default",
          label: "WhatsApp",
          settings: {},
          secretEnv: {},
        },
      ],
      leaseTtlMs: 1_500,
    }).start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await worker.stop();
    await whatsapp.stop();
  });

  const linkReported = (state: string) =>
    (
      worker.statuses as Array<{
        connectors: Array<{ link?: { state: string; qrModules?: string[] } }>;
      }>
    ).some((report) => report.connectors.some((c) => c.link?.state === state));

  it("links once, then stores every message once after a kill between the hand-over and the accept", {
    timeout: 180_000,
  }, async () => {
    const env = companionEnv(worker.url, tempDir(), {
      EDGECLAW_WHATSAPP_SIMULATOR_URL: whatsapp.url,
    });
    const first = spawnCompanion(env);
    children.push(first);
    await until(
      () => linkReported("awaiting-qr") || undefined,
      60_000,
      "the QR code reported to the Worker",
    );
    whatsapp.scan();
    await whatsapp.waitOpen(30_000);
    await until(() => linkReported("linked") || undefined, 30_000, "linked reported");
    assert.ok(
      worker.state.get("whatsapp/default/auth:1:creds"),
      "the session is in the Worker's state",
    );

    let release!: () => void;
    worker.hold = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (worker.onHeld = resolve));
    const sent = [message("before the crash"), message("also before")];
    whatsapp.deliver(sent);
    await held; // the events reached the Worker, which has not answered
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    assert.equal(worker.stored.length, 0, "nothing accepted yet");
    worker.hold = undefined;
    release(); // the held request completes into a dead socket: stored, but the answer is lost

    const connectionsBefore = whatsapp.connections();
    const second = spawnCompanion(env);
    children.push(second);
    await until(
      () => whatsapp.connections() > connectionsBefore || undefined,
      60_000,
      "reconnected",
    );
    await whatsapp.waitOpen(30_000); // from the stored creds: no QR code this time
    whatsapp.deliver([sent[1]!], "append"); // WhatsApp's offline redelivery of one of them
    const ids = sent.map((m) => `${DM}:${m.key.id}`);
    await until(
      () =>
        (worker.stored.length >= 2 && worker.received.filter((id) => id === ids[1]).length >= 2) ||
        undefined,
      30_000,
      "stored",
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      worker.stored.map((s) => s.eventId),
      ids,
      "each message stored exactly once, in order",
    );

    // Figures: a burst through the restarted process.
    const memory = sampleRss(second.pid!);
    const burst = 1_000;
    const started = Date.now();
    for (let i = 0; i < burst; i += 50)
      whatsapp.deliver(Array.from({ length: 50 }, (_, j) => message(`burst ${i + j}`)));
    await until(() => worker.stored.length >= burst + 2 || undefined, 120_000, "the burst stored");
    const seconds = (Date.now() - started) / 1000;
    const { idle, peak } = memory.stop();
    assert.equal(new Set(worker.stored.map((s) => s.eventId)).size, burst + 2, "nothing doubled");
    console.log(
      `whatsapp companion: ${burst} messages → durable accept in ${seconds.toFixed(2)} s = ${Math.round(burst / seconds)} messages/s; resident memory idle ${idle.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB`,
    );

    second.kill("SIGTERM");
    await new Promise((resolve) => second.once("exit", resolve));
    assert.equal(second.exitCode, 0, "graceful stop on SIGTERM");
  });
});

/**
 * `npx tsx companion/bench/signal-receive.ts [events]` — envelopes per second from the fake
 * signal-cli daemon's `receive` through the real companion process (bundled dist/main.js when
 * built: `npm run build -w companion`; else tsx) to a loopback Worker's durable accept
 * (companion/test/fake-worker.ts, same wire), and the process's resident memory idle and under
 * load (VmRSS from /proc). The envelopes arrive in bursts of 100 from 10 senders. Prints figures;
 * asserts nothing.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { startFakeSignalDaemon } from "../../functions/channels/signal/simulate/signal-daemon.ts";
import { FAKE_SIGNAL_BOT } from "../../functions/channels/signal/simulate/signal-world.ts";
import { FakeWorker } from "../test/fake-worker.ts";
import { companionEnv, KEY, tempDir, until } from "../test/helpers.ts";

const total = Number(process.argv[2] ?? 5000);
const daemon = await startFakeSignalDaemon();
const senders = Array.from({ length: 10 }, (_, i) => `+1555010${String(i).padStart(4, "0")}`);
const worker = await new FakeWorker({
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
}).start();
const bundled = new URL("../../companion/dist/main.js", import.meta.url).pathname;
const args = existsSync(bundled)
  ? [bundled]
  : ["--import", "tsx", new URL("../../companion/src/main.ts", import.meta.url).pathname];
const child = spawn(process.execPath, args, {
  env: { ...process.env, ...companionEnv(worker.url, tempDir()) },
  stdio: ["ignore", "ignore", "inherit"],
});
const rss = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const receives = async () =>
  ((await (await fetch(`${daemon.url}/_control/state`)).json()) as { receives: number }).receives;
try {
  await until(async () => ((await receives()) > 0 ? true : undefined), 30_000, "the first receive");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = rss();
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
  const started = Date.now();
  for (let sent = 0; sent < total; sent += 100) {
    for (let i = sent; i < Math.min(sent + 100, total); i += 1)
      daemon.world.incoming({ from: senders[i % senders.length], text: `bench ${i}` });
    await new Promise((resolve) => setImmediate(resolve));
  }
  await until(() => worker.stored.length >= total || undefined, 300_000, "all stored");
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  console.log(
    `companion (${args.length === 1 ? "bundled" : "tsx"}): ${total} Signal envelopes → durable accept in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s`,
  );
  console.log(
    `resident memory: idle ${idle.toFixed(1)} MiB, peak under load ${peak.toFixed(1)} MiB`,
  );
} finally {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  await worker.stop();
  await daemon.stop();
}

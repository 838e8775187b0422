/**
 * npm run bench:companion — events per second from a fake Telegram Bot API (getUpdates long poll)
 * through the real companion process (bundled dist/main.js when built, else tsx) to a loopback
 * Worker's durable accept (companion/test/fake-worker.ts, same wire), and the process's resident
 * memory idle and under load (VmRSS from /proc). Prints figures; asserts nothing.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { startFakeTelegramApi } from "../../functions/channels/telegram/simulate/telegram-api.ts";
import { FakeWorker } from "../test/fake-worker.ts";
import {
  companionEnv,
  KEY,
  pushUpdates,
  telegramAccount,
  tempDir,
  until,
  update,
} from "../test/helpers.ts";

const total = Number(process.argv[2] ?? 5000);
const telegram = await startFakeTelegramApi();
const worker = await new FakeWorker({
  keys: [KEY],
  accounts: [telegramAccount(telegram.url)],
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
try {
  await until(() => worker.statuses.length > 0, 20_000, "companion ready");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = rss();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
  const started = Date.now();
  for (let sent = 0; sent < total; sent += 500)
    await pushUpdates(
      telegram.url,
      Array.from({ length: Math.min(500, total - sent) }, (_, i) => update(`bench ${sent + i}`)),
    );
  await until(() => worker.stored.length >= total, 300_000, "all stored");
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  console.log(
    `companion (${args.length === 1 ? "bundled" : "tsx"}): ${total} Telegram updates → durable accept in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s`,
  );
  console.log(
    `resident memory: idle ${idle.toFixed(1)} MiB, peak under load ${peak.toFixed(1)} MiB`,
  );
} finally {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  await worker.stop();
  await telegram.stop();
}

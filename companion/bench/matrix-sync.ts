/**
 * `npx tsx companion/bench/matrix-sync.ts [events]` — events per second from the fake Matrix
 * homeserver's /sync long poll through the real companion process (bundled dist/main.js when
 * built: `npm run build -w companion`; else tsx) to a loopback Worker's durable accept
 * (companion/test/fake-worker.ts, same wire), and the process's resident memory idle and under
 * load (VmRSS from /proc). The events arrive in bursts of 100 across 10 rooms. Prints figures;
 * asserts nothing.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { startFakeHomeserver } from "../../functions/channels/matrix/simulate/matrix-homeserver.ts";
import { FakeWorker } from "../test/fake-worker.ts";
import { companionEnv, KEY, tempDir, until } from "../test/helpers.ts";

const total = Number(process.argv[2] ?? 5000);
const homeserver = await startFakeHomeserver();
const rooms = Array.from({ length: 10 }, (_, i) => `!bench${i}:fake.test`);
for (const room of rooms) {
  homeserver.world.room(room);
  homeserver.world.joined.add(room);
}
const worker = await new FakeWorker({
  keys: [KEY],
  accounts: [
    {
      channel: "matrix",
      accountId: "default",
      label: "Matrix",
      settings: { homeserver: homeserver.url, dangerouslyAllowPrivateNetwork: true },
      secretEnv: { accessToken: "MX_TOKEN" },
    },
  ],
}).start();
const bundled = new URL("../../companion/dist/main.js", import.meta.url).pathname;
const args = existsSync(bundled)
  ? [bundled]
  : ["--import", "tsx", new URL("../../companion/src/main.ts", import.meta.url).pathname];
const child = spawn(process.execPath, args, {
  env: { ...process.env, ...companionEnv(worker.url, tempDir(), { MX_TOKEN: "mx-test-token" }) },
  stdio: ["ignore", "ignore", "inherit"],
});
const rss = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
try {
  await until(() => worker.state.get("matrix/default/since"), 30_000, "the initial sync");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = rss();
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
  const started = Date.now();
  for (let sent = 0; sent < total; sent += 100) {
    for (let i = sent; i < Math.min(sent + 100, total); i += 1)
      homeserver.world.append(rooms[i % rooms.length]!, {
        type: "m.room.message",
        sender: "@bench:fake.test",
        content: { msgtype: "m.text", body: `bench ${i}` },
      });
    await new Promise((resolve) => setImmediate(resolve));
  }
  await until(() => worker.stored.length >= total || undefined, 300_000, "all stored");
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  console.log(
    `companion (${args.length === 1 ? "bundled" : "tsx"}): ${total} Matrix room events → durable accept in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s`,
  );
  console.log(
    `resident memory: idle ${idle.toFixed(1)} MiB, peak under load ${peak.toFixed(1)} MiB`,
  );
} finally {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  await worker.stop();
  await homeserver.stop();
}

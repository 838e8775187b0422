/**
 * The scheduler's figures through a local Worker (`npm run dev`: real workerd, Durable Objects,
 * PGlite) with the in-Worker demo model (EDGECLAW_FAKE_MODEL=1):
 *   idle cost   alarms the scheduler holds with no job (heartbeat off, then how many per hour a
 *               heartbeat adds), read from /admin/cron's scheduler status
 *   latency     for one-shot isolated jobs due a few seconds ahead: due moment → run handed to its
 *               session (the alarm fired, claimed and dispatched), and due moment → run finished
 *   npx tsx scripts/bench/scheduler.ts [-- --jobs 20]
 */
import { parseArgs } from "node:util";
import { startDevInstance } from "./lib/dev-instance.ts";

const { values } = parseArgs({
  options: { jobs: { type: "string", default: "20" } },
  allowPositionals: true,
});
const jobs = Math.min(200, Number(values.jobs));
const token = "bench-gateway-token-not-for-production";

interface Status {
  alarmAt: number | null;
  beats: Record<string, { everyMs: number; nextAt: number }>;
}

// biome-ignore lint/suspicious/noExplicitAny: the bench reads admin API JSON answers loosely.
type ApiAnswer = any;

async function run(
  config: Record<string, unknown>,
  work: (
    api: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>,
  ) => Promise<void>,
) {
  const instance = await startDevInstance(
    { gateway: { auth: { token } }, ...config },
    { EDGECLAW_FAKE_MODEL: "1" },
  );
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${instance.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    await work(api);
  } finally {
    await instance.stop();
  }
}

function perHour(status: Status): number {
  return Object.values(status.beats).reduce((sum, beat) => sum + 3_600_000 / beat.everyMs, 0);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

await run({ agents: { defaults: { heartbeat: { every: "0m" } } } }, async (api) => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idle = (await api("GET", "/cron")).scheduler as Status;
  console.log(
    `idle, heartbeat off, no jobs: alarm ${idle.alarmAt === null ? "none" : new Date(idle.alarmAt).toISOString()} → ${perHour(idle)} scheduler alarms/hour`,
  );

  const dispatch: number[] = [];
  const finish: number[] = [];
  for (let i = 0; i < jobs; i++) {
    const due = Date.now() + 2000;
    const { job } = await api("POST", "/cron", {
      name: `bench ${i}`,
      schedule: { kind: "at", at: new Date(due).toISOString() },
      payload: { kind: "agentTurn", message: `bench job ${i}` },
      deleteAfterRun: false,
    });
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { runs } = await api("GET", `/cron/${job.id}/runs`);
      const done = runs.find((r: { status: string }) => r.status === "ok" || r.status === "error");
      if (done) {
        dispatch.push(done.dispatchedAt - done.scheduledFor);
        finish.push(done.finishedAt - done.scheduledFor);
        break;
      }
      if (Date.now() > due + 60_000) throw new Error(`job ${job.id} did not run`);
    }
    await api("DELETE", `/cron/${job.id}`);
  }
  const after = (await api("GET", "/cron")).scheduler as Status;
  dispatch.sort((a, b) => a - b);
  finish.sort((a, b) => a - b);
  console.log(`\n${jobs} one-shot isolated jobs (demo model), ms after the due moment:`);
  console.log(
    `  handed to the session  p50 ${pct(dispatch, 50)}  p90 ${pct(dispatch, 90)}  max ${dispatch.at(-1)}`,
  );
  console.log(
    `  run finished           p50 ${pct(finish, 50)}  p90 ${pct(finish, 90)}  max ${finish.at(-1)}`,
  );
  console.log(
    `after the jobs were removed: alarm ${after.alarmAt === null ? "none" : new Date(after.alarmAt).toISOString()}`,
  );
});

await run(
  { agents: { defaults: { heartbeat: { every: "30m", target: "last" } } } },
  async (api) => {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const status = (await api("GET", "/cron")).scheduler as Status;
    console.log(
      `\nidle, heartbeat every 30m (target last), no jobs: ${perHour(status)} scheduler alarms/hour, next ${status.alarmAt === null ? "none" : new Date(status.alarmAt).toISOString()}`,
    );
  },
);

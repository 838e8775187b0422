/**
 * The ack path's cost of metrics: two local Workers (`npm run dev`: real workerd, Durable Objects,
 * PGlite) in the same run, identical but for `diagnostics.enabled` (on: every ack records its
 * latency and refusals in the Worker's coalescing buffer and the SessionDO counts the accept in its
 * SQLite; off: nothing). Signed Slack channel events, accept only (each in its own unlisted channel,
 * so access control drops it after the durable accept and no run competes for the cores). Blocks
 * run on/off then off/on (whoever goes first inherits the other's background work), then one
 * interleaved run sends alternate requests to each, which cancels drift on a shared machine.
 *   npx tsx scripts/bench/metrics-overhead.ts [--requests 400 --concurrency 8]
 */
import { parseArgs } from "node:util";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "../../functions/channels/slack/simulate/slack-api.ts";
import { startDevInstance, type DevInstance } from "./lib/dev-instance.ts";
import { measure, printTable, type Figures } from "./lib/measure.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "400" },
    concurrency: { type: "string", default: "8" },
  },
});
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const signingSecret = "bench-signing-secret-not-for-production";

const fakeSlack = await startFakeSlackApi();
const config = (enabled: boolean) => ({
  diagnostics: { enabled },
  channels: {
    slack: {
      mode: "http",
      apiBaseUrl: `${fakeSlack.url}/api/`,
      botToken: "xoxb-bench",
      signingSecret,
      dmPolicy: "open",
      allowFrom: ["*"],
    },
  },
});
const instances: DevInstance[] = [];
try {
  const on = await startDevInstance(config(true));
  instances.push(on);
  const off = await startDevInstance(config(false));
  instances.push(off);
  const run = Date.now().toString(36).toUpperCase();
  let n = 0;
  const post = async (instance: DevInstance) => {
    const i = n++;
    const body = JSON.stringify({
      type: "event_callback",
      team_id: "TBENCH",
      api_app_id: "ABENCH",
      event_id: `Ev${run}${i}`,
      event_time: Math.floor(Date.now() / 1000),
      event: {
        type: "message",
        channel: `C${run}M${i}`,
        channel_type: "channel",
        user: `U${run}${i}`,
        text: `bench ${i}`,
        ts: `1700000000.${String(i).padStart(6, "0")}`,
      },
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${instance.url}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body),
      },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable";
  };
  for (const instance of [on, off]) await measure("warm-up", 60, 4, () => post(instance));
  // Let the warm-up's sessions finish their passes (triage, mirror, metrics flush) before measuring.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const rows: Figures[] = [];
  // Sequential blocks: whichever instance goes first pays for the other's leftover background work,
  // so the order flips between rounds.
  rows.push(await measure("metrics on  (block 1)", requests, concurrency, () => post(on)));
  rows.push(await measure("metrics off (block 1)", requests, concurrency, () => post(off)));
  rows.push(await measure("metrics off (block 2)", requests, concurrency, () => post(off)));
  rows.push(await measure("metrics on  (block 2)", requests, concurrency, () => post(on)));
  // Interleaved: request i goes to on or off in an ABBA pattern, so drift on a shared machine and
  // each instance's background work fall on both sides alike.
  const paired = { on: [] as number[], off: [] as number[] };
  await measure("interleaved", requests * 2, concurrency, async (i) => {
    const target = (i & 1) === ((i >> 1) & 1) ? "on" : "off";
    const t0 = performance.now();
    const ok = await post(target === "on" ? on : off);
    paired[target].push(performance.now() - t0);
    return ok;
  });
  for (const side of ["on", "off"] as const)
    rows.push(figuresOf(`metrics ${side}${side === "on" ? " " : ""} (interleaved)`, paired[side]));
  console.log(
    `\nedgeclaw ack latency with metrics on vs off — ${requests} signed Slack events per row, concurrency ${concurrency}, loopback, local workerd\n`,
  );
  printTable(rows, rows[1]!);
  const scrape = await fetch(`${on.url}/metrics`);
  console.log(
    `\n(/metrics on the "on" instance answered ${scrape.status} without a token, as it should be 401)`,
  );
} finally {
  for (const instance of instances) await instance.stop();
  await fakeSlack.stop();
}

function figuresOf(label: string, latencies: number[]): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const pick = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const meanMs = sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length);
  return {
    label,
    requests: sorted.length,
    failures: 0,
    p50Ms: pick(0.5),
    p99Ms: pick(0.99),
    meanMs,
    perSecond: 1000 / Math.max(1, meanMs),
  };
}

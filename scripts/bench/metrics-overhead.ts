/**
 * The ack path's cost of metrics: two local Workers (`npm run dev`: real workerd, Durable Objects,
 * PGlite) in the same run, identical but for `diagnostics.enabled` (on: every ack records its
 * latency and refusals in the Worker's coalescing buffer and the SessionDO counts the accept in its
 * SQLite; off: nothing). Signed Slack channel events, accept only (each in its own unlisted channel,
 * so access control drops it after the durable accept and no run competes for the cores). Rows
 * alternate on / off twice, so drift on a shared machine shows up as a difference between rounds.
 *   npx tsx scripts/bench/metrics-overhead.ts [--requests 400 --concurrency 8]
 */
import { parseArgs } from "node:util";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "../../test/fakes/slack-api.ts";
import { startDevInstance, type DevInstance } from "./lib/dev-instance.ts";
import { measure, printTable, type Figures } from "./lib/measure.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "400" }, concurrency: { type: "string", default: "8" } } });
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const signingSecret = "bench-signing-secret-not-for-production";

const fakeSlack = await startFakeSlackApi();
const config = (enabled: boolean) => ({
  diagnostics: { enabled },
  channels: { slack: { mode: "http", apiBaseUrl: `${fakeSlack.url}/api/`, botToken: "xoxb-bench", signingSecret, dmPolicy: "open", allowFrom: ["*"] } },
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
      event: { type: "message", channel: `C${run}M${i}`, channel_type: "channel", user: `U${run}${i}`, text: `bench ${i}`, ts: `1700000000.${String(i).padStart(6, "0")}` },
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${instance.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": timestamp, "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body) },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable";
  };
  for (const instance of [on, off]) await measure("warm-up", 60, 4, () => post(instance));
  const rows: Figures[] = [];
  for (const round of [1, 2]) {
    rows.push(await measure(`metrics on  (round ${round})`, requests, concurrency, () => post(on)));
    rows.push(await measure(`metrics off (round ${round})`, requests, concurrency, () => post(off)));
  }
  console.log(`\nedgeclaw ack latency with metrics on vs off — ${requests} signed Slack events per row, concurrency ${concurrency}, loopback, local workerd\n`);
  printTable(rows, rows[1]!);
  const scrape = await fetch(`${on.url}/metrics`);
  console.log(`\n(/metrics on the "on" instance answered ${scrape.status} without a token, as it should be 401)`);
} finally {
  for (const instance of instances) await instance.stop();
  await fakeSlack.stop();
}

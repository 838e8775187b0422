/**
 * Accept latency and throughput through a local Worker (`npm run dev`, real workerd, Durable
 * Objects and PGlite), next to a do-nothing route measured in the same run:
 *   GET  /health                      the baseline: Worker routing only
 *   POST /internal/ingress            signed envelope → route → SessionDO.accept (durable) → 200
 *        (a) a new session per event   (b) every event into one session
 * Then the Worker's gzipped bundle size. Loopback only; bounded request counts.
 *   npm run bench:ingress [-- --requests 400 --concurrency 8]
 */
import { parseArgs } from "node:util";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { startDevInstance } from "./lib/dev-instance.ts";
import { measure, printTable } from "./lib/measure.ts";
import { workerBundleSize } from "./lib/bundle-size.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "400" },
    concurrency: { type: "string", default: "8" },
  },
});
const requests = Math.min(5000, Number(values.requests));
const concurrency = Math.min(64, Number(values.concurrency));
const key = { id: "bench", secret: "bench-secret-not-for-production" };

const instance = await startDevInstance({
  companion: { ingressKeys: [{ id: key.id, secret: key.secret, channels: ["bench"] }] },
});
try {
  const run = `${Date.now()}`;
  const send = async (peer: (i: number) => string, i: number) => {
    const body = JSON.stringify({
      dedupKey: `bench:${run}:${peer(i)}:${i}`,
      channel: "bench",
      chatType: "group",
      peerId: peer(i),
      senderId: "bench-user",
      text: `event ${i}`,
      receivedAt: Date.now(),
      route: { channel: "bench", to: peer(i) },
    });
    const headers = await signRequest(key, {
      method: "POST",
      path: "/internal/ingress",
      body: new TextEncoder().encode(body),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await fetch(`${instance.url}/internal/ingress`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    const json = (await res.json()) as { status?: string };
    return res.ok && json.status === "accepted";
  };
  // Warm-up: isolate start, first DO, first Postgres connections.
  await measure("warm-up", 50, 4, (i) => send((n) => `warm-${n}`, i));
  await measure("warm-up", 50, 4, async () => (await fetch(`${instance.url}/health`)).ok);

  const baseline = await measure(
    "GET /health (baseline)",
    requests,
    concurrency,
    async () => (await fetch(`${instance.url}/health`)).ok,
  );
  const manySessions = await measure(
    "POST /internal/ingress, new session each",
    requests,
    concurrency,
    (i) => send((n) => `room-${run}-${n}`, i),
  );
  const oneSession = await measure(
    "POST /internal/ingress, one session",
    requests,
    concurrency,
    (i) => send(() => `room-${run}-hot`, i),
  );
  const baselineAgain = await measure(
    "GET /health (baseline, again)",
    requests,
    concurrency,
    async () => (await fetch(`${instance.url}/health`)).ok,
  );

  console.log(
    `\nedgeclaw ingress benchmark — ${requests} requests per row, concurrency ${concurrency}, loopback, local workerd\n`,
  );
  printTable([baseline, manySessions, oneSession, baselineAgain], baseline);
  console.log(`\nWorker bundle (wrangler deploy --dry-run): ${workerBundleSize()}`);
} finally {
  await instance.stop();
}

import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { seriesKey } from "../../functions/metrics/catalog.ts";
import { metricsShard } from "../../functions/metrics/shards.ts";

/**
 * GET /metrics: who may scrape, and that the counts come from durable counters (the metrics shards
 * and each SessionDO's own SQLite), not isolate memory. Exact end-to-end figures on a stack of its
 * own: test/scripts/observability.node-test.ts.
 */
const KEY = { id: "k1", secret: "test-companion-secret" };

async function scrape(token = "test-gateway-token"): Promise<Map<string, number>> {
  const res = await SELF.fetch("https://edgeclaw.test/metrics", {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const values = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

async function until(
  check: (values: Map<string, number>) => boolean,
): Promise<Map<string, number>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const values = await scrape();
    if (check(values) || Date.now() > deadline) return values;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function ingress(body: string, sign = true): Promise<Response> {
  const headers = sign
    ? await signRequest(KEY, {
        method: "POST",
        path: "/internal/ingress",
        body: new TextEncoder().encode(body),
        timestamp: Math.floor(Date.now() / 1000),
      })
    : {};
  return SELF.fetch("https://edgeclaw.test/internal/ingress", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

function event(peer: string, dedup: string): string {
  return JSON.stringify({
    dedupKey: `metricschan:${dedup}`,
    channel: "metricschan",
    chatType: "group",
    peerId: peer,
    senderId: "u-metrics",
    text: "count me",
    receivedAt: Date.now(),
    route: { channel: "metricschan", to: peer },
  });
}

describe("GET /metrics", () => {
  it("refuses a scrape without a token or with a wrong one", async () => {
    expect((await SELF.fetch("https://edgeclaw.test/metrics")).status).toBe(401);
    expect(
      (
        await SELF.fetch("https://edgeclaw.test/metrics", {
          headers: { authorization: "Bearer nope" },
        })
      ).status,
    ).toBe(401);
  });

  it("serves the gateway token and the separate diagnostics.metrics.token", async () => {
    const byGateway = await scrape("test-gateway-token");
    const byMetricsToken = await scrape("test-metrics-token");
    expect(byGateway.has("edgeclaw_metrics_series_dropped_total")).toBe(true);
    expect(byMetricsToken.has("edgeclaw_metrics_series_dropped_total")).toBe(true);
    // The metrics token is not an operator credential.
    expect(
      (
        await SELF.fetch("https://edgeclaw.test/admin/agents", {
          headers: { authorization: "Bearer test-metrics-token" },
        })
      ).status,
    ).toBe(401);
  });

  it("counts accepted and duplicate events in the session and a refused request in the Worker", async () => {
    const accepted = seriesKey("edgeclaw_events_accepted_total", { channel: "metricschan" });
    const duplicate = seriesKey("edgeclaw_events_duplicate_total", { channel: "metricschan" });
    const badSignature = seriesKey("edgeclaw_events_refused_total", {
      channel: "internal",
      reason: "bad_signature",
    });
    const latencyCount = seriesKey("edgeclaw_ack_latency_seconds_count", { channel: "internal" });
    const before = await scrape();
    const peer = `room-${crypto.randomUUID()}`;
    const first = event(peer, crypto.randomUUID());
    expect((await ingress(first)).status).toBe(200);
    expect((await ingress(event(peer, crypto.randomUUID()))).status).toBe(200);
    expect(await (await ingress(first)).json()).toMatchObject({ status: "duplicate" });
    expect((await ingress(event(peer, crypto.randomUUID()), false)).status).toBe(401);

    const delta = (values: Map<string, number>, key: string) =>
      (values.get(key) ?? 0) - (before.get(key) ?? 0);
    const after = await until(
      (values) =>
        delta(values, accepted) >= 2 &&
        delta(values, duplicate) >= 1 &&
        delta(values, badSignature) >= 1,
    );
    // Only this test uses channel metricschan: its session counts are exact.
    expect(delta(after, accepted)).toBe(2);
    expect(delta(after, duplicate)).toBe(1);
    // The Worker-side series are shared with other files' internal-ingress requests.
    expect(delta(after, badSignature)).toBeGreaterThanOrEqual(1);
    expect(delta(after, latencyCount)).toBeGreaterThanOrEqual(4);
  });

  it("applies a session's resent batch once (a lost answer does not double-count)", async () => {
    const series = seriesKey("edgeclaw_runs_total", {
      agent: `batch-${crypto.randomUUID()}`,
      outcome: "finished",
    });
    const source = `test-source-${crypto.randomUUID()}`;
    const shard = metricsShard(env.METRICS, source);
    expect(await shard.applyBatch(source, 1, [[series, 2]], 2048)).toEqual({
      applied: true,
      last: 1,
    });
    expect(await shard.applyBatch(source, 1, [[series, 2]], 2048)).toEqual({
      applied: false,
      last: 1,
    });
    expect(await shard.applyBatch(source, 2, [[series, 1]], 2048)).toEqual({
      applied: true,
      last: 2,
    });
    // A writer whose number is stale learns the last one.
    expect(await shard.applyBatch(source, 1, [[series, 5]], 2048)).toEqual({
      applied: false,
      last: 2,
    });
    const values = await scrape();
    expect(values.get(series)).toBe(3);
  });
});

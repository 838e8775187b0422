import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../functions/metrics/prometheus.ts";
import { scrapeShards } from "../functions/metrics/shards.ts";
import { ingressDeltas, recordWorkerDeltas } from "../functions/metrics/worker-counters.ts";
import type { Env } from "./env.ts";
import { checkGatewayAuth, gatewayAuthErrorResponse } from "./gateway-auth.ts";

/**
 * GET /metrics — Prometheus text exposition of the durable counters (functions/metrics/). Behind the
 * gateway token, or `diagnostics.metrics.token` when set, so a scraper need not hold operator access.
 */
export const metrics = new Hono<{ Bindings: Env }>();

metrics.get("/metrics", async (c) => {
  const config = configFromEnv(c.env);
  const scrapeToken = resolveSecret(config.diagnostics.metrics.token, c.env);
  const presented = /^Bearer\s+(.+)$/i
    .exec(c.req.header("authorization")?.trim() ?? "")?.[1]
    ?.trim();
  if (!(scrapeToken && presented !== undefined && (await sameSecret(presented, scrapeToken)))) {
    const auth = await checkGatewayAuth(c.req.raw, c.env);
    if (!auth.ok) return gatewayAuthErrorResponse(auth);
  }
  const snapshot = await scrapeShards(c.env.METRICS);
  return c.body(renderPrometheus(snapshot, config.diagnostics.metrics.maxSeries), 200, {
    "content-type": PROMETHEUS_CONTENT_TYPE,
    "cache-control": "no-store",
  });
});

async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [left, right] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(left, right);
}

/**
 * Records a webhook request's ack latency and, if it was refused, why — after the answer is ready,
 * without delaying it (recordWorkerDeltas coalesces and writes inside ctx.waitUntil).
 */
export function observeIngress(
  c: Context<{ Bindings: Env }>,
  channel: string,
  response: Response,
  startedAt: number,
): void {
  const config = configFromEnv(c.env);
  if (!config.diagnostics.enabled) return;
  let waitUntil: (promise: Promise<unknown>) => void;
  try {
    const ctx = c.executionCtx;
    waitUntil = (promise) => ctx.waitUntil(promise);
  } catch {
    return; // no execution context (a direct app.fetch in a script): nothing can outlive the answer
  }
  const { coalesceMs, maxSeries } = config.diagnostics.metrics;
  recordWorkerDeltas(
    { namespace: c.env.METRICS, waitUntil, coalesceMs, maxSeries },
    ingressDeltas(channel, response, (Date.now() - startedAt) / 1000),
  );
}

/** The same, as middleware for a route that serves one channel. */
export function meterIngress(channel: string): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const startedAt = Date.now();
    await next();
    observeIngress(c, channel, c.res, startedAt);
  };
}

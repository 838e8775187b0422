import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * `logging.*` and `diagnostics.*`: structured logs, the /metrics counters and OpenTelemetry export.
 * Key names and defaults follow OpenClaw (gateway/logging, gateway/opentelemetry, gateway/prometheus);
 * edgeclaw's own additions are marked.
 */

export const loggingSchema = z
  .object({
    level: z.enum(["silent", "fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
    /**
     * "tools" (OpenClaw's default and what its runtime always applies): secrets and message text are
     * masked in every log line. "off" keeps message text in logs (debugging only); configured
     * secrets, tokens and key-shaped strings are masked regardless.
     */
    redactSensitive: z.enum(["tools", "off"]).default("tools"),
    /** Extra patterns to mask (regex source, `gi` applied, or `/pattern/flags`), on top of the built-in ones. */
    redactPatterns: z.array(z.string()).default([]),
  })
  .loose()
  .prefault({});

const otelSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** Base URL; `/v1/traces` is appended (as OpenClaw does), unless it already ends with it. */
    endpoint: z.url().optional(),
    /** Exact URL for spans, used as given. */
    tracesEndpoint: z.url().optional(),
    /** edgeclaw sends OTLP/HTTP with the JSON encoding (valid for every OTLP/HTTP collector); "http/protobuf" is accepted as a value and sent as JSON. */
    protocol: z.enum(["http/protobuf", "http/json"]).optional(),
    headers: z.record(z.string(), secretInputSchema).default({}),
    serviceName: z.string().min(1).default("edgeclaw"),
    traces: z.boolean().default(true),
    /** Root-span sampling, 0..1 (a run is exported whole or not at all). */
    sampleRate: z.number().min(0).max(1).default(1),
    /** Accepted for OpenClaw compatibility; edgeclaw never exports prompts or replies (attributes are ids, models, counts, outcomes). */
    captureContent: z.boolean().default(false),
    /** edgeclaw's own: spans buffered per Durable Object pass before export; the rest are dropped and counted in the log. */
    maxQueueSpans: z.number().int().positive().default(512),
    /** edgeclaw's own: one export request gives up after this long. */
    exportTimeoutMs: z.number().int().positive().default(10_000),
  })
  .loose()
  .prefault({});

const metricsSchema = z
  .object({
    /** Bearer token for GET /metrics besides the gateway token (a scraper need not hold operator access). */
    token: secretInputSchema.optional(),
    /** OpenClaw's Prometheus series cap. */
    maxSeries: z.number().int().positive().default(2048),
    /** edgeclaw's own: a Worker isolate gathers refused-request counts this long before one write. */
    coalesceMs: z.number().int().nonnegative().default(1_000),
    /** edgeclaw's own: a session hands its counters to the metrics shard at most this often. */
    flushIntervalMs: z.number().int().nonnegative().default(1_000),
  })
  .prefault({});

export const diagnosticsSchema = z
  .object({
    /** OpenClaw's master switch (default on): off records no metrics and exports no spans. */
    enabled: z.boolean().default(true),
    otel: otelSchema,
    /** edgeclaw's own: GET /metrics. */
    metrics: metricsSchema,
  })
  .loose()
  .prefault({});

export type LoggingConfig = z.infer<typeof loggingSchema>;
export type DiagnosticsConfig = z.infer<typeof diagnosticsSchema>;

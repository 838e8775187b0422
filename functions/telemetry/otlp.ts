import type { EdgeclawConfig } from "../config/schema.ts";
import { resolveSecret, type SecretEnv } from "../config/secret-ref.ts";

/**
 * OpenTelemetry spans over OTLP/HTTP with the JSON encoding (which every OTLP/HTTP collector
 * accepts), sent with plain fetch: no SDK (none runs in workerd without Node's runtime), one POST per
 * batch, bounded in size and time. Attributes are ids, names, counts and outcomes only — never a
 * prompt, a reply or a tool's arguments (diagnostics.otel.captureContent is always false here).
 */

export type AttributeValue = string | number | boolean;

export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  error?: boolean;
}

export interface OtlpTarget {
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  timeoutMs: number;
}

/** Where spans go, or undefined when export is off (diagnostics.enabled, otel.enabled, otel.traces, an endpoint). */
export function otlpTarget(config: EdgeclawConfig, env: SecretEnv): OtlpTarget | undefined {
  const { diagnostics } = config;
  const otel = diagnostics.otel;
  if (!diagnostics.enabled || !otel.enabled || !otel.traces) return undefined;
  const base = otel.tracesEndpoint ?? (otel.endpoint ? tracesUrl(otel.endpoint) : undefined);
  if (!base) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(otel.headers)) {
    const resolved = resolveSecret(value, env);
    if (resolved !== undefined) headers[name] = resolved;
  }
  return { url: base, headers, serviceName: otel.serviceName, timeoutMs: otel.exportTimeoutMs };
}

function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, "");
  if (trimmed.endsWith("/v1/traces")) return trimmed;
  return `${trimmed.replace(/\/v1\/(metrics|logs)$/, "")}/v1/traces`;
}

/** Whether a run (by its trace id) is sampled: the same answer in every pass of the run. */
export function sampled(traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return parseInt(traceId.slice(-8), 16) / 0xffffffff < rate;
}

export function randomSpanId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A run's trace id and root span id, derived from its UUID so every pass (and resume) agrees. */
export function runTraceIds(runId: string): { traceId: string; spanId: string } {
  const hex = runId
    .replace(/[^0-9a-f]/gi, "")
    .toLowerCase()
    .padEnd(32, "0")
    .slice(0, 32);
  return {
    traceId: hex,
    spanId: hex.slice(16) === "0000000000000000" ? "0000000000000001" : hex.slice(16),
  };
}

export function otlpBody(spans: SpanRecord[], serviceName: string): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: [attribute("service.name", serviceName)] },
        scopeSpans: [
          {
            scope: { name: "edgeclaw" },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.parentSpanId ? 1 : 2,
              startTimeUnixNano: `${Math.round(span.startMs)}000000`,
              endTimeUnixNano: `${Math.round(Math.max(span.endMs, span.startMs))}000000`,
              attributes: Object.entries(span.attributes).map(([key, value]) =>
                attribute(key, value),
              ),
              status: { code: span.error ? 2 : 1 },
            })),
          },
        ],
      },
    ],
  };
}

function attribute(key: string, value: AttributeValue) {
  if (typeof value === "boolean") return { key, value: { boolValue: value } };
  if (typeof value === "number")
    return {
      key,
      value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value },
    };
  return { key, value: { stringValue: value } };
}

/** One POST of a batch. Throws on a network failure, a timeout or a non-2xx answer (the caller logs it; spans are not retried). */
export async function exportSpans(target: OtlpTarget, spans: SpanRecord[]): Promise<void> {
  if (!spans.length) return;
  const res = await fetch(target.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...target.headers },
    body: JSON.stringify(otlpBody(spans, target.serviceName)),
    signal: AbortSignal.timeout(target.timeoutMs),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`OTLP collector answered ${res.status}`);
}

/**
 * Every metric edgeclaw exports, in one place: name, type, help and (for histograms) buckets. The
 * Prometheus text (prometheus.ts) is rendered from this list, and recording code can only name a
 * metric listed here, so a typo is a type error rather than a silent new series.
 *
 * Labels carry only bounded values from config and code (channel ids, agent ids, provider ids,
 * outcome and reason words) — never session keys, sender ids or message text (OpenClaw's rule for
 * its Prometheus exporter) — and the total number of series is capped (diagnostics.metrics.maxSeries).
 */

export type MetricType = "counter" | "gauge" | "histogram";

interface MetricDef {
  type: MetricType;
  help: string;
  buckets?: readonly number[];
}

/** Seconds; ack latency is milliseconds-scale, model calls seconds-scale. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
const MODEL_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

export const METRICS = {
  edgeclaw_events_accepted_total: {
    type: "counter",
    help: "Platform events stored durably by a SessionDO, per channel.",
  },
  edgeclaw_events_duplicate_total: {
    type: "counter",
    help: "Platform events already stored (a retry or a twin), per channel.",
  },
  edgeclaw_events_refused_total: {
    type: "counter",
    help: "Requests or events refused, per channel and reason (bad_signature, too_large, malformed, unrouted, forbidden, not_stored, access_denied, pairing).",
  },
  edgeclaw_ack_latency_seconds: {
    type: "histogram",
    help: "Time from a webhook request's arrival to the Worker's answer, per channel.",
    buckets: LATENCY_BUCKETS,
  },
  edgeclaw_runs_total: {
    type: "counter",
    help: "Agent runs that ended, per agent and outcome (finished, failed, aborted).",
  },
  edgeclaw_model_calls_total: {
    type: "counter",
    help: "Model call attempts per provider and outcome (ok or the error kind).",
  },
  edgeclaw_model_call_duration_seconds: {
    type: "histogram",
    help: "Duration of one model call attempt, per provider.",
    buckets: MODEL_BUCKETS,
  },
  edgeclaw_outbox_sent_total: {
    type: "counter",
    help: "Reply chunks delivered to a platform, per channel.",
  },
  edgeclaw_outbox_retries_total: {
    type: "counter",
    help: "Reply chunk sends that will be retried (429, 5xx, outcome unknown), per channel.",
  },
  edgeclaw_outbox_dead_letters_total: {
    type: "counter",
    help: "Reply chunks given up on, per channel.",
  },
  edgeclaw_queue_depth: {
    type: "gauge",
    help: "Events stored but not yet settled, across all sessions (as of each session's last flush).",
  },
  edgeclaw_tokens_total: {
    type: "counter",
    help: "Model tokens per agent, model and type (input, output, cache_read, cache_write).",
  },
  edgeclaw_spend_usd_total: {
    type: "counter",
    help: "Model spend in USD at the configured prices, per agent and model.",
  },
  edgeclaw_metrics_series_dropped_total: {
    type: "counter",
    help: "Series not stored because diagnostics.metrics.maxSeries was reached.",
  },
} as const satisfies Record<string, MetricDef>;

export type MetricName = keyof typeof METRICS;
export type CounterName = {
  [K in MetricName]: (typeof METRICS)[K]["type"] extends "histogram" ? never : K;
}[MetricName];
export type HistogramName = {
  [K in MetricName]: (typeof METRICS)[K]["type"] extends "histogram" ? K : never;
}[MetricName];
export type Labels = Record<string, string>;

/** One change to one series (a counter increment, a gauge delta, one histogram cell). */
export type Delta = [series: string, by: number];

/** `name{a="x",b="y"}` with labels sorted and values escaped: the key every store and the renderer share. */
export function seriesKey(name: string, labels: Labels = {}): string {
  const keys = Object.keys(labels).sort();
  if (!keys.length) return name;
  return `${name}{${keys.map((key) => `${key}="${escapeLabel(labels[key]!)}"`).join(",")}}`;
}

function escapeLabel(value: string): string {
  return value.slice(0, 128).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function counterDelta(name: CounterName, labels: Labels = {}, by = 1): Delta {
  return [seriesKey(name, labels), by];
}

/** One observation as Prometheus histogram cells: every bucket it falls in, +Inf, _sum and _count. */
export function histogramDeltas(name: HistogramName, labels: Labels, value: number): Delta[] {
  const buckets = METRICS[name].buckets;
  const deltas: Delta[] = [];
  for (const le of buckets)
    if (value <= le) deltas.push([seriesKey(`${name}_bucket`, { ...labels, le: String(le) }), 1]);
  deltas.push([seriesKey(`${name}_bucket`, { ...labels, le: "+Inf" }), 1]);
  deltas.push([seriesKey(`${name}_sum`, labels), value]);
  deltas.push([seriesKey(`${name}_count`, labels), 1]);
  return deltas;
}

/** Adds deltas into a map (merging repeats of one series). */
export function mergeDeltas(into: Map<string, number>, deltas: Iterable<Delta>): void {
  for (const [series, by] of deltas) into.set(series, (into.get(series) ?? 0) + by);
}

/** The metric a series belongs to (`x_bucket{…}` → x). */
export function metricOf(series: string): string {
  const bare = series.split("{", 1)[0]!;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = bare.endsWith(suffix) ? bare.slice(0, -suffix.length) : undefined;
    if (base && base in METRICS && METRICS[base as MetricName].type === "histogram") return base;
  }
  return bare;
}

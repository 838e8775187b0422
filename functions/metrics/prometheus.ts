import { METRICS, metricOf, seriesKey, type MetricName } from "./catalog.ts";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The Prometheus text exposition of a merged snapshot (series key → value). Every catalogued metric
 * gets its HELP/TYPE lines (counters with no series yet show nothing else), series are grouped under
 * their metric, histogram cells in bucket order. At most `maxSeries` series are written; the rest
 * are counted in edgeclaw_metrics_series_dropped_total.
 */
export function renderPrometheus(snapshot: Map<string, number>, maxSeries: number): string {
  const byMetric = new Map<string, string[]>();
  let kept = 0;
  let dropped = snapshot.get("edgeclaw_metrics_series_dropped_total") ?? 0;
  for (const series of [...snapshot.keys()].sort(compareSeries)) {
    if (series === "edgeclaw_metrics_series_dropped_total") continue;
    const metric = metricOf(series);
    if (!(metric in METRICS)) continue;
    if (kept >= maxSeries) {
      dropped++;
      continue;
    }
    kept++;
    let list = byMetric.get(metric);
    if (!list) byMetric.set(metric, (list = []));
    list.push(series);
  }
  const lines: string[] = [];
  for (const [name, def] of Object.entries(METRICS) as Array<
    [MetricName, (typeof METRICS)[MetricName]]
  >) {
    lines.push(`# HELP ${name} ${def.help}`, `# TYPE ${name} ${def.type}`);
    if (name === "edgeclaw_metrics_series_dropped_total") {
      lines.push(`${seriesKey(name)} ${dropped}`);
      continue;
    }
    const series = byMetric.get(name) ?? [];
    // A gauge nobody moved yet reads 0 (queue depth with nothing queued), not "no data".
    if (!series.length && def.type === "gauge") lines.push(`${name} 0`);
    for (const key of series) lines.push(`${key} ${formatValue(snapshot.get(key) ?? 0)}`);
  }
  return `${lines.join("\n")}\n`;
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

/** Histogram buckets in numeric `le` order, then _sum and _count; everything else by name. */
function compareSeries(a: string, b: string): number {
  const [baseA, leA] = splitLe(a);
  const [baseB, leB] = splitLe(b);
  if (baseA !== baseB) return baseA < baseB ? -1 : 1;
  return leA - leB;
}

function splitLe(series: string): [string, number] {
  const match = /,?le="([^"]+)"/.exec(series);
  if (!match) return [series, 0];
  const le = match[1] === "+Inf" ? Infinity : Number(match[1]);
  return [series.replace(match[0], ""), le];
}

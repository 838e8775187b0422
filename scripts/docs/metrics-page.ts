import { METRICS } from "../../functions/metrics/catalog.ts";
import { GENERATED_NOTE, tableCell } from "./markdown.ts";

/** docs/reference/metrics.md: every series family `GET /metrics` can expose (functions/metrics/catalog.ts). */

export function metricsReference(): string {
  const rows = Object.entries(METRICS).map(([name, metric]) => {
    const buckets = "buckets" in metric ? ` Buckets (seconds): ${metric.buckets.join(", ")}.` : "";
    return `| \`${name}\` | ${metric.type} | ${tableCell(metric.help + buckets)} |`;
  });
  return `# Metrics

${GENERATED_NOTE}

\`GET /metrics\` answers Prometheus text (\`text/plain; version=0.0.4\`) to the gateway token or
\`diagnostics.metrics.token\`; how the counts are kept is in [observability](../concepts/observability.md).
A histogram exposes \`<name>_bucket{le=…}\`, \`<name>_sum\` and \`<name>_count\`.

| Metric | Type | Meaning |
| --- | --- | --- |
${rows.join("\n")}
`;
}

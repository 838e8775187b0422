/** Latency/throughput measurement for loopback benchmarks: bounded count, bounded concurrency. */
export interface Figures {
  label: string;
  requests: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  perSecond: number;
}

export async function measure(
  label: string,
  requests: number,
  concurrency: number,
  send: (index: number) => Promise<boolean>,
): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= requests) return;
      const t0 = performance.now();
      const ok = await send(index).catch(() => false);
      latencies.push(performance.now() - t0);
      if (!ok) failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    label,
    requests,
    failures,
    p50Ms: pick(0.5),
    p99Ms: pick(0.99),
    meanMs: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    perSecond: requests / elapsed,
  };
}

export function printTable(rows: Figures[], baseline: Figures): void {
  const header = [
    "route",
    "requests",
    "failed",
    "p50 ms",
    "p99 ms",
    "mean ms",
    "req/s",
    "p50 vs baseline",
  ];
  const lines = rows.map((row) => [
    row.label,
    String(row.requests),
    String(row.failures),
    row.p50Ms.toFixed(2),
    row.p99Ms.toFixed(2),
    row.meanMs.toFixed(2),
    row.perSecond.toFixed(0),
    `${(row.p50Ms / baseline.p50Ms).toFixed(2)}x`,
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...lines.map((line) => line[i]!.length)),
  );
  const format = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
  console.log(format(header));
  for (const line of lines) console.log(format(line));
}

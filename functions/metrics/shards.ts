import type { Delta } from "./catalog.ts";

/**
 * How metrics writers and the scrape find the metrics shards (durable-objects/metrics-shard.ts).
 * The count is fixed: the scrape must read every shard that ever received a write, so changing it
 * would hide what the dropped shards hold.
 */
export const METRICS_SHARDS = 8;

/**
 * A shard's answer to a numbered batch: applied now, or not (a resend of one applied before, or a
 * number at or below the last it applied), and the last number it holds for the source, so a
 * writer whose number was stale can number the same counts above it.
 */
export interface BatchAnswer {
  applied: boolean;
  last: number;
}

/** The part of a shard's RPC surface writers and the scrape use. */
export interface MetricsShardApi {
  add(deltas: Delta[], maxSeries: number): Promise<unknown>;
  applyBatch(
    source: string,
    batch: number,
    deltas: Delta[],
    maxSeries: number,
  ): Promise<BatchAnswer>;
  snapshot(): Promise<Array<{ key: string; value: number }>>;
}

export interface MetricsNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): MetricsShardApi;
}

/** The shard a source (a SessionDO id, an isolate's random pick) writes to. */
export function metricsShardName(seed: string): string {
  let hash = 2166136261;
  for (let i = 0; i < seed.length; i++) hash = Math.imul(hash ^ seed.charCodeAt(i), 16777619);
  return `shard-${(hash >>> 0) % METRICS_SHARDS}`;
}

export function metricsShard(namespace: MetricsNamespace, seed: string): MetricsShardApi {
  return namespace.get(namespace.idFromName(metricsShardName(seed)));
}

/** Every shard's series, summed. */
export async function scrapeShards(namespace: MetricsNamespace): Promise<Map<string, number>> {
  const snapshots = await Promise.all(
    Array.from({ length: METRICS_SHARDS }, (_, i) =>
      namespace.get(namespace.idFromName(`shard-${i}`)).snapshot(),
    ),
  );
  const merged = new Map<string, number>();
  for (const rows of snapshots)
    for (const { key, value } of rows) merged.set(key, (merged.get(key) ?? 0) + value);
  return merged;
}

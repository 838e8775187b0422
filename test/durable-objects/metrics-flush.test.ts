import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { seriesKey } from "../../functions/metrics/catalog.ts";
import { metricsShard } from "../../functions/metrics/shards.ts";
import { SessionState } from "../../durable-objects/session/state.ts";
import { countSession, flushSessionMetrics } from "../../durable-objects/session/upkeep/metrics.ts";
import type { Env } from "../../durable-objects/env.ts";
import { sessionStub } from "./helpers.ts";

/**
 * A session's counts reach its metrics shard once: summed in memory, sent as one numbered batch at
 * the end of a pass, the batch kept and resent unchanged when the shard's answer is lost, and the
 * numbers only ever growing (upkeep/metrics.ts).
 */

interface Sent {
  no: number;
  deltas: Array<[string, number]>;
}

/** The real METRICS namespace, whose applyBatch answers are lost while `lose` is set (the batch still lands). */
function losingMetrics(sent: Sent[], control: { lose: boolean }) {
  const real = (env as unknown as Env).METRICS;
  return {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id);
      return {
        applyBatch: async (
          source: string,
          no: number,
          deltas: Array<[string, number]>,
          max: number,
        ) => {
          sent.push({ no, deltas });
          const applied = await stub.applyBatch(source, no, deltas, max);
          if (control.lose) throw new Error("connection reset (answer lost)");
          return applied;
        },
        snapshot: () => stub.snapshot(),
      };
    },
  };
}

describe("session metrics batches", () => {
  it("resends a batch whose answer was lost under its number, counts it once, and numbers the next above it", async () => {
    const channel = `metrics-flush-${crypto.randomUUID()}`;
    const series = seriesKey("edgeclaw_events_accepted_total", { channel });
    const sent: Sent[] = [];
    const control = { lose: true };
    await runInDurableObject(sessionStub(`agent:main:${channel}`), async (instance, state) => {
      const bindings = {
        ...(instance as unknown as { env: Env }).env,
        METRICS: losingMetrics(sent, control),
      } as unknown as Env;
      const s = new SessionState(state, () => bindings);
      countSession(s, "edgeclaw_events_accepted_total", { channel });
      countSession(s, "edgeclaw_events_accepted_total", { channel });
      // Counting writes nothing; the pass's end keeps what no batch took (one row).
      expect(s.store.meta.get("metricsPending")).toBeUndefined();
      const first = Date.now();
      await flushSessionMetrics(s, first);
      expect(s.store.meta.getJson("metricsBatch")?.no).toBe(sent[0]!.no);

      // Counted meanwhile: waits for the next batch, after the unacknowledged one went.
      countSession(s, "edgeclaw_events_accepted_total", { channel });
      control.lose = false;
      await flushSessionMetrics(s, first + 60_000);
      expect(sent[1]).toEqual(sent[0]);
      expect(s.store.meta.getJson("metricsBatch")).toBeUndefined();
      // Kept in memory: a flush writes no row of its own.
      expect(s.metricsFlushed?.no).toBe(sent[0]!.no);
      expect(s.store.meta.getJson("metricsFlushed")).toBeUndefined();

      await flushSessionMetrics(s, first + 120_000);
      expect(sent).toHaveLength(3);
      expect(sent[2]!.no).toBeGreaterThan(sent[0]!.no);
      expect(Object.fromEntries(sent[2]!.deltas)).toEqual({ [series]: 1 });

      // A flush whose clock reads earlier still numbers above the last batch this isolate sent.
      countSession(s, "edgeclaw_events_accepted_total", { channel });
      const early = sent[2]!.no - 1_000_000;
      s.metricsFlushed = { no: sent[2]!.no, at: 0 };
      await flushSessionMetrics(s, early);
      expect(sent[3]!.no).toBe(sent[2]!.no + 1);

      // A new isolate knows no earlier batch: its stale number is refused, and the same counts go
      // once more above the shard's last.
      const fresh = new SessionState(state, () => bindings);
      countSession(fresh, "edgeclaw_events_accepted_total", { channel });
      await flushSessionMetrics(fresh, early);
      expect(sent[4]!.no).toBe(early);
      expect(sent[5]).toEqual({ no: sent[3]!.no + 1, deltas: sent[4]!.deltas });
      expect(fresh.metricsFlushed?.no).toBe(sent[3]!.no + 1);

      const shard = metricsShard(bindings.METRICS, state.id.toString());
      const value = (await shard.snapshot()).find((row) => row.key === series)?.value;
      expect(value).toBe(5);
    });
  });

  it("keeps counts in storage when no batch is due yet, and sends them with the next one", async () => {
    const channel = `metrics-wait-${crypto.randomUUID()}`;
    const series = seriesKey("edgeclaw_events_accepted_total", { channel });
    const sent: Sent[] = [];
    await runInDurableObject(sessionStub(`agent:main:${channel}`), async (instance, state) => {
      const base = (instance as unknown as { env: Env }).env;
      const config = JSON.parse(base.EDGECLAW_CONFIG as string);
      config.diagnostics.metrics.flushIntervalMs = 60_000;
      const bindings = {
        ...base,
        EDGECLAW_CONFIG: JSON.stringify(config),
        METRICS: losingMetrics(sent, { lose: false }),
      } as unknown as Env;
      const s = new SessionState(state, () => bindings);
      const now = Date.now();
      s.metricsFlushed = { no: now, at: now };
      countSession(s, "edgeclaw_events_accepted_total", { channel });
      await flushSessionMetrics(s, now + 1_000);
      expect(sent).toHaveLength(0);
      expect(s.store.meta.getJson("metricsPending")).toEqual({ [series]: 1 });

      // Another isolate (the first one evicted) finds them in storage.
      const next = new SessionState(state, () => bindings);
      countSession(next, "edgeclaw_events_accepted_total", { channel });
      await flushSessionMetrics(next, now + 61_000);
      expect(sent.map((batch) => Object.fromEntries(batch.deltas)[series])).toEqual([2]);
      expect(next.store.meta.get("metricsPending")).toBeUndefined();
    });
  });
});

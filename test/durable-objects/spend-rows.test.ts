import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrateSessionSchema, SESSION_MIGRATIONS } from "../../durable-objects/session/schema.ts";
import { MetaStore } from "../../durable-objects/session/meta.ts";
import {
  type ModelCallRow,
  ModelCallStore,
} from "../../durable-objects/session/mirror/model-calls.ts";
import { MirrorWatermarks } from "../../durable-objects/session/mirror/watermark.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { sessionStub } from "./helpers.ts";
import { recreateVersion1Object } from "./schema-v1.ts";

/**
 * A session's spend is its model_calls rows summed plus meta `spend:<id>` for calls no longer
 * there (schema step 16): one row per call where the spend was a second. A call counts exactly
 * once: as a row, or in meta once the sweep has folded it, never both.
 */

const HOUR = 3_600_000;

function call(id: string, patch: Partial<ModelCallRow> = {}): ModelCallRow {
  return {
    id,
    runId: "run-1",
    sessionId: "s-old",
    kind: "turn",
    provider: "fake",
    model: "m",
    channel: "testchan",
    senderId: "u1",
    usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0.5,
    outcome: "ok",
    durationMs: 40,
    at: 1000,
    ...patch,
  };
}

describe("a session's spend from its model calls (schema step 16)", () => {
  it("counts each call once: a row, then in meta once swept, and rows from before once", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v15"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 15));
      // A call recorded by the code before step 16: its row, and its share in meta spend.
      sql.exec(
        `INSERT INTO model_calls(id, run_id, session_id, kind, provider, model, input_tokens, output_tokens, cost_usd, outcome, at)
         VALUES ('old-1', 'run-1', 's-old', 'turn', 'fake', 'm', 100, 10, 0.5, 'ok', 1000)`,
      );
      const legacy = {
        calls: 1,
        usd: 0.5,
        inputTokens: 100,
        outputTokens: 10,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        byKind: { turn: { calls: 1, usd: 0.5, tokens: 110 } },
      };
      sql.exec(`INSERT INTO meta(key, value) VALUES ('spend:s-old', ?)`, JSON.stringify(legacy));
      migrateSessionSchema(state.storage);
      const store = new SessionStore(state.storage);
      expect(store.modelCalls.spend("s-old")).toEqual(legacy);

      // A new call is one row written (the spend meta row is not rewritten), and once only.
      const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
      const metered = new Proxy(sql, {
        get: (target, property) =>
          property === "exec"
            ? (query: string, ...bindings: unknown[]) => {
                const cursor = target.exec(query, ...bindings);
                cursors.push(cursor);
                return cursor;
              }
            : Reflect.get(target, property, target),
      });
      const meteredMeta = new MetaStore(metered);
      const calls = new ModelCallStore(
        metered,
        meteredMeta,
        new MirrorWatermarks(metered, meteredMeta),
      );
      const browser = call("new-1", { kind: "browser", costUsd: 0.25, billedMs: 3000, at: 2000 });
      expect(calls.record(browser)).toBe(true);
      expect(cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0)).toBe(1);
      expect(calls.record(browser)).toBe(false);
      store.modelCalls.record(call("new-2", { at: 3000 }));
      store.modelCalls.record(call("other-1", { sessionId: "s-other", at: 3000 }));
      const expected = {
        calls: 3,
        usd: 1.25,
        inputTokens: 300,
        outputTokens: 30,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        byKind: {
          turn: { calls: 2, usd: 1, tokens: 220 },
          browser: { calls: 1, usd: 0.25, tokens: 110, ms: 3000 },
        },
      };
      expect(store.modelCalls.spend("s-old")).toEqual(expected);

      // The sweep's transaction either folds and deletes, or does neither.
      const policy = { archived: false, activeSessionId: "s-old" };
      const sweptAt = 3000 + 49 * HOUR;
      expect(() =>
        state.storage.transactionSync(() => {
          store.modelCalls.prune(policy, sweptAt);
          throw new Error("the isolate died mid-sweep");
        }),
      ).toThrow("mid-sweep");
      expect(store.modelCalls.spend("s-old")).toEqual(expected);
      state.storage.transactionSync(() => store.modelCalls.prune(policy, sweptAt));
      expect(sql.exec(`SELECT COUNT(*) AS n FROM model_calls`).one().n).toBe(0);
      expect(store.modelCalls.spend("s-old")).toEqual(expected);
      // Swept again: nothing left to fold, nothing counted twice; later calls add on top.
      state.storage.transactionSync(() => store.modelCalls.prune(policy, sweptAt));
      store.modelCalls.record(call("new-3", { at: sweptAt }));
      expect(store.modelCalls.spend("s-old")).toMatchObject({ calls: 4, usd: 1.75 });
      // An earlier session's calls are not folded: its spend goes with its other meta keys.
      expect(store.meta.get("spend:s-other")).toBeUndefined();
    });
  });
});

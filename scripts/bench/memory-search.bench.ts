/**
 * Memory search figures, measured inside workerd against local Postgres (PGlite with pgvector) and
 * the fake embeddings server on loopback (deterministic 64-dimension vectors; a real provider adds
 * its own latency per request):
 *   index     a full sync of N memory files (chunk, embed, insert), and a no-op sync after it
 *   search    memory_search latency (p50 / p99 / max) over the resulting ~10,000 chunks, hybrid and
 *             keyword-only, plus the staleness check every search makes first
 *   npm run bench:memory-search   (EDGECLAW_BENCH_FILES=1000 EDGECLAW_BENCH_QUERIES=200 to change)
 * Figures are printed; nothing is asserted about time.
 */
import { env } from "cloudflare:test";
import { it } from "vitest";
import { sql } from "drizzle-orm";
import { configFromEnv, parseConfig } from "../../functions/channels/gateway-config.ts";
import { withDb } from "../../functions/db/client.ts";
import { memoryIndexIsStale, syncMemoryIndex } from "../../functions/agent/memory/indexer.ts";
import { searchMemory } from "../../functions/agent/memory/search.ts";

const menv = env as unknown as Record<string, unknown> & { DATABASE_URL?: string };
const FILES = Number((menv.EDGECLAW_BENCH_FILES as string | undefined) ?? 1000);
const QUERIES = Number((menv.EDGECLAW_BENCH_QUERIES as string | undefined) ?? 200);
/** The fake model server (it also serves embeddings), as the suite's config names it. */
const fakeModelUrl = configFromEnv(menv as { EDGECLAW_CONFIG?: string }).models.providers
  .fakeanthropic?.baseUrl;

/** A deterministic generator, so every run indexes the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const VOCABULARY = Array.from(
  { length: 3000 },
  (_, i) => `w${i.toString(36)}${"aeiou"[i % 5]}${"rstln"[(i >> 3) % 5]}`,
);

function note(next: () => number, lines: number): string {
  const out: string[] = [];
  for (let l = 0; l < lines; l++)
    out.push(
      Array.from(
        { length: 12 },
        () => VOCABULARY[Math.floor(next() ** 2 * VOCABULARY.length)],
      ).join(" "),
    );
  return out.join("\n");
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

it(`memory search over ${FILES} files`, async () => {
  const agentId = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const config = parseConfig({
    memory: {
      search: {
        provider: "openai",
        baseUrl: `${fakeModelUrl}/v1`,
        apiKey: "bench",
        model: "bench-embed",
      },
    },
  });
  const keywordOnly = parseConfig({ memory: { search: { provider: "none" } } });
  const next = random(7);
  // ~150 lines of ~80 characters: ten 400-token chunks per file with the default 80-token overlap.
  const rows = Array.from({ length: FILES }, (_, i) => ({
    path: `memory/2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}-n${i}.md`,
    content: note(next, 150),
  }));
  await withDb(menv, async (db) => {
    for (let at = 0; at < rows.length; at += 100) {
      const batch = rows.slice(at, at + 100);
      await db.execute(
        sql`insert into workspace_files (agent_id, path, content) values ${sql.join(
          batch.map((r) => sql`(${agentId}, ${r.path}, ${r.content})`),
          sql`, `,
        )}`,
      );
    }
  });

  let started = performance.now();
  const report = await syncMemoryIndex(menv, config, agentId);
  const indexMs = performance.now() - started;
  started = performance.now();
  await syncMemoryIndex(menv, config, agentId);
  const noopMs = performance.now() - started;

  const timings = async (cfg: typeof config): Promise<number[]> => {
    const out: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const query = Array.from(
        { length: 4 },
        () => VOCABULARY[Math.floor(next() ** 2 * VOCABULARY.length)],
      ).join(" ");
      const t = performance.now();
      const outcome = await searchMemory(menv, cfg, agentId, query, { includePrivate: true });
      out.push(performance.now() - t);
      if (outcome.status !== "ok") throw new Error(`search failed: ${JSON.stringify(outcome)}`);
    }
    return out.sort((a, b) => a - b);
  };
  const staleness: number[] = [];
  for (let q = 0; q < 50; q++) {
    const t = performance.now();
    await memoryIndexIsStale(menv, config, agentId);
    staleness.push(performance.now() - t);
  }
  staleness.sort((a, b) => a - b);
  const hybrid = await timings(config);
  const keyword = await timings(keywordOnly);
  const fmt = (xs: number[]) =>
    `p50 ${percentile(xs, 0.5).toFixed(1)} ms, p99 ${percentile(xs, 0.99).toFixed(1)} ms, max ${xs.at(-1)!.toFixed(1)} ms`;
  console.log(
    [
      "",
      `memory search benchmark (workerd + PGlite/pgvector, fake embeddings, ${FILES} files):`,
      `  index        ${report.indexed} files → ${report.chunks} chunks (${report.embedded} embedded) in ${(indexMs / 1000).toFixed(1)} s (${(indexMs / report.indexed).toFixed(1)} ms/file)`,
      `  no-op sync   ${noopMs.toFixed(0)} ms`,
      `  stale check  ${fmt(staleness)}  (every memory_search does this first)`,
      `  hybrid       ${fmt(hybrid)}  over ${QUERIES} queries (includes the query embedding)`,
      `  keyword-only ${fmt(keyword)}`,
      "",
    ].join("\n"),
  );
  await withDb(menv, async (db) => {
    await db.execute(sql`delete from memory_chunks where agent_id = ${agentId}`);
    await db.execute(sql`delete from memory_files where agent_id = ${agentId}`);
    await db.execute(sql`delete from workspace_files where agent_id = ${agentId}`);
  });
});

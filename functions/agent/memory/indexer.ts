import { and, eq, inArray, sql } from "drizzle-orm";
import { withDb, type Db, type DbEnv } from "../../db/client.ts";
import { memoryChunks, memoryFiles } from "../../db/schema.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { SecretEnv } from "../../config/secret-ref.ts";
import { readFiles } from "../workspace.ts";
import { chunkMarkdown } from "./chunking.ts";
import {
  embedTexts,
  EmbeddingError,
  indexFingerprint,
  resolveEmbeddingProvider,
  vectorLiteral,
  type EmbeddingProvider,
} from "./embeddings.ts";
import { isPrivateSource, listSourceFiles, type SourceFile } from "./sources.ts";

/**
 * Brings an agent's memory index (memory_files, memory_chunks) in line with its workspace: files that
 * changed since they were indexed, or were indexed under another fingerprint (provider, model,
 * chunking), are chunked and embedded again; files that are gone lose their chunks. Work is per
 * file and each file's replacement is one transaction, so a sync cut short leaves a consistent index
 * that the next sync completes. Runs from MemoryIndexDO (debounced after writes, or on demand).
 */

export type MemoryEnv = DbEnv & SecretEnv;

export interface SyncReport {
  files: number;
  indexed: number;
  removed: number;
  chunks: number;
  embedded: number;
  ms: number;
  /** Set when embeddings failed under a soft (auto) provider and the files were indexed keyword-only. */
  degraded?: string;
}

/** Files read per round trip while indexing. */
const READ_BATCH = 25;

interface IndexedFile {
  path: string;
  sourceVersion: number;
  sourceUpdatedAt: Date;
  fingerprint: string;
}

function isCurrent(
  source: SourceFile,
  indexed: IndexedFile | undefined,
  fingerprint: string,
): boolean {
  return (
    indexed !== undefined &&
    indexed.fingerprint === fingerprint &&
    indexed.sourceVersion === source.version &&
    indexed.sourceUpdatedAt.getTime() === source.updatedAt.getTime()
  );
}

async function indexedFiles(db: Db, agentId: string): Promise<Map<string, IndexedFile>> {
  const rows = await db
    .select({
      path: memoryFiles.path,
      sourceVersion: memoryFiles.sourceVersion,
      sourceUpdatedAt: memoryFiles.sourceUpdatedAt,
      fingerprint: memoryFiles.fingerprint,
    })
    .from(memoryFiles)
    .where(eq(memoryFiles.agentId, agentId));
  return new Map(rows.map((row) => [row.path, row]));
}

/** True when a sync would change something: a cheap check (no file contents) searches make first. */
export async function memoryIndexIsStale(
  env: MemoryEnv,
  config: EdgeclawConfig,
  agentId: string,
): Promise<boolean> {
  const search = config.memory.search;
  const fingerprint = indexFingerprint(search, resolveEmbeddingProvider(search, env));
  return withDb(env, async (db) => {
    const [sources, indexed] = await Promise.all([
      listSourceFiles(db, search, agentId),
      indexedFiles(db, agentId),
    ]);
    if (sources.length !== indexed.size) return true;
    return sources.some((source) => !isCurrent(source, indexed.get(source.path), fingerprint));
  });
}

export async function syncMemoryIndex(
  env: MemoryEnv,
  config: EdgeclawConfig,
  agentId: string,
  options: { force?: boolean } = {},
): Promise<SyncReport> {
  const started = Date.now();
  const search = config.memory.search;
  const provider = resolveEmbeddingProvider(search, env);
  const fingerprint = indexFingerprint(search, provider);
  const report: SyncReport = { files: 0, indexed: 0, removed: 0, chunks: 0, embedded: 0, ms: 0 };

  const { sources, indexed } = await withDb(env, async (db) => ({
    sources: await listSourceFiles(db, search, agentId),
    indexed: await indexedFiles(db, agentId),
  }));
  report.files = sources.length;
  const present = new Set(sources.map((source) => source.path));
  const gone = [...indexed.keys()].filter((path) => !present.has(path));
  if (gone.length) {
    await withDb(env, (db) =>
      db.transaction(async (tx) => {
        await tx
          .delete(memoryChunks)
          .where(and(eq(memoryChunks.agentId, agentId), inArray(memoryChunks.path, gone)));
        await tx
          .delete(memoryFiles)
          .where(and(eq(memoryFiles.agentId, agentId), inArray(memoryFiles.path, gone)));
      }),
    );
    report.removed = gone.length;
  }

  const stale = sources.filter(
    (source) => options.force || !isCurrent(source, indexed.get(source.path), fingerprint),
  );
  let effective: EmbeddingProvider = provider;
  for (let at = 0; at < stale.length; at += READ_BATCH) {
    const batch = stale.slice(at, at + READ_BATCH);
    const contents = await readFiles(
      env,
      agentId,
      batch.map((file) => file.path),
    );
    for (const source of batch) {
      const file = contents.get(source.path);
      if (!file) continue; // deleted meanwhile: the next sync removes it
      const chunks = chunkMarkdown(file.content, search.chunking);
      let vectors: number[][] | undefined;
      if (effective.kind !== "none" && chunks.length) {
        try {
          vectors = await embedTexts(
            effective,
            chunks.map((chunk) => chunk.text),
            { batchSize: search.batchSize, timeoutMs: search.timeoutSeconds * 1000 },
          );
        } catch (error) {
          if (effective.explicit || !(error instanceof EmbeddingError)) throw error;
          // auto: keyword-only for now, recorded under the keyword-only fingerprint so a later sync retries.
          report.degraded = error.message;
          effective = { kind: "none", reason: error.message };
        }
      }
      const fileFingerprint =
        effective === provider ? fingerprint : indexFingerprint(search, effective);
      await withDb(env, (db) =>
        db.transaction(async (tx) => {
          await tx
            .delete(memoryChunks)
            .where(and(eq(memoryChunks.agentId, agentId), eq(memoryChunks.path, source.path)));
          if (chunks.length) {
            await tx.insert(memoryChunks).values(
              chunks.map((chunk, index) => ({
                agentId,
                path: source.path,
                startLine: chunk.startLine,
                endLine: chunk.endLine,
                content: chunk.text,
                private: isPrivateSource(source.path),
                fingerprint: fileFingerprint,
                embedding: vectors?.[index] ? vectorLiteral(vectors[index]) : null,
              })),
            );
          }
          const row = {
            sourceVersion: file.version,
            sourceUpdatedAt: file.updatedAt,
            fingerprint: fileFingerprint,
            chunks: chunks.length,
            indexedAt: sql`now()`,
          };
          await tx
            .insert(memoryFiles)
            .values({ agentId, path: source.path, ...row })
            .onConflictDoUpdate({ target: [memoryFiles.agentId, memoryFiles.path], set: row });
        }),
      );
      report.indexed++;
      report.chunks += chunks.length;
      if (vectors) report.embedded += vectors.length;
    }
  }
  report.ms = Date.now() - started;
  return report;
}

export interface MemoryIndexStatus {
  files: number;
  chunks: number;
  embeddedChunks: number;
  fingerprint: string;
  provider: string;
  model?: string;
  lastIndexedAt?: string;
  stale: boolean;
}

export async function memoryIndexStatus(
  env: MemoryEnv,
  config: EdgeclawConfig,
  agentId: string,
): Promise<MemoryIndexStatus> {
  const search = config.memory.search;
  const provider = resolveEmbeddingProvider(search, env);
  const fingerprint = indexFingerprint(search, provider);
  const stale = await memoryIndexIsStale(env, config, agentId);
  const counts = await withDb(env, async (db) => {
    const result = await db.execute(sql`
      select (select count(*)::int from memory_files where agent_id = ${agentId}) as files,
             count(*)::int as chunks,
             count(embedding)::int as embedded,
             (select max(indexed_at) from memory_files where agent_id = ${agentId}) as last
      from memory_chunks where agent_id = ${agentId}`);
    return result.rows[0] as {
      files: number;
      chunks: number;
      embedded: number;
      last: string | Date | null;
    };
  });
  return {
    files: counts.files,
    chunks: counts.chunks,
    embeddedChunks: counts.embedded,
    fingerprint,
    provider: provider.kind === "none" ? `none (${provider.reason})` : provider.id,
    model: provider.kind === "none" ? undefined : provider.model,
    lastIndexedAt: counts.last ? new Date(counts.last).toISOString() : undefined,
    stale,
  };
}

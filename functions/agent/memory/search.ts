import { sql } from "drizzle-orm";
import { withDb } from "../../db/client.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import {
  embedTexts,
  EmbeddingError,
  indexFingerprint,
  resolveEmbeddingProvider,
  vectorLiteral,
} from "./embeddings.ts";
import type { MemoryEnv } from "./indexer.ts";

/**
 * memory_search's ranking, as OpenClaw's built-in engine: a keyword path (Postgres full text,
 * `ts_rank_cd` normalised to 0..1) and a vector path (pgvector cosine similarity) over the same
 * chunks, merged with `vectorWeight`/`textWeight`, then multiplied by recency decay (dated notes
 * lose half their weight every `recencyHalfLifeDays`; MEMORY.md, USER.md and undated files never
 * decay). With no provider it ranks by keywords alone and says so; when an explicitly configured
 * provider fails, it reports that memory is unavailable instead of quietly ranking by keywords.
 */

export interface MemoryHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  textScore: number;
  vectorScore: number;
  snippet: string;
}

export type MemorySearchOutcome =
  | { status: "ok"; mode: "hybrid" | "keyword-only"; note?: string; results: MemoryHit[] }
  | { status: "unavailable"; reason: string };

export interface SearchOptions {
  maxResults?: number;
  minScore?: number;
  /** Whether MEMORY.md and memory/ may be searched (the owner's main private session only). */
  includePrivate: boolean;
  now?: Date;
}

const SNIPPET_CHARS = 700;
const MAX_QUERY_TOKENS = 32;

/** Word tokens of a query as an OR'ed tsquery (letters and digits only, so nothing is parsed as syntax). */
export function keywordQuery(query: string): string | undefined {
  const tokens = [
    ...new Set(
      (query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter(
        (token) => token.length > 1 || /\p{N}/u.test(token),
      ),
    ),
  ];
  if (!tokens.length) return undefined;
  return tokens
    .slice(0, MAX_QUERY_TOKENS)
    .map((token) => `'${token}'`)
    .join(" | ");
}

const DATED = /(?:^|\/)(\d{4})-(\d{2})-(\d{2})(?:[-_][^/]*)?\.md$/i;

/** 0.5^(age/halfLife) for dated notes; 1 for evergreen files. */
export function recencyFactor(path: string, now: Date, halfLifeDays: number): number {
  if (halfLifeDays <= 0) return 1;
  const match = DATED.exec(path);
  if (!match || !path.startsWith("memory/")) return 1;
  const noted = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (!Number.isFinite(noted)) return 1;
  const ageDays = Math.max(0, (now.getTime() - noted) / 86_400_000);
  return 0.5 ** (ageDays / halfLifeDays);
}

interface CandidateRow {
  path: string;
  start_line: number;
  end_line: number;
  content: string;
  text_score: number | string | null;
  vector_score: number | string | null;
}

export async function searchMemory(
  env: MemoryEnv,
  config: EdgeclawConfig,
  agentId: string,
  query: string,
  options: SearchOptions,
): Promise<MemorySearchOutcome> {
  const search = config.memory.search;
  const maxResults = Math.min(50, Math.max(1, options.maxResults ?? search.query.maxResults));
  const candidates = maxResults * search.query.hybrid.candidateMultiplier;
  const provider = resolveEmbeddingProvider(search, env);
  const now = options.now ?? new Date();

  let queryVector: number[] | undefined;
  let note: string | undefined =
    provider.kind === "none" ? `keyword-only search: ${provider.reason}` : undefined;
  if (provider.kind !== "none") {
    try {
      [queryVector] = await embedTexts(provider, [query], {
        batchSize: 1,
        timeoutMs: search.timeoutSeconds * 1000,
      });
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error;
      if (provider.explicit)
        return {
          status: "unavailable",
          reason: `memory unavailable: the embedding provider "${provider.id}" failed (${error.message})`,
        };
      note = `keyword-only search: embeddings failed (${error.message})`;
    }
  }
  const fingerprint = queryVector ? indexFingerprint(search, provider) : undefined;
  const tsquery = keywordQuery(query);
  if (!tsquery && !queryVector)
    return {
      status: "ok",
      mode: "keyword-only",
      note: note ?? "the query has no words to search for",
      results: [],
    };

  const privateFilter = options.includePrivate ? sql`true` : sql`not c.private`;
  const rows = await withDb(env, async (db) => {
    const keyword = tsquery
      ? sql`select c.id, ts_rank_cd(c.tsv, q, 32) as text_score from memory_chunks c, to_tsquery('simple', ${tsquery}) q
            where c.agent_id = ${agentId} and ${privateFilter} and c.tsv @@ q order by text_score desc limit ${candidates}`
      : sql`select null::bigint as id, 0::float8 as text_score where false`;
    const vector = queryVector
      ? sql`select c.id, 1 - (c.embedding <=> ${vectorLiteral(queryVector)}::vector) as vector_score from memory_chunks c
            where c.agent_id = ${agentId} and ${privateFilter} and c.fingerprint = ${fingerprint!} and c.embedding is not null
            order by c.embedding <=> ${vectorLiteral(queryVector)}::vector limit ${candidates}`
      : sql`select null::bigint as id, 0::float8 as vector_score where false`;
    const result = await db.execute(sql`
      with kw as (${keyword}), vec as (${vector}), ids as (select id from kw union select id from vec)
      select c.path, c.start_line, c.end_line, c.content, kw.text_score, vec.vector_score
      from ids join memory_chunks c on c.id = ids.id left join kw on kw.id = ids.id left join vec on vec.id = ids.id`);
    return result.rows as unknown as CandidateRow[];
  });

  const hybrid = queryVector !== undefined;
  const { vectorWeight, textWeight } = search.query.hybrid;
  const minScore = options.minScore ?? search.query.minScore;
  const hits = rows
    .map((row): MemoryHit => {
      const textScore = Number(row.text_score ?? 0);
      const vectorScore = Math.max(0, Number(row.vector_score ?? 0));
      const relevance = hybrid
        ? (vectorWeight * vectorScore + textWeight * textScore) /
          Math.max(1e-9, vectorWeight + textWeight)
        : textScore;
      return {
        path: row.path,
        startLine: row.start_line,
        endLine: row.end_line,
        score: relevance * recencyFactor(row.path, now, search.recencyHalfLifeDays),
        textScore,
        vectorScore,
        snippet:
          row.content.length > SNIPPET_CHARS
            ? `${row.content.slice(0, SNIPPET_CHARS)}…`
            : row.content,
      };
    })
    // minScore is on the hybrid scale; keyword ranks alone are small numbers, so any match counts there.
    .filter((hit) => (hybrid ? hit.score >= minScore : hit.score > 0))
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path) || a.startLine - b.startLine)
    .slice(0, maxResults);
  return {
    status: "ok",
    mode: hybrid ? "hybrid" : "keyword-only",
    ...(note ? { note } : {}),
    results: hits,
  };
}

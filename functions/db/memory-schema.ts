import { sql } from "drizzle-orm";
import {
  bigserial,
  boolean,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";

/**
 * The memory search index (functions/agent/memory/): derived state, rebuilt from the workspace files
 * at any time. Embeddings use pgvector without a fixed dimension, because the provider and model
 * (and so the width) are configuration; rows of another index fingerprint are never compared.
 */

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
const vector = customType<{ data: string; driverData: string }>({ dataType: () => "vector" });

/** What the index last saw of each source file, and under which fingerprint it was indexed. */
export const memoryFiles = pgTable(
  "memory_files",
  {
    agentId: text("agent_id").notNull(),
    path: text("path").notNull(),
    sourceVersion: integer("source_version").notNull(),
    sourceUpdatedAt: timestamp("source_updated_at", { withTimezone: true }).notNull(),
    /** provider, model and chunking the file's chunks were made with (index-fingerprint.ts). */
    fingerprint: text("fingerprint").notNull(),
    chunks: integer("chunks").notNull(),
    indexedAt: timestamp("indexed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.path] })],
);

export const memoryChunks = pgTable(
  "memory_chunks",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    agentId: text("agent_id").notNull(),
    path: text("path").notNull(),
    startLine: integer("start_line").notNull(),
    endLine: integer("end_line").notNull(),
    content: text("content").notNull(),
    /** MEMORY.md and memory/: only the owner's main private session may see these chunks. */
    private: boolean("private").notNull(),
    fingerprint: text("fingerprint").notNull(),
    tsv: tsvector("tsv").generatedAlwaysAs(sql`to_tsvector('simple', "content")`),
    embedding: vector("embedding"),
  },
  (t) => [
    index("memory_chunks_file_idx").on(t.agentId, t.path),
    index("memory_chunks_tsv_idx").using("gin", t.tsv),
  ],
);

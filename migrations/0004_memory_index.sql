-- pgvector: Neon ships it; local PGlite loads @electric-sql/pglite-pgvector (scripts/lib/local-postgres.ts).
CREATE EXTENSION IF NOT EXISTS vector;
--> statement-breakpoint
CREATE TABLE "memory_chunks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"path" text NOT NULL,
	"start_line" integer NOT NULL,
	"end_line" integer NOT NULL,
	"content" text NOT NULL,
	"private" boolean NOT NULL,
	"fingerprint" text NOT NULL,
	"tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', "content")) STORED,
	"embedding" vector
);
--> statement-breakpoint
CREATE TABLE "memory_files" (
	"agent_id" text NOT NULL,
	"path" text NOT NULL,
	"source_version" integer NOT NULL,
	"source_updated_at" timestamp with time zone NOT NULL,
	"fingerprint" text NOT NULL,
	"chunks" integer NOT NULL,
	"indexed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memory_files_agent_id_path_pk" PRIMARY KEY("agent_id","path")
);
--> statement-breakpoint
CREATE INDEX "memory_chunks_file_idx" ON "memory_chunks" USING btree ("agent_id","path");--> statement-breakpoint
CREATE INDEX "memory_chunks_tsv_idx" ON "memory_chunks" USING gin ("tsv");
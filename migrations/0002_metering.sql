CREATE TABLE "model_calls" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text,
	"session_key" text NOT NULL,
	"session_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"channel" text,
	"sender_id" text,
	"kind" text NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"cache_read_tokens" integer DEFAULT 0 NOT NULL,
	"cache_write_tokens" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"outcome" text DEFAULT 'ok' NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "run_platform_cost" (
	"run_id" text PRIMARY KEY NOT NULL,
	"session_key" text NOT NULL,
	"agent_id" text NOT NULL,
	"channel" text,
	"worker_requests" integer DEFAULT 0 NOT NULL,
	"do_requests" integer DEFAULT 0 NOT NULL,
	"do_gb_seconds" double precision DEFAULT 0 NOT NULL,
	"postgres_queries" integer DEFAULT 0 NOT NULL,
	"estimated_usd" double precision DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "model_calls_time_idx" ON "model_calls" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "model_calls_agent_idx" ON "model_calls" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "model_calls_session_idx" ON "model_calls" USING btree ("session_key","created_at");--> statement-breakpoint
CREATE INDEX "run_platform_cost_time_idx" ON "run_platform_cost" USING btree ("created_at");
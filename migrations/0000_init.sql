CREATE TABLE "allow_entries" (
	"channel" text NOT NULL,
	"account_id" text NOT NULL,
	"sender_id" text NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "allow_entries_channel_account_id_sender_id_pk" PRIMARY KEY("channel","account_id","sender_id")
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"actor" text,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway_state" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pairing_requests" (
	"channel" text NOT NULL,
	"account_id" text NOT NULL,
	"sender_id" text NOT NULL,
	"code" text NOT NULL,
	"sender_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "pairing_requests_channel_account_id_sender_id_pk" PRIMARY KEY("channel","account_id","sender_id")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"session_key" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"channel" text,
	"chat_type" text,
	"last_route" jsonb,
	"model_override" text,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"session_started_at" timestamp with time zone NOT NULL,
	"last_interaction_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transcript_entries" (
	"session_key" text NOT NULL,
	"session_id" text NOT NULL,
	"seq" integer NOT NULL,
	"role" text NOT NULL,
	"content" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "transcript_entries_session_key_seq_pk" PRIMARY KEY("session_key","seq")
);
--> statement-breakpoint
CREATE TABLE "usage" (
	"run_id" text PRIMARY KEY NOT NULL,
	"session_key" text NOT NULL,
	"agent_id" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"cache_read_tokens" integer DEFAULT 0 NOT NULL,
	"cache_write_tokens" integer DEFAULT 0 NOT NULL,
	"cost_usd" text DEFAULT '0' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspace_files" (
	"agent_id" text NOT NULL,
	"path" text NOT NULL,
	"content" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workspace_files_agent_id_path_pk" PRIMARY KEY("agent_id","path")
);
--> statement-breakpoint
CREATE INDEX "audit_kind_idx" ON "audit_events" USING btree ("kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pairing_code_idx" ON "pairing_requests" USING btree ("channel","code");--> statement-breakpoint
CREATE INDEX "sessions_agent_idx" ON "sessions" USING btree ("agent_id","updated_at");--> statement-breakpoint
CREATE INDEX "transcript_session_idx" ON "transcript_entries" USING btree ("session_id","seq");--> statement-breakpoint
CREATE INDEX "usage_session_idx" ON "usage" USING btree ("session_key","created_at");
CREATE TABLE "compute_env_installs" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"kind" text NOT NULL,
	"packages" jsonb NOT NULL,
	"env_name" text,
	"status" text NOT NULL,
	"tried" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"changes" jsonb,
	"revision_before" integer,
	"proposal" jsonb,
	"description" text,
	"reason" text,
	"error" text,
	"requested_by" text,
	"session_key" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"lease_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "compute_envs" (
	"agent_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"python_version" text,
	"r_version" text,
	"packages" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"disciplines" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_reason" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compute_envs_agent_id_name_pk" PRIMARY KEY("agent_id","name")
);
--> statement-breakpoint
CREATE INDEX "compute_env_installs_agent_idx" ON "compute_env_installs" USING btree ("agent_id","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "compute_env_installs_running_idx" ON "compute_env_installs" USING btree ("agent_id","env_name") WHERE status = 'running';
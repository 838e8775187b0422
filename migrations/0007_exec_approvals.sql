CREATE TABLE "exec_approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"segment" text NOT NULL,
	"executable" text NOT NULL,
	"source" text DEFAULT 'allow-always' NOT NULL,
	"approved_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "exec_approvals_segment_idx" ON "exec_approvals" USING btree ("agent_id","segment");
ALTER TABLE "cron_jobs" ADD COLUMN "consecutive_errors" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "cron_jobs" ADD COLUMN "disabled_reason" text;
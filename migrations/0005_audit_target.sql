ALTER TABLE "audit_events" ADD COLUMN "target" text;--> statement-breakpoint
CREATE INDEX "audit_created_idx" ON "audit_events" USING btree ("created_at");
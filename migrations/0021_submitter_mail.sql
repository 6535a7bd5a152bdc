ALTER TABLE "submissions" ADD COLUMN "confirmation" jsonb;--> statement-breakpoint
CREATE INDEX "submissions_unconfirmed" ON "submissions" ("received_at") WHERE quarantine_reason = 'pending_confirmation';--> statement-breakpoint
CREATE INDEX "deliveries_submitter" ON "deliveries" ("org_id", "created_at") WHERE destination_id = 'submitter';

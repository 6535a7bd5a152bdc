ALTER TABLE "submissions" ADD COLUMN "spam_fingerprint" text;--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "spam_address" text;--> statement-breakpoint
CREATE INDEX "submissions_spam_fingerprint" ON "submissions" ("org_id", "spam_fingerprint", "received_at") WHERE spam_fingerprint is not null;--> statement-breakpoint
CREATE INDEX "submissions_spam_address" ON "submissions" ("org_id", "spam_address", "received_at") WHERE spam_address is not null;

-- Routes that follow the answers: a validated JSON condition (server/domain/match.ts), null = every submission.
ALTER TABLE "routes" ADD COLUMN "match" jsonb;--> statement-breakpoint
-- One per person: a repeat names the submission that claimed its values first.
ALTER TABLE "submissions" ADD COLUMN "duplicate_of" text;--> statement-breakpoint
-- The claims of settings.unique: one row per (form, hash of the normalised values), taken in the
-- intake transaction with INSERT ... ON CONFLICT, so two processes never both store a first.
-- The foreign key is checked at commit (the claim is taken before its submission is inserted) and
-- cascades: erasing or deleting the first submission frees its values.
CREATE TABLE "unique_claims" (
	"form_id" text NOT NULL,
	"key" text NOT NULL,
	"submission_id" text NOT NULL REFERENCES "submissions"("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
	"expires_at" timestamp with time zone,
	PRIMARY KEY ("form_id", "key")
);--> statement-breakpoint
CREATE INDEX "unique_claims_submission" ON "unique_claims" ("submission_id");

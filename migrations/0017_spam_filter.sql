ALTER TABLE "organizations" ADD COLUMN "settings" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE TABLE "spam_models" (
	"org_id" text PRIMARY KEY NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
	"spam_docs" integer DEFAULT 0 NOT NULL,
	"ham_docs" integer DEFAULT 0 NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);--> statement-breakpoint
CREATE TABLE "spam_tokens" (
	"org_id" text NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
	"token" text NOT NULL,
	"spam" integer DEFAULT 0 NOT NULL,
	"ham" integer DEFAULT 0 NOT NULL,
	PRIMARY KEY ("org_id", "token")
);--> statement-breakpoint
CREATE TABLE "spam_marks" (
	"submission_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
	"mark" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "spam_marks_org" ON "spam_marks" ("org_id");

CREATE TABLE "drift_events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text NOT NULL,
	"field" text NOT NULL,
	"kind" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"schema_version" integer,
	"status" text DEFAULT 'open' NOT NULL,
	"count" integer DEFAULT 1 NOT NULL,
	"first_submission_id" text NOT NULL,
	"last_submission_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	"closed_reason" text
);
--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "drift" jsonb;--> statement-breakpoint
CREATE INDEX "drift_events_org" ON "drift_events" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "drift_events_form" ON "drift_events" USING btree ("form_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "drift_events_open" ON "drift_events" USING btree ("form_id","field","kind") WHERE status = 'open';
CREATE TABLE "daily_counts" (
	"form_id" text NOT NULL REFERENCES "forms"("id") ON DELETE CASCADE,
	"day" date NOT NULL,
	"org_id" text NOT NULL,
	"received" integer DEFAULT 0 NOT NULL,
	"spam" integer DEFAULT 0 NOT NULL,
	"quarantined" integer DEFAULT 0 NOT NULL,
	"deliveries" integer DEFAULT 0 NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"rolled_at" timestamp with time zone DEFAULT now() NOT NULL,
	PRIMARY KEY ("form_id", "day")
);--> statement-breakpoint
CREATE INDEX "daily_counts_org_day" ON "daily_counts" ("org_id", "day");--> statement-breakpoint
CREATE TABLE "rollup_state" (
	"name" text PRIMARY KEY NOT NULL,
	"rolled_until" date NOT NULL,
	"ran_at" timestamp with time zone
);

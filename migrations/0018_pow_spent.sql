CREATE TABLE "pow_spent" (
	"signature" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
CREATE INDEX "pow_spent_expires" ON "pow_spent" ("expires_at");

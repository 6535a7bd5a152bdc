CREATE TABLE "billing_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"org_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"invited_by_user_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"accepted_user_id" text,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"plan" text NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"code_hash" text NOT NULL,
	"expires_at" timestamp with time zone,
	"plan_duration_days" integer,
	"max_redemptions" integer DEFAULT 1 NOT NULL,
	"redeemed_count" integer DEFAULT 0 NOT NULL,
	"created_by_user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "plan_redemptions" (
	"id" text PRIMARY KEY NOT NULL,
	"grant_id" text NOT NULL,
	"org_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sandboxes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text NOT NULL,
	"name" text NOT NULL,
	"origin" text,
	"claim_email" text,
	"token_hash" text NOT NULL,
	"idempotency_key_hash" text NOT NULL,
	"request_hash" text NOT NULL,
	"source_ip" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"claimed_at" timestamp with time zone,
	"claimed_org_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "invitations_org" ON "invitations" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_pending" ON "invitations" USING btree ("org_id","email") WHERE accepted_at is null and revoked_at is null;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_grants_code" ON "plan_grants" USING btree ("code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "plan_redemptions_grant_org" ON "plan_redemptions" USING btree ("grant_id","org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sandboxes_idempotency" ON "sandboxes" USING btree ("idempotency_key_hash");--> statement-breakpoint
CREATE INDEX "sandboxes_source" ON "sandboxes" USING btree ("source_ip","created_at");--> statement-breakpoint
CREATE INDEX "sandboxes_expires" ON "sandboxes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sandboxes_form" ON "sandboxes" USING btree ("form_id");
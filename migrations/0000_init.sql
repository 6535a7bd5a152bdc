CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scopes" text[] NOT NULL,
	"created_by_user_id" text,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "attachments" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text NOT NULL,
	"submission_id" text NOT NULL,
	"field_name" text NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"storage_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"submission_id" text,
	"route_id" text NOT NULL,
	"destination_id" text NOT NULL,
	"form_id" text,
	"status" text NOT NULL,
	"skip_reason" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"lease_until" timestamp with time zone,
	"schema_version" integer,
	"event_type" text DEFAULT 'submission.received' NOT NULL,
	"period_key" text,
	"payload" jsonb NOT NULL,
	"last_response" jsonb,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "destinations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"config" jsonb NOT NULL,
	"health" text DEFAULT 'unknown' NOT NULL,
	"verified" boolean DEFAULT false NOT NULL,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"last_failing_event_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"code_hash" text NOT NULL,
	"ip" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"type" text NOT NULL,
	"subject" jsonb NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "forms" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"project_id" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"schema_mode" text DEFAULT 'observe' NOT NULL,
	"current_schema_version" integer,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"sandbox" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" integer,
	"response_body" text,
	"response_type" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"personal" boolean DEFAULT false NOT NULL,
	"owner_user_id" text,
	"plan" text NOT NULL,
	"plan_source" text NOT NULL,
	"plan_expires_at" timestamp with time zone,
	"plan_note" text,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "organizations_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "routes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text,
	"stream_id" text,
	"destination_id" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"mode" jsonb NOT NULL,
	"window" jsonb NOT NULL,
	"quality" jsonb NOT NULL,
	"filter" text,
	"transform" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"user_id" text NOT NULL,
	"active_org_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text NOT NULL,
	"status" text NOT NULL,
	"quarantine_reason" text,
	"test" boolean DEFAULT false NOT NULL,
	"data" jsonb NOT NULL,
	"form_schema_version" integer,
	"spam" jsonb NOT NULL,
	"meta" jsonb NOT NULL,
	"issues" jsonb,
	"client_ip" text NOT NULL,
	"idempotency_key" text,
	"subject_hint" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE INDEX "api_keys_org" ON "api_keys" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "attachments_submission" ON "attachments" USING btree ("submission_id");--> statement-breakpoint
CREATE INDEX "attachments_org" ON "attachments" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "deliveries_org" ON "deliveries" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "deliveries_submission" ON "deliveries" USING btree ("submission_id");--> statement-breakpoint
CREATE INDEX "deliveries_due" ON "deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_submission_route" ON "deliveries" USING btree ("submission_id","route_id");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_route_period" ON "deliveries" USING btree ("route_id","period_key");--> statement-breakpoint
CREATE INDEX "destinations_org" ON "destinations" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "email_codes_email" ON "email_codes" USING btree ("email","created_at");--> statement-breakpoint
CREATE INDEX "email_codes_ip" ON "email_codes" USING btree ("ip","created_at");--> statement-breakpoint
CREATE INDEX "events_org" ON "events" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "events_org_type" ON "events" USING btree ("org_id","type","id");--> statement-breakpoint
CREATE UNIQUE INDEX "forms_org_project_slug" ON "forms" USING btree ("org_id","project_id","slug");--> statement-breakpoint
CREATE INDEX "forms_org" ON "forms" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_org_user" ON "memberships" USING btree ("org_id","user_id");--> statement-breakpoint
CREATE INDEX "memberships_user" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "projects_org_slug" ON "projects" USING btree ("org_id","slug");--> statement-breakpoint
CREATE INDEX "routes_org" ON "routes" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "routes_form" ON "routes" USING btree ("form_id");--> statement-breakpoint
CREATE INDEX "routes_destination" ON "routes" USING btree ("destination_id");--> statement-breakpoint
CREATE INDEX "submissions_org" ON "submissions" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "submissions_form" ON "submissions" USING btree ("form_id","id");--> statement-breakpoint
CREATE INDEX "submissions_rate" ON "submissions" USING btree ("form_id","client_ip","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "submissions_idem" ON "submissions" USING btree ("form_id","idempotency_key");
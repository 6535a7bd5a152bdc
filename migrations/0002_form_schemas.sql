CREATE TABLE "form_schemas" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"form_id" text NOT NULL,
	"version" integer NOT NULL,
	"json_schema" jsonb NOT NULL,
	"ui" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"changelog" text DEFAULT '' NOT NULL,
	"inferred" boolean DEFAULT false NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "form_schemas_org_form_version" ON "form_schemas" USING btree ("org_id","form_id","version");
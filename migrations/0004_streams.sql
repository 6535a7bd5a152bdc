CREATE TABLE "stream_schemas" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"stream_id" text NOT NULL,
	"version" integer NOT NULL,
	"json_schema" jsonb NOT NULL,
	"ui" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"changelog" text DEFAULT '' NOT NULL,
	"inferred" boolean DEFAULT false NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_sources" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"stream_id" text NOT NULL,
	"form_id" text,
	"selector" text,
	"mapping" jsonb NOT NULL,
	"mapping_status" text NOT NULL,
	"missing" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"stream_schema_version" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "streams" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"current_schema_version" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "stream_schemas_stream_version" ON "stream_schemas" USING btree ("stream_id","version");--> statement-breakpoint
CREATE INDEX "stream_sources_stream" ON "stream_sources" USING btree ("stream_id","id");--> statement-breakpoint
CREATE INDEX "stream_sources_org" ON "stream_sources" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "stream_sources_stream_form" ON "stream_sources" USING btree ("stream_id","form_id") WHERE form_id is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "stream_sources_stream_selector" ON "stream_sources" USING btree ("stream_id","selector") WHERE selector is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "streams_org_slug" ON "streams" USING btree ("org_id","slug");--> statement-breakpoint
CREATE INDEX "streams_org" ON "streams" USING btree ("org_id","id");
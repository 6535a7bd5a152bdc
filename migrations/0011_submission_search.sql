-- pg_trgm (trusted since PostgreSQL 13; bundled with PGlite and loaded by openPglite) indexes q's substring search.
CREATE EXTENSION IF NOT EXISTS "pg_trgm";--> statement-breakpoint
ALTER TABLE "form_schemas" ADD COLUMN "field_order" text[];--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "search_text" text GENERATED ALWAYS AS (lower(id || ' ' || jsonb_path_query_array(data, 'strict $.** ? (@.type() == "string" || @.type() == "number")')::text)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "submissions_search" ON "submissions" USING gin ("search_text" gin_trgm_ops);
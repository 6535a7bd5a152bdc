-- q's search text leaves the intake path: the generated column (and its trigram index, computed on every insert)
-- becomes a plain column the worker's search indexer fills after the fact (server/worker/search-index.ts).
-- Existing rows keep their text. formsvc_search_text is the one definition of that text, for the indexer and for
-- searching the rows it has not reached yet.
CREATE OR REPLACE FUNCTION formsvc_search_text(id text, data jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN lower(id || ' ' || jsonb_path_query_array(data, 'strict $.** ? (@.type() == "string" || @.type() == "number")')::text);--> statement-breakpoint
DROP INDEX "submissions_search";--> statement-breakpoint
ALTER TABLE "submissions" ALTER COLUMN "search_text" DROP EXPRESSION;--> statement-breakpoint
ALTER TABLE "submissions" ALTER COLUMN "search_text" DROP NOT NULL;--> statement-breakpoint
CREATE INDEX "submissions_unindexed" ON "submissions" USING btree ("org_id","id") WHERE search_text is null;--> statement-breakpoint
CREATE INDEX "submissions_search" ON "submissions" USING gin ("search_text" gin_trgm_ops) WHERE search_text is not null;

ALTER TABLE "organizations" ADD COLUMN "config_gen" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE FUNCTION "bump_org_config_gen"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "organizations" SET "config_gen" = "config_gen" + 1 WHERE "id" = OLD."org_id";
  END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW."org_id" IS DISTINCT FROM OLD."org_id") THEN
    UPDATE "organizations" SET "config_gen" = "config_gen" + 1 WHERE "id" = NEW."org_id";
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "bump_own_config_gen"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."config_gen" = OLD."config_gen" THEN
    NEW."config_gen" := OLD."config_gen" + 1;
  END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER "organizations_config_gen" BEFORE UPDATE ON "organizations" FOR EACH ROW EXECUTE FUNCTION "bump_own_config_gen"();--> statement-breakpoint
CREATE TRIGGER "forms_config_gen" AFTER INSERT OR UPDATE OR DELETE ON "forms" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();--> statement-breakpoint
CREATE TRIGGER "routes_config_gen" AFTER INSERT OR UPDATE OR DELETE ON "routes" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();--> statement-breakpoint
CREATE TRIGGER "streams_config_gen" AFTER INSERT OR UPDATE OR DELETE ON "streams" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();--> statement-breakpoint
CREATE TRIGGER "stream_sources_config_gen" AFTER INSERT OR UPDATE OR DELETE ON "stream_sources" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();--> statement-breakpoint
CREATE TRIGGER "system_webhooks_config_gen" AFTER INSERT OR DELETE OR UPDATE OF "org_id", "events", "enabled" ON "system_webhooks" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();

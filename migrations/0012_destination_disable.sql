ALTER TABLE "destinations" ADD COLUMN "enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "destinations" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "destinations" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "deliveries_parked" ON "deliveries" USING btree ("destination_id") WHERE status = 'pending' and next_attempt_at is null;--> statement-breakpoint
-- Intake plans a disabled destination's deliveries as waiting (pending, not due): its cached routes
-- carry the destination's enabled flag, so turning it on or off moves the organization's config_gen.
CREATE TRIGGER "destinations_config_gen" AFTER UPDATE OF "enabled" ON "destinations" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();

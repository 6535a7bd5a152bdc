-- New outbound targets wait for a person (settings.approve_destinations "keys"): a destination or
-- system webhook created or re-pointed by an API key is 'pending' (null: approved, or never asked)
-- until an owner or admin approves it in the dashboard; its deliveries wait as a disabled one's do.
ALTER TABLE "destinations" ADD COLUMN "approval" text;--> statement-breakpoint
ALTER TABLE "destinations" ADD COLUMN "approval_key_id" text;--> statement-breakpoint
ALTER TABLE "destinations" ADD COLUMN "approval_key_name" text;--> statement-breakpoint
ALTER TABLE "destinations" ADD COLUMN "approval_requested_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "approval" text;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "approval_key_id" text;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "approval_key_name" text;--> statement-breakpoint
ALTER TABLE "system_webhooks" ADD COLUMN "approval_requested_at" timestamp with time zone;--> statement-breakpoint
-- The dashboard's banner asks every page whether anything waits: only pending rows are indexed.
CREATE INDEX "destinations_approval_pending" ON "destinations" USING btree ("org_id") WHERE approval = 'pending';--> statement-breakpoint
-- Intake's cached routes carry whether the destination may be sent to: approval moves config_gen too.
CREATE TRIGGER "destinations_approval_config_gen" AFTER UPDATE OF "approval" ON "destinations" FOR EACH ROW EXECUTE FUNCTION "bump_org_config_gen"();

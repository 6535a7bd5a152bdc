ALTER TABLE "deliveries" ADD COLUMN "released_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "deliveries_held" ON "deliveries" USING btree ("org_id","created_at") WHERE status = 'held';--> statement-breakpoint
CREATE INDEX "deliveries_released" ON "deliveries" USING btree ("org_id","released_at") WHERE released_at is not null;--> statement-breakpoint
CREATE INDEX "submissions_org_received" ON "submissions" USING btree ("org_id","received_at");
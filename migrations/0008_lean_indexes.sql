DROP INDEX "deliveries_submission";--> statement-breakpoint
DROP INDEX "deliveries_route_period";--> statement-breakpoint
DROP INDEX "submissions_idem";--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_route_period" ON "deliveries" USING btree ("route_id","period_key") WHERE period_key is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "submissions_idem" ON "submissions" USING btree ("form_id","idempotency_key") WHERE idempotency_key is not null;
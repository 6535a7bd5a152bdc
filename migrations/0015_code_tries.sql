-- One guess budget per address and one per client IP for the email code (verify-code, sign-in), counted across
-- processes: every request that carries a code takes a row first (wrong = true); a right code sets wrong = false.
-- The address budget counts the wrong rows of an address in the window, the IP limit every row of an IP.
CREATE TABLE "code_tries" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text,
	"ip" text NOT NULL,
	"wrong" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "code_tries_email" ON "code_tries" USING btree ("email","created_at") WHERE wrong;--> statement-breakpoint
CREATE INDEX "code_tries_ip" ON "code_tries" USING btree ("ip","created_at");

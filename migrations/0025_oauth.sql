-- OAuth 2.1 for /mcp and /v1 (docs/authentication.md). Clients register themselves (RFC 7591):
-- public clients only, so no secret is kept; their redirect URIs are matched exactly.
CREATE TABLE "oauth_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
-- One grant per approval: a person, in one organization, for one client, with one scope and the
-- resource (RFC 8707) bound into each of its tokens. Revoking it ends every token of the family.
CREATE TABLE "oauth_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
	"user_id" text NOT NULL,
	"client_id" text NOT NULL REFERENCES "oauth_clients"("id") ON DELETE CASCADE,
	"scopes" text[] NOT NULL,
	"resource" text NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "oauth_grants_org" ON "oauth_grants" ("org_id", "id");--> statement-breakpoint
-- Authorization codes, one use each, kept hashed with the PKCE challenge and the redirect URI they
-- were issued for. grant_id is set when the code is exchanged (a second use revokes that grant).
CREATE TABLE "oauth_codes" (
	"hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL REFERENCES "oauth_clients"("id") ON DELETE CASCADE,
	"org_id" text NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
	"user_id" text NOT NULL,
	"scopes" text[] NOT NULL,
	"resource" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"grant_id" text,
	"used_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
-- Access and refresh tokens, hashed. A refresh token is used once (used_at); a second use of it
-- revokes its grant, so every token of the family stops working.
CREATE TABLE "oauth_tokens" (
	"hash" text PRIMARY KEY NOT NULL,
	"grant_id" text NOT NULL REFERENCES "oauth_grants"("id") ON DELETE CASCADE,
	"kind" text NOT NULL,
	"used_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "oauth_tokens_grant" ON "oauth_tokens" ("grant_id");

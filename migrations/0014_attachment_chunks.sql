-- ATTACHMENT_STORAGE=postgres keeps a file's bytes here, in chunks of at most 256 KiB (server/files/postgres.ts):
-- written one chunk per statement as the upload arrives and read one chunk per query as the client downloads,
-- so neither side holds a whole file in memory nor a connection for a whole transfer. file_id is the attachment's
-- fl_ id; the rows go in the same transaction as their attachment row (retention, erase, form deletion).
CREATE TABLE "attachment_chunks" (
	"file_id" text NOT NULL,
	"seq" integer NOT NULL,
	"bytes" bytea NOT NULL,
	CONSTRAINT "attachment_chunks_pk" PRIMARY KEY("file_id","seq")
);--> statement-breakpoint
-- Uploads are mostly compressed already (images, PDFs, archives): stored out of line without pglz's attempt.
ALTER TABLE "attachment_chunks" ALTER COLUMN "bytes" SET STORAGE EXTERNAL;

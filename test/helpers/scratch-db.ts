import crypto from 'node:crypto';
import postgres from 'postgres';

/** A fresh database next to the one `url` names; drop() removes it. */
export async function createScratchDatabase(url: string) {
  const name = `${new URL(url).pathname.slice(1) || 'formsvc'}_${crypto.randomBytes(5).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  return {
    url: scratch.toString(),
    async drop() {
      const a = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

/**
 * The DATABASE_URL of a server process a test starts: on TEST_DATABASE_URL's server, a database of
 * its own (migrated by the server from scratch), so no other suite's worker claims its deliveries
 * with that suite's own retry steps, and its worker claims none of theirs. Without
 * TEST_DATABASE_URL, nothing: the server keeps PGlite in its DATA_DIR. `drop` runs after the
 * processes are killed.
 */
export async function serverDatabase(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return { env: {}, drop: async () => {} };
  const db = await createScratchDatabase(url);
  return { env: { DATABASE_URL: db.url }, drop: db.drop };
}

import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../db/client.js';
import { MIGRATIONS } from '../db/client.js';

/** The newest migration this build ships (its journal's last `when`, which drizzle records as created_at). */
function newestMigration(): number {
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  return Math.max(...journal.entries.map((e) => e.when));
}

/**
 * Readiness (GET /readyz): 503 with a reason from the moment a shutdown starts, when the database
 * does not answer, or when it lacks a migration of this build (another process of an older build
 * may have started against it; this one migrates at start-up, so it says so only if that failed
 * or the database was replaced under it). Liveness (/healthz) asks nothing of the database.
 */
export class Readiness {
  private stoppingSince: Date | null = null;
  private readonly newest = newestMigration();

  constructor(private readonly database: Database) {}

  /** A shutdown began: /readyz answers 503 from now on. */
  stopping() {
    this.stoppingSince ??= new Date();
  }

  get isStopping() {
    return this.stoppingSince !== null;
  }

  /** null when ready, else why not (one sentence). */
  async problem(): Promise<string | null> {
    if (this.stoppingSince) return 'shutting down: this process takes no new work';
    let applied: number;
    try {
      const [row] = await this.database.prepared<{ newest: string | number | null }>(
        'select max(created_at) as newest from drizzle.__drizzle_migrations',
        [],
      );
      applied = Number(row?.newest ?? 0);
    } catch (err) {
      return `the database does not answer: ${(err as Error).message}`.slice(0, 300);
    }
    if (applied < this.newest) return 'the database lacks migrations of this build: restart to apply them';
    return null;
  }
}

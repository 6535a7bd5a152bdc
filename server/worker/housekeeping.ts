import type { Deps } from '../core/deps.js';
import { deleteExpiredPowSpent } from '../domain/pow.js';
import { deleteOldSightings } from '../spam/velocity.js';
import { deleteOldCodeTries } from './code-tries-expiry.js';
import { rollDaily } from './daily-rollup.js';
import { vacuumEmbedded } from './embedded-vacuum.js';
import { deleteExpiredKeys } from './idempotency-expiry.js';
import { releaseHeld } from './quota-release.js';
import { applyRetention } from './retention.js';
import { deleteExpiredSandboxes } from './sandbox-expiry.js';
import { deleteUnconfirmed } from './unconfirmed-expiry.js';

/**
 * A periodic job of the worker. It must be safe when several processes run it at once (conditional
 * updates, FOR UPDATE SKIP LOCKED), keep one run short (bounded batches; the next run continues)
 * and wake the worker itself when it makes deliveries due.
 */
export interface HousekeepingJob {
  name: string;
  run(deps: Deps): Promise<unknown>;
}

/**
 * The jobs every run goes through, in order. Add a job by adding an entry here (or, from a module
 * that cannot edit this file, with addHousekeepingJob at start-up).
 */
export const housekeepingJobs: HousekeepingJob[] = [
  { name: 'quota-release', run: releaseHeld },
  { name: 'retention', run: applyRetention },
  { name: 'unconfirmed-expiry', run: deleteUnconfirmed },
  { name: 'sandbox-expiry', run: (deps) => deleteExpiredSandboxes(deps) },
  { name: 'idempotency-expiry', run: (deps) => deleteExpiredKeys(deps) },
  { name: 'code-tries-expiry', run: (deps) => deleteOldCodeTries(deps) },
  { name: 'pow-spent-expiry', run: (deps) => deleteExpiredPowSpent(deps) },
  { name: 'spam-sightings-expiry', run: (deps) => deleteOldSightings(deps) },
  // after retention: a re-rolled day counts what retention left of it
  { name: 'daily-rollup', run: (deps) => rollDaily(deps) },
  // last: it vacuums what the jobs before it deleted
  { name: 'embedded-vacuum', run: vacuumEmbedded },
];

/** Registers a job once (by name); later runs include it. */
export function addHousekeepingJob(job: HousekeepingJob): void {
  if (!housekeepingJobs.some((j) => j.name === job.name)) housekeepingJobs.push(job);
}

export type HousekeepingReport = Record<string, { ok: true; result: unknown } | { ok: false; error: string }>;

/**
 * Runs each job once. Jobs are isolated: one that throws is logged and reported, and the others
 * still run. Started by the worker every HOUSEKEEPING_MS; tests call it directly.
 */
export async function runHousekeeping(
  deps: Deps,
  jobs: readonly HousekeepingJob[] = housekeepingJobs,
): Promise<HousekeepingReport> {
  const report: HousekeepingReport = {};
  for (const job of jobs) {
    try {
      report[job.name] = { ok: true, result: await job.run(deps) };
    } catch (err) {
      deps.log.error({ job: job.name, err: String(err) }, 'housekeeping job failed; the next run tries again');
      report[job.name] = { ok: false, error: String(err) };
    }
  }
  return report;
}

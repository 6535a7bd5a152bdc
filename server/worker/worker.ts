import type { Deps } from '../core/deps.js';
import { planDigests } from './digest.js';
import { runHousekeeping } from './housekeeping.js';
import type { IntakeLoad } from './intake-load.js';
import { Pipeline } from './pipeline.js';
import { indexSearchBatch, SEARCH_INDEX_BATCH } from './search-index.js';
import type { AdapterDeps } from './types.js';

/** NOTIFY channel: any process that committed deliveries wakes every worker on the server. */
export const WAKE_CHANNEL = 'formsvc_wake';

/**
 * The delivery worker: claims due rows (route deliveries and system-webhook deliveries), sends
 * them outside any transaction, and settles each attempt (the Pipeline does the three, batched).
 * Woken at once by `wake()` (after an intake commit, or a NOTIFY from another process) and by a
 * safety tick; digests are planned and housekeeping (release of held deliveries, retention) runs
 * on their own timers. Bounded concurrency overall and per destination.
 */
export class Worker {
  private readonly pipeline: Pipeline;
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  private housekeepingRun: Promise<unknown> | null = null;
  private indexRun: Promise<unknown> | null = null;

  constructor(
    private readonly deps: Deps,
    adapterDeps: AdapterDeps,
    /** how this process's intake load is judged (tests pass one with a clock of their own) */
    intakeLoad?: IntakeLoad,
  ) {
    this.pipeline = new Pipeline(deps, adapterDeps, intakeLoad);
  }

  async start() {
    const { config, database } = this.deps;
    this.timers.push(setInterval(() => this.wake(), config.workerTickMs));
    this.timers.push(setInterval(() => void this.digests(), config.digestCheckMs));
    this.timers.push(setInterval(() => void this.housekeeping(), config.housekeepingMs));
    this.timers.push(setInterval(() => void this.searchIndex(), config.searchIndexMs));
    for (const t of this.timers) t.unref();
    this.unlisten = await database.listen(WAKE_CHANNEL, () => this.wake());
    this.wake();
  }

  /**
   * Intake's shortcut past the claim for this process (Deps.handoff): deliveries it writes already
   * claimed go straight into this worker's queues.
   */
  get handoff() {
    return this.pipeline.handoff;
  }

  /** Sends under way in this process (metrics). */
  get sendsInFlight() {
    return this.pipeline.sending;
  }

  /** Claim statements run per outbox since the start. */
  get claimsRun() {
    return this.pipeline.claimsRun;
  }

  /** Asks for a claim of both outboxes soon; calls during a claim make another one follow. */
  wake() {
    if (this.stopped) return;
    this.pipeline.wake('delivery');
    this.pipeline.wake('hook');
  }

  /** Plans closed digest periods, then wakes the pump if it planned any. */
  async digests() {
    if (this.stopped) return;
    try {
      if ((await planDigests(this.deps)) > 0) this.wake();
    } catch (err) {
      this.deps.log.error({ err: String(err) }, 'digest planning failed');
    }
  }

  /** One housekeeping run at a time in this process (a slow run makes the next tick pass). */
  async housekeeping() {
    if (this.stopped || this.housekeepingRun) return;
    this.housekeepingRun = runHousekeeping(this.deps).finally(() => {
      this.housekeepingRun = null;
    });
    await this.housekeepingRun;
  }

  /**
   * Writes the search text of new submissions, a batch at a time, until none is left, or intake
   * starts queueing in this process, or this process holds deliveries to send: intake and
   * deliveries first (a steady trickle of deliveries leaves gaps; a backlog is delivered first).
   * The rows wait for a later tick, and `q` finds them meanwhile by computing their text. One run
   * at a time in this process.
   */
  async searchIndex() {
    if (this.stopped || this.indexRun) return;
    const load = this.pipeline.intakeLoad;
    this.indexRun = (async () => {
      const busy = () => load.busy() || this.pipeline.holding > 0;
      while (!this.stopped && !busy()) {
        if ((await indexSearchBatch(this.deps.database)) < SEARCH_INDEX_BATCH) return;
      }
    })()
      .catch((err: unknown) =>
        this.deps.log.warn({ err: String(err) }, 'search indexing failed; the next tick tries again'),
      )
      .finally(() => {
        this.indexRun = null;
      });
    await this.indexRun;
  }

  /**
   * Stops claiming, hands back claimed rows not yet sent, waits up to `graceMs` for sends in flight,
   * then hands back what is still claimed (due again at once, attempt not counted) so another
   * process takes it without waiting for the lease to run out.
   */
  async stop(graceMs = 8000) {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.unlisten) await this.unlisten().catch(() => {});
    await Promise.all([this.housekeepingRun, this.indexRun, this.pipeline.stop(graceMs)]);
  }
}

import { inArray, sql } from 'drizzle-orm';
import { deliveries, systemWebhookDeliveries } from '../db/schema.js';
import type { Deps } from '../http/context.js';
import { adapterFor } from './adapters/index.js';
import { webhookAdapter } from './adapters/webhook.js';
import { type Claimed, claim } from './claim.js';
import { planDigests } from './digest.js';
import { runHousekeeping } from './housekeeping.js';
import { loadDelivery, loadHook } from './message.js';
import { settleDelivery, settleHookDelivery } from './settle.js';
import type { AdapterDeps, SendResult } from './types.js';

/** NOTIFY channel: any process that committed deliveries wakes every worker on the server. */
export const WAKE_CHANNEL = 'formsvc_wake';

type Kind = 'delivery' | 'hook';

const failure = (error: string, retryable = true): SendResult => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error,
  retryable,
});

/**
 * The delivery worker: claims due rows (route deliveries and system-webhook deliveries), sends
 * them outside any transaction, and settles each attempt. Woken at once by `wake()` (after an
 * intake commit, or a NOTIFY from another process) and by a safety tick; digests are planned and
 * housekeeping (release of held deliveries, retention) runs on their own timers. Bounded
 * concurrency overall and per destination.
 */
export class Worker {
  private active = 0;
  private readonly perTarget = new Map<string, number>();
  private readonly inflight = new Map<string, { kind: Kind; attempts: number }>();
  private pumping = false;
  private again = false;
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  private idleWaiters: (() => void)[] = [];
  private housekeepingRun: Promise<unknown> | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly adapterDeps: AdapterDeps,
  ) {}

  async start() {
    const { config, database } = this.deps;
    this.timers.push(setInterval(() => this.wake(), config.workerTickMs));
    this.timers.push(setInterval(() => void this.digests(), config.digestCheckMs));
    this.timers.push(setInterval(() => void this.housekeeping(), config.housekeepingMs));
    for (const t of this.timers) t.unref();
    this.unlisten = await database.listen(WAKE_CHANNEL, () => this.wake());
    this.wake();
  }

  /** Asks for a pump soon; calls during a pump make it go round once more. */
  wake() {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    setImmediate(() => void this.pump());
  }

  /**
   * Wakes this process when a retry it just scheduled falls due, so retries keep their backoff
   * instead of waiting for the next tick (other processes still see the row on their tick).
   */
  private wakeAt(at: Date | null) {
    if (!at || this.stopped) return;
    const delay = at.getTime() - this.deps.now().getTime();
    if (delay >= this.deps.config.workerTickMs) return; // the tick comes first anyway
    const timer = setTimeout(() => this.wake(), Math.max(0, delay) + 5);
    timer.unref();
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

  private async pump() {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    try {
      do {
        this.again = false;
        await this.claimAndStart('delivery');
        await this.claimAndStart('hook');
      } while (this.again && !this.stopped);
    } catch (err) {
      this.deps.log.error({ err: String(err) }, 'worker claim failed; the tick will try again');
    } finally {
      this.pumping = false;
    }
  }

  private async claimAndStart(kind: Kind) {
    const { config } = this.deps;
    for (;;) {
      const free = config.workerConcurrency - this.active;
      if (free <= 0 || this.stopped) return;
      const prefix = kind === 'delivery' ? 'd:' : 'h:';
      const busy = [...this.perTarget]
        .filter(([k, n]) => k.startsWith(prefix) && n >= config.workerPerDestination)
        .map(([k]) => k.slice(2));
      const opts = {
        now: this.deps.now(),
        limit: free,
        perTarget: config.workerPerDestination,
        busy,
        leaseMs: config.workerLeaseMs,
      };
      const rows = await claim(this.deps.database, kind, opts);
      for (const row of rows) this.run(kind, row);
      if (rows.length < free) return;
    }
  }

  private run(kind: Kind, row: Claimed) {
    const key = `${kind === 'delivery' ? 'd' : 'h'}:${row.target_id}`;
    this.active += 1;
    this.perTarget.set(key, (this.perTarget.get(key) ?? 0) + 1);
    this.inflight.set(row.id, { kind, attempts: row.attempts });
    void this.attempt(kind, row)
      .catch((err) => this.deps.log.error({ delivery_id: row.id, err: String(err) }, 'settling an attempt failed'))
      .finally(() => {
        this.active -= 1;
        const n = (this.perTarget.get(key) ?? 1) - 1;
        if (n > 0) this.perTarget.set(key, n);
        else this.perTarget.delete(key);
        this.inflight.delete(row.id);
        if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
        this.wake();
      });
  }

  private async attempt(kind: Kind, row: Claimed) {
    const { db } = this.deps.database;
    if (kind === 'hook') {
      const hook = await loadHook(db, row);
      const result = hook
        ? await webhookAdapter(this.adapterDeps, hook, {
            deliveryId: row.id,
            event: row.event_type,
            payload: row.payload,
            context: emptyContext(),
          })
        : failure('the system webhook was deleted or disabled', false);
      this.wakeAt(await settleHookDelivery(this.deps, row, result));
      return;
    }
    const loaded = await loadDelivery(db, row);
    const result = loaded
      ? await adapterFor(loaded.dest.type)(this.adapterDeps, loaded.dest, loaded.msg)
      : failure('the destination was deleted', false);
    const { dispatched, retryAt } = await settleDelivery(this.deps, row, result);
    if (dispatched) this.wake();
    this.wakeAt(retryAt);
  }

  /**
   * Stops claiming, waits up to `graceMs` for sends in flight, then hands back what is still
   * claimed (due again at once, attempt not counted) so another process takes it without waiting
   * for the lease to run out.
   */
  async stop(graceMs = 8000) {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.unlisten) await this.unlisten().catch(() => {});
    await this.housekeepingRun;
    if (this.active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await this.release();
  }

  private async release() {
    const left = [...this.inflight];
    if (!left.length) return;
    const now = this.deps.now();
    const ids = (kind: Kind) => left.filter(([, v]) => v.kind === kind).map(([id]) => id);
    const d = ids('delivery');
    const h = ids('hook');
    if (d.length) {
      await this.deps.database.db
        .update(deliveries)
        .set({ status: 'pending', nextAttemptAt: now, leaseUntil: null, attempts: sql`${deliveries.attempts} - 1` })
        .where(sql`${inArray(deliveries.id, d)} and ${deliveries.status} = 'sending'`);
    }
    if (h.length) {
      await this.deps.database.db
        .update(systemWebhookDeliveries)
        .set({
          status: 'pending',
          nextAttemptAt: now,
          leaseUntil: null,
          attempts: sql`${systemWebhookDeliveries.attempts} - 1`,
        })
        .where(sql`${inArray(systemWebhookDeliveries.id, h)} and ${systemWebhookDeliveries.status} = 'sending'`);
    }
    this.deps.log.info({ released: left.length }, 'worker released claimed deliveries');
  }
}

function emptyContext() {
  return {
    form: { id: '', slug: '', name: '', settings: {} },
    submission: null,
    data: {},
    meta: {},
    subject_hint: null,
  };
}

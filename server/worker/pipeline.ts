import type { Deps, Handoff } from '../core/deps.js';
import type { Claimed } from '../db/rows.js';
import { claim } from './claim.js';
import { IntakeLoad } from './intake-load.js';
import { type Lane, Lanes } from './lanes.js';
import { loadMessages, type Prepared } from './message.js';
import { OUTBOX_KINDS, type OutboxKind } from './outbox.js';
import { OutboxStats } from './outbox-stats.js';
import { Recorder } from './recorder.js';
import { type Held, releaseClaims } from './release.js';
import type { AdapterDeps } from './types.js';

/** Rows one claim statement takes at most. */
const MAX_CLAIM = 512;
/** Rows one claim may take for targets this process has no queue for yet. */
const NEW_TARGETS = 64;
/** Least time between the starts of two rounds of claims. */
const CLAIM_GAP_MS = 20;
/**
 * How long wakes wait after a claim that found nothing for a destination with room while some
 * destination had none: its window of the backlog held only rows of full queues, and a claim
 * per wake (every intake commit under load) would read that window again and again for nothing.
 * Those queues ask for rows themselves as they drain (refill); a wake in the pause is kept and
 * claims when it ends.
 */
const EMPTY_CLAIM_PAUSE_MS = 200;
const KINDS = OUTBOX_KINDS;

/** Waits for p, or ms at most. */
async function within(p: Promise<unknown>, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Claim → send → settle, each stage batched and the three kept busy at once. A claim takes many
 * rows in one statement (and intake may hand over rows it wrote already claimed) into the queue of
 * each target (Lanes, which sends them within the concurrency limits); a target's queue is
 * refilled by the next claim while its last rows are still being sent; finished attempts are
 * recorded together (Recorder). Stopping hands back whatever was claimed and not finished.
 */
export class Pipeline {
  /** Rows this process holds: queued, sending, or sent and waiting to be recorded. */
  private readonly claimed = new Map<string, Held>();
  private readonly lanes: Lanes;
  /** This process's intake load (other worker jobs yield to it too). */
  readonly intakeLoad: IntakeLoad;
  private readonly stats: OutboxStats;
  private readonly recorder: Recorder;
  private readonly want: Record<OutboxKind, boolean> = { delivery: false, hook: false };
  /** The last claim of the outbox was cut short by the global limit. */
  private readonly full: Record<OutboxKind, boolean> = { delivery: false, hook: false };
  private readonly claiming: Record<OutboxKind, boolean> = { delivery: false, hook: false };
  /** Until when wakes of the outbox wait (see EMPTY_CLAIM_PAUSE_MS), and the timer of a kept wake. */
  private readonly pausedUntil: Record<OutboxKind, number> = { delivery: 0, hook: 0 };
  private readonly keptWake: Record<OutboxKind, NodeJS.Timeout | null> = { delivery: null, hook: null };
  /** A wake waits for intake's burst to end. */
  private readonly calmWake: Record<OutboxKind, boolean> = { delivery: false, hook: false };
  private scheduled = false;
  private lastRound = Number.NEGATIVE_INFINITY;
  private pumpRun: Promise<void> | null = null;
  /** Rows intake handed over, waiting for their destinations to be read (per target: how many). */
  private adopting: Claimed[] = [];
  private readonly adoptingFor = new Map<string, number>();
  /** Intake's shortcut past the claim (see Handoff): rows it wrote already claimed by this process. */
  readonly handoff: Handoff;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  /** Claim statements run per outbox, each a read of the backlog's window. */
  readonly claimsRun: Record<OutboxKind, number> = { delivery: 0, hook: 0 };

  constructor(
    private readonly deps: Deps,
    adapterDeps: AdapterDeps,
    intakeLoad?: IntakeLoad,
  ) {
    this.intakeLoad = intakeLoad ?? new IntakeLoad();
    this.stats = new OutboxStats(deps.database);
    this.recorder = new Recorder(deps, {
      claimed: this.claimed,
      sending: () => this.lanes.active > 0,
      dispatched: () => this.request('hook'),
      retryAt: (kind, at) => this.wakeAt(kind, at),
      idle: () => this.checkIdle(),
    });
    this.lanes = new Lanes(
      deps,
      adapterDeps,
      {
        finished: (kind, row, result) => this.recorder.add({ kind, row, result, at: this.deps.now() }),
        stale: (held) => {
          this.deps.log.warn({ released: held.length }, 'claimed deliveries waited too long; handed back unsent');
          void this.release(held).catch((err) => this.deps.log.error({ err: String(err) }, 'handing back failed'));
        },
        after: (lane) => {
          this.refill(lane);
          this.checkIdle();
        },
      },
      this.intakeLoad,
    );
    this.handoff = {
      leaseMs: deps.config.workerLeaseMs,
      room: (target) => this.handoffRoom(target),
      take: (rows) => this.take(rows),
      started: () => this.intakeLoad.started(),
      finished: () => this.intakeLoad.finished(),
    };
  }

  /**
   * Asks for a claim of this outbox soon; asks made during a claim make another one follow. Rounds
   * of claims start CLAIM_GAP_MS apart at most: every intake commit wakes the worker, and with a
   * backlog each claim reads a window of it, so a burst of submissions costs a claim per gap
   * rather than one per submission.
   */
  request(kind: OutboxKind) {
    if (this.stopped) return;
    this.want[kind] = true;
    if (this.pumpRun || this.scheduled) return;
    this.scheduled = true;
    const go = () => {
      this.scheduled = false;
      if (this.pumpRun || this.stopped) return;
      this.lastRound = performance.now();
      this.pumpRun = this.pump().finally(() => {
        this.pumpRun = null;
        // Asks made during the round: wakes among them wait out a pause the round just began.
        for (const k of KINDS) {
          if (!this.want[k]) continue;
          this.want[k] = false;
          this.wake(k);
        }
      });
    };
    const wait = this.lastRound + CLAIM_GAP_MS - performance.now();
    if (wait > 0) setTimeout(go, wait);
    else setImmediate(go);
  }

  /**
   * A wake from outside the pipeline (an intake commit here, a NOTIFY from another process, the
   * tick): a claim soon, unless the last one found only rows of full queues; then one claim when
   * the pause ends.
   */
  wake(kind: OutboxKind) {
    if (this.stopped) return;
    // While intake queues here, sends yield to it (IntakeLoad): a claim would only fill queues that
    // do not move, reading the backlog for nothing. Intake's own rows still reach the queues
    // (handoff), and a queue running low still claims (refill). One claim when the burst is over.
    if (this.intakeLoad.busy()) {
      if (this.calmWake[kind]) return;
      this.calmWake[kind] = true;
      this.intakeLoad.whenCalm(() => {
        this.calmWake[kind] = false;
        this.wake(kind);
      });
      return;
    }
    const wait = this.pausedUntil[kind] - performance.now();
    if (wait <= 0) {
      this.request(kind);
      return;
    }
    if (this.keptWake[kind]) return;
    this.keptWake[kind] = setTimeout(() => {
      this.keptWake[kind] = null;
      this.request(kind);
    }, wait);
    this.keptWake[kind].unref();
  }

  /**
   * Wakes this process when a retry it just scheduled falls due, so retries keep their backoff
   * instead of waiting for the next tick (other processes still see the row on their tick).
   */
  private wakeAt(kind: OutboxKind, at: Date | null) {
    if (!at || this.stopped) return;
    const delay = at.getTime() - this.deps.now().getTime();
    if (delay >= this.deps.config.workerTickMs) return; // the tick comes first anyway
    const timer = setTimeout(() => this.request(kind), Math.max(0, delay) + 5);
    timer.unref();
  }

  /** One round: a claim of each outbox asked for. */
  private async pump() {
    try {
      for (const kind of KINDS) {
        if (!this.want[kind] || this.stopped) continue;
        this.want[kind] = false;
        this.claiming[kind] = true;
        try {
          await this.claimInto(kind);
        } finally {
          this.claiming[kind] = false;
        }
      }
    } catch (err) {
      for (const k of KINDS) this.want[k] = false;
      this.deps.log.error({ err: String(err) }, 'worker claim failed; the tick will try again');
    }
  }

  /** Sends under way now. */
  get sending(): number {
    return this.lanes.active;
  }

  /** Rows this process holds now (queued, sending, or sent and not yet recorded). */
  get holding(): number {
    return this.claimed.size;
  }

  /** Room left for rows in this process, within the global limit. */
  private free() {
    return this.lanes.capacity - this.lanes.queued - this.lanes.active - this.adopting.length;
  }

  private async claimInto(kind: OutboxKind) {
    const { config, database } = this.deps;
    const free = this.free();
    if (free <= 0) {
      this.full[kind] = true;
      return;
    }
    const room = this.lanes.rooms(kind);
    // What the queues here can take, and some for targets without a queue yet: the claim reads a
    // window of the backlog a few times its limit, so a limit far above what fits would read
    // thousands of rows of one destination's backlog to take a handful.
    const fits = Object.values(room).reduce((sum, n) => sum + Math.max(0, n), 0) + NEW_TARGETS;
    const limit = Math.min(MAX_CLAIM, free, fits);
    this.claimsRun[kind] += 1;
    const rows = await claim(database, kind, {
      now: this.deps.now(),
      limit,
      perTarget: this.lanes.perTarget,
      busy: [],
      room,
      leaseMs: config.workerLeaseMs,
    });
    this.full[kind] = rows.length >= limit;
    if (rows.length >= NEW_TARGETS) {
      this.stats.backlog(kind, (err) => this.deps.log.warn({ err: String(err) }, 'analyzing the outbox failed'));
    }
    const someFull = Object.values(room).some((n) => n <= 0);
    this.pausedUntil[kind] = rows.length === 0 && someFull ? performance.now() + EMPTY_CLAIM_PAUSE_MS : 0;
    const held = rows.map((r) => ({ id: r.id, kind, attempts: r.attempts }));
    for (const h of held) this.claimed.set(h.id, h);
    let prepared: Map<string, Prepared>;
    try {
      prepared = await loadMessages(this.deps, kind, rows);
    } catch (err) {
      await this.release(held).catch(() => {});
      throw err;
    }
    if (this.stopped) return this.release(held);
    if (this.lanes.claimed(kind, room, this.lanes.enqueue(kind, rows, prepared))) this.want[kind] = true;
    this.lanes.dispatch();
  }

  /** Claims again for a lane running low, or when the last claim was cut short by the global limit. */
  private refill(lane: Lane) {
    const kind = lane.kind;
    if (this.stopped || this.claiming[kind] || this.want[kind]) return;
    const free = this.free();
    if (
      (this.full[kind] && free >= Math.min(MAX_CLAIM, this.lanes.capacity) / 2) ||
      (this.lanes.low(lane) && free > 0)
    ) {
      this.request(kind);
    }
  }

  /** Rows of a destination intake may hand over now: what its queue has room for, within the global limit. */
  private handoffRoom(target: string) {
    if (this.stopped) return 0;
    const { held, depth } = this.lanes.fill('delivery', target);
    return Math.max(0, Math.min(this.free(), depth - held - (this.adoptingFor.get(target) ?? 0)));
  }

  /**
   * Queues rows intake committed as claimed by this process (one read of their destinations for
   * all handed over in the same turn). Stopping, they are handed back at once.
   */
  private take(rows: Claimed[]) {
    const held = rows.map((r) => ({ id: r.id, kind: 'delivery' as const, attempts: r.attempts }));
    if (this.stopped) {
      void releaseClaims(this.deps, held, this.deps.now()).catch(() => {});
      return;
    }
    for (const h of held) this.claimed.set(h.id, h);
    for (const r of rows) this.adoptingFor.set(r.target_id, (this.adoptingFor.get(r.target_id) ?? 0) + 1);
    if (!this.adopting.length) setImmediate(() => void this.adopt());
    this.adopting.push(...rows);
  }

  private async adopt() {
    const rows = this.adopting;
    this.adopting = [];
    this.adoptingFor.clear();
    const held = rows.map((r) => ({ id: r.id, kind: 'delivery' as const, attempts: r.attempts }));
    let prepared: Map<string, Prepared>;
    try {
      prepared = await loadMessages(this.deps, 'delivery', rows);
    } catch (err) {
      this.deps.log.error({ err: String(err) }, 'reading handed-over deliveries failed; handing them back');
      await this.release(held).catch(() => {});
      return;
    }
    if (this.stopped) return this.release(held).catch(() => {});
    this.lanes.enqueue('delivery', rows, prepared);
    this.lanes.dispatch();
  }

  /** Hands rows back: due again at once, the attempt their claim counted taken back. */
  private async release(held: Held[]) {
    for (const h of held) this.claimed.delete(h.id);
    await releaseClaims(this.deps, held, this.deps.now());
  }

  private checkIdle() {
    if (this.lanes.active === 0 && this.recorder.idle) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /**
   * Stops claiming and sending; hands back the rows still queued at once; waits up to `graceMs`
   * for sends in flight, then (again up to `graceMs`) for what has finished to be recorded; then
   * hands back whatever is still claimed (another process takes it without waiting for the lease
   * to run out; a send still out may then be made twice, which receivers de-duplicate).
   */
  async stop(graceMs: number) {
    this.stopped = true;
    this.lanes.stopped = true;
    this.intakeLoad.close();
    for (const kind of KINDS) if (this.keptWake[kind]) clearTimeout(this.keptWake[kind]);
    // A claim under way finishes first (its rows are handed back).
    if (this.pumpRun) await within(this.pumpRun, graceMs);
    const queued = this.lanes.drain();
    if (queued.length) await this.release(queued).catch(() => {});
    this.recorder.hurry();
    if (this.lanes.active > 0 || !this.recorder.idle) {
      await within(new Promise<void>((resolve) => this.idleWaiters.push(resolve)), graceMs);
    }
    await this.recorder.settled(graceMs);
    const left = [...this.claimed.values()];
    this.claimed.clear();
    if (left.length) {
      await releaseClaims(this.deps, left, this.deps.now());
      this.deps.log.info({ released: left.length }, 'worker released claimed deliveries');
    }
  }
}

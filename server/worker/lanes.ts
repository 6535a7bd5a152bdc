import type { Deps } from '../core/deps.js';
import type { Claimed } from '../db/rows.js';
import { IntakeLoad } from './intake-load.js';
import type { Prepared } from './message.js';
import { OUTBOX, type OutboxKind } from './outbox.js';
import { deliver } from './policy.js';
import type { Held } from './release.js';
import type { AdapterDeps, SendResult } from './types.js';

/** Claimed rows a fast target may have waiting per send slot (its queue is at most this × its slots). */
const MAX_PER_SLOT = 64;

interface Job {
  row: Claimed;
  prepared: Prepared;
}

/** One destination (or system webhook) in this process: its claimed rows waiting, its sends in flight. */
export interface Lane {
  kind: OutboxKind;
  key: string;
  target: string;
  queue: Job[];
  sending: number;
  /** the last claim filled this lane's room, so more of its rows may be due */
  more: boolean;
}

export interface LanesHooks {
  /** A send came back (adapters never throw: every failure is a result). */
  finished(kind: OutboxKind, row: Claimed, result: SendResult): void;
  /** Rows that waited too long in their queue, taken out unsent. */
  stale(held: Held[]): void;
  /** A lane's send came back and the next sends have started. */
  after(lane: Lane): void;
}

const failure = (error: string, retryable = true): SendResult => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error,
  retryable,
});

/**
 * The send stage: a queue of claimed rows per target and the sends from them, at most
 * `workerPerDestination` per target and `workerConcurrency` in all, lanes taking turns. A queue's
 * depth follows its target's recent latency, so its rows are sent well within their lease; a row
 * that waited until half its lease was gone is taken out unsent (another worker may take it once
 * the lease runs out, and this one must not be sending it then).
 */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();
  /** Recent send latency per target (ms, moving average): sizes its queue. */
  private readonly latency = new Map<string, number>();
  /** Rows waiting in the queues, and sends in flight. */
  queued = 0;
  active = 0;
  stopped = false;

  constructor(
    private readonly deps: Deps,
    private readonly adapterDeps: AdapterDeps,
    private readonly hooks: LanesHooks,
    /** Intake first: while intake queues in this process, sends start only as it allows. */
    private readonly intake: IntakeLoad = new IntakeLoad(),
  ) {}

  get perTarget() {
    return this.deps.config.workerPerDestination;
  }

  /** Rows this process holds at most, queued or sending. */
  get capacity() {
    return this.deps.config.workerConcurrency * MAX_PER_SLOT;
  }

  /**
   * Rows a target may hold in this process: its send slots × as many rows as it sends in a quarter
   * of the lease at its recent latency (1 to MAX_PER_SLOT). Until its first answers, one per slot.
   */
  depth(key: string) {
    const ms = this.latency.get(key);
    if (ms === undefined) return this.perTarget;
    const perSlot = Math.floor(this.deps.config.workerLeaseMs / 4 / Math.max(ms, 1));
    return this.perTarget * Math.min(MAX_PER_SLOT, Math.max(1, perSlot));
  }

  /** Rows held for a target (queued or sending) and its depth. */
  fill(kind: OutboxKind, target: string) {
    const key = `${kind}:${target}`;
    const lane = this.lanes.get(key);
    return { held: lane ? lane.queue.length + lane.sending : 0, depth: this.depth(key) };
  }

  /**
   * Whether a lane wants rows now: it is down to half its depth, or it has a send slot with
   * nothing queued for it (a slow destination keeps all its slots busy).
   */
  private hungry(lane: Lane) {
    const held = lane.queue.length + lane.sending;
    return held <= this.depth(lane.key) / 2 || held < this.perTarget;
  }

  /**
   * What a claim may take per target this process holds rows of. A target that wants nothing now
   * gets 0, which leaves it out of the claim (its rows are not even read), so the claim's window
   * reaches other targets' rows: a long backlog for one destination does not hold up a new
   * submission for another.
   */
  rooms(kind: OutboxKind): Record<string, number> {
    const room: Record<string, number> = {};
    for (const lane of this.lanes.values()) {
      if (lane.kind !== kind) continue;
      room[lane.target] = this.hungry(lane) ? this.depth(lane.key) - lane.queue.length - lane.sending : 0;
    }
    return room;
  }

  /** Queues claimed rows; returns how many each lane got. */
  enqueue(kind: OutboxKind, rows: Claimed[], prepared: Map<string, Prepared>) {
    const got = new Map<Lane, number>();
    for (const row of rows) {
      const key = `${kind}:${row.target_id}`;
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { kind, key, target: row.target_id, queue: [], sending: 0, more: false };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ row, prepared: prepared.get(row.id) ?? null });
      this.queued += 1;
      got.set(lane, (got.get(lane) ?? 0) + 1);
    }
    return got;
  }

  /**
   * After a claim with these rooms: a lane that got all its room may have more rows due, and so may
   * one the claim left out (it was woken, maybe for rows of this target); one that got less than
   * its room has none. Returns whether some lane is already low again.
   */
  claimed(kind: OutboxKind, room: Record<string, number>, got: Map<Lane, number>) {
    let low = false;
    for (const lane of [...this.lanes.values()]) {
      if (lane.kind !== kind) continue;
      const n = got.get(lane);
      const r = room[lane.target];
      if (n !== undefined) lane.more = n >= (r ?? this.perTarget);
      else if (r !== undefined) lane.more = r <= 0;
      if (!lane.queue.length && !lane.sending && !lane.more) this.lanes.delete(lane.key);
      else if (this.low(lane)) low = true;
    }
    return low;
  }

  /** Whether a lane whose rows may not all be claimed yet wants more now. */
  low(lane: Lane) {
    return lane.more && this.hungry(lane);
  }

  /**
   * Starts sends from the queues, one lane after another, within both concurrency limits and as
   * far as intake lets them (see IntakeLoad); held back, it goes on when intake allows.
   */
  dispatch() {
    if (this.stopped) return;
    const { workerConcurrency, workerLeaseMs } = this.deps.config;
    const now = this.deps.now().getTime();
    const stale: Held[] = [];
    let progress = true;
    let yielded = false;
    while (progress && !yielded && this.active < workerConcurrency) {
      progress = false;
      for (const lane of [...this.lanes.values()]) {
        if (this.active >= workerConcurrency) break;
        if (!lane.queue.length || lane.sending >= this.perTarget) continue;
        const job = lane.queue[0];
        // Half the lease gone: another worker could take the row before this send ends.
        const isStale = job.row.lease_until.getTime() - now < workerLeaseMs / 2;
        if (!isStale && !this.intake.mayStart()) {
          yielded = true;
          break;
        }
        lane.queue.shift();
        this.queued -= 1;
        progress = true;
        if (isStale) {
          stale.push({ id: job.row.id, kind: lane.kind, attempts: job.row.attempts });
          continue;
        }
        // To the back of the round, so busy lanes take turns.
        this.lanes.delete(lane.key);
        this.lanes.set(lane.key, lane);
        this.send(lane, job);
      }
    }
    if (yielded) this.intake.whenFree(() => this.dispatch());
    if (stale.length) this.hooks.stale(stale);
  }

  /** Empties every queue (stopping): the rows taken out, unsent. */
  drain(): Held[] {
    const out = [...this.lanes.values()].flatMap((l) =>
      l.queue.splice(0).map((j) => ({ id: j.row.id, kind: l.kind, attempts: j.row.attempts })),
    );
    this.queued = 0;
    return out;
  }

  private send(lane: Lane, job: Job) {
    lane.sending += 1;
    this.active += 1;
    const started = performance.now();
    void this.deliver(lane.kind, job)
      .catch((err) => failure(`the send failed: ${String(err)}`))
      .then((result) => {
        lane.sending -= 1;
        this.active -= 1;
        const ms = performance.now() - started;
        const avg = this.latency.get(lane.key);
        if (this.latency.size > 10_000) this.latency.clear();
        this.latency.set(lane.key, avg === undefined ? ms : avg * 0.8 + ms * 0.2);
        this.hooks.finished(lane.kind, job.row, result);
        if (!lane.queue.length && !lane.sending && !lane.more) this.lanes.delete(lane.key);
        this.dispatch();
        this.hooks.after(lane);
      });
  }

  private async deliver(kind: OutboxKind, job: Job): Promise<SendResult> {
    const p = job.prepared;
    return p ? deliver(this.adapterDeps, p.dest, p.msg) : failure(OUTBOX[kind].gone, false);
  }
}

import type { Deps } from '../core/deps.js';
import type { OutboxKind } from './outbox.js';
import { settleAttempt } from './settle.js';
import { type Attempt, settleSent } from './settle-sent.js';

/** Finished attempts recorded per settle statement at most. */
const BATCH = 500;
/** Finished attempts that make a batch worth recording at once, and how long a smaller one waits. */
const EAGER = 64;
const LINGER_MS = 10;
/**
 * Pauses before recording again after the database failed. Recording is safe to repeat (each
 * statement is guarded on the attempt it records, so a second try after a commit whose answer was
 * lost changes nothing), and a blip then costs no duplicate sends: a row left `sending` would be
 * sent again once its lease ran out.
 */
const RETRY_MS = [100, 300, 1000, 3000];

export interface RecorderHooks {
  /** Rows this process holds; a recorded row is removed, and a row no longer here is not recorded. */
  claimed: Map<string, unknown>;
  /** Whether sends are in flight (more answers are coming soon). */
  sending(): boolean;
  /** System-webhook deliveries were planned. */
  dispatched(): void;
  /** A failed attempt is due again at `at`. */
  retryAt(kind: OutboxKind, at: Date | null): void;
  /** Everything handed in so far is recorded. */
  idle(): void;
}

/**
 * Records finished attempts in batches, one batch at a time, in the order they finished:
 * consecutive successes of one outbox in one statement (settleSent), each failure on its own
 * (settleAttempt: backoff, dead, destination health and its alerts), so
 * health moves as the attempts happened. A batch goes at once when it is large or no send is out;
 * otherwise it waits up to LINGER_MS for more answers to join it (on PGlite a statement runs on
 * this thread and costs about as much for one row as for fifty; on PostgreSQL it saves commits).
 */
export class Recorder {
  private readonly done: Attempt[] = [];
  private run: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private now = false;

  constructor(
    private readonly deps: Deps,
    private readonly hooks: RecorderHooks,
  ) {}

  add(a: Attempt) {
    this.done.push(a);
    this.flush();
  }

  get idle() {
    return !this.run && !this.done.length;
  }

  /** From now on every batch goes at once (the worker is stopping). */
  hurry() {
    this.now = true;
    this.flush();
  }

  /** Waits up to ms for what was handed in to be recorded. */
  async settled(ms: number) {
    const end = Date.now() + ms;
    while (!this.idle && Date.now() < end) {
      this.flush();
      const left = end - Date.now();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.run, new Promise((r) => (timer = setTimeout(r, Math.max(1, left))))]);
      clearTimeout(timer);
    }
  }

  /** Starts a batch now, or within LINGER_MS (`lingered`: that time is up). */
  private flush(lingered = false) {
    if (this.run || !this.done.length) return; // the running batch takes what finished meanwhile
    if (lingered || this.now || this.done.length >= EAGER || !this.hooks.sending()) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.run = (async () => {
        while (this.done.length) await this.record(this.done.splice(0, BATCH));
      })().finally(() => {
        this.run = null;
        if (this.done.length) this.flush();
        else this.hooks.idle();
      });
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush(true);
      }, LINGER_MS);
    }
  }

  private async record(batch: Attempt[]) {
    const { claimed } = this.hooks;
    // Rows handed back meanwhile (a stop after its grace) are no longer this process's to record.
    const mine = batch.filter((a) => claimed.has(a.row.id));
    let sent: Attempt[] = [];
    const recordSent = async () => {
      if (!sent.length) return;
      const items = sent;
      sent = [];
      try {
        if ((await this.retried(() => settleSent(this.deps, items[0].kind, items))).dispatched) this.hooks.dispatched();
        for (const a of items) this.observe(a, 'sent');
      } catch (err) {
        this.deps.log.error({ attempts: items.length, err: String(err) }, 'recording sent deliveries failed');
      } finally {
        for (const a of items) claimed.delete(a.row.id);
      }
    };
    for (const a of mine) {
      if (a.result.ok) {
        if (sent.length && sent[0].kind !== a.kind) await recordSent();
        sent.push(a);
        continue;
      }
      await recordSent();
      try {
        const { dispatched, retryAt } = await this.retried(() => settleAttempt(this.deps, a.kind, a.row, a.result));
        if (dispatched) this.hooks.dispatched();
        this.observe(a, finalOutcome(a));
        this.hooks.retryAt(a.kind, retryAt);
      } catch (err) {
        this.deps.log.error({ delivery_id: a.row.id, err: String(err) }, 'settling an attempt failed');
      } finally {
        claimed.delete(a.row.id);
      }
    }
    await recordSent();
  }

  /** Metrics and the log line of one settled attempt (req_id: the request that planned it). */
  private observe(a: Attempt, outcome: 'sent' | 'failed' | 'dead') {
    const payload = a.row.payload as { meta?: { request_id?: unknown }; submission?: { received_at?: unknown } };
    const receivedAt = typeof payload.submission?.received_at === 'string' ? payload.submission.received_at : null;
    this.deps.metrics?.delivery(a.row.type ?? 'unknown', outcome, receivedAt);
    const line = {
      delivery_id: a.row.id,
      req_id: typeof payload.meta?.request_id === 'string' ? payload.meta.request_id : undefined,
      outcome,
      attempt: a.row.attempts,
    };
    if (outcome === 'sent') this.deps.log.debug(line, 'delivery sent');
    else this.deps.log.info({ ...line, error: a.result.error }, 'delivery attempt failed');
  }

  private async retried<T>(fn: () => Promise<T>): Promise<T> {
    for (const ms of RETRY_MS) {
      try {
        return await fn();
      } catch (err) {
        this.deps.log.warn({ err: String(err), retry_in_ms: ms }, 'recording attempts failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
    }
    return fn();
  }
}

/** What a failed attempt came to, for metrics and logs (settle.ts decides the same for the row). */
const finalOutcome = (a: Attempt) =>
  !a.result.retryable || a.row.attempts >= a.row.max_attempts ? ('dead' as const) : ('failed' as const);

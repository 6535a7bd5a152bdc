/**
 * Intake first. Intake and the worker of a process share its event loop, its CPU and the database;
 * a visitor waits for intake, nobody waits on a webhook that leaves a second later. So while
 * intake is queueing in this process, sends yield to it: one send may start for every
 * `answersPerSend` intake requests answered (ten by default), so deliveries keep moving, and they go at
 * full speed again as soon as the burst is over. Every request is still stored before it is
 * answered; only the deliveries of a burst wait a little longer.
 *
 * "Queueing" means: at some moment of the last one or two windows (100 ms each) at least
 * `busyInFlight` intake requests were in flight at once, and at least `busyFinished` were answered.
 * A steady rate the process keeps up with leaves at most a request or two in flight; a few slow
 * uploads in flight answer too few to count.
 */
export interface IntakeLoadOptions {
  /** intake answers per send allowed while intake is busy */
  answersPerSend: number;
  busyInFlight: number;
  busyFinished: number;
  windowMs: number;
  /** milliseconds, monotonic */
  clock: () => number;
}

export const INTAKE_LOAD_DEFAULTS: IntakeLoadOptions = {
  answersPerSend: 10,
  busyInFlight: 8,
  busyFinished: 8,
  windowMs: 100,
  clock: () => performance.now(),
};

/** Sends a busy stretch may save up for later (a burst of sends when requests finish together). */
const MAX_CREDIT = 4;

export class IntakeLoad {
  private readonly o: IntakeLoadOptions;
  private inFlight = 0;
  /** The most in flight at once, and how many finished: in the previous window and in this one. */
  private peak: [number, number] = [0, 0];
  private done: [number, number] = [0, 0];
  private windowStart: number;
  /** answers counted towards sends while busy */
  private credit = 0;
  /** waiting for a send to be allowed (credit or calm), and for calm */
  private waiter: (() => void) | null = null;
  private calmWaiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(opts: Partial<IntakeLoadOptions> = {}) {
    this.o = { ...INTAKE_LOAD_DEFAULTS, ...opts };
    this.windowStart = this.o.clock();
  }

  /** An intake request began. */
  started() {
    this.roll();
    this.inFlight += 1;
    if (this.inFlight > this.peak[1]) this.peak[1] = this.inFlight;
  }

  /** An intake request was answered (whatever the answer). */
  finished() {
    this.roll();
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.done[1] += 1;
    if (!this.busy()) return;
    this.credit = Math.min(MAX_CREDIT * this.o.answersPerSend, this.credit + 1);
    if (this.credit >= this.o.answersPerSend) this.release();
  }

  /** Whether intake is queueing in this process now (see above). */
  busy() {
    this.roll();
    return (
      Math.max(this.peak[0], this.peak[1]) >= this.o.busyInFlight && this.done[0] + this.done[1] >= this.o.busyFinished
    );
  }

  /**
   * Whether a send may start now: always while intake is not busy; while it is, only on credit
   * earned by intake's answers (taking one).
   */
  mayStart() {
    if (!this.busy()) {
      this.credit = 0;
      return true;
    }
    if (this.credit < this.o.answersPerSend) return false;
    this.credit -= this.o.answersPerSend;
    return true;
  }

  /**
   * Calls `fn` (once) when a send may start again: credit earned, or intake no longer busy (checked
   * every window). A later call replaces an earlier `fn` that has not run.
   */
  whenFree(fn: () => void) {
    this.waiter = fn;
    this.arm();
  }

  /** Calls `fn` (once) when intake is no longer busy (checked every window); at once when it is not. */
  whenCalm(fn: () => void) {
    if (!this.busy()) {
      fn();
      return;
    }
    this.calmWaiters.push(fn);
    this.arm();
  }

  /** Drops the waiting callbacks and their timer (stopping). */
  close() {
    this.waiter = null;
    this.calmWaiters = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.waiter && !this.calmWaiters.length) return;
      if (this.busy()) {
        this.arm();
        return;
      }
      const calm = this.calmWaiters.splice(0);
      this.release();
      for (const fn of calm) fn();
    }, this.o.windowMs);
    this.timer.unref();
  }

  private release() {
    const fn = this.waiter;
    if (!fn) return;
    this.waiter = null;
    if (!this.calmWaiters.length && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    fn();
  }

  /** Moves the windows on to the present. */
  private roll() {
    const elapsed = Math.floor((this.o.clock() - this.windowStart) / this.o.windowMs);
    if (elapsed <= 0) return;
    this.windowStart += elapsed * this.o.windowMs;
    this.peak = elapsed === 1 ? [this.peak[1], this.inFlight] : [this.inFlight, this.inFlight];
    this.done = elapsed === 1 ? [this.done[1], 0] : [0, 0];
  }
}

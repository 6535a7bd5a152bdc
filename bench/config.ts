/** Bench settings, all from the environment; the defaults are the figures the benchmark is defined with. */

export const PARTS = [
  'start',
  'intake',
  'baseline',
  'e2e',
  'drain',
  'dashboard',
  'attachments',
  'pow',
  'spam',
  'ab',
] as const;
export type Part = (typeof PARTS)[number];
/** Parts a run without BENCH_ONLY leaves out: ab needs the checkouts it compares (BENCH_AB). */
const NOT_BY_DEFAULT: readonly Part[] = ['ab'];

export interface BenchConfig {
  /** set: PostgreSQL (a fresh database on that server); unset: embedded PGlite in a temp DATA_DIR */
  databaseUrl: string | null;
  parts: Set<Part>;
  /** seconds of each measured intake run (service and baseline alike) */
  durationS: number;
  /** seconds of load before the measured runs (service and baseline each) */
  warmupS: number;
  connections: number;
  /** service/baseline run pairs */
  pairs: number;
  /** seconds of the steady end-to-end run, and its rate */
  e2eS: number;
  e2eRate: number;
  /** pending deliveries released at once in the drain part */
  backlog: number;
  /** how long to wait for the drain to finish before reporting what arrived */
  drainTimeoutS: number;
  /** how long to wait for a run's deliveries to reach the receiver before the next run */
  settleTimeoutS: number;
  /** false: the intake part runs the service with WORKER=false (intake alone; no webhook is awaited) */
  intakeWorker: boolean;
  /** requests per second of the measured intake runs; null: as fast as each server answers */
  intakeRate: number | null;
  /** each pair's service run is followed by one on a form with `unique` and a route `match` */
  intakeVariant: boolean;
  /** BENCH_BODY=same: every request the same person and text (a flood) instead of many people */
  sameBody: boolean;
  /** the ab part's sides: a name and a checkout each (empty dir: this one) */
  abSides: { name: string; dir: string }[];
  /** restarts timed in the start part (its start_ms is their median) */
  starts: number;
  /** seconds after the last start before the boot RSS is read */
  bootWaitS: number;
}

function num(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name}=${raw}: expected a number >= ${min}`);
  return n;
}

function parts(raw: string | undefined): Set<Part> {
  if (!raw) return new Set(PARTS.filter((p) => !NOT_BY_DEFAULT.includes(p)));
  const out = new Set<Part>();
  for (const p of raw.split(',').map((s) => s.trim().toLowerCase())) {
    if (!p) continue;
    if (!(PARTS as readonly string[]).includes(p)) {
      throw new Error(`BENCH_ONLY: unknown part "${p}" (known: ${PARTS.join(', ')})`);
    }
    out.add(p as Part);
  }
  if (!out.size) throw new Error('BENCH_ONLY names no part');
  return out;
}

/** BENCH_AB: name=dir,name=dir (names of letters, digits and _; an empty dir is this checkout). */
function abSides(raw: string | undefined): { name: string; dir: string }[] {
  if (!raw) return [];
  return raw.split(',').map((item) => {
    const eq = item.indexOf('=');
    const name = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (!/^\w{1,20}$/.test(name))
      throw new Error(`BENCH_AB: "${item}" is not name=dir (a name of letters, digits and _)`);
    return { name, dir: eq < 0 ? '' : item.slice(eq + 1).trim() };
  });
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const durationS = num(env, 'BENCH_DURATION_S', 10);
  return {
    databaseUrl: env.DATABASE_URL || null,
    parts: parts(env.BENCH_ONLY),
    durationS,
    warmupS: num(env, 'BENCH_WARMUP_S', Math.min(3, durationS), 0),
    connections: Math.round(num(env, 'BENCH_CONNECTIONS', 50)),
    pairs: Math.round(num(env, 'BENCH_PAIRS', 3)),
    // A shortened run shortens the steady run in proportion (20 s at the default 10 s).
    e2eS: num(env, 'BENCH_E2E_S', env.BENCH_DURATION_S ? 2 * durationS : 20),
    e2eRate: num(env, 'BENCH_E2E_RATE', 50),
    backlog: Math.round(num(env, 'BENCH_BACKLOG', 5000, 2)),
    drainTimeoutS: num(env, 'BENCH_DRAIN_TIMEOUT_S', 300),
    settleTimeoutS: num(env, 'BENCH_SETTLE_TIMEOUT_S', 180),
    intakeWorker: env.BENCH_INTAKE_WORKER !== 'false',
    intakeRate: env.BENCH_INTAKE_RATE ? num(env, 'BENCH_INTAKE_RATE', 0) : null,
    intakeVariant: env.BENCH_INTAKE_VARIANT !== 'false',
    sameBody: env.BENCH_BODY === 'same',
    abSides: abSides(env.BENCH_AB),
    starts: Math.round(num(env, 'BENCH_STARTS', 3)),
    bootWaitS: num(env, 'BENCH_BOOT_WAIT_S', 30, 0),
  };
}

export const USAGE = `Settings (environment):
  DATABASE_URL            postgres://… to bench against PostgreSQL (a fresh database per part, dropped at the end);
                          unset: embedded PGlite (a temp DATA_DIR per part)
  BENCH_ONLY              comma list of parts: ${PARTS.join(',')} (default: all); start alone takes about a minute,
                          dashboard (every /app page over a seeded organization) 20 s on PostgreSQL, under
                          a minute on PGlite; the default run includes both; pow (issue, verify and solve a
                          proof-of-work challenge in process: pow_verify_us) about ten seconds
  BENCH_DASHBOARD_ROWS    submissions seeded for the dashboard part (default 10000, the budget's figure)
  BENCH_STARTS            restarts timed in the start part, start_ms is their median (default 3)
  BENCH_BOOT_WAIT_S       seconds after the last start before rss_boot_mb is read (default 30)
  BENCH_DURATION_S        seconds per intake run (default 10); also scales the e2e run to twice this
  BENCH_WARMUP_S          warm-up seconds before the intake runs (default 3)
  BENCH_CONNECTIONS       intake connections (default 50)
  BENCH_PAIRS             service/baseline run pairs (default 3)
  BENCH_E2E_S, BENCH_E2E_RATE   steady end-to-end run (default 20 s at 50 req/s)
  BENCH_BACKLOG           deliveries released in the drain part (default 5000)
  BENCH_DRAIN_TIMEOUT_S   wait for the drain at most this long (default 300)
  BENCH_SETTLE_TIMEOUT_S  wait for a run's deliveries at most this long (default 180)
  BENCH_BODY              same: every request of intake, e2e and drain is the same person posting the same text (a
                          flood: velocity fires on all but the first 4); default: a different address and message each
  BENCH_INTAKE_VARIANT    false: no match + unique run after each service run (intake_match_unique_cpu_ratio: its
                          server CPU per stored submission over the plain form's, same pair)
  BENCH_INTAKE_WORKER     false: the intake runs start the service with WORKER=false, to measure intake alone
                          (not the benchmark's figure: the service delivers as it takes submissions)
  BENCH_PAIRS also sets the spam part's plain/spam run pairs (each BENCH_DURATION_S long, at BENCH_INTAKE_RATE or 150/s)
  BENCH_INTAKE_RATE       the measured intake runs (not the warm-up) send this many requests per second instead of as many as
                          the server answers: the CPU per stored submission of two checkouts compared below saturation,
                          where the machine's two cores are not fought over (the ratio is then near 1 and means nothing)
  BENCH_AB                name=dir,name=dir: the ab part (only with BENCH_ONLY=ab, never by default) runs every
                          checkout's \`npm start\` at once and posts to them in turn, each at BENCH_E2E_RATE for
                          BENCH_E2E_S after BENCH_WARMUP_S: the intake's answer time of each side, and the first
                          side's over each other's (ab_<a>_over_<b>); an empty dir is this checkout
  BENCH_SERVICE_DIR       run another checkout's \`npm start\` as the service (built there), to compare code before and after
                          a change with the same bench
  BENCH_PROFILE_DIR       the server process of npm start writes a V8 CPU profile (<pid>.cpuprofile) there when it stops`;

/** The User-Agent of the load's requests: a browser's, as a site's visitors send. */
export const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

/**
 * A ~300-byte contact-form submission; `extra` fields (sequence, send stamp) are added to the same
 * object. `person` makes it one of many people's: it goes into the address and the message, so the
 * spam step's velocity sees distinct senders and texts, as on a real site (`[<id>]` lets autocannon
 * put a fresh id in each request). Without it, every request is the same person posting the same
 * text (BENCH_BODY=same): a flood, which velocity counts (docs/performance.md).
 */
export function submissionBody(extra: Record<string, unknown> = {}, person?: string | number): string {
  const who = person === undefined ? '' : `+${person}`;
  const ref = person === undefined ? '' : ` (our reference ${person})`;
  return JSON.stringify({
    name: 'Ada Lovelace',
    email: `ada.lovelace${who}@example.com`,
    company: 'Analytical Engines Ltd',
    phone: '+44 20 7946 0958',
    topic: 'pricing',
    message:
      `Hello! We would like to know more about the team plan${ref} and about routing submissions to our CRM. ` +
      'Could someone get in touch this week? Thanks.',
    consent: true,
    ...extra,
  });
}

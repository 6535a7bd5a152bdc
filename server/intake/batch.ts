import type { Database } from '../db/client.js';
import { isDbUnavailable } from '../db/errors.js';

/**
 * Intake's writes, grouped. The writes of the requests read in one event-loop turn go out together
 * at the end of it, in one statement and one transaction (at most MAX_BATCH), while fewer than
 * `maxInFlight` statements are under way; the ones that come while that many are, wait for the
 * next to end and then go together. At a low rate a write goes alone and waits for nothing but the
 * end of its turn; under load the round trips, the statement overhead and the commits are shared
 * by many submissions. Each caller is answered only once its own rows are committed: "stored
 * first" holds exactly as with one statement per request. (The turn matters on PGlite: its
 * statements run in this thread, so one would end before the next request was even read, and no
 * group would ever form.)
 *
 * One bad row (a value PostgreSQL refuses) fails its statement; a failed group is then written
 * again one by one, so that only that row's request fails. A database out of reach fails the whole
 * group at once (each request answers 503).
 */

/** One decided submission and the rows that go with it, in snake_case for jsonb_to_recordset. */
export interface BatchItem {
  /** the submission row, with `gen`: the organization's config_gen the caller decided with */
  submission: Record<string, unknown>;
  /**
   * Each names its submission by `submission_id`. A null `payload` is the instant payload, built by
   * the statement from the submission row, `form_slug` and `received` (its received_at as sent).
   */
  deliveries: Record<string, unknown>[];
  /** each names its submission by `sid` */
  events: Record<string, unknown>[];
  /** each names its submission by `sid` */
  hooks: Record<string, unknown>[];
}

/** `claimed`: settings.unique's values are held by another submission (unique.ts); nothing was written. */
export type BatchResult = 'stored' | 'stale' | 'repeat' | 'claimed';

export const MAX_BATCH = 200;

/**
 * The group's statement. `claims`: some submission of the group carries a settings.unique claim,
 * taken first (CTE c) and required by its insert; a group without one (nearly every group) runs the
 * statement without that CTE and its checks, which cost PostgreSQL some 20 µs of a 650 µs statement.
 */
const statementText = (claims: boolean) => `
with x as (
  select * from jsonb_to_recordset($1::text::jsonb) as x(id text, org_id text, form_id text, status text,
    quarantine_reason text, test boolean, data jsonb, form_schema_version integer, issues jsonb, spam jsonb,
    meta jsonb, client_ip text, idempotency_key text, subject_hint text, received_at timestamptz, gen bigint,
    unique_key text, unique_expires timestamptz)
),
${
  claims
    ? `c as (
  insert into unique_claims (form_id, key, submission_id, expires_at)
  select x.form_id, x.unique_key, x.id, x.unique_expires
  from x join organizations o on o.id = x.org_id and o.config_gen = x.gen
  where x.unique_key is not null
  on conflict (form_id, key) do update set submission_id = excluded.submission_id, expires_at = excluded.expires_at
  where unique_claims.expires_at <= now()
  returning submission_id
),
`
    : ''
}s as (
  insert into submissions (id, org_id, form_id, status, quarantine_reason, test, data, form_schema_version,
    issues, spam, meta, client_ip, idempotency_key, subject_hint, received_at)
  select x.id, x.org_id, x.form_id, x.status, x.quarantine_reason, x.test, x.data, x.form_schema_version,
    x.issues, x.spam, x.meta, x.client_ip, x.idempotency_key, x.subject_hint, x.received_at
  from x join organizations o on o.id = x.org_id and o.config_gen = x.gen
  ${claims ? 'where x.unique_key is null or x.id in (select submission_id from c)' : ''}
  on conflict (form_id, idempotency_key) where idempotency_key is not null do nothing
  returning id
),
d as (
  insert into deliveries (id, org_id, submission_id, route_id, destination_id, form_id, status, skip_reason,
    attempts, max_attempts, next_attempt_at, lease_until, schema_version, payload, created_at)
  select y.id, y.org_id, y.submission_id, y.route_id, y.destination_id, y.form_id, y.status, y.skip_reason,
    y.attempts, y.max_attempts, y.next_attempt_at, y.lease_until, y.schema_version,
    coalesce(y.payload, jsonb_build_object('id', y.id, 'type', 'submission.received', 'schema_version', null,
      'stream', null, 'form', jsonb_build_object('id', x.form_id, 'slug', y.form_slug),
      'submission', jsonb_build_object('id', x.id, 'status', x.status, 'test', x.test, 'received_at', y.received),
      'data', x.data, 'extras', '{}'::jsonb, 'meta', x.meta)),
    y.created_at
  from jsonb_to_recordset($2::text::jsonb) as y(id text, org_id text, submission_id text, route_id text,
    destination_id text, form_id text, status text, skip_reason text, attempts integer, max_attempts integer,
    next_attempt_at timestamptz, lease_until timestamptz, schema_version integer, payload jsonb,
    created_at timestamptz, form_slug text, received text)
  join x on x.id = y.submission_id
  where y.submission_id in (select id from s)
),
e as (
  insert into events (id, org_id, type, subject, data, created_at)
  select y.id, y.org_id, y.type, y.subject, y.data, y.created_at
  from jsonb_to_recordset($3::text::jsonb) as y(id text, org_id text, type text, subject jsonb, data jsonb,
    created_at timestamptz, sid text)
  where y.sid in (select id from s)
),
h as (
  insert into system_webhook_deliveries (id, org_id, webhook_id, event_id, event_type, status, max_attempts,
    next_attempt_at, payload, created_at)
  select y.id, y.org_id, y.webhook_id, y.event_id, y.event_type, y.status, y.max_attempts, y.next_attempt_at,
    y.payload, y.created_at
  from jsonb_to_recordset($4::text::jsonb) as y(id text, org_id text, webhook_id text, event_id text,
    event_type text, status text, max_attempts integer, next_attempt_at timestamptz, payload jsonb,
    created_at timestamptz, sid text)
  where y.sid in (select id from s)
)
select x.id, (x.id in (select id from s)) as stored, (o.config_gen is not distinct from x.gen) as current,
  ${claims ? '(x.unique_key is not null and x.id not in (select submission_id from c))' : 'false'} as claimed
from x left join organizations o on o.id = x.org_id`;
const STATEMENT = statementText(false);
const STATEMENT_WITH_CLAIMS = statementText(true);

interface Waiting {
  item: BatchItem;
  resolve: (r: BatchResult) => void;
  reject: (err: unknown) => void;
}

export class IntakeBatcher {
  private inFlight = 0;
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly database: Database,
    /** statements under way at once before writes wait and group */
    private readonly maxInFlight: number,
  ) {}

  write(item: BatchItem): Promise<BatchResult> {
    return new Promise<BatchResult>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump() {
    while (this.inFlight < this.maxInFlight && this.queue.length) {
      const group = this.take();
      this.inFlight += 1;
      this.run(group).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /**
   * The next group, in arrival order. Two writes with the same idempotency key, or the same
   * settings.unique claim, never share a statement (one INSERT … ON CONFLICT cannot decide between
   * rows it inserts itself): the later one waits for the next group, where it finds the first stored.
   */
  private take(): Waiting[] {
    const group: Waiting[] = [];
    const rest: Waiting[] = [];
    const keys = new Set<string>();
    for (const w of this.queue) {
      const s = w.item.submission;
      const key = s.idempotency_key === null ? null : `${s.form_id}\u0000${s.idempotency_key}`;
      const claim = s.unique_key ? `${s.form_id}\u0001${s.unique_key}` : null;
      if (group.length >= MAX_BATCH || (key !== null && keys.has(key)) || (claim !== null && keys.has(claim))) {
        rest.push(w);
      } else {
        group.push(w);
        if (key !== null) keys.add(key);
        if (claim !== null) keys.add(claim);
      }
    }
    this.queue = rest;
    return group;
  }

  private async run(group: Waiting[]): Promise<void> {
    try {
      const results = await this.statement(group.map((w) => w.item));
      group.forEach((w, i) => {
        w.resolve(results[i]);
      });
    } catch (err) {
      // Without a database every write fails alike: going again one by one would make each
      // request wait out a second connection attempt before its 503.
      if (isDbUnavailable(err)) {
        // The writes waiting behind this one would each wait out a connection attempt of their own
        // before failing the same way: they fail now, and their requests answer 503 at once.
        const waiting = this.queue;
        this.queue = [];
        for (const w of [...group, ...waiting]) w.reject(err);
        return;
      }
      if (group.length === 1) {
        group[0].reject(err);
        return;
      }
      // Alone, each row fails or succeeds for its own reasons.
      await Promise.all(
        group.map((w) =>
          this.statement([w.item]).then(
            ([r]) => w.resolve(r),
            (e) => w.reject(e),
          ),
        ),
      );
    }
  }

  private async statement(items: BatchItem[]): Promise<BatchResult[]> {
    const claims = items.some((i) => i.submission.unique_key);
    const rows = await this.database.prepared<{ id: string; stored: boolean; current: boolean; claimed: boolean }>(
      claims ? STATEMENT_WITH_CLAIMS : STATEMENT,
      [
        JSON.stringify(items.map((i) => i.submission)),
        JSON.stringify(items.flatMap((i) => i.deliveries)),
        JSON.stringify(items.flatMap((i) => i.events)),
        JSON.stringify(items.flatMap((i) => i.hooks)),
      ],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((i) => {
      const r = byId.get(i.submission.id as string);
      if (!r) throw new Error(`intake batch: no answer for ${String(i.submission.id)}`);
      if (r.stored) return 'stored';
      if (!r.current) return 'stale';
      return r.claimed ? 'claimed' : 'repeat';
    });
  }
}

const batchers = new WeakMap<Database, IntakeBatcher>();

/**
 * The process's batcher for a database. PGlite has one connection: one statement at a time. On
 * PostgreSQL a few run at once and the rest of the pool stays free for the worker and the API.
 */
export function intakeBatcher(database: Database): IntakeBatcher {
  let b = batchers.get(database);
  if (!b) {
    b = new IntakeBatcher(database, database.kind === 'pglite' ? 1 : 3);
    batchers.set(database, b);
  }
  return b;
}

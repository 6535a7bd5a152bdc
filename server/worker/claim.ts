import type { Database } from '../db/client.js';
import type { Claimed } from '../db/rows.js';
import { OUTBOX, OUTBOX_KINDS, type OutboxKind } from './outbox.js';

export type { Claimed } from '../db/rows.js';

export interface ClaimOptions {
  now: Date;
  limit: number;
  /** rows at most per target in one claim, for targets `room` does not name */
  perTarget: number;
  /** targets already at their limit in this process */
  busy: string[];
  /** sends in flight in this process per target below its limit: a claim takes only the room left */
  inFlight?: Record<string, number>;
  /** rows at most for these targets (overrides perTarget less inFlight); 0 or less leaves a target out */
  room?: Record<string, number>;
  leaseMs: number;
}

export type { OutboxKind };

/**
 * The claim of one outbox as one statement of fixed text (prepared once per connection).
 * Candidates come from the outbox's candidate function (migration 0009): three index range scans
 * on (status, next_attempt_at), each stopping after $4 rows, so a claim reads a window of the
 * backlog rather than all of it. The function is planned with bitmap scans, sequential scans,
 * sorts and parallel workers off, which leaves only that ordered walk: with statistics taken while
 * the outbox was drained (pending rows rare, the usual state) the planner read every due row
 * through a bitmap and sorted them, with others it scanned the whole table in parallel, so each
 * claim of a backlog read the whole backlog and the catch-up after a burst slowed run after run.
 * The candidates are ranked per target within that window, capped by the target's room, locked
 * with SKIP LOCKED (rows another worker is claiming are passed over, never taken twice), re-checked
 * as due under the lock, and marked `sending` with the lease. They are looked up by primary key from an array, never joined: a plan
 * made while the table was still empty (a fresh database, its statistics not yet gathered) would
 * otherwise join them by scanning the table once per candidate. The re-check is a CASE, which no
 * index can serve, so the primary key is the only way in: as plain conditions on status, drained
 * statistics made the planner fetch the rows through the due index instead, reading the whole
 * backlog to lock the few candidates (20,000 rows read for 64, 8 ms a claim).
 *
 * $1 now, $2 lease_until, $3 limit, $4 window, $5 room of targets not listed,
 * $6 [{t, room}] per listed target, $7 targets left out.
 */
function claimText(table: string, candidates: string, target: string, extra: string) {
  return `with cand as (
    select c.id, c.target, c.next_attempt_at
    from ${candidates}($1::timestamptz, $4::int, array(select jsonb_array_elements_text($7::jsonb))) c
  ), ranked as (
    select c.id, c.next_attempt_at,
      row_number() over (partition by c.target order by c.next_attempt_at, c.id) as rn,
      coalesce(r.room, $5::int) as room
    from cand c left join jsonb_to_recordset($6::jsonb) as r(t text, room int) on r.t = c.target
  ), picked as (
    select d.id from ${table} d
    where d.id = any (array(select k.id from ranked k where k.rn <= k.room))
      and case when d.status in ('pending', 'failed') then d.next_attempt_at <= $1::timestamptz
        when d.status = 'sending' then d.lease_until < $1::timestamptz else false end
    order by d.next_attempt_at, d.id
    limit $3::int
    for update of d skip locked
  )
  update ${table} t set status = 'sending', attempts = t.attempts + 1, lease_until = $2::timestamptz
  from picked where t.id = picked.id
  returning t.id, t.org_id, t.${target} as target_id, t.attempts, t.max_attempts, t.payload, ${extra}`;
}

/** The claim statement of each outbox, its text built from the outbox's data. */
const CLAIM = Object.fromEntries(
  OUTBOX_KINDS.map((k) => {
    const o = OUTBOX[k];
    return [k, claimText(o.table, o.candidates, o.targetColumn, o.claimColumns)];
  }),
) as Record<OutboxKind, string>;

/** The claim statement of one outbox (tests read its plan). */
export const claimStatement = (kind: OutboxKind) => CLAIM[kind];

/**
 * Claims up to `limit` due rows of one outbox: pending or failed ones whose next attempt is due, and
 * `sending` ones whose lease ran out (their worker died). FOR UPDATE SKIP LOCKED lets any number of
 * workers claim at once without taking the same row; at most `perTarget` rows per destination (or
 * webhook) are taken in one claim, less what this process already sends there (or exactly `room`
 * when given), and targets already at their limit in this process are left out.
 */
export async function claim(database: Database, kind: OutboxKind, opts: ClaimOptions): Promise<Claimed[]> {
  if (opts.limit <= 0) return [];
  const room: Record<string, number> = {};
  for (const [t, n] of Object.entries(opts.inFlight ?? {})) room[t] = opts.perTarget - n;
  Object.assign(room, opts.room ?? {});
  const busy = new Set(opts.busy);
  for (const [t, n] of Object.entries(room)) if (n <= 0) busy.add(t);
  const rooms = Object.entries(room)
    .filter(([t]) => !busy.has(t))
    .map(([t, n]) => ({ t, room: n }));
  const lease = new Date(opts.now.getTime() + opts.leaseMs);
  // ISO strings and JSON: parameters go as text on both drivers, and the statement casts them.
  const rows = await database.prepared<Claimed>(CLAIM[kind], [
    opts.now.toISOString(),
    lease.toISOString(),
    String(opts.limit),
    String(Math.max(opts.limit * 4, 64)),
    String(opts.perTarget),
    JSON.stringify(rooms),
    JSON.stringify([...busy]),
  ]);
  return rows.map((r) => ({
    ...r,
    attempts: Number(r.attempts),
    max_attempts: Number(r.max_attempts),
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    lease_until: lease,
  }));
}

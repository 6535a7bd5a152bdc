-- The claim's candidates: a window of the oldest due rows of an outbox, read in the order of its
-- (status, next_attempt_at) index and stopped after p_window rows, whatever the statistics say.
-- With statistics taken while the outbox was drained (pending rows rare, the usual state) the
-- planner read every due row through a bitmap and sorted them, and with others it chose a parallel
-- scan of the whole table: either way each claim of a backlog read the whole backlog (30,000 rows,
-- 100 ms on a bloated table) to keep 256, and the catch-up after a burst slowed run after run. So
-- the function is planned with bitmap scans, sequential scans, sorts and parallel workers off,
-- which leaves the ordered index scan; the SET clause also keeps the function from being inlined
-- into the claim, so the settings apply to these scans alone.
CREATE FUNCTION "claim_candidates_deliveries"(p_now timestamptz, p_window int, p_skip text[])
  RETURNS TABLE ("id" text, "target" text, "next_attempt_at" timestamptz)
  LANGUAGE sql STABLE
  SET enable_bitmapscan = off SET enable_seqscan = off SET enable_sort = off
  SET max_parallel_workers_per_gather = 0 AS $$
  (SELECT "id", "destination_id", "next_attempt_at" FROM "deliveries"
    WHERE "status" = 'pending' AND "next_attempt_at" <= p_now AND NOT ("destination_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
  UNION ALL
  (SELECT "id", "destination_id", "next_attempt_at" FROM "deliveries"
    WHERE "status" = 'failed' AND "next_attempt_at" <= p_now AND NOT ("destination_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
  UNION ALL
  (SELECT "id", "destination_id", "next_attempt_at" FROM "deliveries"
    WHERE "status" = 'sending' AND "lease_until" < p_now AND NOT ("destination_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
$$;--> statement-breakpoint
CREATE FUNCTION "claim_candidates_hooks"(p_now timestamptz, p_window int, p_skip text[])
  RETURNS TABLE ("id" text, "target" text, "next_attempt_at" timestamptz)
  LANGUAGE sql STABLE
  SET enable_bitmapscan = off SET enable_seqscan = off SET enable_sort = off
  SET max_parallel_workers_per_gather = 0 AS $$
  (SELECT "id", "webhook_id", "next_attempt_at" FROM "system_webhook_deliveries"
    WHERE "status" = 'pending' AND "next_attempt_at" <= p_now AND NOT ("webhook_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
  UNION ALL
  (SELECT "id", "webhook_id", "next_attempt_at" FROM "system_webhook_deliveries"
    WHERE "status" = 'failed' AND "next_attempt_at" <= p_now AND NOT ("webhook_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
  UNION ALL
  (SELECT "id", "webhook_id", "next_attempt_at" FROM "system_webhook_deliveries"
    WHERE "status" = 'sending' AND "lease_until" < p_now AND NOT ("webhook_id" = ANY (p_skip))
    ORDER BY "next_attempt_at" LIMIT p_window)
$$;

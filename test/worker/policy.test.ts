import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import type { Claimed } from '../../server/db/rows.js';
import { backoffMs, MAX_BACKOFF_MS } from '../../server/worker/backoff.js';
import { type DeliveryPolicy, isFinal, POLICIES, policyOf } from '../../server/worker/policy.js';
import { outcomeOf } from '../../server/worker/settle.js';
import type { SendResult } from '../../server/worker/types.js';
import { DESTINATION_TYPES, type DestinationType } from '../../shared/contracts/destinations.js';

describe('backoffMs', () => {
  it('doubles per attempt around the base, with ±20 % jitter', () => {
    expect(backoffMs(1, 1000, 0, () => 0.5)).toBe(2000);
    expect(backoffMs(3, 1000, 0, () => 0.5)).toBe(8000);
    expect(backoffMs(3, 1000, 0, () => 0)).toBe(6400);
    expect(backoffMs(3, 1000, 0, () => 1)).toBe(9600);
  });

  it('caps a step at six hours, jitter included', () => {
    expect(backoffMs(30, 1000, 0, () => 1)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(30, 1000, 0, () => 0)).toBe(0.8 * MAX_BACKOFF_MS);
  });

  it('honours a longer Retry-After, within the same cap; a shorter one changes nothing', () => {
    expect(backoffMs(1, 1000, 30_000, () => 0.5)).toBe(30_000);
    expect(backoffMs(5, 1000, 10, () => 0.5)).toBe(32_000);
    expect(backoffMs(1, 1000, 48 * 3600_000, () => 0.5)).toBe(MAX_BACKOFF_MS);
  });
});

const result = (o: Partial<SendResult>): SendResult => ({
  ok: false,
  status_code: null,
  latency_ms: 1,
  response_excerpt: '',
  error: 'x',
  retryable: true,
  ...o,
});

const row = (type: string | null, attempts = 1, max = 8): Claimed => ({
  id: 'dl_1',
  org_id: 'org_1',
  target_id: 'ds_1',
  attempts,
  max_attempts: max,
  payload: {},
  event_type: 'submission.received',
  submission_id: null,
  form_id: null,
  route_id: null,
  type,
  lease_until: new Date(),
});

describe('the delivery policy table', () => {
  it('has an entry for every destination type of the contract', () => {
    expect(Object.keys(POLICIES).sort()).toEqual([...DESTINATION_TYPES].sort());
    // A table missing a type does not compile:
    // @ts-expect-error slack, discord, email and telegram have no entry
    const partial: Record<DestinationType, DeliveryPolicy> = { webhook: POLICIES.webhook };
    expect(partial).toBeDefined();
  });

  it('keeps the attempt caps: webhook 10, every other type 8', () => {
    expect(Object.fromEntries(Object.entries(POLICIES).map(([t, p]) => [t, p.maxAttempts]))).toEqual({
      webhook: 10,
      email: 8,
      telegram: 8,
      slack: 8,
      discord: 8,
    });
  });

  it('uses the same backoff and the configured timeout for every type', () => {
    const config = loadConfig({ WEBHOOK_TIMEOUT_MS: '1234', MAIL_TRANSPORT: 'none' });
    for (const p of Object.values(POLICIES)) {
      expect(p.backoffMs).toBe(backoffMs);
      expect(p.timeoutMs(config)).toBe(1234);
    }
  });

  it('says which answers are final per type', () => {
    const final = (type: string, status: number) => isFinal(policyOf(type), result({ status_code: status }));
    expect(final('webhook', 410)).toBe(true);
    expect(final('webhook', 404)).toBe(false);
    expect(final('slack', 404)).toBe(true);
    expect(final('slack', 401)).toBe(true);
    expect(final('slack', 400)).toBe(false);
    expect(final('discord', 404)).toBe(true);
    expect(final('discord', 429)).toBe(false);
    expect(final('telegram', 403)).toBe(true);
    expect(final('email', 404)).toBe(false);
    // An adapter's own "no retry" (bad config, refused target) is final whatever the type.
    expect(isFinal(POLICIES.webhook, result({ retryable: false }))).toBe(true);
  });

  it('decides the outcome of an attempt by the claimed row type', () => {
    expect(outcomeOf(row('slack'), result({ status_code: 404 }))).toBe('dead');
    expect(outcomeOf(row('webhook'), result({ status_code: 404 }))).toBe('failed');
    expect(outcomeOf(row('slack', 8), result({ status_code: 500 }))).toBe('dead');
    expect(outcomeOf(row('slack', 7), result({ status_code: 500 }))).toBe('failed');
    expect(outcomeOf(row('slack'), result({ ok: true, status_code: 200 }))).toBe('sent');
  });

  it('gives an unknown or missing type a policy whose adapter fails without retrying', async () => {
    for (const type of ['fax', null]) {
      const p = policyOf(type);
      expect(p).not.toBe(POLICIES.webhook);
      const r = await p.adapter({} as never, { id: 'ds_1', type: String(type), name: 'x', config: {} }, {} as never);
      expect(r).toMatchObject({ ok: false, retryable: false });
      expect(r.error).toMatch(/unknown destination type/);
    }
  });
});

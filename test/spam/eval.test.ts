import { describe, expect, it } from 'vitest';
import { generateCorpus } from '../../bench/spam-corpus/corpus.js';
import { evaluate, meets, report, type Send, splitCorpus } from '../../bench/spam-corpus/evaluate.js';
import { MODEL_CHECK_MS } from '../../server/spam/learn.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key } = await tenantApp();
const send: Send = async (method, path, headers, body) => {
  const r = await t.request(method, path, { headers, ...(body === undefined ? {} : { body }) });
  return { status: r.status, json: r.json };
};

describe('the spam evaluation on our corpus (small)', () => {
  it('catches 90 % of unseen spam and flags no ordinary message and at most 10 % of newsletters', async () => {
    const { train, unseen } = splitCorpus(generateCorpus(), 200, 250);
    const result = await evaluate({ send, key, train, unseen, waitMs: MODEL_CHECK_MS + 200, concurrency: 4 });
    const { text, ok } = report(result);
    const by = Object.fromEntries(result.unseen.map((r) => [r.cls, r]));
    // Every class is in the sample, held-out templates included: the figures mean something.
    for (const cls of ['spam', 'ham', 'newsletter']) {
      expect(by[cls].posted, cls).toBeGreaterThanOrEqual(30);
      expect(by[cls].heldOut.posted, cls).toBeGreaterThan(15);
    }
    expect(result.marks).toBe(200);
    expect(
      result.unseen.filter((r) => !meets(r)),
      text,
    ).toEqual([]);
    expect(ok).toBe(true);
    expect(by.spam.flagged / by.spam.posted).toBeGreaterThanOrEqual(0.9);
    expect(by.ham.flagged / by.ham.posted).toBeLessThanOrEqual(0.01);
    expect(by.newsletter.flagged / by.newsletter.posted).toBeLessThanOrEqual(0.1);
  }, 60_000);
});

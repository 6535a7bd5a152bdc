import { describe, expect, it } from 'vitest';
import { tenantApp } from '../helpers/tenant.js';

const { t, key } = await tenantApp();
let ipSeq = 0;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const post = (formId: string, json: unknown) => {
  ipSeq += 1;
  return t.request('POST', `/s/${formId}`, {
    json,
    headers: { 'x-forwarded-for': `198.51.100.${ipSeq % 250}`, 'user-agent': UA },
  });
};
const detail = async (id: string) => (await t.api('GET', `/v1/submissions/${id}`, key)).json;
const mark = (id: string, status: string) => t.api('PATCH', `/v1/submissions/${id}`, key, { json: { status } });

const spamText = (i: number) => `Zorblax quantum profits guaranteed, join the zorblax club today number ${i}`;
const hamText = (i: number) => `Hello, I would like to book a table for dinner on Friday, party of ${i}`;

describe('the learning filter', () => {
  it('learns from PATCH marks, scores with them within seconds, and unlearns a changed mark', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Learn' } })).json;
    const spamIds: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const s = await post(f.id, { message: spamText(i) });
      spamIds.push(s.json.submission_id);
      expect((await mark(s.json.submission_id, 'spam')).status).toBe(200);
      const h = await post(f.id, { message: hamText(i) });
      // "received" on a submission already received is an explicit "this is fine": it teaches too.
      expect((await mark(h.json.submission_id, 'received')).status).toBe(200);
    }
    let learned: { status: string; spam: { reasons: string[] } } | null = null;
    for (let i = 0; i < 40 && !learned?.spam.reasons.includes('learned_spam'); i += 1) {
      if (i) await new Promise((r) => setTimeout(r, 250));
      learned = await detail((await post(f.id, { message: spamText(100 + i) })).json.submission_id);
    }
    expect(learned?.spam.reasons).toContain('learned_spam');
    const ham = await detail((await post(f.id, { message: hamText(99) })).json.submission_id);
    expect(ham.status).toBe('received');
    expect(ham.spam.reasons).not.toContain('learned_spam');

    const view = await t.api('GET', '/v1/spam', key);
    expect(view.status).toBe(200);
    expect(view.json.model).toMatchObject({ spam: 12, ham: 12 });
    expect(view.json.model.spam_tokens.map((x: { token: string }) => x.token)).toContain('zorblax');
    // A changed mark unlearns the first one.
    expect((await mark(spamIds[0], 'received')).status).toBe(200);
    expect((await t.api('GET', '/v1/spam', key)).json.model).toMatchObject({ spam: 11, ham: 13 });
    expect((await t.api('DELETE', '/v1/spam/model', key)).status).toBe(200);
    expect((await t.api('GET', '/v1/spam', key)).json.model).toMatchObject({ spam: 0, ham: 0, spam_tokens: [] });
  });
});

import type { TestEnv } from '../helpers/app.js';
import { until } from '../helpers/receiver.js';

/** Submitters' addresses on a made-up domain (example.com is on some disposable lists). */
export const addr = (p: string) => `${p}-${Math.random().toString(36).slice(2, 8)}@people.submitter-test.net`;

export async function makeForm(t: TestEnv, key: string, settings: Record<string, unknown>, extra = {}) {
  const r = await t.api('POST', '/v1/forms', key, { json: { name: `Form ${Math.random()}`, ...extra } });
  const p = await t.api('PATCH', `/v1/forms/${r.json.id}`, key, { json: { settings } });
  if (p.status !== 200) throw new Error(`PATCH settings: ${p.status} ${p.text}`);
  return r.json as { id: string; name: string };
}

export async function post(t: TestEnv, formId: string, data: Record<string, unknown>, headers = {}) {
  const r = await t.request('POST', `/s/${formId}`, {
    json: data,
    headers: { accept: 'application/json', ...headers },
  });
  if (r.status !== 200) throw new Error(`POST /s: ${r.status} ${r.text}`);
  return r.json as { submission_id: string; status: string };
}

export async function deliveriesOf(t: TestEnv, key: string, submissionId: string) {
  const r = await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, key);
  return r.json.data as { id: string; route_id: string; kind?: string; status: string; skip_reason: string | null }[];
}

export const mailsTo = (t: TestEnv, to: string) => t.smtp.messages.filter((m) => m.to.includes(to.toLowerCase()));

export function waitMail(t: TestEnv, to: string) {
  return until(`a mail to ${to}`, async () => mailsTo(t, to)[0], 10_000);
}

export function waitDelivery(t: TestEnv, key: string, submissionId: string, kind: string, status: string) {
  return until(`the ${kind} delivery ${status}`, async () =>
    (await deliveriesOf(t, key, submissionId)).find((d) => d.kind === kind && d.status === status),
  );
}

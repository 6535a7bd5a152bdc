import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
});
afterAll(() => t.close());

describe('the dashboard frame', () => {
  it('sends a signed-out visitor to sign-in, keeping where it was going', async () => {
    const r = await t.app.request('/app/forms?tag=a');
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/app/sign-in?next=%2Fapp%2Fforms%3Ftag%3Da');
  });

  it('refuses a state-changing request without the page token, or from another site', async () => {
    const none = await s.post('/app/sign-out', {}, { csrf: false });
    expect(none.status).toBe(403);
    expect(none.html).toContain('Reload the page');
    const forged = await s.post('/app/sign-out', { _csrf: 'x'.repeat(43) }, { csrf: false });
    expect(forged.status).toBe(403);
    const cross = await t.app.request('/app/sign-out', {
      method: 'POST',
      headers: { cookie: s.cookie, 'sec-fetch-site': 'cross-site', 'x-csrf-token': s.csrf },
    });
    expect(cross.status).toBe(403);
  });

  it('sets a strict policy and no framing on every page, and answers unknown pages with an HTML 404', async () => {
    const r = await s.get('/app/no-such-page');
    expect(r.status).toBe(404);
    expect(r.html.startsWith('<!DOCTYPE html>')).toBe(true);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('serves its stylesheet and script from its own origin', async () => {
    const css = await t.app.request('/app/assets/app.css');
    expect(css.headers.get('content-type')).toMatch(/text\/css/);
    const js = await t.app.request('/app/assets/app.js');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(await js.text()).toContain('data-copy');
  });
});

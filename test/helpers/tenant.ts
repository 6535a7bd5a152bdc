import { afterAll } from 'vitest';
import { startTestApp, type TestEnv } from './app.js';

/**
 * A test file's tenants, onboarded through the API: one owner's organization with a manage key and
 * a read key (and a submit key when asked for), and another organization, whose ids must answer 404.
 */
export interface Tenants {
  email: string;
  key: string;
  orgId: string;
  readKey: string;
  otherKey: string;
  otherOrgId: string;
}

export async function tenants(t: TestEnv): Promise<Tenants>;
export async function tenants(t: TestEnv, opts: { submit: true }): Promise<Tenants & { submitKey: string }>;
export async function tenants(t: TestEnv, opts: { submit?: boolean } = {}) {
  const owner = await t.onboard();
  const readKey = (await t.onboard(owner.email, { scopes: ['read'] })).key;
  const submitKey = opts.submit ? (await t.onboard(owner.email, { scopes: ['submit'] })).key : undefined;
  const other = await t.onboard();
  return {
    email: owner.email,
    key: owner.key,
    orgId: owner.verify.organization.id as string,
    readKey,
    ...(submitKey === undefined ? {} : { submitKey }),
    otherKey: other.key,
    otherOrgId: other.verify.organization.id as string,
  };
}

export interface TenantAppOptions {
  /** Settings for startTestApp. */
  env?: Record<string, string>;
  /** Starts the delivery worker too. */
  worker?: boolean;
}

/**
 * A test file's app and its tenants, shared by all its tests: awaited at the top of the file
 * (`const { t, key } = await tenantApp()`), so the tests read them as plain constants; the app
 * closes after the file's tests.
 */
export async function tenantApp(opts?: TenantAppOptions): Promise<Tenants & { t: TestEnv }>;
export async function tenantApp(
  opts: TenantAppOptions & { submit: true },
): Promise<Tenants & { t: TestEnv; submitKey: string }>;
export async function tenantApp(opts: TenantAppOptions & { submit?: boolean } = {}) {
  const t = await startTestApp(opts.env);
  afterAll(() => t.close());
  if (opts.worker) await t.startWorker();
  return { t, ...(opts.submit ? await tenants(t, { submit: true }) : await tenants(t)) };
}

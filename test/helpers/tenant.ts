import type { TestEnv } from './app.js';

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

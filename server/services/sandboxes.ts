import crypto from 'node:crypto';
import { and, asc, count, eq, gt } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type {
  CreateSandboxBody,
  Sandbox,
  SandboxClaimed,
  SandboxCreated,
  SandboxRead,
} from '../../shared/contracts/sandboxes.js';
import { newId } from '../../shared/ids.js';
import { shellWord } from '../../shared/shell.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import type { OrgRow, SandboxRow } from '../db/rows.js';
import { forms, organizations, sandboxes, submissions, users } from '../db/schema.js';
import { canonicalOrigin } from '../domain/checks.js';
import { limitKey } from '../domain/limit-key.js';
import { slugify } from '../domain/orgs.js';
import { buildEmbed, buildVerify } from '../present/embed.js';
import { submitUrl } from '../present/forms.js';
import { escapeHtml } from '../present/html.js';
import { checkFormLimit, formWithCounts } from './forms.js';
import { deliverySteps, nextStep, pathOf, routeOf } from './next-steps.js';
import { ensureProject } from './projects.js';

export type { SandboxRow } from '../db/rows.js';
export { deleteExpiredSandboxes } from '../worker/sandbox-expiry.js';

/** A sandbox lives a day and keeps at most this many test submissions. */
export const SANDBOX_TTL_MS = 24 * 3600 * 1000;
export const SANDBOX_MAX_SUBMISSIONS = 5;
/** The internal organization that holds unclaimed sandbox forms ("_" never comes out of slugify). */
export const SANDBOX_ORG_SLUG = '_sandboxes';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HOUR_MS = 3600 * 1000;

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/**
 * The token of a sandbox, derived from the creating Idempotency-Key so that a replay of the same
 * key answers the same token, while the database keeps hashes of both and can derive neither.
 */
const tokenFor = (idempotencyKey: string, sandboxId: string) =>
  `sbt_${crypto.createHmac('sha256', idempotencyKey).update(sandboxId).digest('base64url')}`;

function sameHash(a: string, b: string) {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export function effectiveStatus(s: SandboxRow, now: Date): 'active' | 'claimed' | 'expired' | 'blocked' {
  if (s.status === 'claimed' || s.status === 'blocked') return s.status;
  return s.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}

const claimUrl = (deps: Deps, id: string) => `${deps.config.publicBaseUrl}/claim/${id}`;

function claimHow(s: SandboxRow) {
  return {
    deadline: s.expiresAt.toISOString(),
    how:
      `Before ${s.expiresAt.toISOString()}, claim it into your organization with a manage-scoped API key and the ` +
      'sandbox token; otherwise it is deleted with its submissions.',
    cli: `formsvc sandboxes claim ${s.id} --token <sandbox_token>`,
    api: {
      method: 'POST' as const,
      path: pathOf(ops.sandboxes.claim, { id: s.id }),
      headers: { Authorization: 'Bearer <API_KEY>', 'Service-Sandbox-Token': '<sandbox_token>' },
    },
  };
}

async function acceptedCount(db: Db, s: SandboxRow) {
  const [{ n }] = await db.select({ n: count() }).from(submissions).where(eq(submissions.formId, s.formId));
  return Number(n);
}

/** Row → wire Sandbox (kept here: its claim steps are the service's next steps). */
function present(deps: Deps, s: SandboxRow, accepted: number): z.output<typeof Sandbox> {
  return {
    id: s.id,
    name: s.name,
    status: effectiveStatus(s, deps.now()),
    submit_url: submitUrl(deps, s.formId),
    expires_at: s.expiresAt.toISOString(),
    accepted_count: accepted,
    remaining: Math.max(0, SANDBOX_MAX_SUBMISSIONS - accepted),
    claim_url: claimUrl(deps, s.id),
    claim: claimHow(s),
  };
}

/** The internal organization of unclaimed sandbox forms, made on first use. */
async function sandboxOrg(db: Db, deps: Deps): Promise<OrgRow> {
  const find = async () =>
    (await db.select().from(organizations).where(eq(organizations.slug, SANDBOX_ORG_SLUG)).limit(1))[0];
  const found = await find();
  if (found) return found;
  await db
    .insert(organizations)
    .values({
      id: newId('organization'),
      slug: SANDBOX_ORG_SLUG,
      name: 'Sandboxes',
      plan: 'free',
      planSource: 'free',
      createdAt: deps.now(),
    })
    .onConflictDoNothing();
  return (await find()) as OrgRow;
}

function created(deps: Deps, s: SandboxRow, token: string, accepted: number): z.output<typeof SandboxCreated> {
  const url = submitUrl(deps, s.formId);
  return {
    sandbox: present(deps, s, accepted),
    sandbox_token: token,
    authorization: { scheme: 'Sandbox' as const, example: `Authorization: Sandbox ${token}` },
    embed: buildEmbed(url),
    verify: buildVerify(url, s.origin ? [s.origin] : []),
    claim_url: claimUrl(deps, s.id),
    next: [
      nextStep(
        ops.intake.submit,
        `Send up to ${SANDBOX_MAX_SUBMISSIONS} test submissions (no files); nothing is delivered anywhere`,
        { params: { formId: s.formId }, body: { email: 'test@example.com', message: 'Hello from the sandbox' } },
      ),
      nextStep(ops.sandboxes.read, 'Read them back with the sandbox token', {
        params: { id: s.id },
        headers: { Authorization: `Sandbox ${token}` },
      }),
      nextStep(ops.auth.requestCode, 'Get an API key by email code, to claim the sandbox into your organization', {
        body: { email: 'you@example.com' },
      }),
      nextStep(
        ops.sandboxes.claim,
        `Claim it before ${s.expiresAt.toISOString()}: the form keeps its id and submit URL`,
        {
          params: { id: s.id },
          headers: { Authorization: 'Bearer <API_KEY>', 'Service-Sandbox-Token': token },
        },
      ),
    ],
  };
}

/**
 * POST /v1/public/sandboxes. The Idempotency-Key is required (a lowercase UUIDv4): the same key and
 * body answer the same sandbox and token again; another body is 409. Per client IP at most
 * SANDBOX_SOURCE_ALLOWANCE sandboxes an hour (429), at most SANDBOX_GLOBAL_CAP active in all, or
 * SANDBOXES=false (503).
 */
export async function createSandbox(
  deps: Deps,
  input: {
    idempotencyKey: string | undefined;
    ip: string;
    body: z.output<typeof CreateSandboxBody>;
  },
) {
  const db = deps.database.db;
  const { idempotencyKey: key, body } = input;
  if (!deps.config.sandboxes) {
    throw new ApiError('service_unavailable', 'Anonymous sandboxes are turned off on this server.', {
      hint: `Get an API key by email code (${routeOf(ops.auth.requestCode)}) and create a form with ${routeOf(ops.forms.create)}.`,
    });
  }
  if (!key || !UUID_V4.test(key)) {
    throw new ApiError('validation_failed', 'Idempotency-Key must be a canonical lowercase UUIDv4.', {
      hint: 'Send a fresh random UUIDv4 in lowercase, e.g. from crypto.randomUUID(), and keep it to retry safely.',
      details: { issues: [{ path: 'Idempotency-Key', message: key ? 'not a lowercase UUIDv4' : 'required' }] },
    });
  }
  const origin = body.origin === undefined ? null : canonicalOrigin(body.origin);
  if (body.origin !== undefined && !origin) {
    throw new ApiError('validation_failed', 'origin must be an http(s) URL.', {
      details: { issues: [{ path: 'origin', message: 'use e.g. https://example.com' }] },
    });
  }
  const claimEmail = body.claim_email?.trim().toLowerCase() ?? null;
  const requestHash = sha256(JSON.stringify({ name: body.name, origin, claim_email: claimEmail }));
  const keyHash = sha256(key);

  const replay = async () => {
    const [existing] = await db.select().from(sandboxes).where(eq(sandboxes.idempotencyKeyHash, keyHash)).limit(1);
    if (!existing) return null;
    if (existing.requestHash !== requestHash) {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key created a sandbox with another body.', {
        hint: 'Send the same body again to get that sandbox, or use a new UUIDv4 for a new sandbox.',
      });
    }
    return created(deps, existing, tokenFor(key, existing.id), await acceptedCount(db, existing));
  };
  const again = await replay();
  if (again) return again;

  const now = deps.now();
  const [{ n: fromSource }] = await db
    .select({ n: count() })
    .from(sandboxes)
    .where(and(eq(sandboxes.sourceIp, limitKey(input.ip)), gt(sandboxes.createdAt, new Date(now.getTime() - HOUR_MS))));
  if (Number(fromSource) >= deps.config.sandboxSourceAllowance) {
    throw new ApiError('rate_limited', 'This address has created its allowance of sandboxes for the hour.', {
      hint: 'Reuse a sandbox you have (replay its Idempotency-Key), wait an hour, or get an API key by email code.',
      headers: { 'Retry-After': '3600' },
      details: { allowance: deps.config.sandboxSourceAllowance, window_s: 3600 },
    });
  }
  const [{ n: active }] = await db
    .select({ n: count() })
    .from(sandboxes)
    .where(and(eq(sandboxes.status, 'active'), gt(sandboxes.expiresAt, now)));
  if (Number(active) >= deps.config.sandboxGlobalCap) {
    throw new ApiError('service_unavailable', 'The server holds as many sandboxes as it allows; try again later.', {
      hint: `Retry in a while, or get an API key by email code (${routeOf(ops.auth.requestCode)}) and create a form.`,
      headers: { 'Retry-After': '600' },
    });
  }

  const org = await sandboxOrg(db, deps);
  const project = await ensureProject(db, org.id, 'sandboxes', 'Sandboxes');
  const id = newId('sandbox');
  const token = tokenFor(key, id);
  const row = await db.transaction(async (tx) => {
    const formId = newId('form');
    await tx.insert(forms).values({
      id: formId,
      orgId: org.id,
      projectId: project.id,
      slug: id,
      name: body.name,
      sandbox: true,
      settings: origin ? { allowed_origins: [origin] } : {},
      createdAt: now,
      updatedAt: now,
    });
    const [inserted] = await tx
      .insert(sandboxes)
      .values({
        id,
        orgId: org.id,
        formId,
        name: body.name,
        origin,
        claimEmail,
        tokenHash: sha256(token),
        idempotencyKeyHash: keyHash,
        requestHash,
        sourceIp: limitKey(input.ip), // the allowance counts an IPv6 client by its /64
        expiresAt: new Date(now.getTime() + SANDBOX_TTL_MS),
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (!inserted) {
      // A concurrent request with the same key won: undo this form, answer theirs.
      await tx.delete(forms).where(eq(forms.id, formId));
    }
    return inserted;
  });
  if (!row) return (await replay()) as NonNullable<Awaited<ReturnType<typeof replay>>>;
  return created(deps, row, token, 0);
}

const badCapability = () =>
  new ApiError('unauthorized', 'The sandbox token is missing or does not open this sandbox.', {
    hint: `Send \`Authorization: Sandbox <sandbox_token>\` with the token ${routeOf(ops.sandboxes.create)} answered.`,
  });

const gone = (s: SandboxRow, now: Date) => {
  const status = effectiveStatus(s, now);
  return new ApiError('gone', `Sandbox ${s.id} is ${status}.`, {
    hint:
      status === 'claimed'
        ? `Its form now belongs to the organization that claimed it: ${routeOf(ops.forms.get)} with that organization’s key.`
        : `Create a new sandbox with ${routeOf(ops.sandboxes.create)}, or get an API key by email code.`,
    details: { status },
  });
};

/** A sandbox by id whose token hash matches, or null; the comparison is constant-time. */
async function withToken(db: Db, id: string, token: string | undefined) {
  if (!token) return null;
  const [s] = await db.select().from(sandboxes).where(eq(sandboxes.id, id)).limit(1);
  if (!s || !sameHash(s.tokenHash, sha256(token))) return null;
  return s;
}

/** GET /v1/public/sandboxes/{id} with `Authorization: Sandbox <token>`: 401 on a bad token, 410 once over. */
export async function readSandbox(
  deps: Deps,
  id: string,
  authorization: string | undefined,
): Promise<z.output<typeof SandboxRead>> {
  const db = deps.database.db;
  const m = /^Sandbox\s+(\S+)\s*$/i.exec(authorization ?? '');
  const s = await withToken(db, id, m?.[1]);
  if (!s) throw badCapability();
  const now = deps.now();
  if (effectiveStatus(s, now) !== 'active') throw gone(s, now);
  const rows = await db
    .select()
    .from(submissions)
    .where(eq(submissions.formId, s.formId))
    .orderBy(asc(submissions.id))
    .limit(SANDBOX_MAX_SUBMISSIONS);
  return {
    ...present(deps, s, rows.length),
    submissions: rows.map((r) => ({ id: r.id, data: r.data, meta: r.meta, received_at: r.receivedAt.toISOString() })),
  };
}

/**
 * POST /v1/sandboxes/{id}/claim: the form moves into the caller's organization (default project)
 * with its id, submit URL and test submissions (inert: test, never delivered). A claim_email set at
 * creation must be the caller's address.
 */
export async function claimSandbox(
  deps: Deps,
  actor: Actor,
  id: string,
  token: string | undefined,
): Promise<z.output<typeof SandboxClaimed>> {
  const db = deps.database.db;
  if (!token) {
    throw new ApiError('bad_request', 'The Service-Sandbox-Token header is missing.', {
      hint: `Send the sandbox_token ${routeOf(ops.sandboxes.create)} answered in the Service-Sandbox-Token header.`,
    });
  }
  const [exists] = await db.select().from(sandboxes).where(eq(sandboxes.id, id)).limit(1);
  if (!exists) throw notFound('sandbox', id);
  const s = await withToken(db, id, token);
  if (!s) {
    throw new ApiError('forbidden', 'The Service-Sandbox-Token does not belong to this sandbox.', {
      hint: 'Send the sandbox_token that was answered when this sandbox was created.',
    });
  }
  const now = deps.now();
  if (effectiveStatus(s, now) !== 'active') throw gone(s, now);
  if (s.claimEmail) {
    const [user] = actor.userId
      ? await db.select({ email: users.email }).from(users).where(eq(users.id, actor.userId)).limit(1)
      : [];
    if (user?.email !== s.claimEmail) {
      throw new ApiError('forbidden', 'This sandbox may only be claimed by the address it was created for.', {
        hint: `Claim with a key minted (${routeOf(ops.auth.verifyCode)}) or a session signed in as that address.`,
      });
    }
  }
  await checkFormLimit(deps, actor.orgId);
  const project = await ensureProject(db, actor.orgId, 'default');
  const claimed = await db.transaction(async (tx) => {
    const [locked] = await tx.select().from(sandboxes).where(eq(sandboxes.id, id)).for('update');
    if (!locked || effectiveStatus(locked, now) !== 'active') throw gone(locked ?? s, now);
    const base = slugify(s.name) || 'sandbox';
    const [taken] = await tx
      .select({ id: forms.id })
      .from(forms)
      .where(and(eq(forms.orgId, actor.orgId), eq(forms.projectId, project.id), eq(forms.slug, base)))
      .limit(1);
    const slug = taken ? `${base.slice(0, 40)}-${s.formId.slice(-6)}` : base;
    await tx
      .update(forms)
      .set({ orgId: actor.orgId, projectId: project.id, slug, sandbox: false, updatedAt: now })
      .where(eq(forms.id, s.formId));
    // Copied as they are: test submissions, never delivered (no route existed when they arrived).
    await tx.update(submissions).set({ orgId: actor.orgId, test: true }).where(eq(submissions.formId, s.formId));
    const [row] = await tx
      .update(sandboxes)
      .set({ status: 'claimed', claimedAt: now, claimedOrgId: actor.orgId })
      .where(eq(sandboxes.id, id))
      .returning();
    return row;
  });
  const [form] = await db.select().from(forms).where(eq(forms.id, s.formId)).limit(1);
  return {
    sandbox: present(deps, claimed, await acceptedCount(db, claimed)),
    form: await formWithCounts(deps, form),
    next: deliverySteps(form.id, {
      destination: 'Create a destination for the form’s submissions',
      route: 'Route the form to it',
      test: 'Send a new test submission to prove delivery (the sandbox ones stay inert)',
    }),
  };
}

/**
 * Intake of a sandbox form, inside the submission's transaction: the sandbox row is locked so
 * concurrent posts count exactly; an expired or claimed sandbox is 410, a sixth submission 402.
 */
export async function admitSandboxSubmission(tx: Db, formId: string, now: Date) {
  const [s] = await tx.select().from(sandboxes).where(eq(sandboxes.formId, formId)).for('update');
  if (!s || effectiveStatus(s, now) !== 'active') {
    throw new ApiError('gone', 'This sandbox has expired.', {
      hint: `Create a new sandbox with ${routeOf(ops.sandboxes.create)}.`,
    });
  }
  const [{ n }] = await tx.select({ n: count() }).from(submissions).where(eq(submissions.formId, formId));
  if (Number(n) >= SANDBOX_MAX_SUBMISSIONS) {
    throw new ApiError(
      'plan_limit_reached',
      `A sandbox keeps ${SANDBOX_MAX_SUBMISSIONS} test submissions; this one was not stored.`,
      {
        hint: `Claim the sandbox (${routeOf(ops.sandboxes.claim, { id: s.id })}) to keep using its form, or create another sandbox.`,
        details: { limit: 'sandbox_submissions', max: SANDBOX_MAX_SUBMISSIONS, used: Number(n) },
      },
    );
  }
}

/** The plain page behind claim_url: how to claim with the CLI or the API. Nothing secret is shown. */
export async function claimPage(deps: Deps, id: string) {
  const esc = escapeHtml;
  const [s] = await deps.database.db.select().from(sandboxes).where(eq(sandboxes.id, id)).limit(1);
  const now = deps.now();
  const base = deps.config.publicBaseUrl;
  const safeId = esc(id);
  // Shell lines: each value quoted for the shell, then escaped for the page.
  const sh = (v: string) => esc(shellWord(v));
  const state = !s
    ? '<p>This sandbox does not exist (any more). Sandboxes are deleted 24 hours after they are created.</p>'
    : effectiveStatus(s, now) === 'active'
      ? `<p>Sandbox <code>${safeId}</code> can be claimed until <time datetime="${s.expiresAt.toISOString()}">${s.expiresAt.toISOString()}</time>.</p>`
      : `<p>Sandbox <code>${safeId}</code> is ${esc(effectiveStatus(s, now))} and can no longer be claimed.</p>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Claim a sandbox</title></head>
<body>
<main>
<h1>Claim a sandbox</h1>
${state}
<p>Claiming moves the sandbox form into your organization. It keeps its id and submit URL; its test submissions come along and stay inert. You need the <code>sandbox_token</code> answered when the sandbox was created, and an API key with the manage scope.</p>
<h2>With the CLI</h2>
<pre><code>npx formsvc login
npx formsvc sandboxes claim ${sh(id)} --token &lt;sandbox_token&gt;</code></pre>
<h2>With the API</h2>
<pre><code>curl -sS -X POST ${sh(`${base}/v1/auth/request-code`)} -H 'Content-Type: application/json' -d '{"email":"you@example.com"}'
curl -sS -X POST ${sh(`${base}/v1/auth/verify-code`)} -H 'Content-Type: application/json' -d '{"email":"you@example.com","code":"123456"}'
curl -sS -X POST ${sh(`${base}/v1/sandboxes/${encodeURIComponent(id)}/claim`)} -H "Authorization: Bearer $API_KEY" -H "Service-Sandbox-Token: $SANDBOX_TOKEN"</code></pre>
<p>Then create a destination and a route, and send a new test submission to see it delivered. <a href="${esc(base)}/llms.txt">llms.txt</a> walks through it.</p>
</main>
</body>
</html>`;
}

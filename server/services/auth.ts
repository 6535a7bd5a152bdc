import { and, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import {
  CODE_MAX_TRIES,
  CODE_TTL_SECONDS,
  type SessionResponse,
  type SignInBody,
  type VerifyCodeBody,
  type VerifyCodeResponse,
} from '../../shared/contracts/auth.js';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import { newId } from '../../shared/ids.js';
import type { Deps, KeyScope } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import type { Db } from '../db/client.js';
import { apiKeys, emailCodes, sessions } from '../db/schema.js';
import { limitKey } from '../domain/limit-key.js';
import { userWithPersonalOrg } from '../domain/orgs.js';
import { newApiKeySecret, randomToken, safeEqual, sha256, sixDigitCode } from '../domain/secrets.js';
import { type CodeTry, releaseCodeTry } from './code-tries.js';
import { routeOf } from './next-steps.js';

const SESSION_DAYS = 14;
const codeHash = (id: string, code: string) => sha256(`${id}:${code}`);

/** Advisory-lock namespace of the code throttle (the two-key form, apart from the migration lock). */
const THROTTLE_LOCK = 7_271_002;

/**
 * Seconds until fewer than `limit` codes of this address (or IP) are in the window, or null when
 * another code may be sent now. Counted from stored codes so it holds across processes.
 */
async function throttled(
  tx: Pick<Db, 'select'>,
  column: typeof emailCodes.email | typeof emailCodes.ip,
  value: string,
  limit: number,
  t: Date,
  windowS: number,
): Promise<number | null> {
  if (limit < 1) return windowS;
  const rows = await tx
    .select({ createdAt: emailCodes.createdAt })
    .from(emailCodes)
    .where(and(eq(column, value), gt(emailCodes.createdAt, new Date(t.getTime() - windowS * 1000))))
    .orderBy(desc(emailCodes.createdAt))
    .limit(limit);
  if (rows.length < limit) return null;
  // The limit-th newest code has to leave the window before another one fits.
  const freeAt = rows[limit - 1].createdAt.getTime() + windowS * 1000;
  return Math.max(1, Math.ceil((freeAt - t.getTime()) / 1000));
}

/**
 * Emails a 6-digit code. Answers the same for every well-formed address (no account probing);
 * throttled per address and per client IP. The count and the insert run under advisory locks on the
 * address and the IP, so concurrent requests cannot slip past the limit.
 */
export async function requestCode(deps: Deps, email: string, clientIp: string) {
  const ip = limitKey(clientIp); // counted by: the IPv4 address, or an IPv6 client's /64
  const { config, database, mailer, now } = deps;
  if (mailer.transport === 'none') {
    throw new ApiError('not_implemented', 'Email sending is not configured on this server.', {
      hint: 'Ask the operator to set SMTP_URL (or MAIL_TRANSPORT=console for development).',
    });
  }
  const db = database.db;
  const t = now();
  const id = newId('emailCode');
  const code = sixDigitCode();
  const retry = await db.transaction(async (tx) => {
    // Always address first, then IP: one lock order, no deadlock.
    await tx.execute(sql`select pg_advisory_xact_lock(${THROTTLE_LOCK}, hashtext(${`a:${email}`}))`);
    await tx.execute(sql`select pg_advisory_xact_lock(${THROTTLE_LOCK}, hashtext(${`i:${ip}`}))`);
    const waits = await Promise.all([
      throttled(tx, emailCodes.email, email, config.codePerAddress, t, config.codeWindowS),
      throttled(tx, emailCodes.ip, ip, config.codePerIp, t, config.codeWindowS),
    ]);
    const wait = Math.max(...waits.map((w) => w ?? 0));
    if (wait > 0) return wait;
    await tx.insert(emailCodes).values({
      id,
      email,
      codeHash: codeHash(id, code),
      ip,
      createdAt: t,
      expiresAt: new Date(t.getTime() + CODE_TTL_SECONDS * 1000),
    });
    return 0;
  });
  if (retry > 0) {
    throw new ApiError('rate_limited', 'Too many code requests; wait before asking again.', {
      headers: { 'Retry-After': String(retry) },
      details: { retry_after_s: retry },
    });
  }
  const pretty = `${code.slice(0, 3)} ${code.slice(3)}`;
  const sent = await mailer.send({
    to: [email],
    subject: `Your sign-in code: ${code}`,
    text: `Your formsvc code is ${code} (${pretty}).\n\nIt is valid for 10 minutes. If you did not ask for it, ignore this mail.\n`,
  });
  if (!sent.ok) {
    await db.delete(emailCodes).where(eq(emailCodes.id, id));
    throw new ApiError('bad_gateway', 'The code email could not be sent.', {
      hint: 'Retry in a minute; if it persists, the operator should check the SMTP server.',
      details: { smtp_error: sent.error?.slice(0, 200) },
    });
  }
  return {
    ok: true as const,
    expires_in: CODE_TTL_SECONDS,
    next: `${routeOf(ops.auth.verifyCode)} {"email": "<the address>", "code": "<6 digits from the mail>"} mints an API key.`,
  };
}

/**
 * Checks and consumes the newest live code of an address. The caller has taken the request's try
 * from the address's budget (takeCodeTry); a right code gives it back. Every try also takes one of
 * the code's own 5 tries in a single conditional UPDATE, so concurrent guesses cannot get more.
 */
async function consumeCode(deps: Deps, email: string, code: string, attempt: CodeTry) {
  const db = deps.database.db;
  const t = deps.now();
  const [row] = await db
    .select()
    .from(emailCodes)
    .where(and(eq(emailCodes.email, email), isNull(emailCodes.consumedAt), gt(emailCodes.expiresAt, t)))
    .orderBy(desc(emailCodes.id))
    .limit(1);
  if (!row) throw invalidCode();
  const live = and(eq(emailCodes.id, row.id), isNull(emailCodes.consumedAt));
  const [tried] = await db
    .update(emailCodes)
    .set({ attempts: sql`${emailCodes.attempts} + 1` })
    .where(and(live, lt(emailCodes.attempts, CODE_MAX_TRIES)))
    .returning({ attempts: emailCodes.attempts });
  if (!tried) throw invalidCode();
  if (!safeEqual(row.codeHash, codeHash(row.id, code))) {
    if (tried.attempts >= CODE_MAX_TRIES) await db.update(emailCodes).set({ consumedAt: t }).where(live);
    throw invalidCode();
  }
  const used = await db.update(emailCodes).set({ consumedAt: t }).where(live).returning({ id: emailCodes.id });
  if (!used.length) throw invalidCode(); // consumed by a concurrent request
  await releaseCodeTry(deps, attempt);
}

/** The one answer to a wrong, spent or expired code (and to anything that must look like one). */
const invalidCode = () =>
  new ApiError('unauthorized', 'The code is wrong or has expired.', {
    hint: `Ask for a new code with ${routeOf(ops.auth.requestCode)}; a code lives 10 minutes, and an address has a small budget of wrong tries across all its codes.`,
  });

/** Email code → API key, against the user's oldest personal organization (created for a new email). */
export async function verifyCode(
  deps: Deps,
  body: z.output<typeof VerifyCodeBody>,
  attempt: CodeTry,
): Promise<z.output<typeof VerifyCodeResponse>> {
  await consumeCode(deps, body.email, body.code, attempt);
  const { user, org, created } = await userWithPersonalOrg(deps.database.db, deps.config, body.email);
  const scopes = [...new Set<KeyScope>(body.scopes ?? ['manage'])];
  const name = body.key_name ?? `agent-${deps.now().toISOString().slice(0, 10)}`;
  const key = newApiKeySecret();
  const keyId = newId('apiKey');
  await deps.database.db.insert(apiKeys).values({
    id: keyId,
    orgId: org.id,
    name,
    prefix: key.prefix,
    hash: key.hash,
    scopes,
    createdByUserId: user.id,
  });
  return {
    api_key: key.secret,
    key_id: keyId,
    scopes,
    organization: { id: org.id, slug: org.slug, name: org.name },
    user: { email: user.email, created },
    next: [
      'Keep the api_key: it is shown once. Send it as Authorization: Bearer <api_key>.',
      `${routeOf(ops.quickstart.run)} {"name": "Contact", "notify_email": "<you>"} creates a routed form in one call.`,
      `${routeOf(ops.me.get)} shows your organization, limits and next steps.`,
    ],
  };
}

/** Email code → dashboard session cookie value (stored hashed). */
export async function signIn(
  deps: Deps,
  body: z.output<typeof SignInBody>,
  attempt: CodeTry,
): Promise<{ token: string; expiresAt: Date; body: z.output<typeof SessionResponse> }> {
  await consumeCode(deps, body.email, body.code, attempt);
  const { user, org, created } = await userWithPersonalOrg(deps.database.db, deps.config, body.email);
  const token = randomToken(48);
  const expiresAt = new Date(deps.now().getTime() + SESSION_DAYS * 86_400_000);
  await deps.database.db
    .insert(sessions)
    .values({ id: newId('session'), tokenHash: sha256(token), userId: user.id, activeOrgId: org.id, expiresAt });
  return {
    token,
    expiresAt,
    body: {
      user: { id: user.id, email: user.email, name: user.name, created },
      organization: { id: org.id, slug: org.slug, name: org.name },
      expires_at: expiresAt.toISOString(),
      next: [`${routeOf(ops.keys.create)} {"name": "ci", "scopes": ["submit"]} mints a key with this session.`],
    },
  };
}

export async function signOut(deps: Deps, token: string | undefined) {
  if (token) await deps.database.db.delete(sessions).where(eq(sessions.tokenHash, sha256(token)));
}

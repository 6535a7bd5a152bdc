import { and, eq, sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { spamMarks, spamModels, spamTokens } from '../db/schema.js';
import type { BayesModel } from './bayes.js';
import { textsOf, tokensOf } from './tokens.js';

export type Mark = 'spam' | 'ham';
/** Tokens kept per organization; past this the rarest are pruned (checked every PRUNE_EVERY marks). */
export const MAX_ORG_TOKENS = 50_000;
const PRUNE_EVERY = 50;

/** Adds (+1) or removes (-1) one submission's tokens under one verdict. */
async function count(tx: Db, orgId: string, tokens: string[], mark: Mark, delta: 1 | -1) {
  const s = mark === 'spam' ? delta : 0;
  const h = mark === 'ham' ? delta : 0;
  await tx
    .insert(spamModels)
    .values({ orgId, spamDocs: Math.max(0, s), hamDocs: Math.max(0, h), version: 1 })
    .onConflictDoUpdate({
      target: spamModels.orgId,
      set: {
        spamDocs: sql`greatest(0, ${spamModels.spamDocs} + ${s})`,
        hamDocs: sql`greatest(0, ${spamModels.hamDocs} + ${h})`,
        version: sql`${spamModels.version} + 1`,
      },
    });
  if (!tokens.length) return;
  const rows = sql.join(
    tokens.map((t) => sql`(${orgId}, ${t}, ${Math.max(0, s)}::int, ${Math.max(0, h)}::int)`),
    sql`, `,
  );
  if (delta === 1) {
    await tx.execute(sql`insert into spam_tokens (org_id, token, spam, ham) values ${rows}
      on conflict (org_id, token) do update set spam = spam_tokens.spam + excluded.spam, ham = spam_tokens.ham + excluded.ham`);
    return;
  }
  const list = sql.join(
    tokens.map((t) => sql`${t}`),
    sql`, `,
  );
  await tx.execute(sql`update spam_tokens set spam = greatest(0, spam + ${s}), ham = greatest(0, ham + ${h})
    where org_id = ${orgId} and token in (${list})`);
  await tx.execute(
    sql`delete from spam_tokens where org_id = ${orgId} and spam = 0 and ham = 0 and token in (${list})`,
  );
}

/**
 * Teaches the organization's filter one mark of a submission, in the caller's transaction: the same
 * mark again changes nothing; a different one unlearns the first, then learns this one.
 */
export async function learnMark(
  tx: Db,
  orgId: string,
  submissionId: string,
  data: unknown,
  mark: Mark,
  maxTokens = MAX_ORG_TOKENS,
) {
  const [prev] = await tx
    .select({ mark: spamMarks.mark })
    .from(spamMarks)
    .where(eq(spamMarks.submissionId, submissionId))
    .for('update');
  if (prev?.mark === mark) return;
  const before = await modelVersion(tx, orgId);
  const tokens = tokensOf(textsOf(data));
  if (prev) await count(tx, orgId, tokens, prev.mark as Mark, -1);
  await count(tx, orgId, tokens, mark, 1);
  await tx
    .insert(spamMarks)
    .values({ submissionId, orgId, mark })
    // A changed mark is a new one: its time moves too (GET /v1/spam lists the latest marks).
    .onConflictDoUpdate({ target: spamMarks.submissionId, set: { mark, createdAt: sql`now()` } });
  // A mark moves the version by one or two: prune whenever it crosses a multiple of PRUNE_EVERY.
  const after = await modelVersion(tx, orgId);
  if (Math.floor(after / PRUNE_EVERY) > Math.floor(before / PRUNE_EVERY)) await prune(tx, orgId, maxTokens);
}

async function modelVersion(tx: Db, orgId: string): Promise<number> {
  const [m] = await tx.select({ version: spamModels.version }).from(spamModels).where(eq(spamModels.orgId, orgId));
  return Number(m?.version ?? 0);
}

/** Keeps the `maxTokens` most used tokens of an organization (MAX_ORG_TOKENS; a test passes fewer). */
async function prune(tx: Db, orgId: string, maxTokens: number) {
  await tx.execute(sql`delete from spam_tokens where org_id = ${orgId} and token in (
    select token from spam_tokens where org_id = ${orgId} order by spam + ham desc, token offset ${maxTokens})`);
}

/** Forgets what the organization's filter learned (its marks, counts and tokens). */
export async function forgetModel(tx: Db, orgId: string) {
  await tx.delete(spamTokens).where(eq(spamTokens.orgId, orgId));
  await tx.delete(spamMarks).where(eq(spamMarks.orgId, orgId));
  await tx
    .insert(spamModels)
    .values({ orgId, version: 1 })
    .onConflictDoUpdate({
      target: spamModels.orgId,
      set: { spamDocs: 0, hamDocs: 0, version: sql`${spamModels.version} + 1` },
    });
}

/** Reads an organization's whole model (null while it has no marks). */
export async function readModel(db: Db, orgId: string): Promise<{ version: number; model: BayesModel | null }> {
  const [m] = await db.select().from(spamModels).where(eq(spamModels.orgId, orgId));
  if (!m || m.spamDocs + m.hamDocs === 0) return { version: m?.version ?? 0, model: null };
  const rows = await db
    .select({ token: spamTokens.token, spam: spamTokens.spam, ham: spamTokens.ham })
    .from(spamTokens)
    .where(and(eq(spamTokens.orgId, orgId)));
  const tokens = new Map<string, readonly [number, number]>();
  for (const r of rows) tokens.set(r.token, [r.spam, r.ham]);
  return { version: Number(m.version), model: { spam: m.spamDocs, ham: m.hamDocs, tokens } };
}

/** How often a process asks whether an organization's model moved. */
export const MODEL_CHECK_MS = 2_000;
interface Kept {
  version: number;
  model: BayesModel | null;
  checkedAt: number;
  /** the version check (and read) under way, shared by every submission that arrives meanwhile */
  refresh?: Promise<BayesModel | null>;
}
const models = new WeakMap<Database, Map<string, Kept>>();

/**
 * The organization's model as intake scores with it: kept in the process, its version checked at
 * most every MODEL_CHECK_MS (one indexed read, shared by the submissions that arrive while it runs),
 * the whole model read again only when it moved. Between checks the answer is the kept model itself,
 * not a promise: the common case costs intake no await.
 */
export function cachedModel(
  database: Database,
  orgId: string,
  nowMs: number,
): BayesModel | null | Promise<BayesModel | null> {
  let cache = models.get(database);
  if (!cache) {
    cache = new Map();
    models.set(database, cache);
  }
  const kept = cache.get(orgId);
  if (kept && nowMs - kept.checkedAt < MODEL_CHECK_MS) return kept.model;
  if (kept?.refresh) return kept.refresh;
  // An organization seen for the first time gets a placeholder (no version yet) that holds the read.
  const entry = kept ?? { version: -1, model: null, checkedAt: Number.NEGATIVE_INFINITY };
  if (!kept) {
    if (cache.size > 5_000) cache.clear();
    cache.set(orgId, entry);
  }
  const refresh = refreshModel(database, entry, orgId, nowMs);
  entry.refresh = refresh;
  const done = () => {
    if (entry.refresh === refresh) entry.refresh = undefined;
  };
  refresh.then(done, () => {
    done();
    if (!kept && cache.get(orgId) === entry) cache.delete(orgId); // a failed first read is tried again
  });
  return refresh;
}

async function refreshModel(database: Database, kept: Kept, orgId: string, nowMs: number): Promise<BayesModel | null> {
  const [m] = await database.db
    .select({ version: spamModels.version })
    .from(spamModels)
    .where(eq(spamModels.orgId, orgId));
  const version = Number(m?.version ?? 0);
  if (kept.version !== version) {
    const read = await readModel(database.db, orgId);
    kept.version = read.version;
    kept.model = read.model;
  }
  kept.checkedAt = nowMs;
  return kept.model;
}

import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { attachments, deliveries, submissions } from '../../server/db/schema.js';
import { newId } from '../../shared/ids.js';
import type { TestEnv } from './app.js';

/** Real rows through drizzle, for read-side tests that must not depend on intake or the worker. */

export type SubmissionRow = typeof submissions.$inferSelect;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type AttachmentRow = typeof attachments.$inferSelect;

/** The organization id behind a key (GET /v1/me). */
export async function orgIdOf(t: TestEnv, key: string): Promise<string> {
  const me = await t.api('GET', '/v1/me', key);
  if (me.status !== 200) throw new Error(`GET /v1/me: ${me.status} ${me.text}`);
  return me.json.organization.id as string;
}

/** A form made through the API; returns its id. */
export async function createForm(t: TestEnv, key: string, name = `Form ${crypto.randomUUID().slice(0, 8)}`) {
  const f = await t.api('POST', '/v1/forms', key, { json: { name } });
  if (f.status !== 201) throw new Error(`POST /v1/forms: ${f.status} ${f.text}`);
  return f.json.id as string;
}

export async function seedSubmission(
  t: TestEnv,
  o: {
    orgId: string;
    formId: string;
    status?: 'received' | 'quarantined' | 'spam';
    quarantineReason?: string | null;
    test?: boolean;
    data?: Record<string, unknown>;
    receivedAt?: Date;
    issues?: unknown[] | null;
    spam?: { score: number; reasons: string[] };
    meta?: Record<string, unknown>;
    formSchemaVersion?: number | null;
  },
): Promise<SubmissionRow> {
  const status = o.status ?? 'received';
  const receivedAt = o.receivedAt ?? new Date();
  const [row] = await t.deps.database.db
    .insert(submissions)
    .values({
      id: newId('submission'),
      orgId: o.orgId,
      formId: o.formId,
      status,
      quarantineReason: o.quarantineReason ?? (status === 'quarantined' ? 'rate_limited' : null),
      test: o.test ?? false,
      data: o.data ?? { email: 'ada@example.com', message: 'Hello' },
      formSchemaVersion: o.formSchemaVersion ?? null,
      spam: o.spam ?? { score: 0, reasons: [] },
      meta: o.meta ?? {
        ip: '203.0.113.7',
        user_agent: 'vitest',
        origin: null,
        referer: null,
        received_at: receivedAt.toISOString(),
        content_type: 'application/json',
      },
      issues: o.issues ?? null,
      clientIp: '203.0.113.7',
      receivedAt,
    })
    .returning();
  return row;
}

export async function seedDelivery(
  t: TestEnv,
  o: {
    orgId: string;
    submissionId: string | null;
    formId?: string | null;
    routeId?: string;
    destinationId?: string;
    status?: 'pending' | 'sending' | 'sent' | 'failed' | 'dead' | 'skipped' | 'held';
    skipReason?: 'window' | 'quality' | null;
    attempts?: number;
    maxAttempts?: number;
    nextAttemptAt?: Date | null;
    schemaVersion?: number | null;
    payload?: Record<string, unknown>;
    lastResponse?: Record<string, unknown> | null;
    lastError?: string | null;
    sentAt?: Date | null;
  },
): Promise<DeliveryRow> {
  const id = newId('delivery');
  const [row] = await t.deps.database.db
    .insert(deliveries)
    .values({
      id,
      orgId: o.orgId,
      submissionId: o.submissionId,
      routeId: o.routeId ?? newId('route'),
      destinationId: o.destinationId ?? newId('destination'),
      formId: o.formId ?? null,
      status: o.status ?? 'pending',
      skipReason: o.skipReason ?? null,
      attempts: o.attempts ?? 0,
      maxAttempts: o.maxAttempts ?? 10,
      nextAttemptAt: o.nextAttemptAt === undefined ? new Date() : o.nextAttemptAt,
      schemaVersion: o.schemaVersion ?? null,
      payload: o.payload ?? { id, type: 'submission.received', data: {} },
      lastResponse: o.lastResponse ?? null,
      lastError: o.lastError ?? null,
      sentAt: o.sentAt ?? null,
    })
    .returning();
  return row;
}

/** An attachment row whose bytes are written through deps.storage, as intake does. */
export async function seedAttachment(
  t: TestEnv,
  o: {
    orgId: string;
    formId: string;
    submissionId: string;
    bytes?: Buffer | string;
    fieldName?: string;
    filename?: string;
    contentType?: string;
  },
): Promise<AttachmentRow> {
  const id = newId('file');
  const storageKey = `${o.orgId}/${id}`;
  const bytes = typeof o.bytes === 'string' ? Buffer.from(o.bytes) : (o.bytes ?? Buffer.from('%PDF-1.4 test\n'));
  const stored = await t.deps.storage.write(storageKey, Readable.from([bytes]), Number.MAX_SAFE_INTEGER);
  const [row] = await t.deps.database.db
    .insert(attachments)
    .values({
      id,
      orgId: o.orgId,
      formId: o.formId,
      submissionId: o.submissionId,
      fieldName: o.fieldName ?? 'file',
      filename: o.filename ?? 'cv.pdf',
      contentType: o.contentType ?? 'application/pdf',
      sizeBytes: stored.sizeBytes,
      sha256: stored.sha256,
      storageKey,
    })
    .returning();
  return row;
}

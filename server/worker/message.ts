import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { destinations, forms, submissions, systemWebhooks } from '../db/schema.js';
import type { Claimed } from './claim.js';
import type { DestinationTarget, OutboundMessage } from './types.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/**
 * The destination and the message of one claimed route delivery. The payload is the stored
 * snapshot (what a webhook receives, byte for byte); templates also see the form's name and
 * settings and the submission's `_subject` hint, read now.
 */
export async function loadDelivery(
  db: Db,
  row: Claimed,
): Promise<{ dest: DestinationTarget; msg: OutboundMessage } | null> {
  const [dest] = await db
    .select({ id: destinations.id, type: destinations.type, name: destinations.name, config: destinations.config })
    .from(destinations)
    .where(eq(destinations.id, row.target_id))
    .limit(1);
  if (!dest) return null;
  const payloadForm = obj(row.payload.form);
  const formId = row.form_id ?? (payloadForm.id as string | undefined) ?? null;
  const [form] = formId
    ? await db
        .select({ id: forms.id, slug: forms.slug, name: forms.name, settings: forms.settings })
        .from(forms)
        .where(eq(forms.id, formId))
        .limit(1)
    : [];
  const [sub] = row.submission_id
    ? await db
        .select({ subjectHint: submissions.subjectHint })
        .from(submissions)
        .where(eq(submissions.id, row.submission_id))
        .limit(1)
    : [];
  return {
    dest,
    msg: {
      deliveryId: row.id,
      event: row.event_type,
      payload: row.payload,
      context: {
        form: form ?? {
          id: String(payloadForm.id ?? ''),
          slug: String(payloadForm.slug ?? ''),
          name: String(payloadForm.slug ?? ''),
          settings: {},
        },
        submission: row.payload.submission ? obj(row.payload.submission) : null,
        data: obj(row.payload.data),
        meta: obj(row.payload.meta),
        subject_hint: sub?.subjectHint ?? null,
        submissions: Array.isArray(row.payload.submissions) ? (row.payload.submissions as Obj[]) : undefined,
      },
    },
  };
}

/**
 * The system webhook of a claimed system-webhook delivery, as a webhook destination; null when it
 * was deleted or disabled since the event (nothing more is sent to it).
 */
export async function loadHook(db: Db, row: Claimed): Promise<DestinationTarget | null> {
  const [hook] = await db.select().from(systemWebhooks).where(eq(systemWebhooks.id, row.target_id)).limit(1);
  if (!hook?.enabled) return null;
  return { id: hook.id, type: 'webhook', name: 'system webhook', config: { url: hook.url, secret: hook.secret } };
}

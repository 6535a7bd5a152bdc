import { type Obj, objOf } from '../../shared/objects.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Claimed } from '../db/rows.js';
import { confirmKey, confirmToken } from '../domain/confirm-token.js';
import type { OutboxKind } from './outbox.js';
import { payloadsWithFiles } from './payload-files.js';
import { SUBMITTER_TARGET } from './submitter-target.js';
import type { DestinationTarget, OutboundMessage } from './types.js';

/**
 * The reads of one claim, as fixed statements prepared once per connection (database.prepared):
 * built by the query builder they cost a route delivery more CPU than the rest of its loading, and
 * every delivery a worker sends reads its destination. $1 is a JSON array of ids.
 */
const IDS = 'any (array(select jsonb_array_elements_text($1::jsonb)))';
const DESTINATIONS = `select id, type, name, config from destinations where id = ${IDS}`;
const FORMS = `select id, slug, name, settings from forms where id = ${IDS}`;
const HINTS = `select id, subject_hint from submissions where id = ${IDS}`;
const HOOKS = `select id, url, secret from system_webhooks where enabled and id = ${IDS}`;

/** What one claimed row is sent as; null when its destination (or system webhook) is gone or disabled. */
export type Prepared = { dest: DestinationTarget; msg: OutboundMessage } | null;

/**
 * The destination and the message of each row of one claim, read with one query per table for the
 * whole batch. The payload is the stored snapshot (what a webhook receives, byte for byte), plus,
 * for a submission with files, their `attachments` with fresh signed links (payloadsWithFiles);
 * templates (email, telegram) also see the form's name and settings and the submission's
 * `_subject` hint, read now; webhooks need neither, so those are read only for other types.
 */
export async function loadMessages(
  deps: { config: Config; database: Database; now: () => Date },
  kind: OutboxKind,
  rows: Claimed[],
): Promise<Map<string, Prepared>> {
  const out = new Map<string, Prepared>();
  if (!rows.length) return out;
  const { database } = deps;
  const targetIds = [...new Set(rows.map((r) => r.target_id))];
  if (kind === 'hook') return hookMessages(database, rows, targetIds);
  const dests = await database.prepared<DestinationTarget>(DESTINATIONS, [JSON.stringify(targetIds)]);
  const destById = new Map<string, DestinationTarget>(dests.map((d) => [d.id, d]));
  if (targetIds.includes(SUBMITTER_TARGET)) destById.set(SUBMITTER_TARGET, SUBMITTER_DEST);
  const templated = rows.filter((r) => {
    const d = destById.get(r.target_id);
    return d && d.type !== 'webhook';
  });
  const formIdOf = (r: Claimed) => r.form_id ?? (objOf(r.payload.form).id as string | undefined) ?? null;
  const formIds = [...new Set(templated.map(formIdOf).filter((x): x is string => !!x))];
  const subIds = [...new Set(templated.map((r) => r.submission_id).filter((x): x is string => !!x))];
  const formRows = formIds.length
    ? await database.prepared<{ id: string; slug: string; name: string; settings: Obj }>(FORMS, [
        JSON.stringify(formIds),
      ])
    : [];
  const subRows = subIds.length
    ? await database.prepared<{ id: string; subject_hint: string | null }>(HINTS, [JSON.stringify(subIds)])
    : [];
  const withFiles = await payloadsWithFiles(deps, rows);
  const formById = new Map(formRows.map((f) => [f.id, f]));
  const hintById = new Map(subRows.map((s) => [s.id, s.subject_hint]));
  const links = await confirmLinks(deps, rows);
  for (const row of rows) {
    const dest = destById.get(row.target_id);
    if (!dest) {
      out.set(row.id, null);
      continue;
    }
    const payload = withFiles.get(row.id) ?? row.payload;
    const payloadForm = objOf(payload.form);
    const formId = formIdOf(row);
    const form = formId ? formById.get(formId) : undefined;
    out.set(row.id, {
      dest,
      msg: {
        deliveryId: row.id,
        event: row.event_type,
        payload,
        context: {
          form: form
            ? { id: form.id, slug: form.slug, name: form.name, settings: form.settings as Obj }
            : {
                id: String(payloadForm.id ?? ''),
                slug: String(payloadForm.slug ?? ''),
                name: String(payloadForm.slug ?? ''),
                settings: {},
              },
          submission: payload.submission ? objOf(payload.submission) : null,
          data: objOf(payload.data),
          meta: objOf(payload.meta),
          subject_hint: (row.submission_id ? hintById.get(row.submission_id) : null) ?? null,
          submissions: Array.isArray(payload.submissions) ? (payload.submissions as Obj[]) : undefined,
          confirm_url: links.get(row.id),
        },
      },
    });
  }
  return out;
}

/** Mail to submitters has no destinations row: its settings are the form's (see submitter-target.ts). */
const SUBMITTER_DEST: DestinationTarget = {
  id: SUBMITTER_TARGET,
  type: SUBMITTER_TARGET,
  name: 'mail to the submitter',
  config: {},
};

/** The signed /c/{token} link of each confirmation mail among the rows, made now (never stored). */
async function confirmLinks(deps: { config: Config; database: Database }, rows: Claimed[]) {
  const out = new Map<string, string>();
  const wanted = rows.filter((r) => r.payload.type === 'submitter.confirmation' && r.submission_id);
  if (!wanted.length) return out;
  const key = await confirmKey(deps.database);
  for (const r of wanted) {
    const expires = new Date(String(r.payload.expires_at));
    out.set(r.id, `${deps.config.publicBaseUrl}/c/${confirmToken(key, r.submission_id as string, expires)}`);
  }
  return out;
}

/** System-webhook rows: the hook as a webhook destination, the event payload as is (null when disabled). */
async function hookMessages(database: Database, rows: Claimed[], targetIds: string[]) {
  const out = new Map<string, Prepared>();
  const hooks = await database.prepared<{ id: string; url: string; secret: string | null }>(HOOKS, [
    JSON.stringify(targetIds),
  ]);
  const byId = new Map(hooks.map((h) => [h.id, h]));
  for (const row of rows) {
    const hook = byId.get(row.target_id);
    out.set(
      row.id,
      hook
        ? {
            dest: {
              id: hook.id,
              type: 'webhook',
              name: 'system webhook',
              config: { url: hook.url, secret: hook.secret },
            },
            msg: { deliveryId: row.id, event: row.event_type, payload: row.payload, context: emptyContext() },
          }
        : null,
    );
  }
  return out;
}

function emptyContext(): OutboundMessage['context'] {
  return {
    form: { id: '', slug: '', name: '', settings: {} },
    submission: null,
    data: {},
    meta: {},
    subject_hint: null,
  };
}

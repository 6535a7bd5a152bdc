import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import type { AttachmentRow, SubmissionRow } from '../db/rows.js';
import { attachments, formSchemas, submissions } from '../db/schema.js';
import { getFormRow } from '../domain/form-rows.js';
import { presentAttachment, presentSubmission } from '../present/submissions.js';
import { driftOfSubmission } from './drift.js';
import { filterConditions, type SubmissionFilter, submissionColumns } from './submissions.js';

/** Rows read per query: one batch is in memory at a time (plus the one being written). */
export const EXPORT_BATCH = 1000;

export type ExportFormat = 'csv' | 'ndjson';

/** What a CSV row needs: the rest (spam, meta, issues, drift) would only be parsed to be dropped. */
const csvRowColumns = {
  id: submissions.id,
  status: submissions.status,
  quarantineReason: submissions.quarantineReason,
  test: submissions.test,
  data: submissions.data,
  receivedAt: submissions.receivedAt,
};
type CsvRow = Pick<SubmissionRow, keyof typeof csvRowColumns>;

/**
 * A form's submissions as a streamed download. Rows are read newest first in keyset batches by id
 * (EXPORT_BATCH per query) only as fast as the client takes them: the stream is pulled, so a slow
 * reader holds the next query back, and a client that goes away cancels it, which stops the reads.
 */
export async function openExport(
  deps: Deps,
  actor: Actor,
  formId: string,
  format: ExportFormat,
  filter: Omit<SubmissionFilter, 'form_id' | 'email'>,
) {
  const db = deps.database.db;
  const form = await getFormRow(db, actor.orgId, formId);
  const conds = filterConditions(actor.orgId, { ...filter, form_id: form.id });
  const csv = format === 'csv' ? await csvColumns(deps, actor.orgId, form, conds) : null;
  let after: string | null = null;
  let finished = false;
  let cancelled = false;
  const encoder = new TextEncoder();

  const readBatch = async () => {
    const rows = (await db
      .select(csv ? csvRowColumns : submissionColumns)
      .from(submissions)
      .where(and(...conds, after === null ? undefined : lt(submissions.id, after)))
      .orderBy(desc(submissions.id))
      .limit(EXPORT_BATCH)) as SubmissionRow[];
    // A CSV without file columns needs no attachment rows.
    const files =
      rows.length && (!csv || csv.hasFiles)
        ? await db
            .select()
            .from(attachments)
            .where(
              and(
                eq(attachments.orgId, actor.orgId),
                inArray(
                  attachments.submissionId,
                  rows.map((r) => r.id),
                ),
              ),
            )
            .orderBy(asc(attachments.id))
        : [];
    const bySubmission = new Map<string, AttachmentRow[]>();
    for (const f of files) bySubmission.set(f.submissionId, [...(bySubmission.get(f.submissionId) ?? []), f]);
    return { rows, bySubmission };
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(ctrl) {
        if (csv) ctrl.enqueue(encoder.encode(`\uFEFF${csvLine(csv.header)}`));
      },
      async pull(ctrl) {
        if (cancelled) return;
        if (finished) return ctrl.close();
        let batch: Awaited<ReturnType<typeof readBatch>>;
        try {
          batch = await readBatch();
        } catch (err) {
          // The status line is sent: the client sees a cut download (no final line), never a wrong one.
          deps.log.error({ err: String(err), form_id: form.id }, 'export stopped: reading rows failed');
          return ctrl.error(err);
        }
        const { rows, bySubmission } = batch;
        if (cancelled) return;
        if (rows.length < EXPORT_BATCH) finished = true;
        if (!rows.length) return ctrl.close();
        after = rows[rows.length - 1].id;
        let text = '';
        for (const row of rows) {
          const files = bySubmission.get(row.id) ?? [];
          if (csv) text += csvLine(csv.cells(row, files));
          else {
            const line = {
              ...presentSubmission(row),
              attachments: files.map((a) => presentAttachment(deps, a)),
              drift: await driftOfSubmission(db, actor.orgId, row.drift),
              issues: row.issues ?? null,
            };
            text += `${JSON.stringify(line)}\n`;
          }
        }
        ctrl.enqueue(encoder.encode(text));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 1 },
  );
  const day = deps.now().toISOString().slice(0, 10);
  return {
    body,
    headers: {
      'Content-Type': csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': `attachment; filename="${form.slug}-${day}.${format}"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    },
  };
}

const FIXED = ['id', 'status', 'quarantine_reason', 'received_at', 'test'] as const;

/**
 * The CSV columns: the fixed ones, the current schema's fields in schema order, every other data
 * field in order of first appearance (oldest submission first) among the exported rows, then one
 * download-URL column per file field. Found by the database before the first row is written.
 */
async function csvColumns(
  deps: Deps,
  orgId: string,
  form: { id: string; currentSchemaVersion: number | null },
  conds: ReturnType<typeof filterConditions>,
) {
  const db = deps.database.db;
  const schemaFields: string[] = [];
  if (form.currentSchemaVersion !== null) {
    const [schema] = await db
      .select({ json: formSchemas.jsonSchema, order: formSchemas.fieldOrder, ui: formSchemas.ui })
      .from(formSchemas)
      .where(
        and(
          eq(formSchemas.orgId, orgId),
          eq(formSchemas.formId, form.id),
          eq(formSchemas.version, form.currentSchemaVersion),
        ),
      )
      .limit(1);
    if (schema) schemaFields.push(...schemaOrder(schema.json, schema.order, schema.ui));
  }
  const seen = await deps.database.rows<{ key: string }>(sql`
    select k.key from ${submissions}, jsonb_object_keys(${submissions.data}) as k(key)
    where ${and(...conds)} group by k.key order by min(${submissions.id}), k.key collate "C"`);
  const fields = [...new Set([...schemaFields, ...seen.map((r) => r.key)])];
  const fileFields = (
    await deps.database.rows<{ field: string }>(sql`
      select field_name as field from ${attachments} where org_id = ${orgId} and form_id = ${form.id}
      group by field_name order by min(id)`)
  ).map((r) => r.field);
  // Field names come from whoever posts to the form: header cells get the formula guard as data cells do.
  const header = [...FIXED, ...fields.map(guard), ...fileFields.map((f) => guard(`${f}_url`))];
  return {
    header,
    hasFiles: fileFields.length > 0,
    cells(row: CsvRow, files: AttachmentRow[]): string[] {
      return [
        row.id,
        row.status,
        // as presentSubmission: a reason only while quarantined
        row.status === 'quarantined' ? (row.quarantineReason ?? '') : '',
        row.receivedAt.toISOString(),
        String(row.test),
        ...fields.map((f) => dataCell(row.data[f])),
        // The attachment's URL as the API presents it (the authenticated download, or a signed
        // link where presentAttachment gives one): one place decides.
        ...fileFields.map((f) =>
          guard(
            files
              .filter((a) => a.fieldName === f)
              .map((a) => presentAttachment(deps, a).download_url)
              .join('; '),
          ),
        ),
      ];
    },
  };
}

/**
 * The schema's root properties in the order they were published. A version stored before the
 * order was kept (field_order null) falls back to ui.order, then name, as the embed does.
 */
export function schemaOrder(json: Record<string, unknown>, order: string[] | null, ui: Record<string, unknown>) {
  const props = json.properties;
  if (!props || typeof props !== 'object' || Array.isArray(props)) return [];
  const names = Object.keys(props);
  if (order) return [...order.filter((n) => names.includes(n)), ...names.filter((n) => !order.includes(n)).sort()];
  const rank = (n: string) => {
    const hint = ui[n] as { order?: unknown } | undefined;
    return typeof hint?.order === 'number' ? hint.order : Number.POSITIVE_INFINITY;
  };
  return names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** A data value as a cell: text as is, numbers as written, arrays joined with "; ", objects as JSON. */
export function dataCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return guard(v);
  if (Array.isArray(v)) return guard(v.map((e) => (typeof e === 'string' ? e : (JSON.stringify(e) ?? ''))).join('; '));
  return guard(JSON.stringify(v));
}

/**
 * Formula guard: a spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as
 * a formula, so such text gets a leading apostrophe. Numbers are written by us and never guarded.
 */
export function guard(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** RFC 4180: a cell with a comma, quote, CR or LF is quoted, quotes doubled; records end in CRLF. */
export function csvLine(cells: readonly string[]): string {
  return `${cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',')}\r\n`;
}

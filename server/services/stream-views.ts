/** Read views over streams: the preview of mapped submissions and Form.streams. */
import { and, desc, eq, inArray, isNotNull, or } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { PreviewQuery } from '../../shared/contracts/streams.js';
import type { Actor, Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import type { FormRow, StreamSourceRow } from '../db/rows.js';
import { forms, streamSources, streams, submissions } from '../db/schema.js';
import type { FormStream } from '../present/forms.js';
import { applyMapping, type Mapping, pickSource, selectorsOf } from '../streams/mapping.js';
import { getStreamRow, sourceMatchesForm, sourcesOf } from '../streams/rows.js';

export type { FormStream } from '../present/forms.js';

/** GET /v1/streams/{id}/preview: the newest received submissions of the source forms, mapped. */
export async function previewStream(deps: Deps, actor: Actor, id: string, query: z.output<typeof PreviewQuery>) {
  const db = deps.database.db;
  const stream = await getStreamRow(db, actor.orgId, id);
  const sources = await sourcesOf(db, actor.orgId, id);
  const empty = { data: [], schema_version: stream.currentSchemaVersion };
  if (!sources.length) return empty;
  const matched = await db
    .select({ id: forms.id, tags: forms.tags, projectId: forms.projectId })
    .from(streamSources)
    .innerJoin(forms, and(eq(forms.orgId, streamSources.orgId), eq(forms.sandbox, false), sourceMatchesForm))
    .where(and(eq(streamSources.orgId, actor.orgId), eq(streamSources.streamId, id)));
  const byForm = new Map(matched.map((f) => [f.id, f]));
  if (!byForm.size) return empty;
  const rows = await db
    .select()
    .from(submissions)
    .where(
      and(
        eq(submissions.orgId, actor.orgId),
        inArray(submissions.formId, [...byForm.keys()]),
        eq(submissions.status, 'received'),
      ),
    )
    .orderBy(desc(submissions.id))
    .limit(query.limit ?? 20);
  return {
    data: rows.flatMap((s) => {
      const source = pickSource(sources, byForm.get(s.formId) as { id: string; tags: string[]; projectId: string });
      if (!source) return [];
      const mapped = applyMapping(source.mapping as Mapping, s.data);
      return [
        {
          submission_id: s.id,
          form_id: s.formId,
          source_id: source.id,
          received_at: s.receivedAt.toISOString(),
          data: mapped.data,
          extras: mapped.extras,
          mapping_status: source.mappingStatus as 'valid' | 'incomplete',
        },
      ];
    }),
    schema_version: stream.currentSchemaVersion,
  };
}

/** Form.streams for many forms: each stream a form feeds (explicitly or by selector) and its mapping status. */
export async function streamsOfForms(db: Db, orgId: string, rows: FormRow[]): Promise<Map<string, FormStream[]>> {
  const out = new Map<string, FormStream[]>(rows.map((f) => [f.id, []]));
  if (!rows.length) return out;
  const selectors = [...new Set(rows.flatMap(selectorsOf))];
  const found = await db
    .select({ source: streamSources, slug: streams.slug })
    .from(streamSources)
    .innerJoin(streams, eq(streams.id, streamSources.streamId))
    .where(
      and(
        eq(streamSources.orgId, orgId),
        or(
          inArray(
            streamSources.formId,
            rows.map((f) => f.id),
          ),
          and(isNotNull(streamSources.selector), inArray(streamSources.selector, selectors)),
        ),
      ),
    );
  const byStream = new Map<string, { slug: string; sources: StreamSourceRow[] }>();
  for (const { source, slug } of found) {
    const entry = byStream.get(source.streamId) ?? { slug, sources: [] };
    entry.sources.push(source);
    byStream.set(source.streamId, entry);
  }
  for (const f of rows) {
    for (const [streamId, { slug, sources }] of byStream) {
      const source = pickSource(sources, f);
      if (source) {
        (out.get(f.id) as FormStream[]).push({
          id: streamId,
          slug,
          mapping_status: source.mappingStatus as 'valid' | 'incomplete',
        });
      }
    }
  }
  return out;
}

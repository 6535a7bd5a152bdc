import { lt, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { type IdKind, isId } from '../../shared/ids.js';
import { ApiError } from './errors.js';

export const DEFAULT_LIMIT = 50;

export interface Page {
  limit: number;
  /** Condition "id older than the cursor", or undefined on the first page. */
  after(column: PgColumn): SQL | undefined;
}

/** Cursor pagination over time-sortable ids, newest first; stable while rows are inserted. */
export function pageOf(query: { cursor?: string; limit?: number }, kind: IdKind): Page {
  const { cursor } = query;
  if (cursor !== undefined && !isId(kind, cursor)) {
    throw new ApiError('validation_failed', 'cursor is not a cursor of this list.', {
      hint: 'Pass the next_cursor of the previous page unchanged, or leave cursor out for the first page.',
      details: { issues: [{ path: 'cursor', message: 'not a valid cursor' }] },
    });
  }
  return {
    limit: query.limit ?? DEFAULT_LIMIT,
    after: (column) => (cursor ? lt(column, cursor) : undefined),
  };
}

/** Rows fetched with limit + 1 → {data, next_cursor}. */
export function pageResult<T extends { id: string }, U>(rows: T[], page: Page, present: (row: T) => U) {
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  return { data: items.map(present), next_cursor: more ? items[items.length - 1].id : null };
}

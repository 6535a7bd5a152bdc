import { and, desc, eq, gte, inArray, lt } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { EventListQuery } from '../../shared/contracts/events.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import { events } from '../db/schema.js';
import { presentEvent } from '../present/events.js';

/** type: one or several separated by commas (checked against EVENT_TYPES by the contract); since inclusive, until exclusive. */
export type EventFilter = Omit<z.output<typeof EventListQuery>, 'cursor' | 'limit'>;

/** The organization's event log, newest first; filters narrow by type and a created_at window. */
export async function listEvents(deps: Deps, actor: Actor, page: Page, filter: EventFilter) {
  if (filter.since && filter.until && Date.parse(filter.since) > Date.parse(filter.until)) {
    throw new ApiError('validation_failed', 'since is later than until.', {
      hint: 'Give since (inclusive) earlier than until (exclusive), or leave one of them out.',
      details: { issues: [{ path: 'since', message: 'must not be later than until' }] },
    });
  }
  const conds = [eq(events.orgId, actor.orgId), page.after(events.id)];
  if (filter.type) {
    const types = [...new Set(filter.type.split(',').map((t) => t.trim()))];
    conds.push(types.length === 1 ? eq(events.type, types[0]) : inArray(events.type, types));
  }
  if (filter.since) conds.push(gte(events.createdAt, new Date(filter.since)));
  if (filter.until) conds.push(lt(events.createdAt, new Date(filter.until)));
  const rows = await deps.database.db
    .select()
    .from(events)
    .where(and(...conds))
    .orderBy(desc(events.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentEvent);
}

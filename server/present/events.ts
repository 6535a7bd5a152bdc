import type { z } from '../../shared/contracts/common.js';
import type { Event } from '../../shared/contracts/events.js';
import type { events } from '../db/schema.js';

export type EventOut = z.output<typeof Event>;

/** The wire shape of an event: the log's item and the body a system webhook receives. */
export function presentEvent(e: typeof events.$inferSelect): EventOut {
  return { id: e.id, type: e.type, subject: e.subject, data: e.data, created_at: e.createdAt.toISOString() };
}

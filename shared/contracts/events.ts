import { ListQuery, listOf, listPage, Timestamp, z } from './common.js';

/** Event types the service appends to the log; system webhooks subscribe to any of them. */
export const EVENT_TYPES = [
  'submission.received',
  'submission.quarantined',
  // extension: a double opt-in submission confirmed by its submitter
  'submission.confirmed',
  'submission.updated',
  'delivery.sent',
  'delivery.dead',
  'form.schema.changed',
  'stream.schema.changed',
  'drift.detected',
  'destination.failing',
  'submissions.erased',
  'destination.disabled',
  'webhook.disabled',
  'deliveries.replayed',
  // extension: an OAuth connection approved (its first tokens issued) and one revoked (docs/authentication.md)
  'oauth.granted',
  'oauth.revoked',
  // extensions: a destination waiting for a person (settings.approve_destinations), and the answer
  'destination.approval_requested',
  'destination.approved',
  'destination.rejected',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);

export const Event = z
  .object({
    id: z.string(),
    type: z.string().meta({ description: `one of ${EVENT_TYPES.join(', ')}` }),
    subject: z
      .record(z.string(), z.unknown())
      .meta({ description: 'ids of what the event is about, such as submission_id and form_id' }),
    data: z.record(z.string(), z.unknown()).meta({ description: 'what happened, per type' }),
    created_at: Timestamp,
  })
  .meta({
    id: 'Event',
    description: 'One entry of the append-only event log; also the body a system webhook receives',
  });

const Instant = z.iso.datetime({ offset: true });

export const EventListQuery = ListQuery.extend({
  type: z
    .string()
    .optional()
    .refine((v) => v === undefined || v.split(',').every((t) => KNOWN.has(t.trim())), {
      message: `unknown event type; known types: ${EVENT_TYPES.join(', ')}`,
    })
    .meta({
      description: `one event type, or several separated by commas: ${EVENT_TYPES.join(', ')}`,
      example: 'submission.received,delivery.dead',
    }),
  since: Instant.optional().meta({
    description: 'only events created at or after this ISO 8601 timestamp (inclusive)',
    example: '2026-01-01T00:00:00Z',
  }),
  until: Instant.optional().meta({ description: 'only events created before this ISO 8601 timestamp (exclusive)' }),
});

const tags = ['events'];

export const eventOps = {
  list: listPage('read', listOf(Event, 'EventList'), {
    path: '/v1/events',
    operationId: 'events_list',
    tags,
    summary:
      "The organization's event log, newest first (filters: type, comma-separated for several; since inclusive; " +
      'until exclusive)',
    query: EventListQuery,
    also: ['forbidden'],
  }),
};

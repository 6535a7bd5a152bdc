import type {
  apiKeys,
  attachments,
  deliveries,
  destinations,
  driftEvents,
  formSchemas,
  forms,
  invitations,
  memberships,
  organizations,
  planGrants,
  projects,
  routes,
  sandboxes,
  streamSchemas,
  streamSources,
  streams,
  submissions,
  systemWebhookDeliveries,
  systemWebhooks,
  users,
} from './schema.js';

/**
 * The row types of the tables, declared once: services, intake, the worker and the presenters import
 * them from here (a row type declared beside a service made presenters import services).
 */
export type OrgRow = typeof organizations.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type FormRow = typeof forms.$inferSelect;
export type FormSchemaRow = typeof formSchemas.$inferSelect;
/** `confirmation` (double opt-in) is set only by a confirmation: a row being stored at intake leaves it out. */
export type SubmissionRow = Omit<typeof submissions.$inferSelect, 'searchText' | 'confirmation'> &
  Partial<Pick<typeof submissions.$inferSelect, 'confirmation'>>;
export type AttachmentRow = typeof attachments.$inferSelect;
export type DestinationRow = typeof destinations.$inferSelect;
export type RouteRow = typeof routes.$inferSelect;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type SystemWebhookRow = typeof systemWebhooks.$inferSelect;
export type SystemWebhookDeliveryRow = typeof systemWebhookDeliveries.$inferSelect;
export type StreamRow = typeof streams.$inferSelect;
export type StreamSchemaRow = typeof streamSchemas.$inferSelect;
export type StreamSourceRow = typeof streamSources.$inferSelect;
export type DriftRow = typeof driftEvents.$inferSelect;
export type GrantRow = typeof planGrants.$inferSelect;
export type SandboxRow = typeof sandboxes.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;
export type KeyRow = typeof apiKeys.$inferSelect & { creatorEmail: string | null };
export type MemberRow = { m: typeof memberships.$inferSelect; u: typeof users.$inferSelect };

/** A claimed row: marked `sending` with a lease, its attempt already counted. */
export interface Claimed {
  id: string;
  org_id: string;
  /** destination id for deliveries, webhook id for system-webhook deliveries */
  target_id: string;
  attempts: number;
  max_attempts: number;
  payload: Record<string, unknown>;
  event_type: string;
  submission_id: string | null;
  form_id: string | null;
  route_id: string | null;
  /** The destination's type (its delivery policy); 'webhook' for system webhooks; null when the destination is gone. */
  type: string | null;
  /** When the lease this claim took runs out (another worker may then take the row again). */
  lease_until: Date;
}

import { adminOps } from './admin.js';
import { authOps } from './auth.js';
import { billingOps } from './billing.js';
import type { Operation } from './common.js';
import { deliveryOps } from './deliveries.js';
import { destinationOps } from './destinations.js';
import { driftOps } from './drift.js';
import { eventOps } from './events.js';
import { explainOps } from './explain.js';
import { formOps } from './forms.js';
import { intakeOps } from './intake.js';
import { invitationOps } from './invitations.js';
import { keyOps } from './keys.js';
import { mcpOps } from './mcp.js';
import { meOps } from './me.js';
import { memberOps } from './members.js';
import { organizationOps } from './organizations.js';
import { projectOps } from './projects.js';
import { quickstartOps } from './quickstart.js';
import { routeOps } from './routes.js';
import { sandboxOps } from './sandboxes.js';
import { schemaOps } from './schemas.js';
import { spamOps } from './spam.js';
import { streamOps } from './streams.js';
import { submissionOps } from './submissions.js';
import { systemOps } from './system.js';
import { webhookOps } from './webhooks.js';

/** The operation registry: every endpoint, once. The server, /openapi.json, the CLI and MCP derive from it. */
export const ops = {
  auth: authOps,
  keys: keyOps,
  me: meOps,
  projects: projectOps,
  quickstart: quickstartOps,
  forms: formOps,
  destinations: destinationOps,
  routes: routeOps,
  intake: intakeOps,
  submissions: submissionOps,
  explain: explainOps,
  deliveries: deliveryOps,
  events: eventOps,
  webhooks: webhookOps,
  schemas: schemaOps,
  drift: driftOps,
  streams: streamOps,
  admin: adminOps,
  billing: billingOps,
  sandboxes: sandboxOps,
  organizations: organizationOps,
  members: memberOps,
  invitations: invitationOps,
  system: systemOps,
  mcp: mcpOps,
  spam: spamOps,
};

export const operations: Operation[] = Object.values(ops).flatMap((group) => Object.values(group) as Operation[]);

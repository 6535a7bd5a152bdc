/** The resources of the API, one OpenAPI tag each: every operation carries exactly one (test/api/contract). */
export const TAGS = {
  discovery: 'What a caller reads first: liveness, the onboarding text (/llms.txt), this contract, the error codes.',
  auth: 'Signing in by email code: an API key for agents and scripts, or a dashboard session cookie for people.',
  'api-keys': 'API keys of the organization: mint one with a dashboard session, list, read and revoke them.',
  me: 'The caller: organization, plan, key scopes, limits and usage.',
  projects: 'Projects group forms and streams inside an organization.',
  quickstart: 'One call that creates a form, a destination and the route between them.',
  forms: 'Forms receive submissions at their submit URL; settings, embed snippets and their submissions.',
  destinations: 'Where submissions go: email, signed webhooks, Telegram; test one to prove it works.',
  routes: 'A route connects a form or a stream to a destination: instant or digest, a time window, quality filters.',
  intake: 'The public submit endpoint a website posts to, its CORS preflight and the hosted thank-you page.',
  submissions: 'What forms received: data, status (received, spam, quarantined), attachments.',
  deliveries: 'One delivery per submission and destination, sent by the outbox worker with retries.',
  events: 'What happened in the organization, newest first.',
  webhooks: 'System webhooks: the organization’s events sent to an endpoint, signed.',
  schemas: 'A form’s field schema: publish, infer from submissions, versions, the public copy for browsers.',
  drift: 'Fields that submissions send but the form’s schema does not describe.',
  streams: 'Streams merge the submissions of several forms into one mapped shape.',
  organizations: 'Organizations a person belongs to; a session can switch between them.',
  members: 'The people of an organization and their roles.',
  invitations: 'Invitations to join an organization, accepted by the invited person signed in.',
  admin: 'Platform operator tools (ADMIN_EMAILS): plan grants and growth figures.',
  billing: 'Plans: redeeming a grant code, and the billing provider’s signed callback.',
  sandboxes: 'Anonymous sandboxes: try a form for 24 hours without an account, then claim it.',
  mcp: 'The Model Context Protocol endpoint: one tool per /v1 operation.',
} as const;

export type Tag = keyof typeof TAGS;

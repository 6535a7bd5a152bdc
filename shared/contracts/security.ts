/**
 * How callers prove who they are, as OpenAPI security schemes, and which of them each kind of
 * operation accepts. The server's authorize() enforces the same rules (server/http/auth.ts).
 */

/** The dashboard session cookie (set by POST /v1/auth/sign-in). */
export const SESSION_COOKIE = 'formsvc_session';

export const SECURITY_SCHEMES = {
  ApiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'API key',
    description: '`Authorization: Bearer <API_KEY>`. Key scopes nest: manage ⊃ read ⊃ submit.',
  },
  Session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      'The dashboard session cookie from POST /v1/auth/sign-in. A session acts with the manage scope in its ' +
      'active organization; operations marked x-scope "session" also need the owner or admin role.',
  },
  Sandbox: {
    type: 'http',
    scheme: 'Sandbox',
    description: '`Authorization: Sandbox <sandbox_token>`: the capability POST /v1/public/sandboxes returned once.',
  },
  SandboxClaim: {
    type: 'apiKey',
    in: 'header',
    name: 'Service-Sandbox-Token',
    description: 'The sandbox_token of the sandbox being claimed, sent beside an API key or a session.',
  },
} as const;

export type SecuritySchemeName = keyof typeof SECURITY_SCHEMES;
export type Security = Partial<Record<SecuritySchemeName, string[]>>[];

/** No credentials (an empty requirement list overrides nothing: there is no global security). */
export const NO_CREDENTIALS: Security = [];
/** Only a dashboard session cookie; an API key is refused. */
export const SESSION_ONLY: Security = [{ Session: [] }];
/** The session cookie when there is one (signing out without one is fine). */
export const SESSION_IF_ANY: Security = [{ Session: [] }, {}];
/** An API key when there is one: without, only what needs no credentials is offered. */
export const KEY_IF_ANY: Security = [{ ApiKey: [] }, {}];
/** The sandbox token alone. */
export const SANDBOX_TOKEN: Security = [{ Sandbox: [] }];
/** A manage key or a session of the claiming organization, together with the sandbox token. */
export const SANDBOX_CLAIM: Security = [
  { ApiKey: [], SandboxClaim: [] },
  { Session: [], SandboxClaim: [] },
];

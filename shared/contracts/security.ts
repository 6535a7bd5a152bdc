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
  // extension: OAuth 2.1 (docs/authentication.md) for agents that connect by URL
  OAuth2: {
    type: 'oauth2',
    description:
      'OAuth 2.1 authorization code with PKCE (S256) for clients that register themselves (RFC 7591, ' +
      'POST /oauth/register) and sign a person in (RFC 8414 metadata at /.well-known/oauth-authorization-server; ' +
      'protected resource metadata at /.well-known/oauth-protected-resource and …/mcp). The access token is sent ' +
      'as `Authorization: Bearer <token>` and acts as that person in the organization they chose, with the scope ' +
      'they approved and the role rules of their session. Extension of the spec.',
    flows: {
      authorizationCode: {
        authorizationUrl: '/app/oauth/authorize',
        tokenUrl: '/oauth/token',
        refreshUrl: '/oauth/token',
        scopes: {
          submit: 'send submissions (as an API key of the submit scope)',
          read: 'read forms, submissions and deliveries, and submit',
          manage: 'everything a session of the person can do in the organization, except session-only operations',
        },
      },
    },
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
/** An API key or an OAuth access token (POST /mcp). */
export const KEY_OR_TOKEN: Security = [{ ApiKey: [] }, { OAuth2: ['submit'] }];
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

import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../http/context.js';
import {
  exchangeCode,
  OAUTH_SCOPES,
  OAuthError,
  refresh,
  registerClient,
  resourcesOf,
  revokeToken,
} from '../services/oauth.js';

/**
 * The OAuth 2.1 endpoints (docs/authentication.md, "OAuth"): metadata of the protected resource
 * (RFC 9728) and of the authorization server (RFC 8414), registration (RFC 7591), token, revocation
 * (RFC 7009). The consent page is the dashboard's /app/oauth/authorize. These endpoints answer
 * errors in the shape their RFCs fix ({error, error_description}, plus a hint), not the API's
 * envelope: OAuth clients read that shape. Not part of /openapi.json, which declares the scheme.
 */
export function registerOAuth(app: OpenAPIHono<AppEnv>) {
  const protectedResource = (c: Context<AppEnv>, resource: string) => {
    const r = resourcesOf(c.get('deps').config.publicBaseUrl);
    return c.json(
      {
        resource,
        authorization_servers: [r.root],
        scopes_supported: [...OAUTH_SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'formsvc',
        resource_documentation: `${r.root}/llms.txt`,
      },
      200,
      { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
    );
  };
  app.get('/.well-known/oauth-protected-resource', (c) =>
    protectedResource(c, resourcesOf(c.get('deps').config.publicBaseUrl).root),
  );
  app.get('/.well-known/oauth-protected-resource/mcp', (c) =>
    protectedResource(c, resourcesOf(c.get('deps').config.publicBaseUrl).mcp),
  );
  app.get('/.well-known/oauth-protected-resource/v1', (c) =>
    protectedResource(c, resourcesOf(c.get('deps').config.publicBaseUrl).v1),
  );

  app.get('/.well-known/oauth-authorization-server', (c) => {
    const root = resourcesOf(c.get('deps').config.publicBaseUrl).root;
    return c.json(
      {
        issuer: root,
        authorization_endpoint: `${root}/app/oauth/authorize`,
        token_endpoint: `${root}/oauth/token`,
        registration_endpoint: `${root}/oauth/register`,
        revocation_endpoint: `${root}/oauth/revoke`,
        scopes_supported: [...OAUTH_SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${root}/llms.txt`,
      },
      200,
      { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
    );
  });

  app.use(
    '/oauth/*',
    bodyLimit({
      maxSize: 64 * 1024,
      onError: (c) =>
        oauthError(c, new OAuthError('invalid_request', 'The request body is larger than 64 KB.', 'Send less.')),
    }),
  );

  app.post(
    '/oauth/register',
    guarded(async (c) => {
      let body: unknown;
      try {
        body = await c.req.json();
      } catch {
        throw new OAuthError('invalid_client_metadata', 'The body is not JSON.', 'Send the client metadata as JSON.');
      }
      return c.json(await registerClient(c.get('deps'), body), 201, NO_STORE);
    }),
  );

  app.post(
    '/oauth/token',
    guarded(async (c) => {
      const p = await formOf(c);
      const deps = c.get('deps');
      if (p.grant_type === 'authorization_code') return c.json(await exchangeCode(deps, p), 200, NO_STORE);
      if (p.grant_type === 'refresh_token') return c.json(await refresh(deps, p), 200, NO_STORE);
      throw new OAuthError(
        'unsupported_grant_type',
        `grant_type "${String(p.grant_type ?? '').slice(0, 40)}" is not supported.`,
        'Use authorization_code or refresh_token.',
      );
    }),
  );

  app.post(
    '/oauth/revoke',
    guarded(async (c) => {
      await revokeToken(c.get('deps'), await formOf(c));
      return c.body(null, 200, NO_STORE);
    }),
  );
}

/** Token answers are never cached (RFC 6749 §5.1); browser-based clients may call from any origin. */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache', 'Access-Control-Allow-Origin': '*' };

function oauthError(c: Context<AppEnv>, err: OAuthError) {
  return c.json({ error: err.error, error_description: err.message, hint: err.hint }, err.status, NO_STORE);
}

/** A handler whose OAuthError becomes the RFC's error answer (any other error goes to the app's onError). */
function guarded(handler: (c: Context<AppEnv>) => Promise<Response>) {
  return async (c: Context<AppEnv>) => {
    try {
      return await handler(c);
    } catch (err) {
      if (err instanceof OAuthError) return oauthError(c, err);
      throw err;
    }
  };
}

/** The form fields of a token or revocation request (application/x-www-form-urlencoded), strings only. */
async function formOf(c: Context<AppEnv>): Promise<Record<string, string | undefined>> {
  if (!/^application\/x-www-form-urlencoded/i.test(c.req.header('content-type') ?? '')) {
    throw new OAuthError(
      'invalid_request',
      'The body must be application/x-www-form-urlencoded.',
      'Send the parameters as a form (RFC 6749 §4.1.3).',
    );
  }
  const form = await c.req.parseBody();
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(form)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The 401 challenge of /mcp and /v1 (RFC 9728 §5.1): where an OAuth client finds how to get a token. */
export function bearerChallenge(baseUrl: string, path: string, hadToken: boolean): string {
  const root = resourcesOf(baseUrl).root;
  const metadata = `${root}/.well-known/oauth-protected-resource${path === '/mcp' ? '/mcp' : ''}`;
  return `Bearer resource_metadata="${metadata}"${hadToken ? ', error="invalid_token"' : ''}`;
}

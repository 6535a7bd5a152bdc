import { KeyName, KeyScope } from './auth.js';
import { body, errors, getById, IdParam, json, ListQuery, listOf, listPage, op, Timestamp, z } from './common.js';

export const ApiKey = z
  .object({
    key_id: z.string(),
    id: z.string(),
    prefix: z.string(),
    name: z.string(),
    scopes: z.array(KeyScope),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    created_by: z.object({ id: z.string(), email: z.string() }).nullable(),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyCreated = ApiKey.extend({ api_key: z.string() }).meta({ id: 'ApiKeyCreated' });

export const CreateKeyBody = z
  .strictObject({ name: KeyName, scopes: z.array(KeyScope).min(1).optional() })
  .meta({ id: 'CreateApiKeyBody' });

const tags = ['api-keys'];

export const keyOps = {
  create: op('session', {
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'api_keys_create',
    tags,
    summary: 'Mint an API key (session cookie of an owner or admin only); the secret is shown once',
    request: { body: body(CreateKeyBody) },
    responses: {
      201: json(ApiKeyCreated, 'Created'),
      ...errors('unauthorized', 'forbidden', 'validation_failed'),
    },
  }),
  list: listPage('read', listOf(ApiKey, 'ApiKeyList'), {
    path: '/v1/api-keys',
    operationId: 'api_keys_list',
    tags,
    summary: "List the organization's active API keys (never their secrets)",
    query: ListQuery,
  }),
  get: getById(ApiKey, {
    path: '/v1/api-keys/{id}',
    operationId: 'api_keys_get',
    tags,
    summary: 'One API key (never its secret)',
  }),
  revoke: op('manage', {
    method: 'delete',
    path: '/v1/api-keys/{id}',
    operationId: 'api_keys_revoke',
    tags,
    summary:
      'Revoke an API key; it stops working at once (a manage key, or the session of an owner or admin: a member gets 403)',
    request: { params: IdParam },
    responses: { 204: { description: 'Revoked' }, ...errors('unauthorized', 'forbidden', 'not_found') },
  }),
};

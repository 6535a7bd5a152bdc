import { typeid } from 'typeid-js';

/** Id prefixes: the spec's own, then the same style for the rest. */
export const ID_PREFIX = {
  project: 'prj',
  form: 'fm',
  submission: 'sb',
  stream: 'st',
  destination: 'ds',
  route: 'rt',
  delivery: 'dl',
  file: 'fl',
  organization: 'org',
  user: 'usr',
  apiKey: 'key',
  event: 'ev',
  webhook: 'wh',
  webhookDelivery: 'whd',
  drift: 'dr',
  sandbox: 'sbx',
  invitation: 'inv',
  planGrant: 'pg',
  session: 'ses',
  emailCode: 'ec',
  membership: 'mem',
  formSchema: 'fsv',
  streamSchema: 'ssv',
  streamSource: 'src',
  planRedemption: 'pgr',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** A new id: prefix + time-sortable UUIDv7 in base32, so ids double as pagination cursors. */
export function newId(kind: IdKind): string {
  return typeid(ID_PREFIX[kind]).toString();
}

const SUFFIX = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

/** True when `value` looks like an id of that kind (prefix and a 26-character suffix). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIX[kind]}_`;
  return value.startsWith(prefix) && SUFFIX.test(value.slice(prefix.length));
}

import { randomFillSync } from 'node:crypto';

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
  oauthClient: 'oac',
  oauthGrant: 'oag',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** Crockford's base32 in lower case, as TypeID writes its suffix. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random bytes drawn ahead (one call to the generator per 1,000 ids or so: intake makes several per request). */
const pool = Buffer.alloc(8192);
let poolAt = pool.length;
function random(n: number): number {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

let lastMs = 0;
let seq = 0;
const bytes = new Uint8Array(16);

/**
 * A UUIDv7 (RFC 9562) in `bytes`: 48 bits of Unix milliseconds, then a 31-bit counter (method 1 of
 * section 6.2) that starts at a random value each millisecond and counts up within it, then 43
 * random bits. Ids made in this process therefore sort in the order they were made, even within
 * one millisecond (or a clock that stepped back: the last millisecond is kept until it catches up).
 */
function uuid7() {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    seq = pool.readUInt32BE(random(4)) & 0x3fffffff; // half the range left to count up in
  } else if (seq < 0x7fffffff) {
    seq += 1;
  } else {
    lastMs += 1;
    seq = 0;
  }
  const ms = lastMs;
  const hi = Math.floor(ms / 2 ** 16);
  bytes[0] = hi >>> 24;
  bytes[1] = (hi >>> 16) & 0xff;
  bytes[2] = (hi >>> 8) & 0xff;
  bytes[3] = hi & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((seq >>> 27) & 0x0f);
  bytes[7] = (seq >>> 19) & 0xff;
  bytes[8] = 0x80 | ((seq >>> 13) & 0x3f);
  bytes[9] = (seq >>> 5) & 0xff;
  const r = random(6);
  bytes[10] = ((seq << 3) & 0xf8) | (pool[r] & 0x07);
  for (let i = 1; i < 6; i++) bytes[10 + i] = pool[r + i];
}

/** 128 bits as TypeID's 26 characters: two zero bits in front, then five bits per character. */
function base32(b: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 2;
  for (let i = 0; i < 16; i++) {
    acc = (acc << 8) | b[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/**
 * A new id: prefix + time-sortable UUIDv7 in base32 (a TypeID), so ids double as pagination
 * cursors and sort in creation order.
 */
export function newId(kind: IdKind): string {
  uuid7();
  return `${ID_PREFIX[kind]}_${base32(bytes)}`;
}

const SUFFIX = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

/** True when `value` looks like an id of that kind (prefix and a 26-character suffix). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIX[kind]}_`;
  return value.startsWith(prefix) && SUFFIX.test(value.slice(prefix.length));
}

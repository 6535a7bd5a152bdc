import crypto from 'node:crypto';

export const KEY_PREFIX = 'svc_live_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** n characters of base62, uniformly random. */
export function randomToken(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of crypto.randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** A new API key: svc_live_ + 40 random base62 characters; the visible prefix is its first 16 characters. */
export function newApiKeySecret() {
  const secret = `${KEY_PREFIX}${randomToken(40)}`;
  return { secret, prefix: secret.slice(0, KEY_PREFIX.length + 6), hash: sha256(secret) };
}

export function sixDigitCode(): string {
  return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

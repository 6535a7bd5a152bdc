import crypto from 'node:crypto';
import type { Database } from '../db/client.js';
import { serverKey } from '../domain/file-links.js';

/**
 * The signed render time of a form's page (`_rendered`): `<HMAC>.<issued unix ms>`, the HMAC over
 * the form id and the time with a server key (`server_secrets`, shared by every node), so a token
 * is good for its own form only and cannot be made up or moved in time. Verified without a read.
 */
const KEY_NAME = 'render_tokens';
/** 16 bytes of the HMAC (22 base64url characters): plenty against guessing, short in a form. */
const MAC_BYTES = 16;
const TOKEN_RE = /^([A-Za-z0-9_-]{22})\.(\d{13})$/;

/** The render-token key: read (or made) once per process, then kept. */
export function renderTokenKey(database: Database): Promise<Buffer> {
  return serverKey(database, KEY_NAME);
}

const mac = (key: Buffer, formId: string, issuedMs: number) =>
  crypto
    .createHmac('sha256', key)
    .update(`${formId}.${issuedMs}`)
    .digest()
    .subarray(0, MAC_BYTES)
    .toString('base64url');

/** A token for a page of `formId` shown at `nowMs`. */
export function issueRenderToken(key: Buffer, formId: string, nowMs: number): string {
  const issued = Math.floor(nowMs);
  return `${mac(key, formId, issued)}.${issued}`;
}

/**
 * Seconds since the token's page was shown, or `bad` when it does not verify (made up, altered, or
 * another form's). A token from a few seconds ahead (another node's clock) counts as just shown.
 */
export function renderAgeS(key: Buffer, formId: string, token: string, nowMs: number): number | 'bad' {
  const m = TOKEN_RE.exec(token);
  if (!m) return 'bad';
  const issued = Number(m[2]);
  const want = Buffer.from(mac(key, formId, issued));
  const got = Buffer.from(m[1]);
  if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return 'bad';
  return Math.max(0, (nowMs - issued) / 1000);
}

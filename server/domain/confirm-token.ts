import crypto from 'node:crypto';
import type { Database } from '../db/client.js';
import { serverKey } from './file-links.js';

/**
 * Double opt-in links: `/c/{submission id}.{expiry, unix seconds}.{HMAC}`. The HMAC key is a server
 * key (`server_secrets`), shared by every process of the database, so a link made by one is
 * checked by another and survives restarts. Nothing is stored per link: the token is computed
 * again whenever the confirmation mail is sent (a retry mails the same link), and it is used up
 * by the submission's own state (a confirmed submission is no longer pending).
 */
const KEY_NAME = 'confirm_links';

export const confirmKey = (database: Database) => serverKey(database, KEY_NAME);

const mac = (key: Buffer, submissionId: string, expires: number) =>
  crypto.createHmac('sha256', key).update(`confirm.${submissionId}.${expires}`).digest('base64url');

export function confirmToken(key: Buffer, submissionId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${submissionId}.${expires}.${mac(key, submissionId, expires)}`;
}

export type TokenCheck =
  | { ok: true; submissionId: string }
  | { ok: false; why: 'invalid' }
  | { ok: false; why: 'expired'; submissionId: string };

/** Whether a token is genuine (compared in constant time) and unexpired. */
export function checkConfirmToken(key: Buffer, token: string, now: Date): TokenCheck {
  const m = /^([A-Za-z0-9_-]{1,64})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return { ok: false, why: 'invalid' };
  const [, submissionId, exp, sig] = m;
  const want = Buffer.from(mac(key, submissionId, Number(exp)));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return { ok: false, why: 'invalid' };
  if (Number(exp) * 1000 <= now.getTime()) return { ok: false, why: 'expired', submissionId };
  return { ok: true, submissionId };
}

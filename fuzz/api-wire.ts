import fc from 'fast-check';
import { headerValue } from './arbitraries.js';

/** The request around a /v1 body: its encoding on the wire, Content-Type, credentials, Idempotency-Key. */

/** How the body goes on the wire: JSON mostly; sometimes cut, BOM-prefixed, bytes, huge, or not JSON at all. */
export const encoding = fc.oneof(
  { weight: 40, arbitrary: fc.constant<{ kind: 'json' }>({ kind: 'json' }) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ kind: 'cut' as const, at })) },
  { weight: 1, arbitrary: fc.constant<{ kind: 'bom' }>({ kind: 'bom' }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: 'bytes' as const, bytes })) },
  { weight: 1, arbitrary: fc.constant<{ kind: 'huge' }>({ kind: 'huge' }) },
  { weight: 1, arbitrary: fc.constant<{ kind: 'empty' }>({ kind: 'empty' }) },
);
export type Encoding = typeof encoding extends fc.Arbitrary<infer E> ? E : never;

export function encode(body: unknown, enc: Encoding): Uint8Array {
  const text = JSON.stringify(body) ?? 'null';
  const te = new TextEncoder();
  switch (enc.kind) {
    case 'json':
      return te.encode(text);
    case 'cut':
      return te.encode(text.slice(0, enc.at % Math.max(1, text.length)));
    case 'bom':
      return te.encode(`\ufeff${text}`);
    case 'bytes':
      return enc.bytes;
    case 'huge':
      return te.encode(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }));
    case 'empty':
      return new Uint8Array();
  }
}

export const contentType = fc.oneof(
  { weight: 40, arbitrary: fc.constant<string | null>('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom<string | null>(
      null,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

export type Auth = 'manage' | 'read' | 'none' | 'garbage' | 'basic' | 'lowercase' | 'sandbox';
export const auth = fc.oneof(
  { weight: 40, arbitrary: fc.constant<Auth>('manage') },
  { weight: 1, arbitrary: fc.constantFrom<Auth>('read', 'none', 'garbage', 'basic', 'lowercase', 'sandbox') },
);

/** Idempotency-Key on /v1: usually none; a small pool (replays and conflicts); garbage; out of bounds. */
export const idemKey = fc.oneof(
  { weight: 20, arbitrary: fc.constant<string | null>(null) },
  { weight: 1, arbitrary: fc.constantFrom<string | null>('pool-a', 'pool-b', 'pool-c') },
  { weight: 1, arbitrary: fc.oneof(headerValue, fc.constantFrom('', 'x'.repeat(255), 'x'.repeat(256))) },
);

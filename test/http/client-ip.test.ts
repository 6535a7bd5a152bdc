import crypto from 'node:crypto';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { limitKey } from '../../server/domain/limit-key.js';
import { forwardedClient, trustList } from '../../server/http/ip.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/** A proxy chain through the private network: loopback and private ranges trusted. */
const trusted = trustList(loadConfig({ TRUSTED_PROXIES: 'loopback,private' }).trustedProxies);
const peer = '127.0.0.1';

describe('TRUSTED_PROXIES', () => {
  it('trusts loopback only by default; `private` adds the private ranges, CIDRs are taken as written', () => {
    expect(loadConfig({}).trustedProxies).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ TRUSTED_PROXIES: 'loopback, Private' }).trustedProxies).toEqual([
      '127.0.0.0/8',
      '::1/128',
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      'fc00::/7',
    ]);
    expect(loadConfig({ TRUSTED_PROXIES: '10.1.0.0/16,loopback' }).trustedProxies).toEqual([
      '10.1.0.0/16',
      '127.0.0.0/8',
      '::1/128',
    ]);
    // By default a private address in the chain is a client, not a proxy: it cannot hide the hop before it.
    const byDefault = trustList(loadConfig({}).trustedProxies);
    expect(forwardedClient('203.0.113.5, 10.0.0.2', peer, byDefault)).toBe('10.0.0.2');
    expect(forwardedClient('203.0.113.5, 10.0.0.2', peer, trusted)).toBe('203.0.113.5');
  });
});

describe('X-Forwarded-For, read from the right past trusted proxies', () => {
  it('takes the first hop of an honest chain', () => {
    expect(forwardedClient('203.0.113.5', peer, trusted)).toBe('203.0.113.5');
    expect(forwardedClient('203.0.113.5, 10.0.0.2, 192.168.1.1', peer, trusted)).toBe('203.0.113.5');
  });

  it('ignores whatever a client wrote to the left of the address our proxy appended', () => {
    for (const forged of ['1.2.3.4', '5.6.7.8, 9.9.9.9', '10.0.0.1', 'junk']) {
      expect(forwardedClient(`${forged}, 198.51.100.7`, peer, trusted)).toBe('198.51.100.7');
      expect(forwardedClient(`${forged}, 198.51.100.7, 10.0.0.2`, peer, trusted)).toBe('198.51.100.7');
    }
  });

  it('takes the leftmost when every entry is trusted, and stops at an entry that is not an address', () => {
    expect(forwardedClient('10.1.1.1, 192.168.0.2', peer, trusted)).toBe('10.1.1.1');
    expect(forwardedClient('198.51.100.7, unknown, 10.0.0.2', peer, trusted)).toBe('10.0.0.2');
    expect(forwardedClient('unknown', peer, trusted)).toBe(peer);
    expect(forwardedClient('', peer, trusted)).toBe(peer);
    expect(forwardedClient(undefined, peer, trusted)).toBe(peer);
  });

  it('reads addresses with ports, brackets and IPv4-mapped IPv6', () => {
    expect(forwardedClient('198.51.100.4:5000', peer, trusted)).toBe('198.51.100.4');
    expect(forwardedClient('[2001:db8::1]:443', peer, trusted)).toBe('2001:db8::1');
    expect(forwardedClient('[2001:db8::2]', peer, trusted)).toBe('2001:db8::2');
    expect(forwardedClient('::ffff:198.51.100.9', peer, trusted)).toBe('198.51.100.9');
  });
});

describe('limitKey: what per-IP limits count by', () => {
  it('is an IPv4 address itself', () => {
    expect(limitKey('198.51.100.4')).toBe('198.51.100.4');
  });

  it('is the /64 of an IPv6 address, however it is written', () => {
    const key = limitKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002::', '2001:db8:1:2:0:0:0:9%eth0']) {
      expect(limitKey(same)).toBe(key);
    }
    expect(limitKey('2001:db8:1:3::1')).not.toBe(key);
    expect(limitKey('::1')).toBe('0:0:0:0::/64');
    expect(limitKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(limitKey('2001:db8:1:2:3:4:192.0.2.1')).toBe(key);
  });

  it('is a /64 that holds the address, for any way of writing one', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const k = limitKey(ip);
        expect(k).toMatch(/^([0-9a-f]{1,4}:){4}:\/64$/);
        const list = new net.BlockList();
        list.addSubnet(k.slice(0, -3), 64, 'ipv6');
        expect(list.check(ip, 'ipv6')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

/** A form of its own and a submission whose stored meta.ip is returned. */
async function metaIp(env: TestEnv, key: string, headers: Record<string, string>) {
  const f = await env.api('POST', '/v1/forms', key, { json: { name: `ip ${crypto.randomUUID().slice(0, 6)}` } });
  const r = await env.request('POST', `/s/${f.json.id}`, { json: { name: 'x' }, headers });
  expect(r.status, r.text).toBe(200);
  return (await env.api('GET', `/v1/submissions/${r.json.submission_id}`, key)).json.meta.ip;
}

describe('the client IP of a request (in-process requests come from 127.0.0.1)', () => {
  let t: TestEnv;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    key = (await t.onboard()).key;
  });
  afterAll(() => t.close());

  it('ignores cf-connecting-ip by default (CLIENT_IP_HEADER unset) and reads X-Forwarded-For from the right', async () => {
    const headers = { 'cf-connecting-ip': '203.0.113.200', 'x-forwarded-for': '1.2.3.4, 198.51.100.20' };
    expect(await metaIp(t, key, headers)).toBe('198.51.100.20');
  });

  it('reads CLIENT_IP_HEADER when it is set, from a trusted peer', async () => {
    const edge = await startTestApp({ CLIENT_IP_HEADER: 'CF-Connecting-IP' });
    try {
      const k = (await edge.onboard()).key;
      const headers = { 'cf-connecting-ip': '203.0.113.200', 'x-forwarded-for': '198.51.100.20' };
      expect(await metaIp(edge, k, headers)).toBe('203.0.113.200');
      // Not an address: X-Forwarded-For answers.
      expect(await metaIp(edge, k, { 'cf-connecting-ip': 'nope', 'x-forwarded-for': '198.51.100.21' })).toBe(
        '198.51.100.21',
      );
    } finally {
      await edge.close();
    }
  });

  it('uses the socket address when the peer is not a trusted proxy, whatever the headers say', async () => {
    const direct = await startTestApp({ TRUSTED_PROXIES: '10.0.0.0/8', CLIENT_IP_HEADER: 'cf-connecting-ip' });
    try {
      const k = (await direct.onboard()).key;
      const headers = { 'cf-connecting-ip': '203.0.113.200', 'x-forwarded-for': '198.51.100.20' };
      expect(await metaIp(direct, k, headers)).toBe('127.0.0.1');
    } finally {
      await direct.close();
    }
  });
});

describe('the code-request throttle and the sandbox allowance count the same client', () => {
  let t: TestEnv;
  beforeAll(async () => {
    t = await startTestApp({ CODE_REQUESTS_PER_IP: '1', SANDBOX_SOURCE_ALLOWANCE: '1' });
  });
  afterAll(() => t.close());

  const requestCode = (xff: string) =>
    t.request('POST', '/v1/auth/request-code', {
      json: { email: `ip-${crypto.randomUUID().slice(0, 8)}@example.com` },
      headers: { 'x-forwarded-for': xff },
    });
  const sandbox = (xff: string) =>
    t.request('POST', '/v1/public/sandboxes', {
      json: { name: 'ip box' },
      headers: { 'x-forwarded-for': xff, 'idempotency-key': crypto.randomUUID() },
    });

  it('throttles code requests whatever the client writes left of its address, and by /64', async () => {
    expect((await requestCode('1.1.1.1, 198.51.100.30')).status).toBe(200);
    expect((await requestCode('2.2.2.2, 198.51.100.30')).status).toBe(429);
    expect((await requestCode('2001:db8:c:d::1')).status).toBe(200);
    expect((await requestCode('2001:db8:c:d::2')).status).toBe(429);
    expect((await requestCode('198.51.100.31')).status).toBe(200);
  });

  it('holds the sandbox allowance whatever the client writes left of its address, and by /64', async () => {
    expect((await sandbox('1.1.1.1, 198.51.100.40')).status).toBe(201);
    const again = await sandbox('3.3.3.3, 198.51.100.40');
    expect(again.status).toBe(429);
    expect(again.json.error.code).toBe('rate_limited');
    expect((await sandbox('2001:db8:e:f::1')).status).toBe(201);
    expect((await sandbox('[2001:db8:e:f::99]:4000')).status).toBe(429);
    expect((await sandbox('198.51.100.41')).status).toBe(201);
  });
});

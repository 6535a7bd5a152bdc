import { afterAll, describe, expect, it } from 'vitest';
import { createOutbound } from '../../server/worker/outbound.js';
import { blockedKind, isBlockedAddress } from '../../server/worker/ssrf.js';
import { startReceiver } from '../helpers/receiver.js';

describe('SSRF guard: which addresses outbound calls may reach', () => {
  const blocked = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback range'],
    ['10.1.2.3', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'v6 loopback'],
    ['::', 'v6 unspecified'],
    ['fe80::1', 'v6 link-local'],
    ['fd12:3456::1', 'v6 unique local'],
    ['ff02::1', 'v6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback in hex'],
    ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped private, long form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['64:ff9b::a00:1', 'NAT64 of a private address'],
    ['2002:a00:1::1', '6to4 (tunnels to 10.0.0.1)'],
    ['2002:808:808::1', '6to4 of a public address, refused as a class'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['::ffff:0:a00:1', 'IPv4-translated (::ffff:0:0:0/96)'],
    ['::ffff:0:808:808', 'IPv4-translated public, refused as a class'],
    ['not-an-ip', 'not an address at all'],
  ];
  it.each(blocked)('refuses %s (%s)', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it('names the class of a refused address', () => {
    expect(blockedKind('2002:a00:1::1')).toBe('6to4');
    expect(blockedKind('2001:0:4136:e378::1')).toBe('Teredo');
    expect(blockedKind('::ffff:0:a00:1')).toBe('IPv4-translated');
    expect(blockedKind('::ffff:10.0.0.1')).toBe('IPv4-mapped private');
    expect(blockedKind('169.254.169.254')).toBe('link-local');
  });

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
  it.each(allowed)('allows the public address %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('outbound calls with private targets refused', () => {
  const guarded = createOutbound({ allowPrivate: false, timeoutMs: 2000 });
  afterAll(() => guarded.close());

  it('refuses a loopback target by literal IP and by name without the receiver seeing a request', async () => {
    const hook = await startReceiver();
    try {
      const port = new URL(hook.url).port;
      for (const url of [hook.url, `http://localhost:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`]) {
        const r = await guarded.post(url, '{}', { 'content-type': 'application/json' });
        expect(r, url).toMatchObject({ ok: false, status: null, refused: true });
        expect(r.error).toMatch(/refused/);
        expect(r.error).toMatch(/OUTBOUND_ALLOW_PRIVATE/);
        // The class only: never the address (or name) the lookup returned.
        expect(r.error).toMatch(/loopback/);
        expect(r.error).not.toMatch(/127\.0\.0\.1|::1|localhost|7f00/);
      }
      expect(hook.requests).toHaveLength(0);
    } finally {
      await hook.close();
    }
  });

  it('refuses schemes other than http and https', async () => {
    const r = await guarded.post('file:///etc/passwd', '', {});
    expect(r).toMatchObject({ ok: false, refused: true });
  });
});

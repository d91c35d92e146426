// The client's address behind a reverse proxy: X-Forwarded-For counts only when the socket peer is a
// trusted proxy, and then only its rightmost hop that is not itself trusted; a spoofed header from an
// untrusted peer changes nothing. The address is what the per-address rate limit keys on.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalIp, clientAddress, parseTrustedProxies, trustedProxySet } from '../../src/http/client-address';
import { configFromEnv } from '../../src/config';
import { publicRoute } from '../../src/http/route';
import { encodeParams, startTestServer, type TestServer } from '../helpers/server';

/** A route that answers with the address the server attributes the request to. */
const echoIp = publicRoute({
  method: 'GET',
  path: '/api/v1/test/client-address',
  handle: ({ ip }) => ({ ip }),
});

async function addressOf(t: TestServer, forwardedFor?: string): Promise<string> {
  const res = await t.raw('GET', '/api/v1/test/client-address', { headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['ip', 'msg', 'result']);
  return res.body.ip;
}

describe('client address (unit)', () => {
  it('spells each address one way', () => {
    assert.equal(canonicalIp('127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalIp('0000:0000:0000:0000:0000:0000:0000:0001'), '::1');
    assert.equal(canonicalIp('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
    assert.equal(canonicalIp('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(canonicalIp('2001:0DB8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
    assert.equal(canonicalIp('not an address'), '');
    assert.equal(canonicalIp(''), '');
    assert.equal(canonicalIp('fe80::1%eth0'), 'fe80::1');
    assert.equal(canonicalIp('FE80:0:0:0:0:0:0:1%1'), 'fe80::1');
  });

  it('walks X-Forwarded-For from the right past trusted hops', () => {
    const proxies = trustedProxySet(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    assert.equal(clientAddress('127.0.0.1', '203.0.113.7', proxies), '203.0.113.7');
    // What the client wrote on the left is ignored: the proxy appended the real peer.
    assert.equal(clientAddress('127.0.0.1', '198.51.100.1, 203.0.113.7', proxies), '203.0.113.7');
    // Several trusted proxies in a row.
    assert.equal(clientAddress('127.0.0.1', '198.51.100.1, 203.0.113.7, 10.1.1.1, fd00::5', proxies), '203.0.113.7');
    // Every hop trusted: the leftmost one.
    assert.equal(clientAddress('127.0.0.1', '10.9.9.9, 10.1.1.1', proxies), '10.9.9.9');
    // Ports, brackets, spaces and IPv6 spellings.
    assert.equal(clientAddress('127.0.0.1', ' 203.0.113.7:4321 ', proxies), '203.0.113.7');
    assert.equal(clientAddress('127.0.0.1', '[2001:DB8::0001]:443', proxies), '2001:db8::1');
    assert.equal(clientAddress('127.0.0.1', '::ffff:203.0.113.7', proxies), '203.0.113.7');
    // An entry that is not an address ends the walk at the last address a trusted hop vouched for.
    assert.equal(clientAddress('127.0.0.1', '203.0.113.7, garbage', proxies), '127.0.0.1');
    assert.equal(clientAddress('127.0.0.1', 'garbage, 10.1.1.1', proxies), '10.1.1.1');
    assert.equal(clientAddress('127.0.0.1', '', proxies), '127.0.0.1');
    // An untrusted peer, no header, or no proxies: the peer.
    assert.equal(clientAddress('192.0.2.1', '203.0.113.7', proxies), '192.0.2.1');
    assert.equal(clientAddress('127.0.0.1', undefined, proxies), '127.0.0.1');
    assert.equal(clientAddress('127.0.0.1', '203.0.113.7', null), '127.0.0.1');
    assert.equal(clientAddress('', '203.0.113.7', proxies), '');
  });

  it('reads the list and refuses what is not an address or range', () => {
    assert.deepEqual(parseTrustedProxies(' 127.0.0.1, ::1 ,10.0.0.0/8,,', 'X'), ['127.0.0.1', '::1', '10.0.0.0/8']);
    assert.deepEqual(parseTrustedProxies('', 'X'), []);
    assert.equal(trustedProxySet([]), null);
    for (const [bad, entry] of [
      ['localhost', 'localhost'],
      ['127.0.0.1, 10.0.0.0/33', '10.0.0.0/33'],
      ['::1/129', '::1/129'],
      ['10.0.0.0/', '10.0.0.0/'],
      ['10.0.0.0/8x', '10.0.0.0/8x'],
      ['1.2.3.4/-1', '1.2.3.4/-1'],
    ]) {
      assert.throws(() => parseTrustedProxies(bad, 'PARLEY_TRUSTED_PROXIES'), { message: `PARLEY_TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR range` });
    }
    assert.deepEqual(configFromEnv({}).trustedProxies, []);
    assert.deepEqual(configFromEnv({ PARLEY_TRUSTED_PROXIES: '127.0.0.1,::1' }).trustedProxies, ['127.0.0.1', '::1']);
    assert.throws(() => configFromEnv({ PARLEY_TRUSTED_PROXIES: 'proxy.local' }), { message: 'PARLEY_TRUSTED_PROXIES must be addresses or CIDR ranges separated by commas, like "127.0.0.1,::1", got "proxy.local"' });
  });
});

describe('client address behind a trusted proxy', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      extraRoutes: [echoIp],
      configure: (c) => {
        c.trustedProxies = ['127.0.0.1'];
        c.rateLimits = true;
        c.rateLimitRules = { ...c.rateLimitRules, apiByIp: [{ max: 2, windowMs: 3_600_000 }] };
      },
    });
  });
  after(() => t.close());

  it('takes the address the proxy appended', async () => {
    assert.equal(await addressOf(t), '127.0.0.1');
    assert.equal(await addressOf(t, '203.0.113.7'), '203.0.113.7');
    assert.equal(await addressOf(t, '198.51.100.66, 203.0.113.8'), '203.0.113.8');
  });

  it('takes an IPv6 hop with a zone id without failing the request (the zone is the proxy\'s interface)', async () => {
    // Finding: "fe80::1%eth0" passed net.isIP but made canonicalIp's URL throw, so any client of a
    // trusted proxy that writes zone ids (or sends one left of a garbage-free list) got a 500.
    assert.equal(await addressOf(t, 'fe80::1%eth0'), 'fe80::1');
    assert.equal(await addressOf(t, '[fe80::3%25eth0]:443'), 'fe80::3');
    assert.equal(await addressOf(t, '[FE80::0004%eth0]:443'), 'fe80::4');
    const res = await t.raw('GET', '/api/v1/server_settings', { headers: { 'x-forwarded-for': 'fe80::2%eth0' } });
    assert.equal(res.status, 200, res.text);
  });

  it('limits anonymous requests per forwarded address', async () => {
    const hit = async (xff: string) => (await t.raw('GET', '/api/v1/server_settings', { headers: { 'x-forwarded-for': xff } })).status;
    assert.deepEqual([await hit('192.0.2.10'), await hit('192.0.2.10'), await hit('192.0.2.10')], [200, 200, 429]);
    // Another client behind the same proxy has its own budget; a spoofed left part does not escape.
    assert.equal(await hit('192.0.2.11'), 200);
    assert.equal(await hit('198.51.100.1, 192.0.2.10'), 429);
    const limited = await t.raw('GET', '/api/v1/server_settings', { headers: { 'x-forwarded-for': '192.0.2.10' } });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMIT_HIT');
  });
});

describe('client address with no trusted proxy (the default)', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      extraRoutes: [echoIp],
      configure: (c) => {
        c.rateLimits = true;
        c.rateLimitRules = { ...c.rateLimitRules, apiByIp: [{ max: 2, windowMs: 3_600_000 }] };
      },
    });
  });
  after(() => t.close());

  it('ignores X-Forwarded-For: the socket peer is the client', async () => {
    assert.equal(await addressOf(t, '203.0.113.7'), '127.0.0.1');
    // A spoofed header does not buy a fresh rate-limit budget (the echo above was the first request).
    assert.equal((await t.raw('GET', '/api/v1/server_settings', { headers: { 'x-forwarded-for': '192.0.2.98' } })).status, 200);
    const res = await t.raw('GET', '/api/v1/server_settings', { headers: { 'x-forwarded-for': '192.0.2.99' } });
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'RATE_LIMIT_HIT');
  });
});

describe('client address behind an untrusted peer', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ extraRoutes: [echoIp], configure: (c) => (c.trustedProxies = ['10.0.0.1', '::1']) });
  });
  after(() => t.close());

  it('ignores X-Forwarded-For from a peer that is not in the list', async () => {
    assert.equal(await addressOf(t, '203.0.113.7'), '127.0.0.1');
  });
});

describe('the sign-up email limit per client address', () => {
  /** A server mailing at most one sign-up link a day per address, and a reusable invitation link. */
  async function signUpServer(trustedProxies: string[]) {
    const t = await startTestServer({
      configure: (c) => {
        c.trustedProxies = trustedProxies;
        c.rateLimits = true;
        c.rateLimitRules = { ...c.rateLimitRules, sendsEmailByIp: [{ max: 1, windowMs: 86_400_000 }] };
      },
    });
    const link = new URL((await t.api(t.users.admin, 'POST', '/invites/multiuse', {})).body.invite_link).pathname;
    const post = async (email: string, forwardedFor: string) =>
      (
        await fetch(t.url + link, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
          body: encodeParams({ email }),
        })
      ).status;
    return { t, post };
  }

  it('counts per forwarded address behind a trusted proxy', async () => {
    const { t, post } = await signUpServer(['127.0.0.1']);
    try {
      assert.equal(await post('one@example.org', '192.0.2.1'), 200);
      assert.equal(await post('two@example.org', '192.0.2.1'), 429);
      assert.equal(await post('two@example.org', '198.51.100.9, 192.0.2.1'), 429);
      assert.equal(await post('two@example.org', '192.0.2.2'), 200);
    } finally {
      await t.close();
    }
  });

  it('counts per socket peer otherwise, whatever the header says', async () => {
    const { t, post } = await signUpServer([]);
    try {
      assert.equal(await post('one@example.org', '192.0.2.1'), 200);
      assert.equal(await post('two@example.org', '192.0.2.2'), 429);
    } finally {
      await t.close();
    }
  });
});

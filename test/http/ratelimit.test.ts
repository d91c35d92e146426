import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRule, RateLimiter, RULES } from '../../src/http/ratelimit';
import { configFromEnv } from '../../src/config';
import { startTestServer, type TestServer } from '../helpers/server';

describe('RateLimiter', () => {
  it('allows max requests per window, then refuses with the wait until a slot frees', () => {
    const rl = new RateLimiter(true);
    const rules = [{ max: 3, windowMs: 10_000 }];
    assert.deepEqual(rl.hit('k', rules, 1000), { allowed: true, limit: 3, remaining: 2, reset: 11, retryAfter: 0 });
    assert.equal(rl.hit('k', rules, 2000).remaining, 1);
    assert.equal(rl.hit('k', rules, 3000).remaining, 0);
    assert.deepEqual(rl.hit('k', rules, 4000), { allowed: false, limit: 3, remaining: 0, reset: 11, retryAfter: 7 });
    // The first request leaves the window at 11 s.
    assert.equal(rl.hit('k', rules, 11_001).allowed, true);
  });

  it('applies the strictest of several rules', () => {
    const rl = new RateLimiter(true);
    const t = 0;
    assert.equal(rl.hit('e', RULES.emailChangeByUser, t).allowed, true);
    assert.equal(rl.hit('e', RULES.emailChangeByUser, t + 1).allowed, true);
    const third = rl.hit('e', RULES.emailChangeByUser, t + 2);
    assert.equal(third.allowed, false);
    assert.equal(third.limit, 2);
  });

  it('keeps keys apart and does nothing when disabled', () => {
    const rl = new RateLimiter(true);
    const rules = [{ max: 1, windowMs: 1000 }];
    assert.equal(rl.hit('a', rules, 0).allowed, true);
    assert.equal(rl.hit('b', rules, 0).allowed, true);
    assert.equal(rl.hit('a', rules, 1).allowed, false);
    const off = new RateLimiter(false);
    for (let i = 0; i < 10; i++) assert.equal(off.hit('a', rules, 0).allowed, true);
  });
});

describe('rate limits over HTTP', () => {
  let t: TestServer;
  let now = Date.UTC(2026, 0, 1);
  before(async () => {
    t = await startTestServer({ configure: (c) => (c.rateLimits = true), clock: { nowMs: () => now } });
  });
  after(() => t.close());

  it('limits each user to 200 requests a minute with 429 RATE_LIMIT_HIT, Retry-After and X-RateLimit-* headers', async () => {
    const u = t.users.othello;
    for (let i = 0; i < 200; i++) {
      const res = await t.api(u, 'GET', '/users/me');
      assert.equal(res.status, 200);
      if (i === 0) {
        assert.equal(res.headers.get('x-ratelimit-limit'), '200');
        assert.equal(res.headers.get('x-ratelimit-remaining'), '199');
        assert.equal(res.headers.get('x-ratelimit-reset'), String(Math.ceil((now + 60_000) / 1000)));
      }
    }
    now += 1500;
    const res = await t.api(u, 'GET', '/users/me');
    assert.equal(res.status, 429);
    assert.deepEqual(res.body, { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT', 'retry-after': 58.5 });
    assert.equal(res.headers.get('retry-after'), '58.5');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    // Another user is not affected; after the window the user is served again.
    assert.equal((await t.api(t.users.hamlet, 'GET', '/users/me')).status, 200);
    now += 60_000;
    assert.equal((await t.api(u, 'GET', '/users/me')).status, 200);
  });

  it('limits unauthenticated requests per address to 100 a minute', async () => {
    now += 120_000;
    for (let i = 0; i < 100; i++) assert.equal((await t.api(null, 'GET', '/server_settings')).status, 200);
    const res = await t.api(null, 'GET', '/server_settings');
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'RATE_LIMIT_HIT');
  });

  it('refuses a login name after 5 failed attempts in 30 minutes, even with the right password', async () => {
    now += 120_000;
    const u = t.users.guest;
    for (let i = 0; i < 5; i++) {
      const res = await t.api(null, 'POST', '/fetch_api_key', { username: u.email, password: 'wrong' });
      assert.equal(res.status, 401);
    }
    now += 1000;
    const res = await t.api(null, 'POST', '/fetch_api_key', { username: u.email, password: u.password });
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'RATE_LIMIT_HIT');
    assert.equal(res.body['retry-after'], 1799);
    now += 1_800_000;
    assert.equal((await t.api(null, 'POST', '/fetch_api_key', { username: u.email, password: u.password })).status, 200);
  });
});

describe('configured thresholds', () => {
  it('parses N/S rules and refuses anything else', () => {
    assert.deepEqual(parseRule('30/10', 'X'), [{ max: 30, windowMs: 10_000 }]);
    assert.throws(() => parseRule('30 per 10', 'PARLEY_RATE_LIMIT_USER'), /PARLEY_RATE_LIMIT_USER must look like 200\/60/);
    assert.throws(() => parseRule('0/10', 'X'));
    assert.deepEqual(configFromEnv({ PARLEY_RATE_LIMIT_LOGIN: '2/60' }).rateLimitRules.authenticateByUsername, [{ max: 2, windowMs: 60_000 }]);
    assert.deepEqual(configFromEnv({ PARLEY_RATE_LIMIT_EMAIL_IP: '20/3600' }).rateLimitRules.sendsEmailByIp, [{ max: 20, windowMs: 3_600_000 }]);
    const { apiByUser, apiByIp, authenticateByUsername, sendsEmailByIp } = RULES;
    assert.deepEqual(configFromEnv({}).rateLimitRules, { apiByUser, apiByIp, authenticateByUsername, sendsEmailByIp });
  });

  it('applies a configured per-user limit', async () => {
    const s = await startTestServer({
      configure: (c) => {
        c.rateLimits = true;
        c.rateLimitRules = { ...RULES, apiByUser: [{ max: 3, windowMs: 60_000 }] };
      },
    });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await s.api(s.users.hamlet, 'GET', '/users/me')).status, 200);
      const res = await s.api(s.users.hamlet, 'GET', '/users/me');
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('x-ratelimit-limit'), '3');
    } finally {
      await s.close();
    }
  });
});

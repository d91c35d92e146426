// GET /metrics: 404 unless the metrics setting is on; then Prometheus' text format for loopback clients
// (or for a bearer token when one is set), with request counters by route pattern (never the raw path),
// a latency histogram, event queues, parked polls, messages sent, database and WAL sizes, and
// prom-client's process metrics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopback } from '../../src/api/metrics';
import { parseRule } from '../../src/http/ratelimit';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

const NOT_FOUND = { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' };
const DENIED = { result: 'error', msg: 'Access denied', code: 'BAD_REQUEST' };

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

async function scrape(t: TestServer, headers: Record<string, string> = {}): Promise<string> {
  const res = await t.raw('GET', '/metrics', { headers });
  assert.equal(res.status, 200, res.text);
  return res.text;
}

describe('GET /metrics, off (the default)', () => {
  let t: TestServer;
  before(async () => (t = await startTestServer()));
  after(() => t.close());

  it('answers 404 like an unknown path, to anyone', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: basicAuth(t.users.owner) }]) {
      const res = await t.raw('GET', '/metrics', { headers });
      assert.deepEqual([res.status, res.body], [404, NOT_FOUND]);
    }
    assert.equal(t.app.metrics, null);
  });
});

describe('GET /metrics, on without a token', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      configure: (c) => {
        c.metrics = true;
        c.rateLimits = true;
        c.rateLimitRules = { ...c.rateLimitRules, apiByIp: parseRule('2/60', 'test') };
      },
    });
  });
  after(() => t.close());

  it("serves Prometheus' text format to a loopback client, not cacheable, with every expected metric", async () => {
    const res = await t.raw('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    for (const name of [
      'parley_http_requests_total',
      'parley_http_request_duration_seconds',
      'parley_event_queues',
      'parley_parked_polls',
      'parley_messages_sent_total',
      'parley_database_bytes',
      'parley_database_wal_bytes',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(res.text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.ok((sample(res.text, 'parley_database_bytes') ?? 0) > 0);
    assert.ok(sample(res.text, 'parley_database_wal_bytes') !== undefined);
  });

  it('counts requests by method, route pattern and status (not by raw path), with a latency histogram', async () => {
    const owner = t.users.owner;
    const series = 'parley_http_requests_total{method="GET",route="/api/v1/users/{user_id}",status="200"}';
    const before = sample(await scrape(t), series) ?? 0;
    for (const user of [t.users.hamlet, t.users.othello, t.users.admin]) {
      assert.equal((await t.api(owner, 'GET', `/users/${user.id}`)).status, 200);
    }
    assert.equal((await t.api(owner, 'GET', '/users/999999')).status, 400);
    assert.equal((await t.raw('GET', '/no/such/path/12345')).status, 404);
    assert.equal((await t.raw('PUT', '/api/v1/users/me')).status, 405);
    const text = await scrape(t);
    assert.equal(sample(text, series), before + 3);
    assert.equal(sample(text, 'parley_http_requests_total{method="GET",route="/api/v1/users/{user_id}",status="400"}'), 1);
    assert.equal(sample(text, 'parley_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
    assert.equal(sample(text, 'parley_http_requests_total{method="PUT",route="unmatched",status="405"}'), 1);
    assert.doesNotMatch(text, /route="\/(no\/|api\/v1\/users\/\d)/);
    assert.equal(sample(text, 'parley_http_request_duration_seconds_count{method="GET",route="/api/v1/users/{user_id}"}'), before + 4);
    assert.equal(sample(text, 'parley_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/v1/users/{user_id}"}'), before + 4);
  });

  it('counts messages sent, live event queues and parked polls', async () => {
    const before = await scrape(t);
    const queues = sample(before, 'parley_event_queues') ?? 0;
    const sent = sample(before, 'parley_messages_sent_total') ?? 0;
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { event_types: ['message'], fetch_event_types: [] });
    assert.equal(reg.status, 200, reg.text);
    const poll = t.api(t.users.hamlet, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: -1 });
    for (let i = 0; i < 200 && t.app.queues.parkedCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const parked = await scrape(t);
    assert.equal(sample(parked, 'parley_event_queues'), queues + 1);
    assert.equal(sample(parked, 'parley_parked_polls'), 1);
    const msg = await t.api(t.users.othello, 'POST', '/messages', { type: 'direct', to: [t.users.hamlet.id], content: 'hi' });
    assert.equal(msg.status, 200, msg.text);
    assert.equal((await poll).status, 200);
    const after = await scrape(t);
    assert.equal(sample(after, 'parley_messages_sent_total'), sent + 1);
    assert.equal(sample(after, 'parley_parked_polls'), 0);
  });

  it('is never rate limited', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.raw('GET', '/metrics')).status);
    assert.deepEqual(statuses, Array(6).fill(200));
  });
});

describe('GET /metrics, on without a token, behind a reverse proxy on the same box', () => {
  // Every proxied request arrives from loopback: a request that says it was forwarded is not a local
  // client, whether or not the operator listed the proxy in trusted_proxies.
  for (const trustedProxies of [[], ['127.0.0.1', '::1']]) {
    describe(`trusted_proxies = [${trustedProxies.join(', ')}]`, () => {
      let t: TestServer;
      before(async () => {
        t = await startTestServer({
          configure: (c) => {
            c.metrics = true;
            c.trustedProxies = trustedProxies;
          },
        });
      });
      after(() => t.close());

      it('refuses a request that came through a proxy (X-Forwarded-For, Forwarded, X-Real-IP), even one naming loopback', async () => {
        for (const headers of <Record<string, string>[]>[
          { 'x-forwarded-for': '203.0.113.9' },
          { 'x-forwarded-for': '127.0.0.1' },
          { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' },
          { forwarded: 'for=203.0.113.9;proto=https' },
          { 'x-real-ip': '203.0.113.9' },
        ]) {
          const res = await t.raw('GET', '/metrics', { headers });
          assert.deepEqual([res.status, res.body], [403, DENIED], JSON.stringify(headers));
        }
        await scrape(t);
      });
    });
  }
});

describe('GET /metrics, on with a token', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      configure: (c) => {
        c.metrics = true;
        c.metricsToken = 's3cret-token';
      },
    });
  });
  after(() => t.close());

  it('wants the bearer token, even from loopback', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: 's3cret-token' }, { authorization: basicAuth(t.users.owner) }]) {
      const res = await t.raw('GET', '/metrics', { headers });
      assert.deepEqual([res.status, res.body], [403, DENIED], JSON.stringify(headers));
    }
    const text = await scrape(t, { authorization: 'Bearer s3cret-token' });
    assert.match(text, /^# TYPE parley_http_requests_total counter$/m);
  });
});

describe('isLoopback', () => {
  it('accepts 127.0.0.0/8 and ::1 in the forms uWS gives, nothing else', () => {
    for (const ip of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '0000:0000:0000:0000:0000:0000:0000:0001', '0000:0000:0000:0000:0000:ffff:7f00:0001']) {
      assert.equal(isLoopback(ip), true, ip);
    }
    for (const ip of ['10.0.0.1', '192.168.1.127', '::ffff:10.0.0.1', '0000:0000:0000:0000:0000:ffff:0a00:0001', '2001:db8::1', '', '128.0.0.1']) {
      assert.equal(isLoopback(ip), false, ip);
    }
  });
});

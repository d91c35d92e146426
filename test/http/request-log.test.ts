// The request log: one line per request (JSON and text formats) with its request id, also in the
// X-Request-Id header of every reply; secrets in paths and query strings never logged; server errors
// logged once with their stack; long-polls logged when answered (or abandoned); levels.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { publicRoute } from '../../src/http/route';
import { doCreatePasswordLink } from '../../src/actions/password-links';
import { registerQueue } from '../helpers/events';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

const ID = /^[0-9a-f]{8}-[0-9a-z]+$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let t: TestServer;
let lines: string[] = [];

const crashRoute = publicRoute({
  method: 'GET',
  path: '/api/v1/test/crash',
  handle() {
    throw new Error('the disk caught fire');
  },
});

/** Values no one can print: String() of each throws (a null-prototype object, a throwing toString or stack). */
const unprintable = (): unknown[] => [
  Object.create(null),
  {
    toString() {
      throw new Error('cannot print me');
    },
  },
  Object.defineProperty(new Error('hidden'), 'stack', {
    get() {
      throw new Error('no stack for you');
    },
  }),
];
const unprintableRoutes = [0, 1, 2].flatMap((i) => [
  publicRoute({
    method: 'GET',
    path: `/api/v1/test/unprintable/${i}`,
    handle() {
      throw unprintable()[i];
    },
  }),
  publicRoute({
    method: 'GET',
    path: `/api/v1/test/unprintable-async/${i}`,
    async handle() {
      await null;
      throw unprintable()[i];
    },
  }),
]);

before(async () => {
  t = await startTestServer({
    configure: (c) => {
      c.logFormat = 'json';
      c.logLevel = 'info';
      c.heartbeatSeconds = 60;
    },
    logSink: (line) => lines.push(line),
    extraRoutes: [crashRoute, ...unprintableRoutes],
  });
});
after(() => t.close());

/** Lets the line written after the reply land, then returns (and forgets) every line so far, parsed. */
async function take(): Promise<Record<string, any>[]> {
  await new Promise((r) => setImmediate(r));
  const out = lines.map((l) => {
    assert.ok(l.endsWith('\n') && l.indexOf('\n') === l.length - 1, `one line: ${JSON.stringify(l)}`);
    return JSON.parse(l);
  });
  lines = [];
  return out;
}

/** A request line with its varying fields checked and normalised. */
function normal(line: Record<string, any>): Record<string, any> {
  assert.match(line.time, TIME);
  assert.match(line.request_id, ID);
  assert.equal(typeof line.duration_ms, 'number');
  assert.ok(line.duration_ms >= 0);
  return { ...line, time: 'T', duration_ms: 0 };
}

async function until<T>(what: string, fn: () => T | undefined): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the request log (JSON)', () => {
  it('logs a success with method, path, status, duration, user id and the id of X-Request-Id (the user stands for the address)', async () => {
    await take();
    const res = await t.api(t.users.hamlet, 'GET', '/users/me');
    assert.equal(res.status, 200);
    const [line, ...rest] = await take();
    assert.deepEqual(rest, []);
    assert.deepEqual(normal(line), {
      time: 'T',
      level: 'info',
      msg: 'request',
      request_id: res.headers.get('x-request-id'),
      method: 'GET',
      path: '/api/v1/users/me',
      status: 200,
      duration_ms: 0,
      user_id: t.users.hamlet.id,
      ip: null,
    });
  });

  it('logs client errors with the address: 401 without a user, 400 with the user, 404 and 405 with the raw path', async () => {
    await take();
    const unauth = await t.api(null, 'GET', '/users/me');
    const bad = await t.api(t.users.hamlet, 'GET', '/messages', { anchor: 'sideways', num_before: 0, num_after: 0 });
    const missing = await t.raw('GET', '/api/v1/no/such/thing');
    const method = await t.raw('PUT', '/api/v1/users/me', { headers: { authorization: basicAuth(t.users.hamlet) } });
    assert.deepEqual([unauth.status, bad.status, missing.status, method.status], [401, 400, 404, 405]);
    const got = (await take()).map(normal);
    assert.deepEqual(got, [
      { time: 'T', level: 'info', msg: 'request', request_id: unauth.headers.get('x-request-id'), method: 'GET', path: '/api/v1/users/me', status: 401, duration_ms: 0, user_id: null, ip: '127.0.0.1' },
      {
        time: 'T',
        level: 'info',
        msg: 'request',
        request_id: bad.headers.get('x-request-id'),
        method: 'GET',
        path: '/api/v1/messages?anchor&num_before&num_after',
        status: 400,
        duration_ms: 0,
        user_id: t.users.hamlet.id,
        ip: '127.0.0.1',
      },
      { time: 'T', level: 'info', msg: 'request', request_id: missing.headers.get('x-request-id'), method: 'GET', path: '/api/v1/no/such/thing', status: 404, duration_ms: 0, user_id: null, ip: '127.0.0.1' },
      { time: 'T', level: 'info', msg: 'request', request_id: method.headers.get('x-request-id'), method: 'PUT', path: '/api/v1/users/me', status: 405, duration_ms: 0, user_id: null, ip: '127.0.0.1' },
    ]);
  });

  it('logs a server error once with its stack and the request id the client got; the reply has no internals', async () => {
    await take();
    const res = await t.raw('GET', '/api/v1/test/crash?api_key=hunter2');
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
    const id = res.headers.get('x-request-id');
    assert.match(id!, ID);
    const [error, request, ...rest] = await take();
    assert.deepEqual(rest, []);
    assert.match(error.stack, /^Error: the disk caught fire\n {4}at /);
    assert.match(error.time, TIME);
    assert.deepEqual({ ...error, time: 'T', stack: 'S' }, {
      time: 'T',
      level: 'error',
      msg: 'unexpected error',
      request_id: id,
      method: 'GET',
      path: '/api/v1/test/crash?api_key',
      stack: 'S',
    });
    assert.deepEqual(normal(request), {
      time: 'T',
      level: 'info',
      msg: 'request',
      request_id: id,
      method: 'GET',
      path: '/api/v1/test/crash?api_key',
      status: 500,
      duration_ms: 0,
      user_id: null,
      ip: '127.0.0.1',
    });
    assert.doesNotMatch(res.text, /fire/);
  });

  it('answers 500 and logs the error line when a handler throws a value that cannot be printed (sync or async)', async () => {
    for (const kind of ['unprintable', 'unprintable-async']) {
      for (const i of [0, 1, 2]) {
        await take();
        // Before, the async ones never got a reply (and the rejection escaped): give up rather than hang.
        let timer: NodeJS.Timeout | undefined;
        const res = await Promise.race([
          t.raw('GET', `/api/v1/test/${kind}/${i}`),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${kind}/${i}: no reply`)), 5000))),
        ]);
        clearTimeout(timer);
        assert.deepEqual([res.status, res.body], [500, { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }]);
        const id = res.headers.get('x-request-id');
        const [error, request, ...rest] = await take();
        assert.deepEqual(rest, []);
        assert.equal(typeof error.stack, 'string');
        assert.deepEqual({ ...error, time: 'T', stack: 'S' }, { time: 'T', level: 'error', msg: 'unexpected error', request_id: id, method: 'GET', path: `/api/v1/test/${kind}/${i}`, stack: 'S' });
        assert.deepEqual([request.request_id, request.status], [id, 500]);
      }
    }
  });

  it('escapes the Unicode line breaks and direction overrides a client puts raw in its path (uWS passes UTF-8 through)', async () => {
    await take();
    const path = '/a\u2028b\u0085c\u202ed';
    // fetch would percent-encode the path: the raw bytes go over a socket.
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => socket.end(Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, 'utf8')));
      let got = '';
      socket.on('data', (d) => (got += d));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    assert.match(reply, /^HTTP\/1\.1 404 /);
    const raw = lines.join('');
    assert.doesNotMatch(raw, /[\u0085\u2028\u202e]/);
    const [line, ...rest] = await take();
    assert.deepEqual(rest, []);
    assert.deepEqual([line.path, line.status], [path, 404]);
  });

  it('never logs query values, credentials in paths, bodies or headers', async () => {
    await take();
    const h = t.users.hamlet;
    const requests = [
      t.raw('GET', `/api/v1/users/me?api_key=${h.apiKey}&password=sw0rdfish&token=t0ken`),
      t.raw('GET', '/join/sekritinvitationkey12345/'),
      t.raw('GET', '/accounts/confirm_new_email/sekritconfirmationkey'),
      t.raw('GET', '/user_uploads/temporary/sekrittoken/file.txt'),
      t.raw('GET', '/user_uploads/temporary/sekrittoken'),
      t.raw('POST', '/api/v1/fetch_api_key', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `username=${encodeURIComponent(h.email)}&password=${encodeURIComponent(h.password)}`,
      }),
      t.api(h, 'GET', '/users/me'),
    ];
    const answers = await Promise.all(requests);
    const all = lines.join('');
    const got = await take();
    // Concurrent requests: compared sorted.
    assert.deepEqual(
      got.map((l) => l.path).sort(),
      [
        '/api/v1/users/me?api_key&password&token',
        '/join/[redacted]',
        '/accounts/confirm_new_email/[redacted]',
        '/user_uploads/temporary/[redacted]',
        '/user_uploads/temporary/[redacted]',
        '/api/v1/fetch_api_key',
        '/api/v1/users/me',
      ].sort(),
    );
    for (const secret of [h.apiKey, 'sw0rdfish', 't0ken', 'sekrit', h.password, basicAuth(h).slice(6)]) {
      assert.ok(!all.includes(secret), `${secret} is in the log`);
    }
    assert.deepEqual(new Set(got.map((l) => l.request_id)), new Set(answers.map((a) => a.headers.get('x-request-id'))));
  });

  it("never logs a set-password link's key (the links `parley import` prints), on the form or its post, valid or not", async () => {
    await take();
    const key = doCreatePasswordLink(t.app, t.users.othello.id);
    t.app.batch.commit();
    const form = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=x' };
    const answers = [
      await t.raw('GET', `/accounts/password/set/${key}/`),
      await t.raw('POST', `/accounts/password/set/${key}/`, form),
      await t.raw('GET', '/accounts/password/set/sekritguessedkey/'),
      await t.raw('GET', '//Accounts/password/set/sekritmangledkey'),
    ];
    assert.deepEqual(answers.map((a) => a.status), [200, 400, 404, 404]);
    const all = lines.join('');
    const got = await take();
    assert.deepEqual(got.map((l) => l.path), ['/accounts/password/set/[redacted]', '/accounts/password/set/[redacted]', '/accounts/password/set/[redacted]', '/accounts/password/set/[redacted]']);
    assert.ok(!all.includes(key) && !all.includes('sekrit'), all);
  });

  it('redacts a credential route reached by a mangled path too (doubled slashes, capitals, escapes): no key logged, even where the router matched the escaped spelling', async () => {
    await take();
    const paths = ['//join/sekritkey1/', '/JOIN/sekritkey2', '/%6Aoin/sekritkey3', '/accounts//confirm_new_email/sekritkey4', '/User_Uploads/temporary/sekrittoken5/f.txt', '/json//tus/sekritid'];
    const answers = await Promise.all(paths.map((path) => t.raw('GET', path)));
    assert.deepEqual(answers.map((a) => a.status), paths.map(() => 404));
    const all = lines.join('');
    const got = await take();
    assert.deepEqual(
      got.map((l) => l.path).sort(),
      ['/join/[redacted]', '/join/[redacted]', '/join/[redacted]', '/accounts/confirm_new_email/[redacted]', '/user_uploads/temporary/[redacted]', '/json//tus/sekritid'].sort(),
    );
    assert.ok(!/sekrit(key|token)/.test(all), all);
  });

  it("never logs a data export's download token, on the route or a mangled path (the token sits after the realm id)", async () => {
    await take();
    const owner = t.users.owner;
    const auth = { headers: { authorization: basicAuth(owner) } };
    const paths = ['/user_avatars/exports/1/sekrittoken1/zulip-export-0.tar.gz', '//user_avatars/exports/1/sekrittoken2/x.tar.gz', '/User_Avatars/exports/1/sekrittoken3/x.tar.gz'];
    const answers = await Promise.all(paths.map((path) => t.raw('GET', path, auth)));
    assert.deepEqual(answers.map((a) => a.status), [404, 404, 404]);
    const all = lines.join('');
    const got = await take();
    assert.deepEqual(got.map((l) => l.path), paths.map(() => '/user_avatars/exports/[redacted]'));
    assert.ok(!all.includes('sekrit'), all);
  });

  it('puts a distinct X-Request-Id on every reply: success, error, OPTIONS, HEAD, pages, health', async () => {
    await take();
    const answers = await Promise.all([
      t.api(t.users.hamlet, 'GET', '/users/me'),
      t.raw('GET', '/api/v1/nope'),
      t.raw('OPTIONS', '/api/v1/users/me'),
      t.raw('HEAD', '/api/v1/server_settings'),
      t.raw('GET', '/login'),
      t.raw('GET', '/health'),
    ]);
    const ids = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of ids) assert.match(id ?? '', ID);
    assert.equal(new Set(ids).size, ids.length);
    const logged = (await take()).map((l) => l.request_id);
    assert.deepEqual(new Set(logged), new Set(ids));
  });

  it('logs a long-poll when it is answered, with the time it waited', async () => {
    const queueId = await registerQueue(t, t.users.hamlet, ['typing']);
    await take();
    const poll = t.api(t.users.hamlet, 'GET', '/events', { queue_id: queueId, last_event_id: -1 });
    await until('the poll to park', () => (t.app.queues.parkedCount() === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual((await take()).map((l) => l.path), [], 'nothing logged while the poll waits');
    const typing = await t.api(t.users.othello, 'POST', '/typing', { op: 'start', to: [t.users.hamlet.id] });
    assert.equal(typing.status, 200);
    const answered = await poll;
    assert.equal(answered.status, 200);
    const got = await take();
    const line = got.find((l) => l.path.startsWith('/api/v1/events'));
    assert.ok(line, JSON.stringify(got));
    assert.deepEqual(normal(line), {
      time: 'T',
      level: 'info',
      msg: 'request',
      request_id: answered.headers.get('x-request-id'),
      method: 'GET',
      path: '/api/v1/events?queue_id&last_event_id',
      status: 200,
      duration_ms: 0,
      user_id: t.users.hamlet.id,
      ip: null,
    });
    assert.ok(line.duration_ms >= 10, `waited ${line.duration_ms} ms`);
  });

  it('logs each poll a fan-out answers once, after the replies, with the time its reply went out', async () => {
    const users = [t.users.hamlet, t.users.othello, t.users.moderator];
    const queueIds = await Promise.all(users.map((u) => registerQueue(t, u, ['typing'])));
    await take();
    const polls = users.map((u, i) => t.api(u, 'GET', '/events', { queue_id: queueIds[i], last_event_id: -1 }));
    await until('the polls to park', () => (t.app.queues.parkedCount() === users.length ? true : undefined));
    const start = Date.now();
    const typing = await t.api(t.users.admin, 'POST', '/typing', { op: 'start', to: users.map((u) => u.id) });
    assert.equal(typing.status, 200);
    const answered = await Promise.all(polls);
    const end = Date.now();
    for (const a of answered) assert.equal(a.status, 200);
    const got = (await take()).filter((l) => l.path.startsWith('/api/v1/events'));
    assert.deepEqual(got.map((l) => l.request_id).sort(), answered.map((a) => a.headers.get('x-request-id')).sort());
    for (const line of got) {
      assert.deepEqual(normal(line), {
        time: 'T',
        level: 'info',
        msg: 'request',
        request_id: line.request_id,
        method: 'GET',
        path: '/api/v1/events?queue_id&last_event_id',
        status: 200,
        duration_ms: 0,
        user_id: line.user_id,
        ip: null,
      });
      const at = Date.parse(line.time);
      assert.ok(at >= start && at <= end, `${line.time} within the fan-out`);
    }
    assert.deepEqual(got.map((l) => l.user_id).sort(), users.map((u) => u.id).sort());
  });

  it('logs a long-poll the client abandoned as 499', async () => {
    const queueId = await registerQueue(t, t.users.hamlet, ['typing']);
    await take();
    const abort = new AbortController();
    const poll = fetch(`${t.url}/api/v1/events?queue_id=${queueId}&last_event_id=-1`, {
      headers: { authorization: basicAuth(t.users.hamlet) },
      signal: abort.signal,
    }).catch(() => 'aborted');
    await until('the poll to park', () => (t.app.queues.parkedCount() === 1 ? true : undefined));
    abort.abort();
    assert.equal(await poll, 'aborted');
    const line = await until('the 499 line', () => {
      const l = lines.find((x) => x.includes('/api/v1/events'));
      return l === undefined ? undefined : JSON.parse(l);
    });
    await take();
    assert.deepEqual(normal(line), {
      time: 'T',
      level: 'info',
      msg: 'request',
      request_id: line.request_id,
      method: 'GET',
      path: '/api/v1/events?queue_id&last_event_id',
      status: 499,
      duration_ms: 0,
      user_id: t.users.hamlet.id,
      ip: null,
    });
  });
});

describe('the request log (text) and levels', () => {
  it('writes one readable line per request: time, level, address, user, method, path, status, duration, id', async () => {
    const text: string[] = [];
    const s = await startTestServer({ configure: (c) => (c.logFormat = 'text'), logSink: (l) => text.push(l), extraRoutes: [crashRoute] });
    try {
      const me = await s.api(s.users.othello, 'GET', '/users/me');
      const weird = await s.raw('GET', '/api/v1/a%0Ab%20c?x=%0A1&&=2&y');
      const crash = await s.raw('GET', '/api/v1/test/crash');
      await new Promise((r) => setImmediate(r));
      assert.equal(text.length, 4, text.join(''));
      const meId = me.headers.get('x-request-id');
      assert.match(text[0], new RegExp(`^\\S+Z info - user=${s.users.othello.id} GET /api/v1/users/me 200 [\\d.]+ms id=${meId}\\n$`));
      assert.match(text[1], new RegExp(`^\\S+Z info 127\\.0\\.0\\.1 user=- GET /api/v1/a%0Ab%20c\\?x&y 404 [\\d.]+ms id=${weird.headers.get('x-request-id')}\\n$`));
      const crashId = crash.headers.get('x-request-id');
      // The error line, then its stack on indented lines; the request line after it.
      const [head, stackHead, ...stack] = text[2].trimEnd().split('\n');
      assert.match(head, new RegExp(`^\\S+Z error unexpected error request_id=${crashId} method=GET path=/api/v1/test/crash$`));
      assert.equal(stackHead, '  Error: the disk caught fire');
      assert.ok(stack.length > 0 && stack.every((l) => l.startsWith('      at ')), stack.join('\n'));
      assert.match(text[3], new RegExp(`^\\S+Z info 127\\.0\\.0\\.1 user=- GET /api/v1/test/crash 500 [\\d.]+ms id=${crashId}\\n$`));
    } finally {
      await s.close();
    }
  });

  it('at warn writes no request lines but still the server errors; without a sink nothing at all', async () => {
    const got: string[] = [];
    const s = await startTestServer({ configure: (c) => (c.logLevel = 'warn'), logSink: (l) => got.push(l), extraRoutes: [crashRoute] });
    try {
      assert.equal((await s.api(s.users.othello, 'GET', '/users/me')).status, 200);
      assert.equal((await s.raw('GET', '/api/v1/test/crash')).status, 500);
      await new Promise((r) => setImmediate(r));
      assert.equal(got.length, 1);
      assert.match(got[0], /^\S+Z error unexpected error request_id=\S+ method=GET path=\/api\/v1\/test\/crash\n {2}Error: the disk caught fire\n/);
      // The request id still goes out in the header at every level.
      assert.match((await s.api(s.users.othello, 'GET', '/users/me')).headers.get('x-request-id') ?? '', ID);
      assert.equal(s.app.log.requests, false);
    } finally {
      await s.close();
    }
  });
});

// The web app's server side: its page at / (logged-in browsers only), its hashed files, and the API
// under /json (session cookie + CSRF token, Zulip's scheme), with the same answers as /api/v1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { stmt } from '../../src/db/stmt';
import { csrfTokenFor } from '../../src/http/auth';
import { webAssets } from '../../src/lib/web-assets';
import { encodeParams, PASSWORD, startTestServer, type TestServer } from '../helpers/server';
import { json, webLogin, type WebSession } from '../helpers/web';

let t: TestServer;
let hamlet: WebSession;
before(async () => {
  t = await startTestServer();
  hamlet = await webLogin(t, t.users.hamlet);
});
after(() => t.close());

const manifest = () => {
  const assets = webAssets();
  assert.ok(assets, 'the web app is built (npm test builds it first)');
  return assets.manifest;
};

const messageCount = () => (stmt(t.app.db, 'SELECT count(*) AS n FROM message').get() as { n: number }).n;

const appCsp = (files: string) =>
  `default-src 'none'; script-src ${files}; style-src ${files}; style-src-attr 'unsafe-inline'; img-src 'self' data: https://secure.gravatar.com; ` +
  "connect-src 'self'; font-src 'self'; media-src 'self'; manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

describe('GET /', () => {
  it('sends a browser without a session to /login', async () => {
    for (const cookie of [undefined, 'parley_session=unknown']) {
      const r = await fetch(t.url + '/', { redirect: 'manual', headers: cookie ? { cookie } : {} });
      assert.equal(r.status, 303);
      assert.equal(r.headers.get('location'), '/login');
    }
  });

  it('names its files in the policy by a well-formed Host only', async () => {
    const http = require('node:http') as typeof import('node:http');
    const cspFor = (host: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        const req = http.get(t.url + '/', { headers: { cookie: hamlet.session, host } }, (res) => {
          res.resume();
          resolve(res.headers['content-security-policy'] as string | undefined);
        });
        req.on('error', reject);
      });
    assert.equal(await cspFor('chat.example.com'), appCsp('http://chat.example.com/static/web/'));
    assert.equal(await cspFor('[::1]:9991'), appCsp('http://[::1]:9991/static/web/'));
    for (const hostile of ["evil.example; script-src *", 'a b', "x'y", 'host/path']) assert.equal(await cspFor(hostile), appCsp("'self'"), hostile);
  });

  it('serves the app page with the hashed files, a strict policy, no caching, and the CSRF cookie', async () => {
    const r = await fetch(t.url + '/', { headers: { cookie: hamlet.session } });
    assert.equal(r.status, 200);
    const text = await r.text();
    const m = manifest();
    assert.match(text, new RegExp(`<script type="module" src="/static/web/${m['app.js']}"></script>`));
    assert.match(text, new RegExp(`<link rel="stylesheet" href="/static/web/${m['app.css']}">`));
    assert.match(text, /<div id="app">/);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(r.headers.get('cache-control'), 'private, no-cache');
    // Scripts and styles only from the built files: user uploads share the origin.
    assert.equal(r.headers.get('content-security-policy'), appCsp(`http://${new URL(t.url).host}/static/web/`));
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(r.headers.get('referrer-policy'), 'same-origin');
    const token = hamlet.session.slice('parley_session='.length);
    assert.equal(r.headers.get('set-cookie'), `csrftoken=${csrfTokenFor(token)}; SameSite=Lax; Path=/`);
    assert.ok(!/<script>/.test(text), 'no inline script');
  });
});

describe('GET /static/web/{file}', () => {
  it('serves each built file with its type, forever-caching, and gzip when asked', async () => {
    const m = manifest();
    for (const [name, type] of [
      [m['app.js'], 'text/javascript; charset=utf-8'],
      [m['app.css'], 'text/css; charset=utf-8'],
      [m['favicon.svg'], 'image/svg+xml'],
    ] as const) {
      const onDisk = fs.readFileSync(path.join(__dirname, '..', '..', 'dist', 'web', name));
      const plain = await fetch(`${t.url}/static/web/${name}`, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('content-type'), type);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(plain.headers.get('content-encoding'), null);
      assert.deepEqual(Buffer.from(await plain.arrayBuffer()), onDisk);
      // node's fetch decodes gzip itself: ask with a raw request to see the encoded bytes.
      const gz = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        const req = require('node:http').get(`${t.url}/static/web/${name}`, { headers: { 'accept-encoding': 'gzip, br' } }, (res: any) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
      });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.deepEqual(zlib.gunzipSync(gz.body), onDisk);
    }
  });

  it('answers 404 for anything else', async () => {
    for (const name of ['nope.js', 'manifest.json', '..%2F..%2Fpackage.json', 'constructor']) {
      const r = await t.raw('GET', `/static/web/${name}`);
      assert.equal(r.status, 404, name);
      assert.deepEqual(r.body, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
    }
  });
});

describe('/json: the API for the web app', () => {
  it('answers with the session cookie exactly as /api/v1 does with Basic', async () => {
    const viaJson = await json(t, hamlet, 'GET', '/users/me');
    const viaApi = await t.api(t.users.hamlet, 'GET', '/users/me');
    assert.equal(viaJson.status, 200);
    assert.deepEqual(viaJson.body, viaApi.body);
  });

  it('refuses Basic auth on /json and the session cookie on /api/v1', async () => {
    const basic = await t.raw('GET', '/json/users/me', {
      headers: { authorization: 'Basic ' + Buffer.from(`${t.users.hamlet.email}:${t.users.hamlet.apiKey}`).toString('base64') },
    });
    assert.equal(basic.status, 401);
    assert.deepEqual(basic.body, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
    assert.equal(basic.headers.get('www-authenticate'), 'Session realm="zulip"');
    const cookie = await t.raw('GET', '/api/v1/users/me', { headers: { cookie: hamlet.session } });
    assert.equal(cookie.status, 401);
    assert.equal(cookie.headers.get('www-authenticate'), 'Basic realm="zulip"');
  });

  it('answers 401 with a Session challenge for a missing, unknown or expired session', async () => {
    for (const cookie of [undefined, 'parley_session=unknown', 'parley_session=']) {
      const r = await t.raw('POST', '/json/messages', { headers: cookie ? { cookie, 'x-csrftoken': 'x' } : {} });
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
      assert.equal(r.headers.get('www-authenticate'), 'Session realm="zulip"');
    }
  });

  it('refuses a write without the CSRF token, or with a wrong one, and changes nothing', async () => {
    const before = messageCount();
    const send = { type: 'stream', to: 'Verona', topic: 'csrf', content: 'forged' };
    const missing = await json(t, hamlet, 'POST', '/messages', send, { csrf: null });
    assert.equal(missing.status, 403);
    assert.deepEqual(missing.body, { result: 'error', msg: 'CSRF error: CSRF token missing.', code: 'CSRF_FAILED', reason: 'CSRF token missing.' });
    const other = await webLogin(t, t.users.othello);
    for (const wrong of ['nonsense', other.csrf, csrfTokenFor('guess')]) {
      const r = await json(t, hamlet, 'POST', '/messages', send, { csrf: wrong });
      assert.equal(r.status, 403);
      assert.deepEqual(r.body, {
        result: 'error',
        msg: "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
        code: 'CSRF_FAILED',
        reason: "CSRF token from the 'X-Csrftoken' HTTP header incorrect.",
      });
    }
    // A cross-site form post: the browser would send the cookie only if SameSite allowed it, and never the header.
    const forged = await t.raw('POST', '/json/messages', {
      headers: { cookie: hamlet.session, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: encodeParams(send),
    });
    assert.equal(forged.status, 403);
    for (const [method, p] of [['PATCH', '/settings'], ['DELETE', '/users/me/subscriptions'], ['POST', '/users/me/subscriptions']]) {
      const r = await json(t, hamlet, method, p, {}, { csrf: null });
      assert.equal(r.status, 403, method);
      assert.equal(r.body.code, 'CSRF_FAILED');
    }
    assert.equal(messageCount(), before);
  });

  it('needs no CSRF token to read', async () => {
    const r = await json(t, hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 }, { csrf: null });
    assert.equal(r.status, 200);
  });

  it('sends with the session and the token, as the app does', async () => {
    const before = messageCount();
    await t.api(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'web app' }], principals: [t.users.hamlet.id] });
    const r = await json(t, hamlet, 'POST', '/messages', { type: 'stream', to: 'web app', topic: 'hello', content: 'from the browser' });
    assert.equal(r.status, 200, r.text);
    assert.ok(messageCount() > before);
    const got = await t.api(t.users.hamlet, 'GET', `/messages/${r.body.id}`);
    assert.equal(got.body.message.content, '<p>from the browser</p>');
  });

  it('gives malformed requests the same errors as /api/v1', async () => {
    const cases: [string, string, Record<string, unknown>][] = [
      ['POST', '/messages', { type: 'stream', to: 'Verona' }],
      ['POST', '/messages', { type: 'nonsense', to: 'Verona', content: 'x' }],
      ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '{not json' }],
      ['GET', '/messages', { anchor: 'newest', num_before: 'many', num_after: 0 }],
      ['GET', '/users/999999', {}],
      ['POST', '/messages/flags', { messages: [1], op: 'sideways', flag: 'read' }],
      ['GET', '/events', { queue_id: 'no-such-queue', last_event_id: -1 }],
      ['PATCH', '/settings', { color_scheme: 99 }],
    ];
    for (const [method, p, params] of cases) {
      const viaJson = await json(t, hamlet, method, p, params);
      const viaApi = await t.api(t.users.hamlet, method, p, params);
      assert.equal(viaJson.status, viaApi.status, `${method} ${p}`);
      assert.ok(viaJson.status >= 400 && viaJson.status < 500, `${method} ${p}: ${viaJson.status}`);
      assert.deepEqual(viaJson.body, viaApi.body, `${method} ${p}`);
    }
  });

  it('refuses a deactivated user (deactivation ends their sessions) with a Session challenge', async () => {
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'web-leaver@example.com', password: PASSWORD, full_name: 'Web Leaver' });
    const s = await webLogin(t, { id: created.body.user_id, email: 'web-leaver@example.com', apiKey: '', password: PASSWORD, fullName: 'Web Leaver' });
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${created.body.user_id}`)).status, 200);
    const r = await json(t, s, 'GET', '/users/me');
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
    assert.equal(r.headers.get('www-authenticate'), 'Session realm="zulip"');
    const page = await fetch(t.url + '/', { redirect: 'manual', headers: { cookie: s.session } });
    assert.equal(page.status, 303);
    assert.equal(page.headers.get('location'), '/login');
  });
});

describe('POST /login', () => {
  async function loginWith(fields: Record<string, string>, headers: Record<string, string> = {}) {
    return fetch(t.url + '/login', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: encodeParams({ username: t.users.othello.email, password: PASSWORD, ...fields }),
    });
  }

  it('lands on the narrow the person opened (next), and only on this app', async () => {
    const cases: [string, string][] = [
      ['/#narrow/channel/1-general/topic/lunch', '/#narrow/channel/1-general/topic/lunch'],
      ['/', '/'],
      ['//evil.example/', '/'],
      ['https://evil.example/#narrow', '/'],
      ['/\\evil.example', '/'],
      ['/login', '/'],
      ['/# javascript:x', '/'],
    ];
    for (const [next, location] of cases) {
      const r = await loginWith({ next });
      assert.equal(r.status, 303, next);
      assert.equal(r.headers.get('location'), location, next);
    }
  });

  it('refuses a post whose Origin is opaque (null)', async () => {
    const r = await loginWith({}, { origin: 'null' });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('set-cookie'), null);
  });

  it('serves the login page with its script, and /welcome now leads to the app', async () => {
    const page = await t.raw('GET', '/login');
    assert.match(page.text, new RegExp(`<script type="module" src="/static/web/${manifest()['login.js']}"></script>`));
    assert.match(page.text, /<input type="hidden" name="next" value="\/">/);
    assert.match(page.text, /<p class="realm">Test Org<\/p>/);
    const welcome = await fetch(t.url + '/welcome', { redirect: 'manual' });
    assert.equal(welcome.status, 303);
    assert.equal(welcome.headers.get('location'), '/');
  });
});

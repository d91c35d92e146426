// Web login and logout: the HTML login page, the HttpOnly session cookie backed by the session table
// (only the token's SHA-256 stored), routes declared 'user_or_session' accepting it, and its end.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { stmt } from '../../src/db/stmt';
import { route } from '../../src/http/route';
import { encodeParams, PASSWORD, startTestServer, type TestServer } from '../helpers/server';

const START = Date.UTC(2024, 0, 15, 12, 0, 0);
let nowMs = START;
const clock = { nowMs: () => nowMs };

// A stand-in for the upload routes: anything declared user_or_session.
const whoami = route({
  method: 'GET',
  path: '/api/v1/test/whoami',
  auth: 'user_or_session',
  handle: ({ user }) => ({ user_id: user.id }),
});

let t: TestServer;
before(async () => {
  t = await startTestServer({ clock, extraRoutes: [whoami] });
});
after(() => t.close());

async function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(t.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: encodeParams(fields),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const sessionRows = (userId: number) => stmt(t.app.db, 'SELECT * FROM session WHERE user_id = ?').all(userId) as { token_hash: string; expires: number; created: number }[];

async function login(email: string, password = PASSWORD) {
  const r = await post('/login', { username: email, password });
  assert.equal(r.status, 303, r.text);
  const cookie = r.headers.get('set-cookie') ?? '';
  return { r, cookie, token: cookie.split(';')[0] };
}

describe('GET /login', () => {
  it('serves the login form', async () => {
    const r = await t.raw('GET', '/login');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(r.text, /<form method="post" action="\/login">/);
    assert.match(r.text, /name="username"/);
    assert.match(r.text, /name="password" type="password"/);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
  });
});

describe('POST /login', () => {
  it('issues an HttpOnly SameSite session cookie whose hash is stored for 14 days', async () => {
    const { r, cookie, token } = await login(t.users.hamlet.email);
    assert.equal(r.headers.get('location'), '/');
    assert.match(cookie, /^parley_session=([A-Za-z0-9_-]{43}); HttpOnly; SameSite=Lax; Path=\/; Max-Age=1209600$/);
    const raw = token.slice('parley_session='.length);
    const rows = sessionRows(t.users.hamlet.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].token_hash, crypto.createHash('sha256').update(raw).digest('hex'));
    assert.equal(rows[0].expires - rows[0].created, 14 * 24 * 3600);

    const me = await t.raw('GET', '/api/v1/test/whoami', { headers: { cookie: `other=1; ${token}` } });
    assert.deepEqual(me.body, { result: 'success', msg: '', user_id: t.users.hamlet.id });
    const page = await t.raw('GET', '/', { headers: { cookie: token } });
    assert.equal(page.status, 200);
    assert.match(page.text, /<div id="app">/);
    // The cookie is not an API credential for routes that want Basic auth.
    const apiOnly = await t.raw('GET', '/api/v1/users/me', { headers: { cookie: token } });
    assert.equal(apiOnly.status, 401);
  });

  it('answers a wrong password or unknown address on the page, without a cookie', async () => {
    for (const [email, password] of [
      [t.users.hamlet.email, 'wrong-password'],
      ['nobody@example.com', PASSWORD],
    ]) {
      const r = await post('/login', { username: email, password });
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('set-cookie'), null);
      assert.match(r.text, /<p class="error" role="alert">Your username or password is incorrect<\/p>/);
      assert.match(r.text, new RegExp(`value="${email.replace('.', '\\.')}"`));
    }
  });

  it('escapes what it echoes', async () => {
    const r = await post('/login', { username: '"><script>alert(1)</script>', password: 'x' });
    assert.equal(r.status, 401);
    assert.ok(!r.text.includes('<script>'));
    assert.match(r.text, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });

  it('refuses deactivated accounts, bots and a deactivated organization', async () => {
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'leaver@example.com', password: PASSWORD, full_name: 'Leaver' });
    const { token } = await login('leaver@example.com');
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${created.body.user_id}`)).status, 200);
    const r = await post('/login', { username: 'leaver@example.com', password: PASSWORD });
    assert.equal(r.status, 403);
    assert.match(r.text, /Account is deactivated/);
    // Deactivation ended the session too.
    assert.equal((await t.raw('GET', '/api/v1/test/whoami', { headers: { cookie: token } })).status, 401);

    const bot = await post('/login', { username: t.users.bot.email, password: PASSWORD });
    assert.equal(bot.status, 401);

    const { token: hamletToken } = await login(t.users.hamlet.email);
    stmt(t.app.db, 'UPDATE realm SET deactivated = 1').run();
    try {
      const off = await post('/login', { username: t.users.hamlet.email, password: PASSWORD });
      assert.equal(off.status, 403);
      assert.match(off.text, /This organization has been deactivated/);
      const viaCookie = await t.raw('GET', '/api/v1/test/whoami', { headers: { cookie: hamletToken } });
      assert.equal(viaCookie.body.code, 'REALM_DEACTIVATED');
    } finally {
      stmt(t.app.db, 'UPDATE realm SET deactivated = 0').run();
    }
  });

  it('refuses a form posted from another site', async () => {
    const r = await post('/login', { username: t.users.hamlet.email, password: PASSWORD }, { origin: 'https://evil.example' });
    assert.equal(r.status, 403);
    assert.equal(r.headers.get('set-cookie'), null);
    const ok = await post('/login', { username: t.users.hamlet.email, password: PASSWORD }, { origin: t.url });
    assert.equal(ok.status, 303);
  });

  it('stops accepting an expired session', async () => {
    const { token } = await login(t.users.othello.email);
    nowMs += 14 * 24 * 3600 * 1000 + 1000;
    try {
      const r = await t.raw('GET', '/api/v1/test/whoami', { headers: { cookie: token } });
      assert.equal(r.status, 401);
      assert.equal(r.body.code, 'UNAUTHORIZED');
      const page = await fetch(t.url + '/', { redirect: 'manual', headers: { cookie: token } });
      assert.equal(page.status, 303);
      assert.equal(page.headers.get('location'), '/login');
    } finally {
      nowMs = START;
    }
  });
});

describe('POST /logout', () => {
  it('deletes the session row and clears the cookie', async () => {
    const { token } = await login(t.users.othello.email);
    const before = sessionRows(t.users.othello.id).length;
    const r = await post('/logout', {}, { cookie: token });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/login');
    assert.equal(r.headers.get('set-cookie'), 'parley_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0');
    assert.equal(sessionRows(t.users.othello.id).length, before - 1);
    const after = await t.raw('GET', '/api/v1/test/whoami', { headers: { cookie: token } });
    assert.equal(after.status, 401);
  });
});

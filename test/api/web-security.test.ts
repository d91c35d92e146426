// The web app's attack surface, attacked: /json with the session cookie and CSRF token as a browser on
// another site, a bot, a guest, someone not in a private channel and a former session would use it;
// the login form's `next`; sessions and passwords; and hostile input on every /json route.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { allRoutes } from '../../src/api';
import { stmt } from '../../src/db/stmt';
import { csrfTokenFor } from '../../src/http/auth';
import { jsonRoutes } from '../../src/http/route';
import { hashPassword } from '../../src/lib/secrets';
import { createChannel, sendDirect, sendToChannel, systemGroups } from '../helpers/chat';
import { basicAuth, encodeParams, PASSWORD, startTestServer, type TestServer } from '../helpers/server';
import { json, webLogin, type WebSession } from '../helpers/web';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** One request over a fresh connection, as bytes: what a browser would get, unparsed by fetch. */
function rawRequest(text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(t.server.port, '127.0.0.1', () => socket.write(text, 'latin1'));
    let out = '';
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = out.indexOf('\r\n\r\n');
      resolve({ status: Number(out.slice(9, 12)), headers: out.slice(0, end), body: out.slice(end + 4) });
    });
  });
}

const sessionCount = (userId: number) => (stmt(t.app.db, 'SELECT count(*) AS n FROM session WHERE user_id = ?').get(userId) as { n: number }).n;
const tusCount = () => (stmt(t.app.db, 'SELECT count(*) AS n FROM tus_upload').get() as { n: number }).n;

describe('POST /login', () => {
  it('lets no control character, space or raw byte of `next` into the Location header', async () => {
    for (const next of ['/#a\x00b', '/#a\x01b', '/#a\x7fb', '/#a\x0bb', '/#caf\u00e9', '/#a\u0085b', '/#a\u2028b', '/#a b', '/#a\\b']) {
      const body = Buffer.from(encodeParams({ username: t.users.othello.email, password: PASSWORD, next })).toString('latin1');
      const r = await rawRequest(
        `POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      assert.equal(r.status, 303, JSON.stringify(next));
      assert.match(r.headers, /\r\nLocation: \/\r\n/i, JSON.stringify(next));
    }
  });

  it('keeps what a browser puts in location.hash (printable ASCII, the rest percent-encoded)', async () => {
    const next = '/#narrow/channel/12-caf.C3.A9/topic/%22quoted%22.20.3C.3E/near/5';
    const r = await fetch(t.url + '/login', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: encodeParams({ username: t.users.othello.email, password: PASSWORD, next }),
    });
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), next);
  });

  it('never logs a bot in, even one that has a password', async () => {
    stmt(t.app.db, 'UPDATE user SET password_hash = ? WHERE id = ?').run(hashPassword(PASSWORD), t.users.bot.id);
    const r = await fetch(t.url + '/login', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: encodeParams({ username: t.users.bot.email, password: PASSWORD }),
    });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('set-cookie'), null);
    assert.equal(sessionCount(t.users.bot.id), 0);
  });
});

describe('PATCH /settings: a new password', () => {
  const NEW_PASSWORD = 'a-brand-new-password';

  it('ends every other session of the person, keeping the one that changed it', async () => {
    const u = await t.api(t.users.admin, 'POST', '/users', { email: 'pw-web@example.com', password: PASSWORD, full_name: 'Web Password' });
    const me = { id: u.body.user_id, email: 'pw-web@example.com', apiKey: '', password: PASSWORD, fullName: 'Web Password' };
    const elsewhere = await webLogin(t, me); // the shared computer, or a stolen cookie
    const here = await webLogin(t, me);
    const r = await json(t, here, 'PATCH', '/settings', { old_password: PASSWORD, new_password: NEW_PASSWORD });
    assert.equal(r.status, 200, r.text);
    assert.equal((await json(t, elsewhere, 'GET', '/users/me')).status, 401);
    assert.equal((await json(t, here, 'GET', '/users/me')).status, 200);
    assert.equal(sessionCount(me.id), 1);
  });

  it('ends every session when changed over the API', async () => {
    const u = await t.api(t.users.admin, 'POST', '/users', { email: 'pw-api@example.com', password: PASSWORD, full_name: 'API Password' });
    const me = { id: u.body.user_id, email: 'pw-api@example.com', apiKey: '', password: PASSWORD, fullName: 'API Password' };
    me.apiKey = (await t.api(null, 'POST', '/fetch_api_key', { username: me.email, password: PASSWORD })).body.api_key;
    const browser = await webLogin(t, me);
    const r = await t.api(me, 'PATCH', '/settings', { old_password: PASSWORD, new_password: NEW_PASSWORD });
    assert.equal(r.status, 200, r.text);
    assert.equal((await json(t, browser, 'GET', '/users/me')).status, 401);
    assert.equal(sessionCount(me.id), 0);
  });

  it('ends nothing when the old password is wrong', async () => {
    const s = await webLogin(t, t.users.moderator);
    const before = sessionCount(t.users.moderator.id);
    const r = await t.api(t.users.moderator, 'PATCH', '/settings', { old_password: 'wrong', new_password: NEW_PASSWORD });
    assert.equal(r.status, 400);
    assert.equal(sessionCount(t.users.moderator.id), before);
    assert.equal((await json(t, s, 'GET', '/users/me')).status, 200);
  });
});

describe('/json: credentials', () => {
  let hamlet: WebSession;
  before(async () => {
    hamlet = await webLogin(t, t.users.hamlet);
  });

  it("opens nothing with a bot's API key (nor anyone's)", async () => {
    for (const user of [t.users.bot, t.users.hamlet]) {
      for (const [method, path] of [['GET', '/json/users/me'], ['POST', '/json/messages']]) {
        const r = await t.raw(method, path, { headers: { authorization: basicAuth(user) } });
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.equal(r.headers.get('www-authenticate'), 'Session realm="zulip"');
      }
    }
  });

  it('reads only the first of several session cookies, for the user and the CSRF token alike', async () => {
    const token = hamlet.session.slice('parley_session='.length);
    const first = await t.raw('GET', '/json/users/me', { headers: { cookie: `${hamlet.session}; parley_session=forged` } });
    assert.equal(first.body.user_id, t.users.hamlet.id);
    const shadowed = await t.raw('GET', '/json/users/me', { headers: { cookie: `parley_session=forged; ${hamlet.session}` } });
    assert.equal(shadowed.status, 401);
    const quoted = await t.raw('GET', '/json/users/me', { headers: { cookie: `parley_session="${token}"` } });
    assert.equal(quoted.status, 401);
    // The token of the first cookie is the one the CSRF header must match.
    const r = await t.raw('PATCH', '/json/settings', {
      headers: { cookie: `parley_session=forged; ${hamlet.session}`, 'x-csrftoken': csrfTokenFor('forged'), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'twenty_four_hour_time=true',
    });
    assert.equal(r.status, 401);
  });

  it('refuses the CSRF token of the previous login after logging out and in again', async () => {
    const u = await t.api(t.users.admin, 'POST', '/users', { email: 'relogin@example.com', password: PASSWORD, full_name: 'Re Login' });
    const me = { id: u.body.user_id, email: 'relogin@example.com', apiKey: '', password: PASSWORD, fullName: 'Re Login' };
    const old = await webLogin(t, me);
    const out = await fetch(t.url + '/logout', { method: 'POST', redirect: 'manual', headers: { cookie: old.session } });
    assert.equal(out.status, 303);
    assert.equal((await json(t, old, 'GET', '/users/me')).status, 401);
    const again = await webLogin(t, me);
    const r = await json(t, again, 'PATCH', '/settings', { twenty_four_hour_time: true }, { csrf: old.csrf });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, 'CSRF_FAILED');
  });

  it('wants the CSRF header for every way a cross-site page could post, and for every method that writes', async () => {
    const before = (stmt(t.app.db, 'SELECT count(*) AS n FROM message').get() as { n: number }).n;
    const multipart =
      '--X\r\nContent-Disposition: form-data; name="type"\r\n\r\nprivate\r\n' +
      `--X\r\nContent-Disposition: form-data; name="to"\r\n\r\n[${t.users.othello.id}]\r\n` +
      '--X\r\nContent-Disposition: form-data; name="content"\r\n\r\nforged\r\n--X--\r\n';
    const forms: [string, string][] = [
      ['application/x-www-form-urlencoded', encodeParams({ type: 'private', to: [t.users.othello.id], content: 'forged' })],
      ['multipart/form-data; boundary=X', multipart],
      ['text/plain', 'type=private&content=forged'],
    ];
    for (const [type, body] of forms) {
      const r = await t.raw('POST', '/json/messages', { headers: { cookie: hamlet.session, origin: 'https://evil.example', 'content-type': type }, body });
      assert.equal(r.status, 403, type);
      assert.equal(r.body.code, 'CSRF_FAILED', type);
    }
    for (const [method, path] of [
      ['PUT', '/json/bot_storage'],
      ['POST', '/json/users/me/muted_users/1'],
      ['PATCH', '/json/settings'],
      ['DELETE', '/json/users/me/muted_users/1'],
      ['POST', '/json/tus'],
      ['POST', '/json/user_uploads'],
      ['DELETE', '/json/events'],
    ] as const) {
      const r = await t.raw(method, path, { headers: { cookie: hamlet.session, 'tus-resumable': '1.0.0', 'upload-length': '1' } });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.code, 'CSRF_FAILED', `${method} ${path}`);
    }
    assert.equal((stmt(t.app.db, 'SELECT count(*) AS n FROM message').get() as { n: number }).n, before);
  });

  it('is no API credential, except for uploads, and there a form on another site cannot use it', async () => {
    assert.equal((await t.raw('GET', '/api/v1/users/me', { headers: { cookie: hamlet.session } })).status, 401);
    const upload = await t.raw('POST', '/api/v1/user_uploads', {
      headers: { cookie: hamlet.session, 'content-type': 'multipart/form-data; boundary=X' },
      body: '--X\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nhi\r\n--X--\r\n',
    });
    assert.equal(upload.status, 401);
    // zulip-compat: /api/v1/tus takes the cookie without a CSRF token (Zulip's web app uploads there
    // without one). What keeps other sites out is the Tus-Resumable header it demands: a form cannot
    // send it, and a script's request with it needs a CORS preflight that Parley never grants.
    const before = tusCount();
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=X', 'text/plain']) {
      const r = await t.raw('POST', '/api/v1/tus', { headers: { cookie: hamlet.session, origin: 'https://evil.example', 'content-type': type, 'upload-length': '1' }, body: 'x' });
      assert.equal(r.status, 412, type);
    }
    const preflight = await t.raw('OPTIONS', '/api/v1/tus', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'tus-resumable' },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(tusCount(), before);
  });
});

describe('/json: reading what one may not', () => {
  it('answers every GET exactly as /api/v1 does, for a guest who sees few people and a member outside a private channel', async () => {
    const u = t.users;
    const secret = await createChannel(t, u.owner, 'web-secret', [u.owner, u.hamlet], { invite_only: true });
    const channelMessage = await sendToChannel(t, u.hamlet, secret, 'plans', 'the secret plan');
    const direct = await sendDirect(t, u.hamlet, [u.owner], 'private words');
    const set = await t.api(u.owner, 'PATCH', '/realm', { can_access_all_users_group: systemGroups(t)['role:members'] });
    assert.equal(set.status, 200, set.text);
    const ids: Record<string, string> = {
      stream_id: String(secret),
      user_id: String(u.hamlet.id),
      bot_id: String(u.bot.id),
      email: u.hamlet.email,
      user_group_id: String(systemGroups(t)['role:administrators']),
    };
    const query = {
      narrow: JSON.stringify([{ operator: 'channel', operand: secret }]),
      anchor: 'newest',
      num_before: '10',
      num_after: '0',
      stream_id: String(secret),
    };
    // Times that differ between two calls a moment apart.
    const comparable = (text: string) => text.replace(/"(server_timestamp|timestamp|last_active_timestamp|last_connected_time)":[^,}]+/g, '');
    let compared = 0;
    for (const who of [u.guest, u.othello]) {
      const s = await webLogin(t, who);
      for (const r of jsonRoutes(allRoutes)) {
        if (r.method !== 'GET' || r.path === '/json/events') continue;
        for (const messageId of [channelMessage, direct]) {
          const path = r.path.slice('/json'.length).replace(/\{(\w+)(?::int)?(?:\.\.\.)?\}/g, (_, name: string) => (name === 'message_id' ? String(messageId) : (ids[name] ?? '1')));
          const web = await json(t, s, 'GET', path, { ...query, message_id: String(messageId) });
          const api = await t.api(who, 'GET', path, { ...query, message_id: String(messageId) });
          assert.equal(web.status, api.status, `${who.email} GET ${path}`);
          assert.equal(comparable(web.text), comparable(api.text), `${who.email} GET ${path}`);
          assert.ok(!/secret plan|private words/.test(web.text), `${who.email} GET ${path} leaks: ${web.text.slice(0, 200)}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 100, `${compared} reads compared`);
  });
});

describe('/json: hostile input', () => {
  it('answers every route with a client error, never a 500, whatever the path and parameters hold', async () => {
    const s = await webLogin(t, t.users.othello);
    const values = ['', '-1', '1e400', '99999999999999999999999', '{"a":', '[1,"a"]', '{"__proto__":{"x":1}}', '\u0000\ud800<"\'>', 'x'.repeat(20000)];
    const pathValues = ['0', '99999999999999999999', 'a%2Fb'];
    const failures: string[] = [];
    for (const r of jsonRoutes(allRoutes)) {
      // The long-poll waits; deactivating oneself would end the session the rest needs.
      if (r.path === '/json/events' || (r.method === 'DELETE' && r.path === '/json/users/me')) continue;
      const names = Object.keys(r.params ?? {});
      for (const pv of r.path.includes('{') ? pathValues : ['']) {
        const path = r.path.slice('/json'.length).replace(/\{[^}]+\}/g, pv);
        for (const value of values) {
          if (r.method === 'GET' && value.length > 1000) continue; // a URL that long is refused by the server's HTTP layer
          const res = await json(t, s, r.method, path, Object.fromEntries(names.map((n) => [n, value])));
          if (res.status >= 500) failures.push(`${r.method} ${path} ${JSON.stringify(value).slice(0, 40)} → ${res.status} ${res.text.slice(0, 100)}`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });
});

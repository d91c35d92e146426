// Every way a request can be (not) authenticated: HTTP Basic on /api/v1, the session cookie where a
// route allows it, POST /fetch_api_key, and the deactivated user and organization paths.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { doSetRealmDeactivated } from '../../src/actions/realm';
import { stmt } from '../../src/db/stmt';
import { parseBasic, readCookie, SESSION_COOKIE, sessionTokenHash } from '../../src/http/auth';
import { JsonableError } from '../../src/http/errors';
import { route } from '../../src/http/route';
import { basicAuth, PASSWORD, startTestServer, type TestServer, type TestUser } from '../helpers/server';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const WWW = 'Basic realm="zulip"';

const NOT_LOGGED_IN = { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' };
const INVALID_HEADER = { result: 'error', msg: 'Invalid authorization header for basic auth', code: 'UNAUTHORIZED' };
const WRONG_SCHEME = { result: 'error', msg: 'This endpoint requires HTTP basic authentication.', code: 'BAD_REQUEST' };
const INVALID_KEY = { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' };
const MALFORMED_KEY = { result: 'error', msg: 'Malformed API key', code: 'INVALID_API_KEY' };
const USER_DEACTIVATED = { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' };
const REALM_DEACTIVATED = { result: 'error', msg: 'This organization has been deactivated', code: 'REALM_DEACTIVATED' };

describe('parseBasic', () => {
  const unauthorized = (msg: string) => (err: unknown) => err instanceof JsonableError && err.status === 401 && err.code === 'UNAUTHORIZED' && err.message === msg;

  it('decodes email and key', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('a@b.co:KEY')}`), { email: 'a@b.co', key: 'KEY' });
    assert.deepEqual(parseBasic(`basic ${b64('a@b.co:KEY')}`), { email: 'a@b.co', key: 'KEY' });
    assert.deepEqual(parseBasic(`BASIC   ${b64('é@b.co:')}  `), { email: 'é@b.co', key: '' });
  });

  it('refuses a missing header', () => {
    assert.throws(() => parseBasic(undefined), unauthorized('Missing authorization header for basic auth'));
  });

  it('refuses another scheme with a 400', () => {
    assert.throws(
      () => parseBasic('Bearer abc'),
      (err: unknown) => err instanceof JsonableError && err.status === 400 && err.code === 'BAD_REQUEST' && err.message === WRONG_SCHEME.msg,
    );
  });

  for (const header of ['Basic', 'Bearer', 'Basic a b', 'Basic !!!!', 'Basic eDp5eg', 'Basic eDp5eg=', `Basic ${b64('no colon')}`, `Basic ${b64('a:b:c')}`, `Basic ${b64(Buffer.from([0x61, 0x3a, 0xff]))}`, '   ']) {
    it(`refuses the unreadable header ${JSON.stringify(header)}`, () => {
      assert.throws(() => parseBasic(header), unauthorized('Invalid authorization header for basic auth'));
    });
  }
});

describe('readCookie', () => {
  it('finds one cookie among several', () => {
    assert.equal(readCookie('a=1; parley_session=tok; b=2', SESSION_COOKIE), 'tok');
    assert.equal(readCookie('a=1', SESSION_COOKIE), null);
    assert.equal(readCookie(undefined, SESSION_COOKIE), null);
  });
});

describe('authentication over the wire', () => {
  let t: TestServer;
  let victim: TestUser;
  before(async () => {
    t = await startTestServer({
      extraRoutes: [route({ method: 'GET', path: '/api/v1/test/session', auth: 'user_or_session', handle: ({ user }) => ({ user_id: user.id }) })],
    });
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'victim@example.com', password: PASSWORD, full_name: 'Victim' });
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'victim@example.com', password: PASSWORD });
    victim = { id: created.body.user_id, email: 'victim@example.com', apiKey: key.body.api_key, password: PASSWORD, fullName: 'Victim' };
    const off = await t.api(t.users.admin, 'DELETE', `/users/${victim.id}`);
    assert.equal(off.status, 200);
  });
  after(() => t.close());

  const me = (authorization?: string) => t.raw('GET', '/api/v1/users/me', { headers: authorization === undefined ? {} : { authorization } });

  it('accepts valid credentials, for people and bots, with the email in any case', async () => {
    for (const user of [t.users.hamlet, t.users.bot, t.users.guest]) {
      const res = await me(basicAuth(user));
      assert.equal(res.status, 200);
      assert.equal(res.body.user_id, user.id);
    }
    const upper = await me(basicAuth({ email: t.users.hamlet.email.toUpperCase(), apiKey: t.users.hamlet.apiKey }));
    assert.equal(upper.body.user_id, t.users.hamlet.id);
  });

  it('refuses a request without an Authorization header with 401 UNAUTHORIZED and WWW-Authenticate', async () => {
    for (const res of [await me(), await me(''), await t.api(null, 'POST', '/users', { email: 'x@example.com' })]) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, NOT_LOGGED_IN);
      assert.equal(res.headers.get('www-authenticate'), WWW);
    }
  });

  it('refuses an unreadable Authorization header with 401 UNAUTHORIZED and WWW-Authenticate', async () => {
    for (const header of ['Basic', 'Basic !!!!', `Basic ${b64('no-colon')}`, `Basic ${b64(`${t.users.hamlet.email}:${t.users.hamlet.apiKey}:x`)}`, 'Basic a b']) {
      const res = await me(header);
      assert.equal(res.status, 401, header);
      assert.deepEqual(res.body, INVALID_HEADER, header);
      assert.equal(res.headers.get('www-authenticate'), WWW);
    }
  });

  it('refuses another scheme with 400 "This endpoint requires HTTP basic authentication."', async () => {
    for (const header of [`Bearer ${t.users.hamlet.apiKey}`, `Digest ${b64('a:b')}`]) {
      const res = await me(header);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, WRONG_SCHEME);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
  });

  it('refuses a wrong key with 401 INVALID_API_KEY', async () => {
    const res = await me(basicAuth({ email: t.users.hamlet.email, apiKey: 'A'.repeat(32) }));
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, INVALID_KEY);
    assert.equal(res.headers.get('www-authenticate'), WWW);
  });

  it("refuses another user's key exactly like a wrong key", async () => {
    const res = await me(basicAuth({ email: t.users.hamlet.email, apiKey: t.users.othello.apiKey }));
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, INVALID_KEY);
  });

  it('answers an unknown email exactly like a wrong key', async () => {
    for (const apiKey of [t.users.hamlet.apiKey, 'A'.repeat(32)]) {
      const res = await me(basicAuth({ email: 'nobody@example.com', apiKey }));
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, INVALID_KEY);
    }
  });

  it('refuses a key that is not 32 alphanumeric characters with 401 "Malformed API key"', async () => {
    for (const apiKey of ['short', 'A'.repeat(31), 'A'.repeat(33), 'A'.repeat(31) + '-', '', t.users.hamlet.apiKey + ' ']) {
      const res = await me(basicAuth({ email: t.users.hamlet.email, apiKey }));
      assert.equal(res.status, 401, apiKey);
      assert.deepEqual(res.body, MALFORMED_KEY, apiKey);
    }
  });

  it('refuses a deactivated user with 401 USER_DEACTIVATED', async () => {
    const res = await me(basicAuth(victim));
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, USER_DEACTIVATED);
  });

  it("does not tell a deactivated user's wrong key from any wrong key", async () => {
    const res = await me(basicAuth({ email: victim.email, apiKey: 'B'.repeat(32) }));
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, INVALID_KEY);
  });

  it('refuses a deactivated user at POST /fetch_api_key with 401 USER_DEACTIVATED', async () => {
    const res = await t.api(null, 'POST', '/fetch_api_key', { username: victim.email, password: PASSWORD });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, USER_DEACTIVATED);
    const wrong = await t.api(null, 'POST', '/fetch_api_key', { username: victim.email, password: 'wrong-password' });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' });
  });

  it('refuses a malformed username at POST /fetch_api_key', async () => {
    const res = await t.api(null, 'POST', '/fetch_api_key', { username: 'not-an-email', password: PASSWORD });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'Enter a valid email address.', code: 'BAD_REQUEST' });
  });

  it('refuses everyone of a deactivated organization with 401 REALM_DEACTIVATED', async () => {
    doSetRealmDeactivated(t.app, true);
    t.app.batch.commit();
    try {
      for (const user of [t.users.owner, t.users.hamlet, t.users.bot]) {
        const res = await me(basicAuth(user));
        assert.equal(res.status, 401);
        assert.deepEqual(res.body, REALM_DEACTIVATED);
      }
      // the organization is checked before the account
      const deactivated = await me(basicAuth(victim));
      assert.deepEqual(deactivated.body, REALM_DEACTIVATED);
      const login = await t.api(null, 'POST', '/fetch_api_key', { username: t.users.hamlet.email, password: PASSWORD });
      assert.equal(login.status, 401);
      assert.deepEqual(login.body, REALM_DEACTIVATED);
      // a bad key is still just a bad key
      const bad = await me(basicAuth({ email: t.users.hamlet.email, apiKey: 'A'.repeat(32) }));
      assert.deepEqual(bad.body, INVALID_KEY);
      // the public settings still answer
      const settings = await t.api(null, 'GET', '/server_settings');
      assert.equal(settings.status, 200);
    } finally {
      doSetRealmDeactivated(t.app, false);
      t.app.batch.commit();
    }
    const back = await me(basicAuth(t.users.hamlet));
    assert.equal(back.status, 200);
  });

  describe('routes that also take the web session', () => {
    const cookieFor = (user: TestUser, expiresIn: number) => {
      const token = `tok-${user.id}-${expiresIn}`;
      const now = Math.floor(Date.now() / 1000);
      stmt(t.app.db, 'INSERT INTO session (token_hash, user_id, created, expires) VALUES (?, ?, ?, ?)').run(
        sessionTokenHash(token),
        user.id,
        now,
        now + expiresIn,
      );
      return `other=1; ${SESSION_COOKIE}=${token}`;
    };

    it('accept a valid session cookie or Basic credentials', async () => {
      const cookie = cookieFor(t.users.othello, 3600);
      const bySession = await t.raw('GET', '/api/v1/test/session', { headers: { cookie } });
      assert.deepEqual(bySession.body, { result: 'success', msg: '', user_id: t.users.othello.id });
      const byBasic = await t.raw('GET', '/api/v1/test/session', { headers: { authorization: basicAuth(t.users.hamlet), cookie } });
      assert.deepEqual(byBasic.body, { result: 'success', msg: '', user_id: t.users.hamlet.id });
    });

    it('refuse a missing, unknown or expired session with 401 UNAUTHORIZED', async () => {
      const expired = cookieFor(t.users.othello, -10);
      const variants: Record<string, string>[] = [{}, { cookie: `${SESSION_COOKIE}=unknown` }, { cookie: expired }];
      for (const headers of variants) {
        const res = await t.raw('GET', '/api/v1/test/session', { headers });
        assert.equal(res.status, 401);
        assert.deepEqual(res.body, NOT_LOGGED_IN);
        assert.equal(res.headers.get('www-authenticate'), WWW);
      }
    });

    it('refuse the session of a deactivated user', async () => {
      const res = await t.raw('GET', '/api/v1/test/session', { headers: { cookie: cookieFor(victim, 3600) } });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, USER_DEACTIVATED);
    });
  });
});

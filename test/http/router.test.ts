// The router: one table of cases against a Router built like the real one, then the same behaviours
// over the wire (404/405 envelopes, HEAD, OPTIONS, trailing slash, percent-encoding).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JsonableError } from '../../src/http/errors';
import { Router, type Match } from '../../src/http/router';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

function buildRouter(): Router<string> {
  const r = new Router<string>();
  r.add('GET', '/api/v1/users/me', 'me');
  r.add('GET', '/api/v1/users', 'list');
  r.add('POST', '/api/v1/users', 'create');
  r.add('GET', '/api/v1/users/{user_id:int}', 'byId');
  r.add('PATCH', '/api/v1/users/{user_id:int}', 'update');
  r.add('DELETE', '/api/v1/users/{user_id:int}', 'deactivate');
  r.add('GET', '/api/v1/users/{email}', 'byEmail');
  r.add('POST', '/api/v1/users/{user_id:int}/reactivate', 'reactivate');
  r.add('GET', '/api/v1/users/{email}/presence', 'presence');
  r.add('GET', '/user_uploads/{realm_id:int}/{path...}', 'upload');
  r.add('DELETE', '/user_uploads/{realm_id:int}/{path...}', 'deleteUpload');
  r.add('GET', '/files/{path...}', 'files');
  r.add('GET', '/files/special', 'special');
  r.add('GET', '/login', 'login');
  return r;
}

const found = (handler: string, params: Record<string, string> = {}): Match<string> => ({ kind: 'found', handler, params });
const notAllowed = (...allowed: string[]) => ({ kind: 'method', allowed }) as Match<string>;
const none: Match<string> = { kind: 'none' };

describe('Router.match', () => {
  const router = buildRouter();
  const cases: [string, string, Match<string>][] = [
    // static beats parameters
    ['GET', '/api/v1/users/me', found('me')],
    ['GET', '/api/v1/users', found('list')],
    ['POST', '/api/v1/users', found('create')],
    // integer vs string parameters, told apart by the value
    ['GET', '/api/v1/users/12', found('byId', { user_id: '12' })],
    ['GET', '/api/v1/users/007', found('byId', { user_id: '007' })],
    ['GET', '/api/v1/users/a@b.co', found('byEmail', { email: 'a@b.co' })],
    ['GET', '/api/v1/users/-5', found('byEmail', { email: '-5' })],
    ['GET', '/api/v1/users/1.5', found('byEmail', { email: '1.5' })],
    ['PATCH', '/api/v1/users/12', found('update', { user_id: '12' })],
    ['DELETE', '/api/v1/users/12', found('deactivate', { user_id: '12' })],
    ['POST', '/api/v1/users/12/reactivate', found('reactivate', { user_id: '12' })],
    // backtracking: an integer-looking value still reaches a route only the string parameter has
    ['GET', '/api/v1/users/12/presence', found('presence', { email: '12' })],
    ['GET', '/api/v1/users/a@b.co/presence', found('presence', { email: 'a@b.co' })],
    ['POST', '/api/v1/users/a@b.co/reactivate', none],
    // wrong method on a known path: 405 with the allowed methods (in a fixed order)
    ['PUT', '/api/v1/users/12', notAllowed('GET', 'PATCH', 'DELETE')],
    ['DELETE', '/api/v1/users/me', notAllowed('GET')],
    ['DELETE', '/api/v1/users', notAllowed('GET', 'POST')],
    ['PATCH', '/api/v1/users/a@b.co', notAllowed('GET')],
    ['GET', '/api/v1/users/12/reactivate', notAllowed('POST')],
    ['PROPFIND', '/api/v1/users', notAllowed('GET', 'POST')],
    // HEAD is answered by GET; where GET is missing it is a 405 like any other verb
    ['HEAD', '/api/v1/users/me', found('me')],
    ['HEAD', '/api/v1/users/12', found('byId', { user_id: '12' })],
    ['HEAD', '/api/v1/users/12/reactivate', notAllowed('POST')],
    // rest segments take everything that is left, and need at least one segment
    ['GET', '/user_uploads/2/ab/cd/file.txt', found('upload', { realm_id: '2', path: 'ab/cd/file.txt' })],
    ['DELETE', '/user_uploads/2/x', found('deleteUpload', { realm_id: '2', path: 'x' })],
    ['POST', '/user_uploads/2/x', notAllowed('GET', 'DELETE')],
    ['GET', '/user_uploads/2', none],
    ['GET', '/user_uploads/two/file.txt', none],
    ['GET', '/files/special', found('special')],
    ['GET', '/files/special/more', found('files', { path: 'special/more' })],
    ['GET', '/files/a/b', found('files', { path: 'a/b' })],
    // trailing slash names the same resource
    ['GET', '/api/v1/users/', found('list')],
    ['GET', '/api/v1/users/me/', found('me')],
    ['GET', '/api/v1/users/12/', found('byId', { user_id: '12' })],
    ['GET', '/login/', found('login')],
    // empty segments never fill a parameter
    ['GET', '/api/v1/users//', none],
    ['POST', '/api/v1/users//reactivate', none],
    // percent-encoded segments are decoded before matching
    ['GET', '/api/v1/users/hamlet%40example.com', found('byEmail', { email: 'hamlet@example.com' })],
    ['GET', '/api/v1/users/%31%32', found('byId', { user_id: '12' })],
    ['GET', '/api/v1/users/%6De', found('me')],
    ['GET', '/api/v1/users/caf%C3%A9%20x', found('byEmail', { email: 'café x' })],
    ['GET', '/user_uploads/2/a%20b/c.txt', found('upload', { realm_id: '2', path: 'a b/c.txt' })],
    // unknown paths
    ['GET', '/', none],
    ['GET', '/api/v1', none],
    ['GET', '/api/v1/nope', none],
    ['GET', '/api/v1/users/me/extra', none],
    ['GET', '/API/V1/USERS', none],
  ];
  for (const [method, path, want] of cases) {
    it(`${method} ${path} → ${want.kind === 'found' ? want.handler : want.kind}`, () => {
      assert.deepEqual(router.match(method, path), want);
    });
  }

  for (const path of ['/api/v1/users/%zz', '/api/v1/users/%', '/api/v1/users/abc%4', '/api/v1/users/%FF', '/api/v1/users/%C3%28']) {
    it(`refuses malformed percent-encoding in ${path} with a 400`, () => {
      assert.throws(
        () => router.match('GET', path),
        (err: unknown) =>
          err instanceof JsonableError && err.status === 400 && err.code === 'BAD_REQUEST' && err.message === 'Malformed percent-encoding in request',
      );
    });
  }
});

describe('Router.add', () => {
  it('refuses a duplicate route', () => {
    const r = buildRouter();
    assert.throws(() => r.add('GET', '/api/v1/users/me', 'again'), /duplicate route GET \/api\/v1\/users\/me/);
    assert.throws(() => r.add('GET', '/files/{other...}', 'again'), /duplicate route/);
  });

  it('refuses a rest segment that is not last', () => {
    assert.throws(() => new Router<string>().add('GET', '/a/{rest...}/b', 'x'), /rest segment must be last/);
  });

  it('refuses two names for the same parameter position', () => {
    const r = buildRouter();
    assert.throws(() => r.add('PUT', '/api/v1/users/{id:int}', 'x'), /conflicting parameter names/);
  });

  it('lists every route in registration order', () => {
    const r = new Router<string>();
    r.add('GET', '/a', 'a');
    r.add('POST', '/a/{b:int}', 'b');
    r.add('GET', '/c/{d...}', 'c');
    assert.deepEqual(r.routes(), [
      { method: 'GET', pattern: '/a' },
      { method: 'POST', pattern: '/a/{b:int}' },
      { method: 'GET', pattern: '/c/{d...}' },
    ]);
  });
});

describe('routing over the wire', () => {
  let t: TestServer;
  let auth: Record<string, string>;
  before(async () => {
    t = await startTestServer();
    auth = { authorization: basicAuth(t.users.hamlet) };
  });
  after(() => t.close());

  it('answers an unknown path under /api/v1 with a JSON 404 envelope', async () => {
    for (const path of ['/api/v1/nope', '/api/v1/users/me/nope', '/api/v2/users', '/nope']) {
      const res = await t.raw('GET', path, { headers: auth });
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.deepEqual(res.body, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' }, path);
    }
  });

  it('answers an unknown path with 404 even without credentials', async () => {
    const res = await t.raw('POST', '/api/v1/nope');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
  });

  it('answers a wrong method with 405, allowed_methods and an Allow header', async () => {
    const res = await t.raw('PUT', `/api/v1/users/${t.users.othello.id}`, { headers: auth });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, PATCH, DELETE');
    assert.deepEqual(res.body, {
      result: 'error',
      msg: 'Method Not Allowed',
      code: 'BAD_REQUEST',
      allowed_methods: ['GET', 'PATCH', 'DELETE'],
    });
    // (DELETE /users/me is a real route: it deactivates the caller.)
    const me = await t.raw('PUT', '/api/v1/users/me', { headers: auth });
    assert.equal(me.status, 405);
    assert.equal(me.headers.get('allow'), 'GET, DELETE');
    assert.deepEqual(me.body, { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['GET', 'DELETE'] });
  });

  it('answers HEAD like GET, with the headers and no body', async () => {
    const get = await t.raw('GET', '/api/v1/users/me', { headers: auth });
    const head = await t.raw('HEAD', '/api/v1/users/me', { headers: auth });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers.get('content-type'), 'application/json');
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(get.text)));
    const unauth = await t.raw('HEAD', '/api/v1/users/me');
    assert.equal(unauth.status, 401);
    assert.equal(unauth.text, '');
  });

  it('answers OPTIONS with 204 and the allowed methods, without credentials', async () => {
    const byId = await t.raw('OPTIONS', '/api/v1/users/12');
    assert.equal(byId.status, 204);
    assert.equal(byId.text, '');
    assert.equal(byId.headers.get('allow'), 'GET, PATCH, DELETE, HEAD');
    assert.equal(byId.headers.get('content-length'), null);
    const create = await t.raw('OPTIONS', '/api/v1/fetch_api_key');
    assert.equal(create.status, 204);
    assert.equal(create.headers.get('allow'), 'POST');
    const missing = await t.raw('OPTIONS', '/api/v1/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
  });

  it('treats a trailing slash as the same resource', async () => {
    const res = await t.raw('GET', '/api/v1/users/me/', { headers: auth });
    assert.equal(res.status, 200);
    assert.equal(res.body.user_id, t.users.hamlet.id);
  });

  it('tells /users/{id}, /users/{email} and /users/me apart by the value', async () => {
    const me = await t.raw('GET', '/api/v1/users/me', { headers: auth });
    assert.equal(me.body.user_id, t.users.hamlet.id);
    assert.equal('user' in me.body, false);
    const byId = await t.raw('GET', `/api/v1/users/${t.users.othello.id}`, { headers: auth });
    assert.equal(byId.body.user.user_id, t.users.othello.id);
    const byEmail = await t.raw('GET', `/api/v1/users/${t.users.othello.email}`, { headers: auth });
    assert.equal(byEmail.body.user.user_id, t.users.othello.id);
    const encoded = await t.raw('GET', `/api/v1/users/${encodeURIComponent(t.users.othello.email)}`, { headers: auth });
    assert.equal(encoded.status, 200);
    assert.deepEqual(encoded.body, byEmail.body);
  });

  it('answers malformed percent-encoding in the path with a 400 envelope', async () => {
    for (const path of ['/api/v1/users/%zz', '/api/v1/users/%E0%A4%A', '/api/v1/users/%FF']) {
      const res = await t.raw('GET', path, { headers: auth });
      assert.equal(res.status, 400, path);
      assert.deepEqual(res.body, { result: 'error', msg: 'Malformed percent-encoding in request', code: 'BAD_REQUEST' });
    }
  });
});

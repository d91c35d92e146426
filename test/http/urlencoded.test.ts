// application/x-www-form-urlencoded: the parser's table of cases (hostile ones included), then where
// form values come from over the wire (query string for every verb, body for POST/PATCH/PUT/DELETE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JsonableError } from '../../src/http/errors';
import { p } from '../../src/http/params';
import { publicRoute } from '../../src/http/route';
import { parseUrlencoded, parseUrlencodedBody } from '../../src/http/urlencoded';
import { startTestServer, type TestServer } from '../helpers/server';

const badRequest = (msg: string) => (err: unknown) =>
  err instanceof JsonableError && err.status === 400 && err.code === 'BAD_REQUEST' && err.message === msg;

describe('parseUrlencoded', () => {
  const cases: [string, [string, string][]][] = [
    ['', []],
    ['a=1', [['a', '1']]],
    ['a=1&b=2', [['a', '1'], ['b', '2']]],
    ['a=x+y', [['a', 'x y']]],
    ['a=x%2By', [['a', 'x+y']]],
    ['a=%20%2B+', [['a', ' + ']]],
    ['%61+b=c', [['a b', 'c']]],
    ['a=%3D%26', [['a', '=&']]],
    ['a=b=c', [['a', 'b=c']]],
    ['a', [['a', '']]],
    ['a=', [['a', '']]],
    ['&&a=1&&', [['a', '1']]],
    ['a=1&a=2&a=3', [['a', '3']]],
    ['a=1&b=2&a=3', [['a', '3'], ['b', '2']]],
    ['a=%E2%9C%93', [['a', '✓']]],
    ['a=caf%C3%A9', [['a', 'café']]],
    ['a=%F0%9F%98%80', [['a', '😀']]],
    ['a=%e2%9c%93', [['a', '✓']]],
    ['a=café', [['a', 'café']]],
    ['a=😀+x', [['a', '😀 x']]],
    // Unescaped non-ASCII with escapes: the strict decoder's path.
    ['a=café%20%C3%A9+x', [['a', 'café é x']]],
    ['a=😀%F0%9F%98%80', [['a', '😀😀']]],
    ['é=%41&b=ü', [['é', 'A'], ['b', 'ü']]],
    ['a=%00', [['a', '\u0000']]],
    ['content=%5B1%2C2%5D', [['content', '[1,2]']]],
  ];
  for (const [text, want] of cases) {
    it(`${JSON.stringify(text)} → ${JSON.stringify(want)}`, () => {
      assert.deepEqual([...parseUrlencoded(text)], want);
    });
  }

  for (const text of ['a=%', 'a=%4', 'a=%zz', 'a=%G1', '%=1', 'a=1&b=%x', 'a=100%', 'a=é%', 'a=é%4', 'a=é%zz', 'a=é%é1']) {
    it(`refuses malformed percent-encoding in ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseUrlencoded(text), badRequest('Malformed percent-encoding in request'));
    });
  }

  for (const text of ['a=%FF', 'a=%C3%28', 'a=%C0%AF', 'a=%ED%A0%80', 'a=%F0%9F%98', '%FF=1', 'a=%F4%90%80%80', 'a=%E0%80%80', 'a=%80', 'a=é%FF', 'a=%C3ü']) {
    it(`refuses invalid UTF-8 in ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseUrlencoded(text), badRequest('Invalid UTF-8 in request'));
    });
  }

  it('adds to an existing map, later values winning', () => {
    const into = new Map([
      ['a', 'query'],
      ['b', 'query'],
    ]);
    parseUrlencoded('a=body', into);
    assert.deepEqual([...into], [
      ['a', 'body'],
      ['b', 'query'],
    ]);
  });
});

describe('parseUrlencodedBody', () => {
  it('decodes UTF-8 bytes, then the form', () => {
    assert.deepEqual([...parseUrlencodedBody(Buffer.from('a=caf%C3%A9&b=café', 'utf8'))], [
      ['a', 'café'],
      ['b', 'café'],
    ]);
    assert.deepEqual([...parseUrlencodedBody(Buffer.alloc(0))], []);
  });

  it('refuses raw bytes that are not UTF-8', () => {
    for (const bytes of [[0x61, 0x3d, 0xff], [0x61, 0x3d, 0xc3, 0x28], [0x61, 0x3d, 0xe2, 0x9c]]) {
      assert.throws(() => parseUrlencodedBody(Buffer.from(bytes)), badRequest('Invalid UTF-8 in request'), JSON.stringify(bytes));
    }
  });
});

describe('form values over the wire', () => {
  let t: TestServer;
  const VERBS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;
  before(async () => {
    t = await startTestServer({
      extraRoutes: VERBS.map((method) =>
        publicRoute({
          method,
          path: '/api/v1/test/echo',
          params: { a: p.str().optional(), b: p.str().optional(), c: p.str().optional() },
          handle: ({ params, method }) => ({ method, echo: params }),
        }),
      ),
    });
  });
  after(() => t.close());

  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const echo = (method: string, echoed: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    result: 'success',
    msg: '',
    method,
    echo: echoed,
    ...extra,
  });

  for (const method of VERBS) {
    it(`reads the query string for ${method}`, async () => {
      const res = await t.raw(method, '/api/v1/test/echo?a=x+y&b=%E2%9C%93&c=1%2B1');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, echo(method, { a: 'x y', b: '✓', c: '1+1' }));
    });
  }

  for (const method of ['POST', 'PATCH', 'PUT', 'DELETE'] as const) {
    it(`reads a form body for ${method}, body values winning over the query string`, async () => {
      const res = await t.raw(method, '/api/v1/test/echo?a=query&b=query', { headers: FORM, body: 'a=body+value&c=%5B1%5D' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, echo(method, { a: 'body value', b: 'query', c: '[1]' }));
    });
  }

  it('keeps the last of duplicated keys, in the query string and in the body', async () => {
    const query = await t.raw('GET', '/api/v1/test/echo?a=1&a=2&b=x&b=');
    assert.deepEqual(query.body, echo('GET', { a: '2', b: '' }));
    const body = await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body: 'a=1&a=2&a=3' });
    assert.deepEqual(body.body, echo('POST', { a: '3' }));
  });

  it('accepts a charset parameter on the content type', async () => {
    const res = await t.raw('POST', '/api/v1/test/echo', {
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      body: 'a=caf%C3%A9',
    });
    assert.deepEqual(res.body, echo('POST', { a: 'café' }));
  });

  it('ignores a body that is not a form, keeping the query string', async () => {
    const res = await t.raw('POST', '/api/v1/test/echo?b=q', { headers: { 'content-type': 'application/json' }, body: '{"a":"1"}' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, echo('POST', { b: 'q' }));
  });

  it('treats an empty body as no fields', async () => {
    const res = await t.raw('DELETE', '/api/v1/test/echo?a=1');
    assert.deepEqual(res.body, echo('DELETE', { a: '1' }));
  });

  it('answers bad percent-encoding in the query string with a 400 envelope', async () => {
    for (const q of ['a=%zz', 'a=%', 'b=1&a=%4']) {
      const res = await t.raw('GET', `/api/v1/test/echo?${q}`);
      assert.equal(res.status, 400, q);
      assert.deepEqual(res.body, { result: 'error', msg: 'Malformed percent-encoding in request', code: 'BAD_REQUEST' });
    }
  });

  it('answers bad percent-encoding in the body with a 400 envelope', async () => {
    const res = await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body: 'a=1&b=%G0' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'Malformed percent-encoding in request', code: 'BAD_REQUEST' });
  });

  it('answers percent-encoded invalid UTF-8 with a 400 envelope', async () => {
    const query = await t.raw('GET', '/api/v1/test/echo?a=%FF%FE');
    assert.equal(query.status, 400);
    assert.deepEqual(query.body, { result: 'error', msg: 'Invalid UTF-8 in request', code: 'BAD_REQUEST' });
    const body = await t.raw('PATCH', '/api/v1/test/echo', { headers: FORM, body: 'a=%C3%28' });
    assert.equal(body.status, 400);
    assert.deepEqual(body.body, { result: 'error', msg: 'Invalid UTF-8 in request', code: 'BAD_REQUEST' });
  });

  it('answers raw invalid UTF-8 bytes in the body with a 400 envelope', async () => {
    const res = await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body: Buffer.from([0x61, 0x3d, 0xff, 0xfe, 0x26, 0x62, 0x3d, 0x31]) });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'Invalid UTF-8 in request', code: 'BAD_REQUEST' });
  });

  it('still answers after refusing a body', async () => {
    await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body: Buffer.from([0xff]) });
    const res = await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body: 'a=ok' });
    assert.deepEqual(res.body, echo('POST', { a: 'ok' }));
  });

  it('decodes a body of unescaped non-ASCII text with escapes as large as the limit, without logging in', async () => {
    // Such a body is valid (browsers and curl may send UTF-8 unescaped) but not for the native
    // decoder, so it takes the strict byte loop: pushing numbers into an array took ~120 ms a MiB,
    // over a second for a body within the limit, on a route that needs no credentials.
    const copies = Math.floor((t.app.config.maxBodyBytes - 100) / 5);
    const value = 'é%41'.repeat(copies);
    const body = Buffer.from(`a=${value}&b=%E2%9C%93`, 'utf8');
    assert.ok(body.length > t.app.config.maxBodyBytes - 200 && body.length <= t.app.config.maxBodyBytes);
    // Decoded exactly (its time: bench/security-bounds.ts, F).
    const res = await t.raw('POST', '/api/v1/test/echo', { headers: FORM, body });
    assert.equal(res.status, 200);
    assert.equal(res.body.echo.a, 'éA'.repeat(copies));
    assert.equal(res.body.echo.b, '✓');
  });

  it('reports form keys no parameter uses', async () => {
    const res = await t.raw('PUT', '/api/v1/test/echo?z=1', { headers: FORM, body: 'a=1&y=2' });
    assert.deepEqual(res.body, echo('PUT', { a: '1' }, { ignored_parameters_unsupported: ['y', 'z'] }));
  });
});

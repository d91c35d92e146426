// Zulip's parameter conventions: units of params.ts (kinds, JSON decoding, valibot issues in Zulip's
// wording, readParams), then the same rules over the wire with ignored_parameters_unsupported.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { JsonableError } from '../../src/http/errors';
import { codePoints, JsonFloat, p, parseJson, readParams, validate, zBool, zInt, zStr } from '../../src/http/params';
import { publicRoute } from '../../src/http/route';
import { encodeParams, startTestServer, type TestServer } from '../helpers/server';

/** Asserts that fn throws the JsonableError with exactly this message, code, status and data. */
function throwsJsonable(fn: () => unknown, msg: string, code = 'BAD_REQUEST', data: Record<string, unknown> = {}, status = 400) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof JsonableError, `not a JsonableError: ${String(err)}`);
    assert.deepEqual({ msg: err.message, code: err.code, data: err.data, status: err.status }, { msg, code, data, status });
    return true;
  });
}

const parse = <T>(param: { parse(raw: string, name: string): T }, raw: string, name = 'x') => param.parse(raw, name);

describe('parseJson', () => {
  it('reads integral numbers written as floats as JsonFloat, everything else as JSON.parse does', () => {
    assert.equal(parseJson('5'), 5);
    assert.equal(parseJson('-5'), -5);
    assert.equal(parseJson('1.5'), 1.5);
    assert.deepEqual(parseJson('1.0'), new JsonFloat(1));
    assert.deepEqual(parseJson('1e30'), new JsonFloat(1e30));
    assert.deepEqual(parseJson('-2E2'), new JsonFloat(-200));
    assert.equal(parseJson('"1.0"'), '1.0');
    assert.deepEqual(parseJson('[1, 2.0, "3.0", {"a": 4e0, "b": "x\\"5.0"}]'), [1, new JsonFloat(2), '3.0', { a: new JsonFloat(4), b: 'x"5.0' }]);
    assert.equal(JSON.stringify(parseJson('{"a": [1.0]}')), '{"a":[1]}');
  });

  it('keeps a __proto__ key an own property', () => {
    const out = parseJson('{"__proto__": 1.0}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, new JsonFloat(1));
  });

  it('refuses invalid JSON, also where a float rewrite would make it valid', () => {
    for (const raw of ['', '[1', '{1.0: 2}', 'True', "'x'", 'NaN', '007']) assert.throws(() => parseJson(raw), SyntaxError, raw);
  });
});

describe('p.int', () => {
  const cases: [string, number | string][] = [
    ['5', 5],
    ['0', 0],
    ['-5', -5],
    [' 7 ', 7],
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['9007199254740992', 'x is too large'],
    ['99999999999999999999', 'x is too large'],
    ['-99999999999999999999', 'x is too small'],
    ['1e30', 'x is not an integer'],
    ['1.0', 'x is not an integer'],
    ['1.5', 'x is not an integer'],
    ['-0.5', 'x is not an integer'],
    ['1e400', 'x is not an integer'],
    ['"5"', 'x is not an integer'],
    ['true', 'x is not an integer'],
    ['null', 'x is not an integer'],
    ['[5]', 'x is not an integer'],
    ['', 'x is not valid JSON'],
    ['abc', 'x is not valid JSON'],
    ['5abc', 'x is not valid JSON'],
    ['0x10', 'x is not valid JSON'],
    ['05', 'x is not valid JSON'],
  ];
  for (const [raw, want] of cases) {
    it(`${JSON.stringify(raw)} → ${want}`, () => {
      if (typeof want === 'number') assert.equal(parse(p.int(), raw), want);
      else throwsJsonable(() => parse(p.int(), raw), want);
    });
  }

  it('applies min and max', () => {
    const bounded = p.int({ min: 0, max: 100 });
    assert.equal(parse(bounded, '0'), 0);
    assert.equal(parse(bounded, '100'), 100);
    throwsJsonable(() => parse(bounded, '-1', 'num_before'), 'num_before is too small');
    throwsJsonable(() => parse(bounded, '101', 'num_before'), 'num_before is too large');
  });
});

describe('p.bool', () => {
  it('accepts JSON true and false only', () => {
    assert.equal(parse(p.bool(), 'true'), true);
    assert.equal(parse(p.bool(), 'false'), false);
    for (const raw of ['1', '0', '"true"', 'null', '[]']) throwsJsonable(() => parse(p.bool(), raw, 'flag'), 'flag is not a boolean');
    for (const raw of ['True', 'yes', '']) throwsJsonable(() => parse(p.bool(), raw, 'flag'), 'flag is not valid JSON');
  });
});

describe('p.str', () => {
  it('takes the raw value, JSON-looking or not', () => {
    for (const raw of ['', 'hello', '5', '"quoted"', '[1,2]', ' spaced ']) assert.equal(parse(p.str(), raw), raw);
  });

  it('counts code points for max, as Python does', () => {
    assert.equal(parse(p.str({ max: 3 }), '😀😀😀'), '😀😀😀');
    throwsJsonable(() => parse(p.str({ max: 3 }), 'abcd', 'topic'), 'topic is too long (limit: 3 characters)');
    throwsJsonable(() => parse(p.str({ max: 3 }), '😀😀😀😀', 'topic'), 'topic is too long (limit: 3 characters)');
  });

  it('refuses an empty value when min is 1', () => {
    throwsJsonable(() => parse(p.str({ min: 1 }), '', 'name'), 'name cannot be blank');
    assert.equal(parse(p.str({ min: 1 }), 'a'), 'a');
  });
});

describe('p.oneOf', () => {
  it('accepts only the listed raw strings', () => {
    const anchor = p.oneOf(['newest', 'oldest'] as const);
    assert.equal(parse(anchor, 'newest'), 'newest');
    throwsJsonable(() => parse(anchor, '"newest"', 'anchor'), 'Invalid anchor');
    throwsJsonable(() => parse(anchor, 'Newest', 'anchor'), 'Invalid anchor');
  });
});

describe('p.json', () => {
  const ids = p.json(v.array(zInt()));
  it('validates lists with the index in var_name', () => {
    assert.deepEqual(parse(ids, '[1, 2, 3]'), [1, 2, 3]);
    assert.deepEqual(parse(ids, '[]'), []);
    throwsJsonable(() => parse(ids, '[1, "a"]', 'user_ids'), 'user_ids[1] is not an integer');
    throwsJsonable(() => parse(ids, '[1, 2.0]', 'user_ids'), 'user_ids[1] is not an integer');
    throwsJsonable(() => parse(ids, '[1, 1e30]', 'user_ids'), 'user_ids[1] is not an integer');
    throwsJsonable(() => parse(ids, '[1, 99999999999999999999]', 'user_ids'), 'user_ids[1] is too large');
    throwsJsonable(() => parse(ids, '{}', 'user_ids'), 'user_ids is not a list');
    throwsJsonable(() => parse(ids, '5', 'user_ids'), 'user_ids is not a list');
    throwsJsonable(() => parse(ids, '[1,', 'user_ids'), 'user_ids is not valid JSON');
  });

  it('validates objects with the key in var_name', () => {
    const storage = p.json(v.record(v.string(), zStr()));
    assert.deepEqual(parse(storage, '{"a": "b"}'), { a: 'b' });
    throwsJsonable(() => parse(storage, '{"foo": 5}', 'storage'), 'storage["foo"] is not a string');
    throwsJsonable(() => parse(storage, '"x"', 'storage'), 'storage is not a dict');
  });

  it('reports unexpected and missing keys of strict objects', () => {
    const item = p.json(v.array(v.strictObject({ id: zInt(), value: zStr() })));
    assert.deepEqual(parse(item, '[{"id": 1, "value": "x"}]'), [{ id: 1, value: 'x' }]);
    throwsJsonable(() => parse(item, '[{"id": 1, "value": "x", "extra": 2}]', 'profile_data'), 'Argument "extra" at profile_data[0] is unexpected');
    throwsJsonable(() => parse(item, '[{"value": "x"}]', 'profile_data'), 'profile_data[0]["id"] field is missing: Field required');
  });

  it('keeps a schema message that carries {var_name}', () => {
    const role = p.json(v.pipe(zInt(), v.check((r) => [100, 200].includes(r), 'Invalid {var_name}: Value error, Not in the list of possible values')));
    assert.equal(parse(role, '200'), 200);
    throwsJsonable(() => parse(role, '300', 'role'), 'Invalid role: Value error, Not in the list of possible values');
    throwsJsonable(() => parse(role, '200.0', 'role'), 'role is not an integer');
  });

  it('words booleans and nested values the Zulip way', () => {
    throwsJsonable(() => parse(p.json(v.object({ a: zBool() })), '{"a": 1}', 'caps'), 'caps["a"] is not a boolean');
  });
});

describe('list bounds', () => {
  const big = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  it('p.list refuses more than max items before validating any', () => {
    const ids = p.list(zInt(), { max: 3 });
    assert.deepEqual(parse(ids, '[1,2,3]'), [1, 2, 3]);
    throwsJsonable(() => parse(ids, '[1,2,3,4]', 'messages'), 'messages is too long (limit: 3 items)');
    throwsJsonable(() => parse(ids, '["a","b","c","d"]', 'messages'), 'messages is too long (limit: 3 items)');
    throwsJsonable(() => parse(ids, '["a"]', 'messages'), 'messages[0] is not an integer');
    throwsJsonable(() => parse(ids, '{}', 'messages'), 'messages is not a list');
  });

  it('every JSON parameter refuses a list of more than 10000 items at any depth, naming where', () => {
    assert.equal((parse(p.json(v.unknown()), big(10_000)) as number[]).length, 10_000);
    throwsJsonable(() => parse(p.json(v.unknown()), big(10_001), 'to'), 'to is too long (limit: 10000 items)');
    throwsJsonable(() => parse(p.json(v.unknown()), `[{"to":[1]},{"a":{"to":${big(10_001)}}}]`, 'drafts'), 'drafts[1]["a"]["to"] is too long (limit: 10000 items)');
    throwsJsonable(() => parse(p.jsonOrStr(v.unknown()), big(10_001), 'to'), 'to is too long (limit: 10000 items)');
    throwsJsonable(() => parse(p.int(), big(10_001), 'n'), 'n is too long (limit: 10000 items)');
    // Nesting is walked without recursion: a deep value is no stack overflow (and no 500).
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    throwsJsonable(() => parse(p.json(zInt()), deep, 'n'), 'n is not an integer');
  });

  it('every JSON parameter refuses an object of more than 10000 members at any depth, before parsing it', () => {
    // An object of 300,000 keys took ~160 ms to parse and ~360 ms more to walk: its members are
    // counted in the text first (commas inside strings do not count).
    const members = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `"k${from + i}":"a,b,{c}"`).join(',');
    assert.equal(Object.keys(parse(p.json(v.unknown()), `{${members(10_000)}}`) as object).length, 10_000);
    throwsJsonable(() => parse(p.json(v.unknown()), `{${members(10_001)}}`, 'storage'), 'storage is too long (limit: 10000 items)');
    throwsJsonable(() => parse(p.json(v.unknown()), `[1,{"a":[{${members(10_001)}}]}]`, 'drafts'), 'drafts is too long (limit: 10000 items)');
    // Members of different objects, and items of lists inside one, count apart.
    const siblings = `{"a":{${members(6000)}},"b":{${members(6000, 6000)}},"c":[${big(9000).slice(1, -1)}]}`;
    assert.equal(Object.keys((parse(p.json(v.unknown()), siblings) as { b: object }).b).length, 6000);
    throwsJsonable(() => parse(p.json(v.unknown()), `{${members(300_000)}}`, 'storage'), 'storage is too long (limit: 10000 items)');
  });
});

describe('p.jsonOrStr', () => {
  it('decodes JSON when it can and keeps the raw string otherwise', () => {
    const to = p.jsonOrStr(v.array(zInt()));
    assert.deepEqual(parse(to, '[1, 2]'), [1, 2]);
    assert.equal(parse(to, 'general'), 'general');
    assert.equal(parse(to, '"general"'), 'general');
  });
});

describe('validate', () => {
  it('validates an already-decoded value', () => {
    assert.equal(validate(zInt({ min: 1 }), 3, 'n'), 3);
    throwsJsonable(() => validate(zInt({ min: 1 }), 0, 'n'), 'n is too small');
    throwsJsonable(() => validate(zStr({ max: 2 }), 'abc', 's'), 's is too long (limit: 2 characters)');
    throwsJsonable(() => validate(zStr({ min: 1 }), '', 's'), 's cannot be blank');
    throwsJsonable(() => validate(zStr({ min: 2 }), 'a', 's'), 's is too short.');
  });
});

describe('codePoints', () => {
  it('counts astral characters once', () => {
    assert.equal(codePoints(''), 0);
    assert.equal(codePoints('abc'), 3);
    assert.equal(codePoints('é😀x'), 3);
  });
});

describe('readParams', () => {
  const spec = {
    name: p.str(),
    count: p.int().default(10),
    flag: p.bool().optional(),
    topic: p.str().alias('subject'),
  };
  const form = (entries: Record<string, string>) => new Map(Object.entries(entries));

  it('reads declared values, applies defaults and reports the keys it used', () => {
    const { values, used } = readParams(spec, form({ name: 'n', topic: 't', other: 'o' }));
    assert.deepEqual(values, { name: 'n', count: 10, flag: undefined, topic: 't' });
    assert.deepEqual([...used].sort(), ['name', 'topic']);
  });

  it('accepts an alias and reports the alias as used', () => {
    const { values, used } = readParams(spec, form({ name: 'n', subject: 's', count: '3', flag: 'true' }));
    assert.deepEqual(values, { name: 'n', count: 3, flag: true, topic: 's' });
    assert.deepEqual([...used].sort(), ['count', 'flag', 'name', 'subject']);
  });

  it('refuses a missing required parameter with REQUEST_VARIABLE_MISSING', () => {
    throwsJsonable(() => readParams(spec, form({ topic: 't' })), "Missing 'name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'name' });
  });

  it('refuses two aliases of one parameter', () => {
    throwsJsonable(
      () => readParams(spec, form({ name: 'n', topic: 't', subject: 's' })),
      "Can't decide between 'topic' and 'subject' arguments",
      'REQUEST_CONFUSING_VAR',
      { var_name1: 'topic', var_name2: 'subject' },
    );
  });

  it('names the alias that was sent in validation errors', () => {
    throwsJsonable(() => readParams({ n: p.int().alias('num') }, form({ num: 'x' })), 'num is not valid JSON');
  });
});

describe('parameters over the wire', () => {
  let t: TestServer;
  const params = {
    count: p.int().optional(),
    limit: p.int({ min: 0, max: 100 }).optional(),
    flag: p.bool().optional(),
    ids: p.json(v.array(zInt())).optional(),
    name: p.str().optional(),
  };
  before(async () => {
    t = await startTestServer({
      extraRoutes: [
        ...(['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const).map((method) =>
          publicRoute({ method, path: '/api/v1/test/params', params, handle: ({ params }) => ({ params }) }),
        ),
        publicRoute({
          method: 'POST',
          path: '/api/v1/test/required/{thing_id:int}',
          params: { needed: p.int() },
          handle: ({ params }) => ({ needed: params.needed }),
        }),
        publicRoute({
          method: 'POST',
          path: '/api/v1/test/ignores',
          params: { a: p.str().optional(), b: p.str().optional() },
          handle(ctx) {
            // a handler may report declared parameters as ignored (PATCH /settings does for unchanged values)
            if (ctx.params.b !== undefined) ctx.ignore('b');
            ctx.ignore('a_extra');
            return {};
          },
        }),
      ],
    });
  });
  after(() => t.close());

  const post = (body: string, path = '/api/v1/test/params') =>
    t.raw('POST', path, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const badRequest = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

  it('decodes JSON-encoded integers, booleans and lists, and raw strings', async () => {
    const res = await post(encodeParams({ count: -5, limit: 100, flag: true, ids: [1, 2], name: '[not json' }));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', params: { count: -5, limit: 100, flag: true, ids: [1, 2], name: '[not json' } });
  });

  const refusals: [string, string][] = [
    ['count=1e30', 'count is not an integer'],
    ['count=99999999999999999999', 'count is too large'],
    ['count=-99999999999999999999', 'count is too small'],
    ['count=1.5', 'count is not an integer'],
    ['count=2.0', 'count is not an integer'],
    ['count=%225%22', 'count is not an integer'],
    ['count=abc', 'count is not valid JSON'],
    ['count=', 'count is not valid JSON'],
    ['limit=-1', 'limit is too small'],
    ['limit=101', 'limit is too large'],
    ['flag=1', 'flag is not a boolean'],
    ['flag=%22true%22', 'flag is not a boolean'],
    ['flag=True', 'flag is not valid JSON'],
    ['ids=%5B1%2C%22a%22%5D', 'ids[1] is not an integer'],
    ['ids=%7B%7D', 'ids is not a list'],
    ['ids=%5B1', 'ids is not valid JSON'],
  ];
  for (const [body, msg] of refusals) {
    it(`answers ${body} with 400 "${msg}"`, async () => {
      const res = await post(body);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, badRequest(msg));
    });
  }

  it('answers a missing required parameter with REQUEST_VARIABLE_MISSING and var_name', async () => {
    const res = await post('other=1', '/api/v1/test/required/5');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: "Missing 'needed' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'needed' });
  });

  it('lists unsupported parameters sorted, from the query string and the body', async () => {
    const res = await t.raw('POST', '/api/v1/test/params?zeta=1&count=1', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'beta=2&alpha=3&name=x',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      params: { count: 1, name: 'x' },
      ignored_parameters_unsupported: ['alpha', 'beta', 'zeta'],
    });
  });

  it('leaves ignored_parameters_unsupported out when every parameter was used', async () => {
    const res = await t.raw('GET', '/api/v1/test/params?count=1&flag=false');
    assert.deepEqual(res.body, { result: 'success', msg: '', params: { count: 1, flag: false } });
    const none = await t.raw('GET', '/api/v1/test/params');
    assert.deepEqual(none.body, { result: 'success', msg: '', params: {} });
  });

  it('never reports path parameters, and never on errors', async () => {
    const ok = await post('needed=1', '/api/v1/test/required/5');
    assert.deepEqual(ok.body, { result: 'success', msg: '', needed: 1 });
    const err = await post('needed=x&unknown=1', '/api/v1/test/required/5');
    assert.equal(err.status, 400);
    assert.deepEqual(err.body, badRequest('needed is not valid JSON'));
  });

  it('adds the names a handler reports, sorted and without duplicates', async () => {
    const ignored = await post('a=1&b=2&zz=3', '/api/v1/test/ignores');
    assert.deepEqual(ignored.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['a_extra', 'b', 'zz'] });
  });
});

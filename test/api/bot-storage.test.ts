import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { basicAuth, encodeParams, startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer({ configure: (c) => (c.botStorageLimit = 20) });
});
after(() => t.close());

const ok = { result: 'success', msg: '' };
const bad = (msg: string, extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code: 'BAD_REQUEST', ...extra });
const denied = { result: 'error', msg: 'This endpoint is only available to bots.', code: 'PERMISSION_DENIED' };

describe('PUT /bot_storage', () => {
  it('stores keys, overwrites existing ones and keeps the others', async () => {
    const bot = t.users.bot;
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: { a: '1', b: '2' } })).body, ok);
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: { b: '3' } })).body, ok);
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage')).body, { ...ok, storage: { a: '1', b: '3' } });
    await t.api(bot, 'DELETE', '/bot_storage');
  });

  it('refuses humans with PERMISSION_DENIED', async () => {
    for (const u of [t.users.hamlet, t.users.owner, t.users.guest]) {
      const res = await t.api(u, 'PUT', '/bot_storage', { storage: { a: '1' } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, denied);
      assert.deepEqual((await t.api(u, 'GET', '/bot_storage')).body, denied);
      assert.deepEqual((await t.api(u, 'DELETE', '/bot_storage')).body, denied);
    }
  });

  it('refuses a result over the limit, counting characters of keys and values, and states excess and limit', async () => {
    const bot = t.users.bot;
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: { key: 'ééééééé' } })).body, ok); // 10 characters
    const res = await t.api(bot, 'PUT', '/bot_storage', { storage: { other: '12345678' } }); // +13 → 23
    assert.deepEqual(res.body, bad('Request exceeds storage limit by 3 characters. The limit is 20 characters.'));
    // Overwriting counts the replaced entry out.
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: { key: '12345678901234567' } })).body, ok); // 20
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage')).body, { ...ok, storage: { key: '12345678901234567' } });
    await t.api(bot, 'DELETE', '/bot_storage');
  });

  it('validates storage', async () => {
    const bot = t.users.bot;
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', {})).body, {
      result: 'error',
      msg: "Missing 'storage' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'storage',
    });
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: 'nope' })).body, bad('storage is not valid JSON'));
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: [1] })).body, bad('storage is not a dict'));
    assert.deepEqual((await t.api(bot, 'PUT', '/bot_storage', { storage: { foo: 1 } })).body, bad('storage["foo"] is not a string'));
  });
});

describe('GET /bot_storage', () => {
  it('returns the named keys, and refuses a missing one', async () => {
    const bot = t.users.bot;
    await t.api(bot, 'PUT', '/bot_storage', { storage: { a: 'x', b: 'y' } });
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage', { keys: ['b'] })).body, { ...ok, storage: { b: 'y' } });
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage', { keys: ['b', 'zz'] })).body, bad('Key does not exist.'));
    await t.api(bot, 'DELETE', '/bot_storage');
  });
});

describe('DELETE /bot_storage', () => {
  it('deletes the named keys; a missing key deletes nothing; no keys deletes all', async () => {
    const bot = t.users.bot;
    await t.api(bot, 'PUT', '/bot_storage', { storage: { a: 'x', b: 'y', c: 'z' } });
    assert.deepEqual((await t.api(bot, 'DELETE', '/bot_storage', { keys: ['a', 'nope'] })).body, bad('Key does not exist.'));
    assert.deepEqual((await t.api(bot, 'DELETE', '/bot_storage', { keys: ['a'] })).body, ok);
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage')).body, { ...ok, storage: { b: 'y', c: 'z' } });
    assert.deepEqual((await t.api(bot, 'DELETE', '/bot_storage')).body, ok);
    assert.deepEqual((await t.api(bot, 'GET', '/bot_storage')).body, { ...ok, storage: {} });
  });
});

describe('bot storage bounds', () => {
  it('refuses more than 10,000 keys, in one request (before parsing it) or in all', async () => {
    // Zulip bounds the characters only. 300,000 small keys (7.5 MB) took 2 s to store, and every
    // GET of the whole storage ~600 ms, as often as the bot liked.
    const roomy = await startTestServer();
    try {
      const bot = roomy.users.bot;
      const keys = (n: number, from = 0) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, 'v']));
      const body = encodeParams({ storage: keys(150_000) });
      const headers = { authorization: basicAuth(bot), 'content-type': 'application/x-www-form-urlencoded' };
      assert.deepEqual((await roomy.raw('PUT', '/api/v1/bot_storage', { headers, body })).body, bad('storage is too long (limit: 10000 items)'));
      assert.deepEqual((await roomy.api(bot, 'PUT', '/bot_storage', { storage: keys(6000) })).body, ok);
      assert.deepEqual((await roomy.api(bot, 'PUT', '/bot_storage', { storage: keys(5000, 6000) })).body, bad('Bot storage can hold at most 10000 keys.'));
      // Overwriting keys it has is no new key.
      assert.deepEqual((await roomy.api(bot, 'PUT', '/bot_storage', { storage: { ...keys(4000, 6000), ...keys(1000) } })).body, ok);
      assert.equal(Object.keys((await roomy.api(bot, 'GET', '/bot_storage')).body.storage).length, 10_000);
    } finally {
      await roomy.close();
    }
  });
});

// GET /health: 200 when the database can be read and written, 503 (Zulip's SERVER_NOT_READY) when it
// cannot: query-only, opened read-only, closed. No credentials, never rate limited, never cached.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { App } from '../../src/app';
import { parseRule } from '../../src/http/ratelimit';
import { checkDatabase } from '../../src/lib/health';
import { loadSqliteAddon } from '../../src/native';
import { PARLEY_VERSION } from '../../src/version';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

const OK = { result: 'success', msg: '', status: 'ok', version: PARLEY_VERSION, database: 'ok' };
const NO_CACHE = 'max-age=0, no-cache, no-store, must-revalidate, private';

let t: TestServer;
before(async () => {
  // Rate limits on, with room for two anonymous requests a minute from one address.
  t = await startTestServer({
    configure: (c) => {
      c.rateLimits = true;
      c.rateLimitRules = { ...c.rateLimitRules, apiByIp: parseRule('2/60', 'test') };
    },
  });
});
after(() => t.close());

describe('GET /health', () => {
  it('answers 200 with the version and the database state, without credentials, not cacheable', async () => {
    const res = await t.raw('GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, OK);
    assert.equal(res.headers.get('cache-control'), NO_CACHE);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('x-ratelimit-remaining'), null, 'not counted against any rate limit');
  });

  it('ignores credentials, good or bad (a bot, a deactivated user, a wrong key)', async () => {
    const deactivated = await t.api(t.users.owner, 'DELETE', `/users/${t.users.othello.id}`);
    assert.equal(deactivated.status, 200, deactivated.text);
    for (const auth of [basicAuth(t.users.bot), basicAuth(t.users.othello), basicAuth({ email: 'x@example.com', apiKey: 'nope' })]) {
      const res = await t.raw('GET', '/health', { headers: { authorization: auth } });
      assert.deepEqual([res.status, res.body], [200, OK]);
    }
  });

  it('is never rate limited while other anonymous routes are', async () => {
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await t.raw('GET', '/health'));
    assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
    const settings = [];
    for (let i = 0; i < 3; i++) settings.push((await t.raw('GET', '/api/v1/server_settings')).status);
    assert.ok(settings.includes(429), `server_settings: ${settings}`);
    assert.equal((await t.raw('GET', '/health')).status, 200);
  });

  it('answers HEAD with the headers only, and refuses other methods with 405', async () => {
    const head = await t.raw('HEAD', '/health');
    assert.deepEqual([head.status, head.text], [200, '']);
    const post = await t.raw('POST', '/health');
    assert.equal(post.status, 405);
    assert.deepEqual(post.body, { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['GET'] });
  });

  it('answers 503 SERVER_NOT_READY when the database refuses writes (query-only), and 200 again after', async () => {
    t.app.db.pragma('query_only = ON');
    try {
      const res = await t.raw('GET', '/health');
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, {
        result: 'error',
        msg: 'Cannot write to the database',
        code: 'SERVER_NOT_READY',
        status: 'error',
        version: PARLEY_VERSION,
        database: 'read-only',
      });
      assert.equal(res.headers.get('cache-control'), NO_CACHE);
    } finally {
      t.app.db.pragma('query_only = OFF');
    }
    assert.deepEqual((await t.raw('GET', '/health')).body, OK);
  });

  it('changes nothing: health_probe stays empty and no write is counted', async () => {
    const before = t.app.db.prepare('SELECT total_changes() AS n').get();
    for (let i = 0; i < 3; i++) assert.equal((await t.raw('GET', '/health')).status, 200);
    assert.deepEqual(t.app.db.prepare('SELECT total_changes() AS n').get(), before);
    assert.deepEqual(t.app.db.prepare('SELECT count(*) AS n FROM health_probe').get(), { n: 0 });
  });

  it('answers 503 when the database is closed (not a 500)', async () => {
    const s = await startTestServer();
    try {
      // Nothing pending first (a batch committed on a closed connection would throw in its own tick).
      s.app.batch.commit();
      await new Promise((r) => setImmediate(r));
      s.app.db.close();
      const res = await s.raw('GET', '/health');
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, {
        result: 'error',
        msg: 'Cannot query the database',
        code: 'SERVER_NOT_READY',
        status: 'error',
        version: PARLEY_VERSION,
        database: 'unavailable',
      });
    } finally {
      await s.close();
    }
  });
});

describe('checkDatabase', () => {
  it('says read-only for a database file opened read-only, ok for the same file read-write', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-health-'));
    try {
      t.app.batch.commit();
      await t.app.db.backup(path.join(dir, 'parley.db'));
      const nativeBinding = loadSqliteAddon() as never;
      const config = { ...t.app.config, dataDir: dir };
      const ro = new Database(path.join(dir, 'parley.db'), { readonly: true, nativeBinding });
      const rw = new Database(path.join(dir, 'parley.db'), { nativeBinding });
      try {
        assert.equal(checkDatabase({ db: ro, config } as unknown as App), 'read-only');
        assert.equal(checkDatabase({ db: rw, config } as unknown as App), 'ok');
      } finally {
        ro.close();
        rw.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

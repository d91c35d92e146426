// The single executable (dist/parley, written by `npm run build`) copied alone into an empty directory,
// with no node_modules anywhere above it: it must init, serve and answer GET /users/me.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BINARY, apiCall, makeTempDirs, runCli, startServe } from '../helpers/cli';
import { PARLEY_VERSION } from '../../src/version';
import { SQLITE_ASSET, UWS_ASSET } from '../../src/native';

const tmp = makeTempDirs('parley-bin-');
after(() => tmp.cleanup());

/** Directories from `dir` up to the root that hold a node_modules. */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'node_modules'))) found.push(d);
    if (path.dirname(d) === d) return found;
  }
}

describe('dist/parley (single executable)', () => {
  it('runs alone from an empty directory: --version, init, serve, GET /users/me, SIGTERM', async () => {
    // Missing binary is a failure, not a skip: `npm test` builds it first.
    assert.ok(fs.existsSync(BINARY), `${BINARY} is missing: run npm run build`);
    const dir = tmp.make();
    assert.deepEqual(nodeModulesAbove(dir), [], 'the temp dir must have no node_modules above it');
    const exe = path.join(dir, 'parley');
    fs.copyFileSync(BINARY, exe);
    fs.chmodSync(exe, 0o755);
    const cacheDir = path.join(dir, 'cache');
    const opts = { cli: [exe], cwd: dir, env: { PARLEY_CACHE_DIR: cacheDir } };

    assert.deepEqual(await runCli(['--version'], opts), { code: 0, signal: null, stdout: `parley ${PARLEY_VERSION}\n`, stderr: '' });

    // A relative --data-dir resolves against the working directory.
    const init = await runCli(['init', '--data-dir', 'd', '--realm-name', 'X', '--email', 'a@b.co', '--password', 'secret123'], opts);
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stderr, '');
    assert.match(init.stdout, /^\{"realm_id":1,"user_id":1,"email":"a@b\.co","api_key":"[A-Za-z0-9]{32}"\}\n$/);
    const creds = JSON.parse(init.stdout);
    assert.ok(fs.existsSync(path.join(dir, 'd', 'parley.db')));

    const server = await startServe(['--data-dir', 'd', '--port', '0'], opts);
    try {
      const me = await apiCall(server.url, { email: 'a@b.co', apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.result, 'success');
      assert.equal(me.body.email, 'a@b.co');
      assert.equal(me.body.user_id, 1);
      assert.equal(me.body.role, 100);
    } finally {
      const exit = await server.stop();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    }
    assert.equal(server.stdout(), `listening on ${server.url}\n`);
    assert.equal(server.stderr(), '');

    // Both addons were extracted once, into content-addressed directories of the cache dir.
    const extracted = fs
      .readdirSync(cacheDir)
      .flatMap((hash) => fs.readdirSync(path.join(cacheDir, hash)).map((f) => `${/^[0-9a-f]{16}$/.test(hash) ? 'HASH' : hash}/${f}`))
      .sort();
    assert.deepEqual(extracted, [`HASH/${SQLITE_ASSET}`, `HASH/${UWS_ASSET}`].sort());
  });
});

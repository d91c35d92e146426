// `parley init`: creates the organization and its owner once, printing one JSON line of credentials.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDirs, runCli } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

describe('parley init', () => {
  it('prints exactly one JSON line with realm_id, user_id, email and api_key, then refuses a second init with exit 1', async () => {
    const dataDir = path.join(tmp.make(), 'data'); // does not exist yet: init creates it
    const first = await runCli(['init', '--data-dir', dataDir, '--realm-name', 'Acme', '--email', 'Boss@Example.com', '--password', 'secret123', '--full-name', 'The Boss']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.match(first.stdout, /^[^\n]+\n$/, 'one line');
    const creds = JSON.parse(first.stdout);
    assert.deepEqual(Object.keys(creds), ['realm_id', 'user_id', 'email', 'api_key']);
    assert.match(creds.api_key, /^[A-Za-z0-9]{32}$/);
    assert.deepEqual(creds, { realm_id: 1, user_id: 1, email: 'Boss@Example.com', api_key: creds.api_key });
    assert.ok(fs.existsSync(path.join(dataDir, 'parley.db')));

    const second = await runCli(['init', '--data-dir', dataDir, '--realm-name', 'Other', '--email', 'x@example.com', '--password', 'secret123']);
    assert.deepEqual(second, { code: 1, signal: null, stdout: '', stderr: `parley: ${dataDir} is already initialised\n` });
  });

  it('takes the data dir from PARLEY_DATA_DIR when --data-dir is absent', async () => {
    const dataDir = tmp.make();
    const r = await runCli(['init', '--realm-name', 'Env', '--email', 'env@example.com', '--password', 'secret123'], {
      env: { PARLEY_DATA_DIR: dataDir },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).email, 'env@example.com');
    assert.ok(fs.existsSync(path.join(dataDir, 'parley.db')));
  });
});

describe('parley deactivate-realm / reactivate-realm without a database', () => {
  it('exits 1 with a clear message and creates nothing', async () => {
    const dataDir = path.join(tmp.make(), 'missing');
    for (const cmd of ['deactivate-realm', 'reactivate-realm']) {
      assert.deepEqual(await runCli([cmd, '--data-dir', dataDir]), {
        code: 1,
        signal: null,
        stdout: '',
        stderr: `parley: no Parley database in ${dataDir} (run parley init first)\n`,
      });
    }
    assert.equal(fs.existsSync(dataDir), false);
  });
});

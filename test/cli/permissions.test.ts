// What Parley writes is readable by its user only when Parley creates it: the database (API keys,
// every private message), its WAL and shared-memory files, the data directory (uploads inside it) and
// a backup. A directory or file the operator made keeps its mode.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { apiCall, initDataDir, makeTempDirs, runCli, startServe } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('file permissions', () => {
  it('makes a new data directory 0700 and the database, its WAL, its shm file and a backup 0600', async () => {
    const dataDir = path.join(tmp.make(), 'new', 'data');
    const creds = await initDataDir(dataDir);
    assert.deepEqual([mode(path.dirname(dataDir)), mode(dataDir), mode(path.join(dataDir, 'parley.db'))], [0o700, 0o700, 0o600]);
    const server = await startServe(['--data-dir', dataDir, '--port', '0', '--log-level', 'warn']);
    try {
      const me = await apiCall(server.url, { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.deepEqual([mode(path.join(dataDir, 'parley.db-wal')), mode(path.join(dataDir, 'parley.db-shm'))], [0o600, 0o600]);
      const backupFile = path.join(tmp.make(), 'copy.db');
      const result = await runCli(['backup', '--data-dir', dataDir, backupFile]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(mode(backupFile), 0o600);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  it("keeps the mode of a data directory and a database the operator made", async () => {
    const dataDir = tmp.make();
    fs.chmodSync(dataDir, 0o750);
    fs.writeFileSync(path.join(dataDir, 'parley.db'), '');
    fs.chmodSync(path.join(dataDir, 'parley.db'), 0o640);
    await initDataDir(dataDir);
    assert.deepEqual([mode(dataDir), mode(path.join(dataDir, 'parley.db'))], [0o750, 0o640]);
  });
});

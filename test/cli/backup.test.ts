// `parley backup` while the server is serving writes: the copy is a consistent database that a fresh
// `serve` opens and serves.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadSqliteAddon } from '../../src/native';
import { apiCall, initDataDir, makeTempDirs, runCli, startServe } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

describe('parley backup', () => {
  it('copies a live, busy database into a file that a new data dir serves', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const auth = { email: creds.email, apiKey: creds.api_key };
    const server = await startServe(['--data-dir', dataDir, '--port', '0', '--no-rate-limits']);
    const backupFile = path.join(tmp.make(), 'copy.db');
    let before = 0;
    let created = 0;
    try {
      const createUser = async () => {
        const n = created++;
        const r = await apiCall(server.url, auth, 'POST', '/users', {
          email: `user${n}@example.com`,
          password: 'secret123',
          full_name: `User ${n}`,
        });
        assert.equal(r.status, 200, r.text);
      };
      for (let i = 0; i < 5; i++) await createUser();
      before = created;

      // Keep writing from two clients while the backup runs.
      let writing = true;
      const writers = [0, 1].map(async () => {
        while (writing) await createUser();
      });
      const result = await runCli(['backup', '--data-dir', dataDir, backupFile]);
      writing = false;
      await Promise.all(writers);
      assert.deepEqual(result, { code: 0, signal: null, stdout: `backup written to ${backupFile}\n`, stderr: '' });
      assert.ok(created > before, 'writes happened during the backup');
    } finally {
      assert.equal((await server.stop()).code, 0);
    }

    const check = new Database(backupFile, { readonly: true, nativeBinding: loadSqliteAddon() as never });
    let copied: number;
    // The two writers' requests overlap, so the backup may hold user10 without user9: what it holds is
    // what the restored server must serve.
    let inBackup: string[];
    try {
      assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
      inBackup = (check.prepare("SELECT email FROM user WHERE email LIKE 'user%@example.com' ORDER BY email").all() as { email: string }[]).map((r) => r.email);
      copied = inBackup.length;
    } finally {
      check.close();
    }
    assert.ok(copied >= before && copied <= created, `backup holds ${copied} of ${created} users (${before} before it began)`);

    const restored = tmp.make();
    fs.copyFileSync(backupFile, path.join(restored, 'parley.db'));
    const again = await startServe(['--data-dir', restored, '--port', '0']);
    try {
      assert.equal(again.stderr(), '', 'no first-time setup: the organization came with the backup');
      const me = await apiCall(again.url, auth, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.user_id, creds.user_id);
      const users = await apiCall(again.url, auth, 'GET', '/users');
      assert.equal(users.status, 200, users.text);
      const emails = (users.body.members as { email: string }[]).map((u) => u.email).filter((e) => e.startsWith('user'));
      assert.equal(emails.length, copied);
      assert.deepEqual([...emails].sort(), inBackup);
      for (let i = 0; i < before; i++) assert.ok(emails.includes(`user${i}@example.com`), `user${i}, made before the backup began, restored`);
      const u0 = await apiCall(again.url, null, 'POST', '/fetch_api_key', { username: 'user0@example.com', password: 'secret123' });
      assert.equal(u0.status, 200, u0.text);
    } finally {
      assert.equal((await again.stop()).code, 0);
    }
  });
});

// Disk upkeep (src/db/maintenance.ts): new databases give free pages back (auto_vacuum INCREMENTAL),
// older ones are converted once when opened, and after many messages are deleted the maintenance run
// shrinks the file and empties the WAL. Sizes are real files on disk, asserted loosely.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/db/open';
import { runMaintenance, startDatabaseMaintenance } from '../../src/db/maintenance';
import { runRetentionOnce } from '../../src/actions/retention';
import { startTestServer, type TestServer } from '../helpers/server';
import { execFileSync } from 'node:child_process';
import { runCli } from '../helpers/cli';
import { createChannel, ids, sendToChannel } from '../helpers/chat';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-maint-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400;
const pages = (db: Db) => db.pragma('page_count', { simple: true }) as number;
const freePages = (db: Db) => db.pragma('freelist_count', { simple: true }) as number;
const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/** About 8 KB of text that differs from message to message (the search index grows with it too). */
function bulky(n: number): string {
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < 8000; i++) words.push(`w${n}x${i}`);
  return words.join(' ');
}

/** A server with a channel whose messages expire after a day, filled with `count` bulky messages. */
async function filledServer(clock: { now: number }, count: number): Promise<{ t: TestServer; channel: number; file: string }> {
  const t = await startTestServer({ clock: { nowMs: () => clock.now * 1000 } });
  const { owner } = t.users;
  const channel = await createChannel(t, owner, 'archive', [owner], { message_retention_days: 1 });
  for (let i = 0; i < count; i++) await sendToChannel(t, owner, channel, `topic ${i % 7}`, bulky(i));
  return { t, channel, file: path.join(t.dataDir, 'parley.db') };
}

/** Lets the retention job delete every expired message (it works in batches). */
function expireAll(t: TestServer): number {
  let total = 0;
  for (let n = runRetentionOnce(t.app); n > 0; n = runRetentionOnce(t.app)) total += n;
  t.app.batch.commit();
  return total;
}

describe('database maintenance', () => {
  it('a new database gives free pages back (auto_vacuum INCREMENTAL) and runs in WAL mode', () => {
    const db = openDatabase(path.join(dir, 'new.db'));
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 2);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
  });

  it('an older database without auto_vacuum is converted once when opened, keeping its rows', () => {
    const file = path.join(dir, 'old.db');
    const db = openDatabase(file);
    db.exec(`
      INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Old Org', 1700000000);
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined) VALUES (1, 1, 'a@example.com', 'a@example.com', 'A', 'k', 1700000000);
    `);
    // As a database made before this release: no auto_vacuum.
    db.pragma('auto_vacuum = NONE');
    db.exec('VACUUM');
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 0);
    const version = db.pragma('user_version', { simple: true });
    db.close();

    const reopened = openDatabase(file);
    assert.equal(reopened.pragma('auto_vacuum', { simple: true }), 2);
    assert.equal(reopened.pragma('user_version', { simple: true }), version);
    assert.equal(reopened.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(reopened.prepare('SELECT id, email FROM user').all(), [{ id: 1, email: 'a@example.com' }]);
    reopened.close();
  });

  it('after retention deletes many messages, a maintenance run shrinks the file and empties the WAL', async () => {
    const clock = { now: 1_700_000_000 };
    const { t, channel, file } = await filledServer(clock, 120);
    try {
      const db = t.app.db;
      t.app.batch.commit();
      const filled = pages(db);
      clock.now += 2 * DAY;
      assert.equal(expireAll(t), 120);
      // The deleted rows' pages are free, but the file keeps them. (Not all of them: the search index
      // keeps its deletions as entries until it merges its segments.)
      const full = pages(db);
      assert.ok(full >= filled, `${full} pages after the deletions, ${filled} before`);
      assert.ok(freePages(db) > full / 4, `${freePages(db)} free of ${full} pages`);

      const result = runMaintenance(db, { idle: true, maxPages: Infinity });
      assert.equal(result.checkpointed, true);
      assert.ok(result.freedPages > full / 4, `freed ${result.freedPages} of ${full} pages`);
      assert.ok(freePages(db) < 256, `${freePages(db)} pages still free`);
      assert.ok(pages(db) < full * 0.75, `${pages(db)} pages, ${full} before`);
      // The file on disk is that small, and the WAL is empty.
      assert.ok(size(file) <= pages(db) * 4096, `file ${size(file)} bytes for ${pages(db)} pages`);
      assert.equal(size(file + '-wal'), 0);
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');

      // The server goes on as before.
      const kept = await sendToChannel(t, t.users.owner, channel, 'after', 'still here');
      const res = await t.api(t.users.owner, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: channel }] });
      assert.equal(res.status, 200);
      assert.deepEqual(ids(res.body), [kept]);
    } finally {
      await t.close();
    }
  });

  it('with nothing to do, a run changes nothing; a busy run leaves the WAL to the automatic checkpoints', async () => {
    const clock = { now: 1_700_000_000 };
    const { t } = await filledServer(clock, 3);
    try {
      t.app.batch.commit();
      const db = t.app.db;
      const before = pages(db);
      const busy = runMaintenance(db, { idle: false });
      assert.deepEqual({ ...busy, walBytes: busy.walBytes > 0 }, { freedPages: 0, freePages: freePages(db), checkpointed: false, walBytes: true });
      assert.equal(pages(db), before);
      const idle = runMaintenance(db, { idle: true });
      assert.deepEqual(idle, { freedPages: 0, freePages: freePages(db), checkpointed: true, walBytes: 0 });
    } finally {
      await t.close();
    }
  });

  it('the periodic job gives the pages back and empties the WAL on its own', async () => {
    const clock = { now: 1_700_000_000 };
    const { t, file } = await filledServer(clock, 120);
    try {
      const db = t.app.db;
      t.app.batch.commit();
      const full = pages(db);
      clock.now += 2 * DAY;
      assert.equal(expireAll(t), 120);
      startDatabaseMaintenance(t.app, 20);
      // Wait (bounded) for the job's runs: each gives back a slice, then the idle one empties the WAL.
      for (let i = 0; i < 500 && (freePages(db) >= 256 || size(file + '-wal') > 0); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(freePages(db) < 256, `${freePages(db)} pages still free`);
      assert.ok(pages(db) < full * 0.75, `${pages(db)} pages, ${full} before`);
      assert.equal(size(file + '-wal'), 0);
    } finally {
      await t.close();
    }
  });
});

/** A 4 MB tmpfs at a new directory (root only): null when this machine will not mount one. */
function smallMount(): { dir: string; remount(opts: string): void; unmount(): void } | null {
  const mnt = fs.mkdtempSync(path.join(dir, 'mnt-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return {
    dir: mnt,
    remount: (opts) => execFileSync('mount', ['-o', `remount,${opts}`, mnt], { stdio: 'ignore' }),
    unmount: () => execFileSync('umount', [mnt], { stdio: 'ignore' }),
  };
}

describe('a data directory the database cannot be written in', () => {
  // Finding: the start said only "parley: unable to open database file" (read-only mount) or
  // "parley: disk I/O error" (full disk), naming neither the file nor what to look at.
  const mount = smallMount();
  after(() => mount?.unmount());
  const skip = mount === null ? 'needs root to mount a tmpfs' : false;

  it('a read-only mount stops the start naming the file (exit 1), the file untouched', { skip }, async () => {
    const dataDir = path.join(mount!.dir, 'ro');
    const file = path.join(dataDir, 'parley.db');
    openDatabase(file).close();
    const before = fs.readFileSync(file);
    mount!.remount('ro');
    try {
      const r = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { timeoutMs: 60_000 });
      assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 1, stdout: '' });
      assert.match(r.stderr, new RegExp(`^parley: ${file.replace(/[.]/g, '\\.')}: cannot open or write the database \\(SQLite: [^)]+\\): Parley writes parley\\.db, parley\\.db-wal and parley\\.db-shm in ${dataDir.replace(/[.]/g, '\\.')}: is the disk read-only or full\\?\n$`));
      assert.deepEqual(fs.readFileSync(file), before);
    } finally {
      mount!.remount('rw');
    }
  });

  it('a full disk stops the start naming the file (exit 1)', { skip }, async () => {
    const dataDir = path.join(mount!.dir, 'full');
    const file = path.join(dataDir, 'parley.db');
    openDatabase(file).close();
    for (const f of fs.readdirSync(dataDir)) if (f !== 'parley.db') fs.rmSync(path.join(dataDir, f));
    const filler = path.join(mount!.dir, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops with "No space left on device": that is the point.
    }
    try {
      const r = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { timeoutMs: 60_000 });
      assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 1, stdout: '' });
      assert.match(r.stderr, new RegExp(`^parley: ${file.replace(/[.]/g, '\\.')}: cannot open or write the database \\(SQLite: [^)]+\\): Parley writes parley\\.db, parley\\.db-wal and parley\\.db-shm in ${dataDir.replace(/[.]/g, '\\.')}: is the disk read-only or full\\?\n$`));
    } finally {
      fs.rmSync(filler, { force: true });
    }
  });
});

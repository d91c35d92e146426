// The write batch (src/db/tx.ts) on a real SQLite file: each write is atomic inside the turn's
// transaction, hooks hear whether the turn committed, and the epoch moves on every kind of change.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/db/open';
import { WriteBatch } from '../../src/db/tx';

let dir: string;
let db: Db;
let batch: WriteBatch;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-batch-'));
  db = openDatabase(path.join(dir, 'parley.db'));
  db.exec('CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  batch = new WriteBatch(db);
});
after(() => {
  batch.commit();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rows = () => (db.prepare('SELECT k, v FROM t ORDER BY k').all() as { k: string; v: number }[]).map((r) => `${r.k}=${r.v}`);
const put = (k: string, v: number) => db.prepare('INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)').run(k, v);

/** Runs `fn` as one event-loop turn: its writes are committed before the promise settles. */
async function turn(fn: () => void): Promise<void> {
  fn();
  await new Promise((r) => setImmediate(r));
  batch.commit();
}

describe('WriteBatch', () => {
  it('rolls back only the failing write of a turn and commits the others', async () => {
    db.exec('DELETE FROM t');
    const heard: string[] = [];
    await turn(() => {
      batch.write(() => {
        put('a', 1);
        batch.onCommit(() => heard.push('a'));
      });
      assert.throws(() =>
        batch.write(() => {
          put('b', 1);
          batch.onCommit(() => heard.push('b'));
          throw new Error('refused');
        }),
      );
      batch.write(() => put('c', 1));
    });
    assert.deepEqual(rows(), ['a=1', 'c=1']);
    assert.deepEqual(heard, ['a']);
  });

  it('checksFirst: a refusal before any change costs the other writes of the turn nothing', async () => {
    db.exec('DELETE FROM t');
    const committed: boolean[] = [];
    await turn(() => {
      batch.write(() => put('a', 1));
      batch.afterCommit((ok) => committed.push(ok));
      assert.throws(
        () =>
          batch.write(
            () => {
              throw new Error('bad request');
            },
            { checksFirst: true },
          ),
        /bad request/,
      );
      batch.write(() => put('b', 2), { checksFirst: true });
    });
    assert.deepEqual(rows(), ['a=1', 'b=2']);
    assert.deepEqual(committed, [true]);
  });

  it('checksFirst: a failure after a change rolls back the whole turn and every waiting hook hears false', async () => {
    db.exec('DELETE FROM t');
    put('kept', 1); // committed before the turn (autocommit)
    const committed: boolean[] = [];
    const announced: string[] = [];
    const epochBefore = batch.epoch;
    const log = console.error;
    console.error = () => undefined; // the rollback is logged; keep the test output clean
    try {
      await turn(() => {
        batch.write(() => {
          put('a', 1);
          batch.onCommit(() => announced.push('a'));
        });
        batch.afterCommit((ok) => committed.push(ok));
        assert.throws(
          () =>
            batch.write(
              () => {
                put('half', 1);
                throw new Error('disk full');
              },
              { checksFirst: true },
            ),
          /disk full/,
        );
        assert.equal(batch.inBatch, false);
        // A later request of the same turn starts a new transaction and commits normally.
        batch.write(() => put('later', 3));
        batch.afterCommit((ok) => committed.push(ok));
      });
    } finally {
      console.error = log;
    }
    assert.deepEqual(rows(), ['kept=1', 'later=3']);
    assert.deepEqual(committed, [false, true]);
    assert.deepEqual(announced, []);
    assert.ok(batch.epoch > epochBefore);
  });

  it('checksFirst: a nested write still gets its own savepoint', async () => {
    db.exec('DELETE FROM t');
    await turn(() => {
      batch.write(
        () => {
          put('outer', 1);
          assert.throws(() =>
            batch.write(
              () => {
                put('inner', 1);
                throw new Error('inner refused');
              },
              { checksFirst: true },
            ),
          );
        },
        { checksFirst: true },
      );
    });
    assert.deepEqual(rows(), ['outer=1']);
  });

  it('moves the epoch on writes, on changes made outside write(), and not on reads', async () => {
    await turn(() => batch.begin());
    const e0 = batch.epoch;
    await turn(() => {
      batch.begin();
      db.prepare('SELECT count(*) FROM t').get();
    });
    assert.equal(batch.epoch, e0);
    await turn(() => batch.write(() => put('w', 1)));
    const e1 = batch.epoch;
    assert.ok(e1 > e0);
    put('outside', 1); // autocommit, outside the batch
    await turn(() => batch.begin());
    assert.ok(batch.epoch > e1);
  });

  it('runs after-commit hooks inside a read transaction (the next batch), after the commit', async () => {
    db.exec('DELETE FROM t');
    const seen: { inTransaction: boolean; rows: string[] }[] = [];
    await turn(() =>
      batch.write(() => {
        put('h', 1);
        batch.onCommit(() => seen.push({ inTransaction: db.inTransaction, rows: rows() }));
      }),
    );
    assert.deepEqual(seen, [{ inTransaction: true, rows: ['h=1'] }]);
    // That transaction is the next turn's batch, which ends on its own.
    await new Promise((r) => setImmediate(r));
    assert.equal(db.inTransaction, false);
  });
});

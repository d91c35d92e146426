// The prepared-statement cache (src/db/stmt.ts) stays bounded: narrows build SQL from the request's
// shape, so distinct texts are unbounded in number.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/db/open';
import { cachedStatementCount, stmt } from '../../src/db/stmt';

let dir: string;
let db: Db;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-stmt-'));
  db = openDatabase(path.join(dir, 'parley.db'));
});
after(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('stmt', () => {
  it('reuses a statement per SQL text, and keeps at most 1000 of them', () => {
    const first = stmt(db, 'SELECT 1 AS one');
    assert.equal(stmt(db, 'SELECT 1 AS one'), first);
    for (let i = 0; i < 2500; i++) assert.equal((stmt(db, `SELECT ${i} AS n`).get() as { n: number }).n, i);
    assert.equal(cachedStatementCount(db), 1000);
    // An evicted text is prepared again and still answers.
    assert.deepEqual(stmt(db, 'SELECT 1 AS one').get(), { one: 1 });
  });
});

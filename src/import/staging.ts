// Where an import writes: never into the data directory itself. Everything (database and uploads) is
// built in a hidden staging directory inside it and moved into place only when the import has
// succeeded: the uploads first, the database last, so the database appearing is the commit point.
// A failure (or a crash) before that leaves the data directory without a database: as it was.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ImportError } from './errors';

export const STAGING_PREFIX = '.parley-import-';
const DB_FILES = ['parley.db', 'parley.db-wal', 'parley.db-shm'] as const;

/** Refuses a data directory that holds a database or uploads (an import fills an empty one). */
export function checkEmptyTarget(dataDir: string): void {
  if (dataDir === ':memory:') throw new ImportError('an import needs a data directory on disk, not :memory:');
  for (const f of DB_FILES) {
    if (fs.existsSync(path.join(dataDir, f))) {
      throw new ImportError(`${dataDir} already holds a database (${f}): an import goes into an empty data directory, on a stopped server`);
    }
  }
  const uploads = path.join(dataDir, 'uploads');
  if (fs.existsSync(uploads) && fs.readdirSync(uploads).length > 0) {
    throw new ImportError(`${uploads} is not empty: an import goes into an empty data directory`);
  }
}

/**
 * Creates the staging directory (a fresh name inside `dataDir`, so the final moves are renames). What
 * an import that crashed left behind (its staging directory: nothing of it was moved into place) is
 * removed first.
 */
export function createStaging(dataDir: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  for (const name of fs.readdirSync(dataDir)) {
    if (name.startsWith(STAGING_PREFIX)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
  const dir = path.join(dataDir, STAGING_PREFIX + crypto.randomBytes(6).toString('hex'));
  fs.mkdirSync(dir);
  return dir;
}

/**
 * Moves the finished import into `dataDir`: uploads, then the database (closed beforehand, its WAL
 * checkpointed away). Checks the target again first: a server or another import may have started.
 */
export function commitStaging(staging: string, dataDir: string): void {
  checkEmptyTarget(dataDir);
  for (const f of ['parley.db-wal', 'parley.db-shm']) {
    const p = path.join(staging, f);
    if (fs.existsSync(p) && fs.statSync(p).size > 0 && f.endsWith('wal')) throw new Error('the imported database was not checkpointed');
    fs.rmSync(p, { force: true });
  }
  const uploads = path.join(staging, 'uploads');
  const target = path.join(dataDir, 'uploads');
  const moveUploads = fs.existsSync(uploads);
  if (moveUploads) {
    // checkEmptyTarget allowed only an empty one here.
    if (fs.existsSync(target)) fs.rmdirSync(target);
    fs.renameSync(uploads, target);
  }
  try {
    fs.renameSync(path.join(staging, 'parley.db'), path.join(dataDir, 'parley.db'));
  } catch (err) {
    // Without its database the data directory must not keep the uploads either.
    if (moveUploads) fs.renameSync(target, uploads);
    throw err;
  }
  fs.rmSync(staging, { recursive: true, force: true });
}

/** Removes a staging directory and all it holds (after a failed import). */
export function discardStaging(staging: string): void {
  fs.rmSync(staging, { recursive: true, force: true });
}

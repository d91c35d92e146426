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
  const st = fs.lstatSync(uploads, { throwIfNoEntry: false });
  // Found only at the end otherwise (commitStaging renames the staged uploads to this name), after all the work.
  if (st?.isSymbolicLink()) {
    throw new ImportError(`${uploads} is a symbolic link: an import moves its files into place by renaming, so it must be a plain directory (move the uploads and link them after the import)`);
  }
  if (st && !st.isDirectory()) throw new ImportError(`${uploads} is not a directory`);
  if (st && fs.readdirSync(uploads).length > 0) {
    throw new ImportError(`${uploads} is not empty: an import goes into an empty data directory`);
  }
}

/** The lock an import holds on its data directory: the file holds the importing process's id. */
export const LOCK_FILE = '.parley-import.lock';

/** Whether process `pid` is running (EPERM: it is, as another user's). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data directory's import lock, so that two imports into one directory never run at once
 * (each would otherwise remove the other's staging directory as left over from a crash). The lock of
 * a process that is gone (a crash, SIGKILL) is taken over. The file is written whole under a name of
 * its own and then linked into place (atomic, and never over an existing lock), so a reader never sees
 * it empty.
 */
function takeLock(dataDir: string): void {
  const lock = path.join(dataDir, LOCK_FILE);
  const mine = `${lock}.${process.pid}`;
  fs.writeFileSync(mine, `${process.pid}\n`);
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.linkSync(mine, lock);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let pid = NaN;
      try {
        pid = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10);
      } catch {
        continue; // released meanwhile: try again
      }
      if (!(pid > 0) || running(pid)) {
        throw new ImportError(`another import${pid > 0 ? ` (process ${pid})` : ''} is writing into ${dataDir}: wait for it to finish`);
      }
      fs.rmSync(lock, { force: true }); // its process is gone
    }
    throw new ImportError(`another import is writing into ${dataDir}: wait for it to finish`);
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

/** Gives the lock up (after the import succeeded or failed). */
function releaseLock(dataDir: string): void {
  fs.rmSync(path.join(dataDir, LOCK_FILE), { force: true });
}

/**
 * Creates the staging directory (a fresh name inside `dataDir`, so the final moves are renames), under
 * the data directory's import lock. What an import that crashed left behind (its staging directory:
 * nothing of it was moved into place) is removed first: holding the lock, no other import is running.
 */
export function createStaging(dataDir: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  takeLock(dataDir);
  try {
    for (const name of fs.readdirSync(dataDir)) {
      if (name.startsWith(STAGING_PREFIX)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
    const dir = path.join(dataDir, STAGING_PREFIX + crypto.randomBytes(6).toString('hex'));
    fs.mkdirSync(dir);
    return dir;
  } catch (err) {
    releaseLock(dataDir);
    throw err;
  }
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
    placeDatabase(path.join(staging, 'parley.db'), path.join(dataDir, 'parley.db'));
  } catch (err) {
    // Without its database the data directory must not keep the uploads either.
    if (moveUploads) fs.renameSync(target, uploads);
    throw err;
  }
  fs.rmSync(staging, { recursive: true, force: true });
  releaseLock(dataDir);
}

/**
 * Puts the database at `dest` without ever replacing one that appeared there since the check (a
 * server started on the directory): a hard link fails if the name exists, where a rename would
 * silently replace it. Filesystems without hard links get the rename.
 */
function placeDatabase(src: string, dest: string): void {
  try {
    fs.linkSync(src, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ImportError(`${path.dirname(dest)} already holds a database (parley.db): an import goes into an empty data directory, on a stopped server`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
    fs.renameSync(src, dest);
  }
}

/** Removes a staging directory and all it holds (after a failed import). */
export function discardStaging(staging: string): void {
  fs.rmSync(staging, { recursive: true, force: true });
  releaseLock(path.dirname(staging));
}

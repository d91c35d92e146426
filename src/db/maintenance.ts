// Keeping the database file from growing without bound over a year of use.
//
// Two things grow in SQLite if nobody looks after them:
// - the WAL file: a checkpoint copies it into the database, and the next writer starts it over, but the
//   file keeps the size it reached (up to journal_size_limit, see open.ts). This connection holds no
//   read transaction between event-loop turns (the write batch commits every turn; parked long-polls
//   hold none), so the automatic checkpoints do complete; another process's reader (`parley backup`)
//   can hold one back for a while. When writes are idle, or the WAL is large, the periodic job below
//   runs a TRUNCATE checkpoint, which empties the file.
// - free pages: deleting messages (retention, deletes, removed uploads' rows) frees pages that SQLite
//   keeps for reuse. With auto_vacuum = INCREMENTAL, `PRAGMA incremental_vacuum(N)` moves up to N free
//   pages to the end of the file and truncates it. A new database gets auto_vacuum from its creation
//   (open.ts); an older one is converted once at start-up by a VACUUM (ensureIncrementalVacuum), which
//   cannot run inside a transaction and so is not a migration step.
import fs from 'node:fs';
import type { Db } from './open';

/** Free pages given back per run: a few MB, so one run holds the (single) connection briefly. */
const VACUUM_PAGES_PER_RUN = 2048;
/** Free pages worth giving back: below this the file keeps them for the next inserts. */
const MIN_FREE_PAGES = 256;
/** A WAL at least this large is emptied even while writes continue. */
const LARGE_WAL_BYTES = 16 * 1024 * 1024;

export interface MaintenanceResult {
  /** Free pages given back to the file system. */
  freedPages: number;
  /** Free pages still in the file (more runs give them back). */
  freePages: number;
  /** Whether a TRUNCATE checkpoint emptied the WAL. */
  checkpointed: boolean;
  walBytes: number;
}

function walBytes(db: Db): number {
  try {
    return fs.statSync(db.name + '-wal').size;
  } catch {
    return 0;
  }
}

/**
 * Makes an existing database incremental-vacuum capable (a new one is from its creation): sets the
 * pragma and rebuilds the file with VACUUM, once. Outside any transaction; on failure (a full disk:
 * VACUUM needs room for a copy) the database is left as it was and the next start tries again.
 * Returns whether it converted the file.
 */
export function ensureIncrementalVacuum(db: Db): boolean {
  if (db.name === ':memory:' || db.memory) return false;
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2) return false;
  try {
    // Seconds on a large file and a slow card: say why the start waits.
    const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    if (bytes > 16 * 1024 * 1024) process.stderr.write(`parley: rewriting ${db.name} once so that it can shrink after deletions (${Math.round(bytes / 1048576)} MB)\n`);
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    return true;
  } catch (err) {
    console.error(`parley: could not enable incremental vacuum on ${db.name} (${(err as Error).message}); the file will not shrink after deletions`);
    return false;
  }
}

/**
 * One maintenance run, outside any transaction: gives back up to `maxPages` free pages (all of them
 * with Infinity) when there are enough to matter, and empties the WAL when `idle` (no writes since the
 * last run) or when it is large. Never waits for another process's reader: a checkpoint it blocks is
 * simply tried again at the next run.
 */
export function runMaintenance(db: Db, opts: { idle: boolean; maxPages?: number }): MaintenanceResult {
  const result: MaintenanceResult = { freedPages: 0, freePages: 0, checkpointed: false, walBytes: 0 };
  const free = db.pragma('freelist_count', { simple: true }) as number;
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2 && free >= MIN_FREE_PAGES) {
    const maxPages = opts.maxPages ?? VACUUM_PAGES_PER_RUN;
    // incremental_vacuum with no count (or 0) frees everything.
    const n = maxPages === Infinity ? 0 : Math.max(1, Math.floor(maxPages));
    db.pragma(`incremental_vacuum(${n})`);
    result.freedPages = free - (db.pragma('freelist_count', { simple: true }) as number);
  }
  result.freePages = db.pragma('freelist_count', { simple: true }) as number;
  const wal = walBytes(db);
  if (wal > 0 && (opts.idle || result.freedPages > 0 || wal >= LARGE_WAL_BYTES)) {
    const timeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      result.checkpointed = row.busy === 0;
    } catch {
      // SQLITE_BUSY: another connection is checkpointing or reading; next run.
    } finally {
      db.pragma(`busy_timeout = ${timeout}`);
    }
  }
  result.walBytes = walBytes(db);
  return result;
}

/** What the periodic job needs of the App (kept structural: src/db does not import the app). */
export interface MaintainedApp {
  readonly db: Db;
  readonly batch: { commit(): void; readonly epoch: number; readonly inBatch: boolean };
  onShutdown(fn: () => void): void;
}

/**
 * Runs maintenance every `intervalMs` (default 10 minutes), sooner while free pages remain to give
 * back; stops on shutdown. "Idle" means the write batch's epoch did not move since the last run.
 */
export function startDatabaseMaintenance(app: MaintainedApp, intervalMs = 600_000): void {
  if (app.db.memory) return;
  let lastEpoch = app.batch.epoch;
  const tick = () => {
    let more = false;
    try {
      // Finish this turn's open batch (if any): checkpoints and vacuums run outside transactions.
      // (A commit's hooks may open the next batch at once: then try again in a moment.)
      app.batch.commit();
      if (app.batch.inBatch) {
        more = true;
      } else {
        const idle = app.batch.epoch === lastEpoch;
        const r = runMaintenance(app.db, { idle });
        more = r.freedPages > 0 && r.freePages >= MIN_FREE_PAGES;
        lastEpoch = app.batch.epoch;
      }
    } catch (err) {
      console.error('parley: database maintenance failed', err);
    }
    timer = setTimeout(tick, more ? 1000 : intervalMs);
    timer.unref();
  };
  let timer = setTimeout(tick, intervalMs);
  timer.unref();
  app.onShutdown(() => clearTimeout(timer));
}

// The database check behind GET /health: can this process read the database and write to it now?
import fs from 'node:fs';
import type { App } from '../app';
import { stmt } from '../db/stmt';

/** What GET /health says of the database ("ok", or why not). */
export type DatabaseState = 'ok' | 'unavailable' | 'read-only' | 'disk full';

/**
 * Below this much free space in the data directory the server reports "disk full": SQLite then fails
 * as soon as the WAL or the database has to grow, and an upload would fail sooner.
 */
export const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Reads a row, then runs a DELETE from the always-empty health_probe: it changes nothing (no page, no
 * WAL frame, no total_changes) but SQLite must take the write lock for it, so it fails on a database
 * opened read-only or made query-only (and on one another process keeps locked). SQLite cannot tell a full disk before
 * it needs a page, so the data directory's free space is checked too.
 */
export function checkDatabase(app: App): DatabaseState {
  const db = app.db;
  if (!db.open) return 'unavailable';
  try {
    stmt(db, 'SELECT id FROM realm LIMIT 1').get();
  } catch {
    return 'unavailable';
  }
  try {
    stmt(db, 'DELETE FROM health_probe').run();
  } catch (err) {
    const code = String((err as { code?: string }).code ?? '');
    return code === 'SQLITE_FULL' ? 'disk full' : code.startsWith('SQLITE_READONLY') ? 'read-only' : 'unavailable';
  }
  if (app.config.dataDir !== ':memory:') {
    try {
      const fsStats = fs.statfsSync(app.config.dataDir);
      if (fsStats.bavail * fsStats.bsize < MIN_FREE_BYTES) return 'disk full';
    } catch {
      return 'unavailable';
    }
  }
  return 'ok';
}

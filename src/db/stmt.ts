// Prepared-statement cache: each SQL text is prepared once per database connection and reused.
// All SQL goes through here (or db.prepare) with bound parameters, never string-built values.
import type { Statement } from 'better-sqlite3';
import type { Db } from './open';

const caches = new WeakMap<Db, Map<string, Statement>>();

/** The prepared statement for `sql` on `db`. */
export function stmt<P extends unknown[] = unknown[], R = unknown>(db: Db, sql: string): Statement<P, R> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let s = cache.get(sql);
  if (!s) cache.set(sql, (s = db.prepare(sql)));
  return s as unknown as Statement<P, R>;
}

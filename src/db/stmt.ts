// Prepared-statement cache: each SQL text is prepared once per database connection and reused.
// All SQL goes through here (or db.prepare) with bound parameters, never string-built values.
import type { Statement } from 'better-sqlite3';
import type { Db } from './open';

const caches = new WeakMap<Db, Map<string, Statement>>();

/**
 * Bound on the cached statements per connection. Parley's own SQL is a few hundred texts, but
 * narrows build theirs from the request's shape (how many terms, which, negated or not), so a client
 * could otherwise grow the cache without end. Past the bound the oldest entry goes (a statement
 * still in use keeps working; it is prepared again when next needed, a few µs).
 */
const MAX_STATEMENTS = 1000;

/** The prepared statement for `sql` on `db`. */
export function stmt<P extends unknown[] = unknown[], R = unknown>(db: Db, sql: string): Statement<P, R> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  let s = cache.get(sql);
  if (!s) {
    if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value as string);
    cache.set(sql, (s = db.prepare(sql)));
  }
  return s as unknown as Statement<P, R>;
}

/** How many statements are cached on `db` (tests). */
export const cachedStatementCount = (db: Db): number => caches.get(db)?.size ?? 0;

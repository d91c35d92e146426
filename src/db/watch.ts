// Change notifications for in-memory caches: temporary (per-connection) triggers call a JS function
// whenever rows of a watched table are inserted, updated or deleted, by any statement on this
// connection. Temporary triggers leave the database file itself untouched.
import type { Db } from './open';

const listeners = new WeakMap<Db, Map<string, Set<() => void>>>();

/** Calls `onChange` after any row of `table` changes on `db`. Returns the unsubscribe function. */
export function watchTable(db: Db, table: 'user' | 'realm' | 'session' | 'stream', onChange: () => void): () => void {
  let byTable = listeners.get(db);
  if (!byTable) {
    byTable = new Map();
    listeners.set(db, byTable);
    const tables = byTable;
    db.function('parley_table_changed', { deterministic: false, varargs: false }, (name: unknown) => {
      for (const fn of tables.get(String(name)) ?? []) fn();
      return null;
    });
  }
  let set = byTable.get(table);
  if (!set) {
    set = new Set();
    byTable.set(table, set);
    for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
      // table comes from the fixed union above, never from input
      db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS parley_watch_${table}_${op.toLowerCase()} AFTER ${op} ON main.${table}
               BEGIN SELECT parley_table_changed('${table}'); END`);
    }
  }
  set.add(onChange);
  return () => set.delete(onChange);
}

/** Tells every watcher of `db` that anything may have changed (a failed commit undid the turn's writes). */
export function invalidateAll(db: Db): void {
  for (const set of listeners.get(db)?.values() ?? []) for (const fn of set) fn();
}

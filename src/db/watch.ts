// Change notifications for in-memory caches: temporary (per-connection) triggers call a JS function
// whenever rows of a watched table are inserted, updated or deleted, by any statement on this
// connection. Temporary triggers leave the database file itself untouched.
import type { Db } from './open';

const listeners = new WeakMap<Db, Map<string, Set<() => void>>>();

export type WatchedTable =
  | 'user'
  | 'realm'
  | 'session'
  | 'stream'
  | 'subscription'
  | 'user_group_member'
  | 'user_group_subgroup'
  | 'alert_word'
  | 'muted_user'
  | 'linkifier';

/** Calls `onChange` after any row of `table` changes on `db`. Returns the unsubscribe function. */
export function watchTable(db: Db, table: WatchedTable, onChange: () => void): () => void {
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

const derived = new WeakMap<Db, Map<string, Map<unknown, unknown>>>();

/**
 * A bounded in-memory cache on `db` for values derived from `tables`, emptied whenever a row of any
 * of them changes (or a commit fails). `name` identifies the cache: one per (db, name).
 */
export function watchedCache<K, V>(db: Db, name: string, tables: readonly WatchedTable[], maxEntries = 10_000): {
  get(key: K, compute: () => V): V;
} {
  let byName = derived.get(db);
  if (!byName) derived.set(db, (byName = new Map()));
  let map = byName.get(name) as Map<K, V> | undefined;
  if (!map) {
    const fresh = new Map<K, V>();
    for (const t of tables) watchTable(db, t, () => fresh.clear());
    byName.set(name, fresh as Map<unknown, unknown>);
    map = fresh;
  }
  const m = map;
  return {
    get(key, compute) {
      if (m.has(key)) return m.get(key) as V;
      const v = compute();
      if (m.size >= maxEntries) m.clear();
      m.set(key, v);
      return v;
    },
  };
}

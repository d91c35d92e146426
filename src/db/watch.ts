// Change notifications for in-memory caches: temporary (per-connection) triggers call a JS function
// whenever rows of a watched table are inserted, updated or deleted, by any statement on this
// connection. Temporary triggers leave the database file itself untouched.
import type { Db } from './open';

const listeners = new WeakMap<Db, Map<string, Set<() => void>>>();

const WATCHED_TABLES = [
  'user',
  'realm',
  'session',
  'stream',
  'subscription',
  'user_group',
  'user_group_member',
  'user_group_subgroup',
  'alert_word',
  'muted_user',
  'custom_profile_field_value',
  'linkifier',
  'realm_emoji',
] as const;

export type WatchedTable = (typeof WATCHED_TABLES)[number];

function listenersOf(db: Db): Map<string, Set<() => void>> {
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
  return byTable;
}

function createTriggers(db: Db, table: WatchedTable): void {
  for (const op of ['INSERT', 'UPDATE', 'DELETE']) {
    // table comes from the fixed list above, never from input
    db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS parley_watch_${table}_${op.toLowerCase()} AFTER ${op} ON main.${table}
             BEGIN SELECT parley_table_changed('${table}'); END`);
  }
}

/**
 * Creates the triggers of every watchable table, outside any transaction (createApp calls it right
 * after opening the database). A trigger is schema, and schema changes are transactional: one first
 * created inside a write that then rolled back (a refused request, a failed commit) was silently
 * dropped with it, and every cache of that table stopped hearing changes for good.
 */
export function installWatchTriggers(db: Db): void {
  if (db.inTransaction) throw new Error('installWatchTriggers inside a transaction');
  listenersOf(db);
  for (const table of WATCHED_TABLES) createTriggers(db, table);
}

/** Calls `onChange` after any row of `table` changes on `db`. Returns the unsubscribe function. */
export function watchTable(db: Db, table: WatchedTable, onChange: () => void): () => void {
  const byTable = listenersOf(db);
  let set = byTable.get(table);
  if (!set) {
    set = new Set();
    byTable.set(table, set);
    // A no-op after installWatchTriggers (databases opened by createApp).
    createTriggers(db, table);
  }
  set.add(onChange);
  return () => set.delete(onChange);
}

/** Tells every watcher of `db` that anything may have changed (a failed commit undid the turn's writes). */
export function invalidateAll(db: Db): void {
  for (const set of listeners.get(db)?.values() ?? []) for (const fn of set) fn();
}

/** A cache made by watchedCache: `get` computes what it lacks; `peek` and `put` let a hot caller look up without a closure. */
export interface WatchedCache<K, V> {
  get(key: K, compute: () => V): V;
  /** The remembered value, or undefined. */
  peek(key: K): V | undefined;
  put(key: K, value: V): void;
}

class BoundedCache<K, V> implements WatchedCache<K, V> {
  readonly map = new Map<K, V>();
  constructor(private readonly maxEntries: number) {}
  get(key: K, compute: () => V): V {
    if (this.map.has(key)) return this.map.get(key) as V;
    const v = compute();
    this.put(key, v);
    return v;
  }
  peek(key: K): V | undefined {
    return this.map.get(key);
  }
  put(key: K, value: V): void {
    if (this.map.size >= this.maxEntries) this.map.clear();
    this.map.set(key, value);
  }
}

const derived = new WeakMap<Db, Map<string, BoundedCache<unknown, unknown>>>();

/**
 * A bounded in-memory cache on `db` for values derived from `tables`, emptied whenever a row of any
 * of them changes (or a commit fails). `name` identifies the cache: one per (db, name), the same
 * object at every call (a hot path may call this per lookup: it allocates nothing once made).
 */
export function watchedCache<K, V>(db: Db, name: string, tables: readonly WatchedTable[], maxEntries = 10_000): WatchedCache<K, V> {
  let byName = derived.get(db);
  if (!byName) derived.set(db, (byName = new Map()));
  let cache = byName.get(name) as BoundedCache<K, V> | undefined;
  if (!cache) {
    const fresh = new BoundedCache<K, V>(maxEntries);
    for (const t of tables) watchTable(db, t, () => fresh.map.clear());
    byName.set(name, fresh as BoundedCache<unknown, unknown>);
    cache = fresh;
  }
  return cache;
}

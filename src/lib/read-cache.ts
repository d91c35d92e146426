// Results of read-only computations, remembered until the next write. Every write (and every commit
// that changed anything, see WriteBatch.epoch) empties the cache, so a hit is always what computing
// afresh would return: nothing to invalidate by hand, nothing to forget. Meant for hot reads that do
// not depend on the clock (GET /users/me), not for anything time-dependent.
import type { App } from '../app';

interface Cache {
  epoch: number;
  values: Map<string, unknown>;
}

const caches = new WeakMap<App, Cache>();

// Bounded: one entry per (kind, user) is the normal use; a flood of distinct keys just starts over.
const MAX_ENTRIES = 20_000;

/** The value of `compute()` for `key`, computed at most once between two writes. */
export function readCached<T>(app: App, key: string, compute: () => T): T {
  let c = caches.get(app);
  if (!c) caches.set(app, (c = { epoch: app.batch.epoch, values: new Map() }));
  if (c.epoch !== app.batch.epoch) {
    c.epoch = app.batch.epoch;
    c.values.clear();
  }
  if (c.values.has(key)) return c.values.get(key) as T;
  const value = compute();
  if (c.values.size >= MAX_ENTRIES) c.values.clear();
  c.values.set(key, value);
  return value;
}

// In-memory copies of what every authenticated request reads: the user named by the credentials and
// whether their organization is deactivated. Any insert, update or delete of user or realm rows on
// the connection clears them (temporary triggers, see src/db/watch.ts), as does a failed commit, so a
// cached row is never staler than the database as this connection sees it.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchTable } from '../db/watch';
import type { Db } from '../db/open';
import type { UserRow } from './users';

interface Cache {
  users: Map<string, UserRow>;
  /** Authorization header → the user it authenticated (only headers that did). */
  headers: Map<string, UserRow>;
  realmDeactivated: Map<number, boolean>;
}

const caches = new WeakMap<Db, Cache>();

function cacheOf(app: App): Cache {
  let c = caches.get(app.db);
  if (!c) {
    const cache: Cache = { users: new Map(), headers: new Map(), realmDeactivated: new Map() };
    watchTable(app.db, 'user', () => {
      cache.users.clear();
      cache.headers.clear();
    });
    watchTable(app.db, 'realm', () => cache.realmDeactivated.clear());
    app.batch.onCommitFailure(() => {
      cache.users.clear();
      cache.headers.clear();
      cache.realmDeactivated.clear();
    });
    caches.set(app.db, (c = cache));
  }
  return c;
}

// Bounded so that credential stuffing with many addresses cannot grow it without limit.
const MAX_USERS = 10_000;

/**
 * The user whose real address (delivery_email, case-insensitive) is `email`, or null: the name Basic
 * credentials carry, as in Zulip's access_user_by_api_key. Not the API email, which for a user who hides
 * their address is the user{id}@host placeholder anyone can read. Misses are not cached.
 */
export function userByDeliveryEmail(app: App, realmId: number, email: string): UserRow | null {
  const cache = cacheOf(app);
  const key = `${realmId}:${email.toLowerCase()}`;
  const hit = cache.users.get(key);
  if (hit) return hit;
  const row = (stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND delivery_email = ? COLLATE NOCASE').get(realmId, email) as UserRow | undefined) ?? null;
  if (row) {
    if (cache.users.size >= MAX_USERS) cache.users.clear();
    cache.users.set(key, Object.freeze(row) as UserRow);
  }
  return row;
}

/** Whether the organization is deactivated (missing counts as deactivated). */
export function isRealmDeactivated(app: App, realmId: number): boolean {
  const cache = cacheOf(app);
  let v = cache.realmDeactivated.get(realmId);
  if (v === undefined) {
    const row = stmt(app.db, 'SELECT deactivated FROM realm WHERE id = ?').get(realmId) as { deactivated: number } | undefined;
    v = !row || row.deactivated === 1;
    cache.realmDeactivated.set(realmId, v);
  }
  return v;
}

/**
 * The user a whole `Authorization` header authenticated before, if the user rows have not changed
 * since: a repeat caller skips base64 decoding and the key comparison. Only successful headers are
 * remembered (see rememberAuthHeader), so a wrong key always takes the full path.
 */
export function userByAuthHeader(app: App, header: string): UserRow | undefined {
  return cacheOf(app).headers.get(header);
}

/** Remembers that `header` authenticated `user` (until any user row changes). */
export function rememberAuthHeader(app: App, header: string, user: UserRow): void {
  const cache = cacheOf(app);
  if (cache.headers.size >= MAX_USERS) cache.headers.clear();
  cache.headers.set(header, user);
}

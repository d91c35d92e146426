// Read side of the organization: one realm per data dir for now.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchTable } from '../db/watch';

export interface RealmRow {
  id: number;
  string_id: string;
  name: string;
  description: string;
  date_created: number;
  deactivated: number;
  message_retention_days: number | null;
  empty_topic_display_name: string;
  default_language: string;
  max_file_upload_size_mib: number | null;
  can_change_user_emails: number;
  icon_source: string;
  icon_version: number;
  [setting: string]: unknown;
}

/** The data dir's organization, or null before `parley init`. */
export function findRealm(db: Db): RealmRow | null {
  return (stmt(db, 'SELECT * FROM realm ORDER BY id LIMIT 1').get() as RealmRow | undefined) ?? null;
}

const realmCaches = new WeakMap<Db, Map<number, RealmRow | null>>();

/**
 * The organization by id. Read on nearly every request, so kept in memory; any write to the realm
 * table (or a failed commit) clears the copy.
 */
export function getRealmById(db: Db, id: number): RealmRow | null {
  let cache = realmCaches.get(db);
  if (!cache) {
    const fresh = new Map<number, RealmRow | null>();
    watchTable(db, 'realm', () => fresh.clear());
    realmCaches.set(db, (cache = fresh));
  }
  let row = cache.get(id);
  if (row === undefined) {
    row = (stmt(db, 'SELECT * FROM realm WHERE id = ?').get(id) as RealmRow | undefined) ?? null;
    cache.set(id, row && (Object.freeze(row) as RealmRow));
  }
  return row;
}

/** The system group id named `name` in `realmId`. */
export function systemGroupId(db: Db, realmId: number, name: string): number {
  const row = stmt(db, 'SELECT id FROM user_group WHERE realm_id = ? AND name = ? AND is_system_group = 1').get(realmId, name) as
    | { id: number }
    | undefined;
  if (!row) throw new Error(`system group ${name} missing`);
  return row.id;
}


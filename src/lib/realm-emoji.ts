// Reading an organization's custom (realm) emoji: the dictionary clients get (GET /realm/emoji and
// the realm_emoji state), and lookups by name or id for reactions, statuses and message rendering.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import type { RealmEmojiInfo } from './emoji';

export interface RealmEmojiRow {
  id: number;
  name: string;
  author_id: number | null;
  file_name: string | null;
  deactivated: number;
}

/** Where a custom emoji image is served (Zulip's URL shape; files live under <uploads>/emoji). */
export const emojiUrl = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;

/** Zulip's Realm.get_emoji: every custom emoji (deactivated ones too), keyed by id. */
export function listRealmEmoji(db: Db, realmId: number): Record<string, Record<string, unknown>> {
  const rows = stmt(db, 'SELECT id, name, author_id, file_name, deactivated FROM realm_emoji WHERE realm_id = ? ORDER BY id').all(realmId) as RealmEmojiRow[];
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of rows) {
    out[String(e.id)] = {
      id: String(e.id),
      name: e.name,
      source_url: emojiUrl(realmId, e.file_name ?? ''),
      still_url: null,
      deactivated: e.deactivated === 1,
      author_id: e.author_id,
    };
  }
  return out;
}

function emojiInfo(realmId: number, r: RealmEmojiRow | undefined): RealmEmojiInfo | null {
  return r ? { id: String(r.id), name: r.name, source_url: emojiUrl(realmId, r.file_name ?? ''), deactivated: r.deactivated === 1 } : null;
}

/** The custom emoji called `name` (the active one first, else the oldest deactivated one), or null. */
export function findRealmEmojiByName(db: Db, realmId: number, name: string): RealmEmojiInfo | null {
  return emojiInfo(realmId, stmt(db, 'SELECT * FROM realm_emoji WHERE realm_id = ? AND name = ? ORDER BY deactivated, id LIMIT 1').get(realmId, name) as RealmEmojiRow | undefined);
}

/** The organization's custom emoji as src/lib/emoji.ts looks them up (by name: the active one first). */
export function realmEmojiLookup(db: Db, realmId: number): { byName(name: string): RealmEmojiInfo | null; byId(id: string): RealmEmojiInfo | null } {
  const info = (r: RealmEmojiRow | undefined): RealmEmojiInfo | null => emojiInfo(realmId, r);
  return {
    byName: (name) => findRealmEmojiByName(db, realmId, name),
    byId: (id) =>
      /^[0-9]+$/.test(id) ? info(stmt(db, 'SELECT * FROM realm_emoji WHERE realm_id = ? AND id = ?').get(realmId, Number(id)) as RealmEmojiRow | undefined) : null,
  };
}

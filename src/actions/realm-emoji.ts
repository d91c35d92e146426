// Custom (realm) emoji: upload, deactivate, list, and where their image files live. Files are kept
// under <uploads>/emoji/<realm_id>/<id><ext> and served at /user_avatars/<realm_id>/emoji/images/<file>,
// Zulip's URL shape.
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { unicodeEmojiCode } from '../lib/emoji';
import { listRealmEmoji, type RealmEmojiRow } from '../lib/realm-emoji';
import { isUserInGroup } from '../lib/groups';
import { getRealmById } from '../lib/realm';
import { isAdmin, isGuest, type UserRow } from '../lib/users';
import { activeUserIds } from './users';

/** Zulip's MAX_EMOJI_FILE_SIZE_MIB default. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;

/** Image types accepted for custom emoji, by file extension (also the Content-Type they are served with). */
export const EMOJI_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
};

/** The file holding a realm emoji image, or null for names that could leave the directory. */
export function emojiFilePath(app: App, realmId: number, fileName: string): string | null {
  if (!/^[0-9]+\.[a-z]+$/.test(fileName)) return null;
  return path.join(app.uploadsDir, 'emoji', String(realmId), fileName);
}

/** Zulip's check_valid_emoji_name. */
function checkEmojiName(name: string): void {
  if (!name) throw errors.badRequest('Emoji name is missing');
  if (/^[0-9a-z\-_]+$/.test(name) && !/[-_]$/.test(name)) return;
  if (/^[0-9a-z\-_]+$/.test(name)) throw errors.badRequest('Emoji names must end with either a letter or digit.');
  throw errors.badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

/**
 * Announces a change of one emoji in Zulip's per-emoji form (FL 491: `add` with the emoji,
 * `update_one` with what changed), carrying the whole list for the registry to send the legacy
 * `update` to clients without the individual_emoji_changes capability (bus.ts).
 */
function notify(app: App, realmId: number, change: { op: 'add' } | { op: 'update_one'; data: Record<string, unknown> }, emojiId: number): void {
  app.batch.onCommit(() => {
    const all = listRealmEmoji(app.db, realmId);
    const id = String(emojiId);
    const event = change.op === 'add' ? { type: 'realm_emoji', op: 'add', emoji: all[id] } : { type: 'realm_emoji', op: 'update_one', emoji_id: id, data: change.data };
    app.events.send({ ...event, legacy_realm_emoji: all }, activeUserIds(app, realmId));
  });
}

export interface EmojiUpload {
  files: { path: string; filename: string; mimeType: string; size: number }[];
}

/** POST /realm/emoji/{name}: checks in Zulip's order, stores the image, announces the new list. */
export function doAddRealmEmoji(app: App, user: UserRow, rawName: string, upload: EmojiUpload): void {
  if (isGuest(user)) throw errors.notForGuests();
  const name = rawName.trim().replace(/ /g, '_');
  checkEmojiName(name);
  app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id);
    const groupId = realm?.can_add_custom_emoji_group as number | null | undefined;
    if (groupId !== null && groupId !== undefined && !isUserInGroup(app.db, user.id, groupId)) throw errors.insufficientPermission();
    if (stmt(app.db, 'SELECT 1 FROM realm_emoji WHERE realm_id = ? AND name = ? AND deactivated = 0').get(user.realm_id, name)) {
      throw errors.badRequest('A custom emoji with this name already exists.');
    }
    if (upload.files.length !== 1) throw errors.badRequest('You must upload exactly one file.');
    if ((unicodeEmojiCode(name) !== null || name === 'zulip') && !isAdmin(user)) {
      throw errors.badRequest('Only administrators can override built-in emoji.');
    }
    const file = upload.files[0];
    if (file.size > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
      throw errors.badRequest('Uploaded file is larger than the allowed limit of {limit} MiB', { limit: MAX_EMOJI_FILE_SIZE_MIB });
    }
    const ext = path.extname(file.filename).toLowerCase();
    // zulip-compat: the type is guessed from the file name, as Zulip does.
    if (!EMOJI_TYPES[ext]) throw errors.badRequest('Invalid image format');
    const storedExt = ext === '.jpeg' ? '.jpg' : ext;
    const id = Number(
      stmt(app.db, 'INSERT INTO realm_emoji (realm_id, name, author_id, file_name, deactivated) VALUES (?, ?, ?, NULL, 0)').run(user.realm_id, name, user.id)
        .lastInsertRowid,
    );
    const fileName = `${id}${storedExt}`;
    stmt(app.db, 'UPDATE realm_emoji SET file_name = ? WHERE id = ?').run(fileName, id);
    // Synchronous copy of a small (≤ 5 MiB) file: a failure rolls the row back with it.
    const dest = emojiFilePath(app, user.realm_id, fileName) as string;
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(file.path, dest);
    notify(app, user.realm_id, { op: 'add' }, id);
  });
}

/** DELETE /realm/emoji/{name}: deactivates (the image stays, for old messages and reactions). */
export function doDeactivateRealmEmoji(app: App, user: UserRow, name: string): void {
  app.batch.write(() => {
    const row = stmt(app.db, 'SELECT * FROM realm_emoji WHERE realm_id = ? AND name = ? AND deactivated = 0 ORDER BY id LIMIT 1').get(user.realm_id, name) as
      | RealmEmojiRow
      | undefined;
    // zulip-compat: a 404 with code BAD_REQUEST (feature level 190).
    if (!row) throw new JsonableError("Emoji '{name}' does not exist", { status: 404, vars: { name } });
    if (!isAdmin(user) && row.author_id !== user.id) throw errors.badRequest('Must be an organization administrator or emoji author');
    // Only one active emoji has a name (uploads refuse a taken one): this is the row found above.
    stmt(app.db, 'UPDATE realm_emoji SET deactivated = 1 WHERE id = ?').run(row.id);
    notify(app, user.realm_id, { op: 'update_one', data: { deactivated: true } }, row.id);
  });
}

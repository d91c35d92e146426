// Uploaded avatars (POST/DELETE /users/me/avatar, and a bot's) and the organization icon
// (POST/DELETE /realm/icon). Checks in Zulip's order; the file is copied into place inside the write
// (≤ 5 MiB, synchronous, so a failed write leaves no row pointing nowhere), and the file it replaces
// is removed after the commit. Zulip's do_change_avatar_fields / do_change_icon_source: the version
// goes up at every change, so every URL a client held is replaced by a new one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import type { UploadedFile } from '../http/route';
import {
  avatarFilePath,
  MAX_AVATAR_FILE_SIZE_MIB,
  MAX_ICON_FILE_SIZE_MIB,
  realmIconPath,
  realmIconUrl,
  SNIFF_BYTES,
  sniffImageType,
} from '../lib/avatars';
import { getRealmById } from '../lib/realm';
import { avatarUrl, botAudience, findUserById, isBot, type UserRow } from '../lib/users';
import { accessBotById, doCreateBot, doUpdateBot, type BotChange, type NewBot } from './bots';
import { announceAvatar } from './user-access';
import { activeUserIds } from './users';

/** Zulip's checks on an uploaded image: its size limit, then an image type it accepts (by content). */
function checkImage(file: UploadedFile, limitMib: number): void {
  if (file.size > limitMib * 1024 * 1024) {
    throw errors.badRequest('Uploaded file is larger than the allowed limit of {max_size} MiB', { max_size: limitMib });
  }
  const head = Buffer.alloc(SNIFF_BYTES);
  const fd = fs.openSync(file.path, 'r');
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, SNIFF_BYTES, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (!sniffImageType(head.subarray(0, read))) throw errors.badImage('Invalid image format');
}

/** Copies an upload to `dest` (its directory made as needed). */
function place(file: UploadedFile, dest: string): void {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(file.path, dest);
}

/** Removes a replaced file after the commit (best effort: a leftover file is harmless). */
function removeAfterCommit(app: App, file: string | null): void {
  if (file) app.batch.onCommit(() => fs.promises.rm(file, { force: true }).catch(() => {}));
}

/** Who hears of `u`'s new avatar: realm_user update to those who may see them, realm_bot update for a bot. */
function notifyAvatarChange(app: App, u: UserRow): void {
  announceAvatar(app, u);
  if (isBot(u)) app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: u.id, avatar_url: avatarUrl(u) } }, botAudience(app.db, u)));
}

/**
 * Sets `target`'s avatar to the one uploaded file (the caller has checked who may). `tooMany` is the
 * text for a wrong number of files (Zulip's differs between /users/me/avatar and /bots). Returns the
 * new avatar_url.
 */
export function doSetAvatar(app: App, target: UserRow, files: readonly UploadedFile[], tooMany = 'You must upload exactly one avatar.'): string {
  if (files.length !== 1) throw errors.badRequest(tooMany);
  const file = files[0];
  checkImage(file, MAX_AVATAR_FILE_SIZE_MIB);
  return app.batch.write(() => {
    const before = findUserById(app.db, target.realm_id, target.id) as UserRow;
    const name = crypto.randomBytes(24).toString('base64url');
    place(file, avatarFilePath(app.uploadsDir, target.realm_id, name) as string);
    stmt(app.db, "UPDATE user SET avatar_source = 'U', avatar_file = ?, avatar_version = avatar_version + 1 WHERE id = ?").run(name, target.id);
    removeAfterCommit(app, before.avatar_file && avatarFilePath(app.uploadsDir, target.realm_id, before.avatar_file));
    const after = findUserById(app.db, target.realm_id, target.id) as UserRow;
    notifyAvatarChange(app, after);
    return avatarUrl(after);
  });
}

/** DELETE /users/me/avatar: back to the Gravatar image. Returns the new avatar_url. */
export function doDeleteAvatar(app: App, target: UserRow): string {
  return app.batch.write(() => {
    const before = findUserById(app.db, target.realm_id, target.id) as UserRow;
    stmt(app.db, "UPDATE user SET avatar_source = 'G', avatar_file = NULL, avatar_version = avatar_version + 1 WHERE id = ?").run(target.id);
    removeAfterCommit(app, before.avatar_file && avatarFilePath(app.uploadsDir, target.realm_id, before.avatar_file));
    const after = findUserById(app.db, target.realm_id, target.id) as UserRow;
    notifyAvatarChange(app, after);
    return avatarUrl(after);
  });
}

/** Zulip's do_change_icon_source: the new source and version, and the realm update_dict to everyone. */
function changeIconSource(app: App, realmId: number, source: 'G' | 'U'): string {
  stmt(app.db, 'UPDATE realm SET icon_source = ?, icon_version = icon_version + 1 WHERE id = ?').run(source, realmId);
  const url = realmIconUrl(app.publicUrl, getRealmById(app.db, realmId));
  const event = { type: 'realm', op: 'update_dict', property: 'icon', data: { icon_source: source, icon_url: url } };
  app.batch.onCommit(() => app.events.send(event, activeUserIds(app, realmId)));
  return url;
}

/** POST /realm/icon (administrators): the uploaded icon replaces the current one. Returns icon_url. */
export function doUploadRealmIcon(app: App, admin: UserRow, files: readonly UploadedFile[]): string {
  if (files.length !== 1) throw errors.badRequest('You must upload exactly one icon.');
  const file = files[0];
  checkImage(file, MAX_ICON_FILE_SIZE_MIB);
  return app.batch.write(() => {
    place(file, realmIconPath(app.uploadsDir, admin.realm_id));
    return changeIconSource(app, admin.realm_id, 'U');
  });
}

/**
 * DELETE /realm/icon (administrators): back to the built-in icon. As Zulip, the uploaded file stays
 * (a cached URL may still name it); the next upload replaces it.
 */
export function doDeleteRealmIcon(app: App, admin: UserRow): string {
  return app.batch.write(() => changeIconSource(app, admin.realm_id, 'G'));
}

/**
 * POST /bots with an avatar file (Zulip's add_bot_backend): the bot and its avatar in one write, so
 * a refused image creates no bot. The bot's realm_bot add (Gravatar) is followed by its avatar's
 * update events.
 */
export function doCreateBotWithAvatar(app: App, user: UserRow, spec: NewBot, files: readonly UploadedFile[]): Record<string, unknown> {
  if (files.length > 1) throw errors.badRequest('You may only upload one file at a time');
  return app.batch.write(() => {
    const out = doCreateBot(app, user, spec);
    if (files.length === 1) out.avatar_url = doSetAvatar(app, findUserById(app.db, user.realm_id, out.user_id as number) as UserRow, files);
    return out;
  });
}

/** PATCH /bots/{id} with an avatar file (Zulip's patch_bot_backend): the other changes, then the avatar. */
export function doUpdateBotWithAvatar(app: App, user: UserRow, botId: number, change: BotChange, files: readonly UploadedFile[]): Record<string, unknown> {
  if (files.length > 1) throw errors.badRequest('You may only upload one file at a time');
  return app.batch.write(() => {
    const out = doUpdateBot(app, user, botId, change);
    if (files.length === 1) out.avatar_url = doSetAvatar(app, accessBotById(app, user, botId), files);
    return out;
  });
}

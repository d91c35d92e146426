// Avatars and the organization icon: uploading and removing them (POST/DELETE /users/me/avatar,
// POST/DELETE /realm/icon), the image files (/user_avatars/...), and Zulip's redirecting URLs
// (GET /avatar/{email_or_id}[/medium]). Zulip's GET /realm/icon (a redirect) is not served: under
// /api/v1 every answer is JSON, and realm_icon_url already names the image.
import fs from 'node:fs';
import type { App } from '../app';
import { doDeleteAvatar, doDeleteRealmIcon, doSetAvatar, doUploadRealmIcon } from '../actions/avatars';
import { FileReply, Reply, publicRoute, route } from '../http/route';
import { UNKNOWN_USER_AVATAR_URL, canAccessUser } from '../lib/access';
import { avatarFilePath, realmIconPath, SNIFF_BYTES, sniffImageType } from '../lib/avatars';
import { getRealmById } from '../lib/realm';
import { avatarUrl, findUserByEmail, findUserById, type UserRow } from '../lib/users';

const notFound = () => new Reply(404, { 'Content-Type': 'text/html; charset=utf-8' }, '<p>File not found.</p>');

/**
 * An image file on disk, served with the type its bytes say (it was checked at upload). Its URL
 * changes with every new image (a fresh name, or ?version=), so it may be cached for good.
 */
function imageReply(file: string | null): Reply | FileReply {
  if (!file) return notFound();
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return notFound();
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return notFound();
    const head = Buffer.alloc(SNIFF_BYTES);
    const type = sniffImageType(head.subarray(0, fs.readSync(fd, head, 0, SNIFF_BYTES, 0)));
    if (!type) return notFound();
    return new FileReply(200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }, file, st.size);
  } finally {
    fs.closeSync(fd);
  }
}

/** Django's redirect(): a 302 to `location`. */
const found = (location: string) => new Reply(302, { Location: location, 'Cache-Control': 'private, no-cache' }, '');

/**
 * Zulip's avatar view: the avatar of the user with that id or API email in the caller's organization,
 * the "unknown user" image for a user the caller may not see, or, for nobody, the Gravatar image of
 * the text as an address (version 1), as Zulip answers.
 */
function avatarRedirect(app: App, viewer: UserRow, emailOrId: string, medium: boolean): Reply {
  const target = /^[0-9]{1,15}$/.test(emailOrId) ? findUserById(app.db, viewer.realm_id, Number(emailOrId)) : findUserByEmail(app.db, viewer.realm_id, emailOrId);
  if (!target) return found(avatarUrl({ realm_id: viewer.realm_id, delivery_email: emailOrId, avatar_source: 'G', avatar_version: 1, avatar_file: null }, medium));
  if (!canAccessUser(app.db, viewer, target)) return found(UNKNOWN_USER_AVATAR_URL);
  return found(avatarUrl(target, medium));
}

export const avatarRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/users/me/avatar',
    auth: 'user',
    files: true,
    handle: ({ app, user, files }) => ({ avatar_url: doSetAvatar(app, user, files) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/avatar',
    auth: 'user',
    handle: ({ app, user }) => ({ avatar_url: doDeleteAvatar(app, user) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/realm/icon',
    auth: 'user',
    requires: 'admin',
    files: true,
    handle: ({ app, user, files }) => ({ icon_url: doUploadRealmIcon(app, user, files) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/realm/icon',
    auth: 'user',
    requires: 'admin',
    handle: ({ app, user }) => ({ icon_url: doDeleteRealmIcon(app, user) }),
  }),
  route({
    method: 'GET',
    path: '/avatar/{email_or_id}',
    auth: 'user_or_session',
    handle: ({ app, user, path }) => avatarRedirect(app, user, path.email_or_id, false),
  }),
  route({
    method: 'GET',
    path: '/avatar/{email_or_id}/medium',
    auth: 'user_or_session',
    handle: ({ app, user, path }) => avatarRedirect(app, user, path.email_or_id, true),
  }),
  publicRoute({
    // Public as Zulip's: the name is random and changes at each upload. "-medium" names the same
    // file (Parley keeps the image as uploaded).
    method: 'GET',
    path: '/user_avatars/{realm_id:int}/{file}',
    handle({ app, path }) {
      const m = /^([A-Za-z0-9_-]{32})(?:-medium)?\.png$/.exec(path.file);
      return imageReply(m ? avatarFilePath(app.uploadsDir, Number(path.realm_id), m[1]) : null);
    },
  }),
  publicRoute({
    method: 'GET',
    path: '/user_avatars/{realm_id:int}/realm/{file}',
    handle({ app, path }) {
      const realm = getRealmById(app.db, Number(path.realm_id));
      return imageReply(realm && path.file === 'icon.png' ? realmIconPath(app.uploadsDir, realm.id) : null);
    },
  }),
];

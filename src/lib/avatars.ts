// Uploaded avatars and organization icons: where their files live, the URLs clients get, and which
// images are accepted. Files sit under <uploads>/avatars/<realm_id>/: a user's as the random name in
// user.avatar_file (a new name at each upload, so its URL can be public and cached for good, as
// Zulip's salted hashes), the organization's as realm/icon. They are stored as uploaded: Parley does
// not resize images (Zulip makes 100 px and 500 px PNGs), so the "medium" URL names the same file.
import path from 'node:path';
import type { RealmRow } from './realm';

/** Zulip's MAX_AVATAR_FILE_SIZE_MIB and MAX_ICON_FILE_SIZE_MIB defaults (also in /register). */
export const MAX_AVATAR_FILE_SIZE_MIB = 5;
export const MAX_ICON_FILE_SIZE_MIB = 5;

/**
 * The image type of a file from its first bytes, or null: the types Zulip accepts for avatars and
 * icons (THUMBNAIL_ACCEPT_IMAGE_TYPES) that browsers and the mobile app show without conversion.
 * Never the declared type or the file name: those are the client's word.
 */
export function sniffImageType(head: Buffer): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | null {
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && /^GIF8[79]a$/.test(head.toString('latin1', 0, 6))) return 'image/gif';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** The first 12 bytes are enough for sniffImageType. */
export const SNIFF_BYTES = 12;

const AVATAR_FILE = /^[A-Za-z0-9_-]{32}$/;

/** The directory of a realm's avatars and icon. */
export const realmAvatarsDir = (uploadsDir: string, realmId: number) => path.join(uploadsDir, 'avatars', String(realmId));

/** The file of an uploaded avatar, or null for a name that is not one of ours (it could leave the directory). */
export function avatarFilePath(uploadsDir: string, realmId: number, name: string): string | null {
  return AVATAR_FILE.test(name) ? path.join(realmAvatarsDir(uploadsDir, realmId), name) : null;
}

/** The uploaded icon of a realm. */
export const realmIconPath = (uploadsDir: string, realmId: number) => path.join(realmAvatarsDir(uploadsDir, realmId), 'realm', 'icon');

/** Zulip's URL of an uploaded avatar (root-relative, as Zulip's local upload backend gives it). */
export function uploadedAvatarUrl(realmId: number, file: string, version: number, medium = false): string {
  return `/user_avatars/${realmId}/${file}${medium ? '-medium' : ''}.png?version=${version}`;
}

/** The built-in icon of an organization that uploaded none. */
export const DEFAULT_REALM_ICON_PATH = '/static/images/default-realm-icon.png';

/** realm_icon_url: the uploaded icon (Zulip's URL, root-relative), else the built-in one. */
export function realmIconUrl(publicUrl: string, realm: Pick<RealmRow, 'id' | 'icon_source' | 'icon_version'> | null): string {
  if (realm && realm.icon_source === 'U') return `/user_avatars/${realm.id}/realm/icon.png?version=${realm.icon_version}`;
  return `${publicUrl}${DEFAULT_REALM_ICON_PATH}?version=0`;
}

/** A root-relative URL made absolute on this server (push payloads, server_settings); others as they are. */
export const absoluteUrl = (publicUrl: string, url: string) => (url.startsWith('/') ? `${publicUrl}${url}` : url);

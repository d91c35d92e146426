// The export's files into Parley's uploads directory: uploads/ (with their attachment rows, under
// Zulip's path ids where Parley can serve them, so links in messages keep working), avatars/,
// emoji/ and realm_icons/. The unpacked files are renamed into place (the staging directory holds
// both: no copy), each found through its folder's records.json as Zulip's import_uploads finds it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { stmt } from '../../db/stmt';
import { realmAvatarsDir, realmIconPath } from '../../lib/avatars';
import { newPathId, sanitizeName, storePath } from '../../uploads/store';
import { ImportError } from '../errors';
import { bit, described, insertRow, rowsOf, secs, type Row, type ZulipImport } from './context';

/** A folder's records.json (checked already), or none. */
export function readRecords(z: ZulipImport, folder: string): Row[] {
  const file = path.join(z.root, folder, 'records.json');
  if (!fs.existsSync(file)) return [];
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Row[];
}

/** Moves an unpacked file to `dest` (a second use of the same file is a copy). */
function place(from: string, dest: string, moved: Map<string, string>): number {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const earlier = moved.get(from);
  if (earlier) fs.copyFileSync(earlier, dest, fs.constants.COPYFILE_EXCL);
  else {
    if (fs.existsSync(dest)) throw new ImportError(`two files of the export go to ${dest}`);
    fs.renameSync(from, dest);
    moved.set(from, dest);
  }
  return fs.statSync(dest).size;
}

/** A path_id Parley can serve in this organization: the export's, else a new one (links are rewritten). */
function pathIdFor(z: ZulipImport, old: string, fileName: string): string {
  let ok = old.startsWith(`${z.realmId}/`);
  try {
    storePath(z.app.uploadsDir, old);
  } catch {
    ok = false;
  }
  if (ok) return old;
  const fresh = newPathId(z.realmId, sanitizeName(fileName) || 'file');
  z.linkChanges.set(`/user_uploads/${old}`, `/user_uploads/${fresh}`);
  return fresh;
}

/**
 * uploads/: every attachment's file in the store and its row (its links to messages come after the
 * messages: attachmentLinks). Returns the attachment rows for those links.
 */
export function writeUploads(z: ZulipImport, attachmentData: Row): Row[] {
  const moved = new Map<string, string>();
  const byS3 = new Map<string, Row>();
  for (const r of readRecords(z, 'uploads')) byS3.set(r.s3_path as string, r);
  const attachments = rowsOf(attachmentData, 'zerver_attachment');
  attachments.forEach((a, i) => {
    const where = `attachment.json: zerver_attachment[${i}]`;
    const record = byS3.get(a.path_id as string);
    if (!record) throw new ImportError(`${where}.path_id: ${String(a.path_id)} is not in uploads/records.json`);
    const pathId = pathIdFor(z, a.path_id as string, a.file_name as string);
    const size = place(path.join(z.root, 'uploads', record.path as string), storePath(z.app.uploadsDir, pathId), moved);
    described(where, () =>
      insertRow(z.app, 'attachment', {
        id: a.id,
        realm_id: z.realmId,
        owner_id: z.users.get(a.owner as number) ?? a.owner,
        path_id: pathId,
        file_name: a.file_name,
        content_type: a.content_type ?? null,
        size,
        create_time: secs(a.create_time),
        is_realm_public: bit(a.is_realm_public),
        is_web_public: bit(a.is_web_public),
      }),
    );
  });
  z.counts.uploads = attachments.length;
  return attachments;
}

/** Each attachment's messages and scheduled messages (all written by now). */
export function attachmentLinks(z: ZulipImport, attachments: Row[]): void {
  const toMessage = stmt(z.app.db, 'INSERT OR IGNORE INTO attachment_message (attachment_id, message_id) VALUES (?, ?)');
  const toScheduled = stmt(z.app.db, 'INSERT OR IGNORE INTO attachment_scheduled_message (attachment_id, scheduled_message_id) VALUES (?, ?)');
  attachments.forEach((a, i) => {
    described(`attachment.json: zerver_attachment[${i}].messages`, () => {
      for (const m of a.messages as number[]) toMessage.run(a.id, m);
    });
    described(`attachment.json: zerver_attachment[${i}].scheduled_messages`, () => {
      for (const s of a.scheduled_messages as number[]) toScheduled.run(a.id, s);
    });
  });
}

/** avatars/, emoji/ and realm_icons/: a missing file is a warning (the default image is shown), as Zulip's importer has it. */
export function writeImages(z: ZulipImport, realmData: Row): void {
  const { app, realmId } = z;
  const moved = new Map<string, string>();
  // Avatars: Zulip keeps several sizes of each; Parley keeps one image, the original where there is one.
  const best = new Map<number, Row>();
  const people = new Set(rowsOf(realmData, 'zerver_userprofile').map((u) => u.id as number));
  for (const r of readRecords(z, 'avatars')) {
    // Zulip's exporter adds the system bots' avatars: Parley's system bots keep their own.
    const user = people.has(r.user_profile_id as number) ? z.users.get(r.user_profile_id as number) : undefined;
    if (user === undefined) continue;
    const p = r.path as string;
    const have = best.get(user);
    if (!have || p.endsWith('.original') || (!(have.path as string).endsWith('.original') && p.endsWith('.png') && !p.endsWith('-medium.png'))) best.set(user, r);
  }
  const setAvatar = stmt(app.db, "UPDATE user SET avatar_source = 'U', avatar_file = ?, avatar_version = ? WHERE id = ?");
  const version = new Map<number, number>();
  for (const u of rowsOf(realmData, 'zerver_userprofile')) version.set(u.id as number, typeof u.avatar_version === 'number' ? u.avatar_version : 1);
  for (const [user, r] of best) {
    // The export's name when it is one Parley makes (a round trip), else a new one.
    const base = path.basename(r.path as string).replace(/(\.original|-medium\.png|\.png)$/, '');
    const name = /^[A-Za-z0-9_-]{32}$/.test(base) ? base : crypto.randomBytes(24).toString('base64url');
    place(path.join(z.root, 'avatars', r.path as string), path.join(realmAvatarsDir(app.uploadsDir, realmId), name), moved);
    setAvatar.run(name, version.get(user) ?? (typeof r.avatar_version === 'number' ? r.avatar_version : 1), user);
  }
  for (const u of rowsOf(realmData, 'zerver_userprofile')) {
    if (u.avatar_source === 'U' && !best.has(z.users.get(u.id as number) ?? -1)) z.warnings.push(`the avatar of user ${String(u.id)} is missing from the export; the default one is shown`);
  }

  // Custom emoji: the image (not the .original) of each, stored under the emoji's id as Parley names them.
  const emojiRecords = readRecords(z, 'emoji');
  const setEmoji = stmt(app.db, 'UPDATE realm_emoji SET file_name = ? WHERE id = ?');
  for (const e of rowsOf(realmData, 'zerver_realmemoji')) {
    const fileName = typeof e.file_name === 'string' ? e.file_name : '';
    const record =
      emojiRecords.find((r) => r.file_name === fileName && !(r.path as string).endsWith('.original')) ?? emojiRecords.find((r) => r.file_name === fileName);
    if (!record || fileName === '') {
      z.warnings.push(`the image of custom emoji ${String(e.name)} is missing from the export`);
      continue;
    }
    const ext = (path.extname(fileName).toLowerCase().match(/^\.[a-z]+$/) ?? ['.png'])[0];
    // Parley names an emoji's file after its id; Zulip's current names are salted hashes, which
    // messages showing the emoji link to.
    const stored = `${String(e.id)}${ext}`;
    if (stored !== fileName) z.linkChanges.set(`/user_avatars/${realmId}/emoji/images/${fileName}`, `/user_avatars/${realmId}/emoji/images/${stored}`);
    place(path.join(z.root, 'emoji', record.path as string), path.join(app.uploadsDir, 'emoji', String(realmId), stored), moved);
    setEmoji.run(stored, e.id);
  }

  // The organization's icon: the original.
  const realm = rowsOf(realmData, 'zerver_realm')[0];
  if (realm.icon_source === 'U') {
    const icons = readRecords(z, 'realm_icons');
    const icon = icons.find((r) => (r.path as string).endsWith('icon.original')) ?? icons.find((r) => (r.path as string).endsWith('icon.png'));
    if (icon) place(path.join(z.root, 'realm_icons', icon.path as string), realmIconPath(app.uploadsDir, realmId), moved);
    else {
      stmt(app.db, "UPDATE realm SET icon_source = 'G' WHERE id = ?").run(realmId);
      z.warnings.push('the organization icon is missing from the export; the default one is shown');
    }
  }
}

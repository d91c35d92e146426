// attachment.json and the file folders (uploads/, avatars/, emoji/, realm_icons/ with their
// records.json), copied from the uploads directory as streams.
import fs from 'node:fs';
import path from 'node:path';
import { storePath } from '../uploads/store';
import { JsonTablesFile } from './json-writer';
import { bool, secs, type Context, type Db, type Put, type Row } from './context';

/** attachment.json: the files linked from a message or a scheduled message (as Zulip's fetch_attachment_data). Returns them for the uploads folder. */
export function writeAttachments(db: Db, ctx: Context, f: JsonTablesFile, uploadsDir: string): Row[] {
  const messagesOf = db.prepare('SELECT message_id FROM attachment_message WHERE attachment_id = ? ORDER BY message_id').pluck();
  const scheduledOf = db.prepare('SELECT scheduled_message_id FROM attachment_scheduled_message WHERE attachment_id = ? ORDER BY scheduled_message_id').pluck();
  const kept: Row[] = [];
  f.table('zerver_attachment');
  for (const a of db.prepare('SELECT * FROM attachment WHERE realm_id = ? ORDER BY id').all(ctx.realmId) as Row[]) {
    let messages = messagesOf.all(a.id) as number[];
    let scheduled = scheduledOf.all(a.id) as number[];
    // A filtered export keeps the files of the messages it exports only (Zulip's fetch_attachment_data).
    const filter = ctx.filter;
    if (filter) {
      messages = messages.filter((id) => filter.keptMessages.has(id));
      scheduled = scheduled.filter((id) => filter.keptScheduled.has(id));
    }
    if (messages.length === 0 && scheduled.length === 0) continue;
    // The importer looks every path_id up in uploads/records.json: a file missing from the uploads
    // directory leaves its row out too (and says so).
    let file: string | null = null;
    try {
      file = storePath(uploadsDir, a.path_id);
    } catch {
      file = null;
    }
    const info = fileInfo(file);
    if (!info) {
      process.stderr.write(`parley: export: warning: uploads/${a.path_id} is missing from ${uploadsDir}; left out\n`);
      continue;
    }
    f.row({
      id: a.id,
      realm: ctx.realmId,
      owner: a.owner_id,
      path_id: a.path_id,
      file_name: a.file_name,
      content_type: a.content_type,
      size: a.size,
      create_time: secs(a.create_time),
      is_realm_public: bool(a.is_realm_public),
      is_web_public: bool(a.is_web_public),
      messages,
      scheduled_messages: scheduled,
    });
    kept.push({ ...a, file: info });
  }
  return kept;
}

/** A file to copy, or null (with a warning) when it is missing from the uploads directory. */
function fileInfo(file: string | null): { file: string; size: number; mtime: number } | null {
  if (!file) return null;
  try {
    const st = fs.statSync(file);
    return st.isFile() ? { file, size: st.size, mtime: st.mtimeMs / 1000 } : null;
  } catch {
    return null;
  }
}

/** uploads/, avatars/, emoji/ and realm_icons/, each with its records.json. Returns the record counts. */
export async function writeFiles(db: Db, ctx: Context, uploadsDir: string, attachments: Row[], put: Put): Promise<Record<string, number>> {
  const R = ctx.realmId;
  const missing: string[] = [];

  const uploads: Row[] = [];
  for (const a of attachments) {
    const info = a.file as { file: string; size: number; mtime: number };
    await put(`uploads/${a.path_id}`, info);
    uploads.push({
      realm_id: R,
      user_profile_id: a.owner_id,
      user_profile_email: ctx.users.get(a.owner_id)?.email ?? '',
      s3_path: a.path_id,
      path: a.path_id,
      size: info.size,
      last_modified: info.mtime,
      content_type: a.content_type,
    });
  }

  const avatars: Row[] = [];
  for (const u of ctx.users.values()) {
    if (u.avatar_source !== 'U' || !u.avatar_file || ctx.crossRealm.has(u.id)) continue;
    const info = fileInfo(/^[A-Za-z0-9_-]+$/.test(u.avatar_file) ? path.join(uploadsDir, 'avatars', String(R), u.avatar_file) : null);
    if (!info) {
      missing.push(`avatar of user ${u.id}`);
      continue;
    }
    const rel = `${R}/${u.avatar_file}.original`;
    await put(`avatars/${rel}`, info);
    avatars.push({
      realm_id: R,
      user_profile_id: u.id,
      user_profile_email: u.email,
      avatar_version: u.avatar_version,
      s3_path: rel,
      path: rel,
      size: info.size,
      last_modified: info.mtime,
      content_type: null,
      // Parley keeps only the uploaded image: Zulip makes its sizes from the .original.
      importer_should_thumbnail: true,
    });
  }

  const emoji: Row[] = [];
  for (const e of db.prepare('SELECT * FROM realm_emoji WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    if (!e.file_name || !/^[0-9]+\.[a-z]+$/.test(e.file_name)) continue;
    const info = fileInfo(path.join(uploadsDir, 'emoji', String(R), e.file_name));
    if (!info) {
      missing.push(`emoji ${e.name}`);
      continue;
    }
    const rel = `${R}/emoji/images/${e.file_name}`;
    // As export_emoji_from_local: the emoji and its .original (Parley stores one image: the same bytes).
    for (const p of [rel, `${rel}.original`]) {
      await put(`emoji/${p}`, info);
      emoji.push({ realm_id: R, author: e.author_id, path: p, s3_path: p, file_name: e.file_name, name: e.name, deactivated: bool(e.deactivated) });
    }
  }

  const icons: Row[] = [];
  if (ctx.realm.icon_source === 'U') {
    const info = fileInfo(path.join(uploadsDir, 'avatars', String(R), 'realm', 'icon'));
    if (info) {
      for (const name of ['icon.original', 'icon.png']) {
        const rel = `${R}/${name}`;
        await put(`realm_icons/${rel}`, info);
        icons.push({ realm_id: R, path: rel, s3_path: rel });
      }
    } else {
      missing.push('organization icon');
    }
  }

  const byPath = (a: Row, b: Row) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  for (const [folder, records] of [
    ['uploads', uploads],
    ['avatars', avatars],
    ['emoji', emoji],
    ['realm_icons', icons],
  ] as const) {
    records.sort(byPath);
    await put(`${folder}/records.json`, Buffer.from(JSON.stringify(records, null, 2) + '\n'));
  }
  for (const m of missing) process.stderr.write(`parley: export: warning: ${m} is missing from ${uploadsDir}; left out\n`);
  return { uploads_records: uploads.length, avatars_records: avatars.length, emoji_records: emoji.length, realm_icons_records: icons.length };
}


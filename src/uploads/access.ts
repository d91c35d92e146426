// Read side of uploads: attachment rows, who may read a file (Zulip's validate_attachment_request),
// the organization's usage, and signed temporary URLs.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { findStreamById, canAccessStreamHistory } from '../lib/streams';
import type { UserRow } from '../lib/users';

export interface AttachmentRow {
  id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string | null;
  size: number;
  create_time: number;
  is_realm_public: number;
  is_web_public: number;
}

export function findAttachmentByPath(db: Db, realmId: number, pathId: string): AttachmentRow | null {
  return (stmt(db, 'SELECT * FROM attachment WHERE realm_id = ? AND path_id = ?').get(realmId, pathId) as AttachmentRow | undefined) ?? null;
}

export function findAttachment(db: Db, realmId: number, id: number): AttachmentRow | null {
  return (stmt(db, 'SELECT * FROM attachment WHERE realm_id = ? AND id = ?').get(realmId, id) as AttachmentRow | undefined) ?? null;
}

/**
 * Whether `user` may read the attachment: its uploader; anyone who received a message linking it;
 * anyone who may read the history of a channel where such a message was sent (so a file linked in a
 * public channel is readable by every member, as in Zulip). Deleting the messages removes the links.
 */
export function canReadAttachment(db: Db, user: UserRow, a: AttachmentRow): boolean {
  if (a.realm_id !== user.realm_id) return false;
  if (a.owner_id === user.id) return true;
  // A received message: a written row, or an implied one (schema.sql, usermessage_cursor).
  const received = stmt(
    db,
    `SELECT 1 FROM attachment_message am JOIN usermessage um ON um.message_id = am.message_id
      WHERE am.attachment_id = @attachment AND um.user_id = @user
     UNION ALL
     SELECT 1 FROM attachment_message am JOIN usermessage_pending p ON p.message_id = am.message_id
      WHERE am.attachment_id = @attachment AND p.user_id = @user
     LIMIT 1`,
  ).get({ attachment: a.id, user: user.id });
  if (received) return true;
  const streams = stmt(
    db,
    `SELECT DISTINCT m.stream_id FROM attachment_message am JOIN message m ON m.id = am.message_id
      WHERE am.attachment_id = ? AND m.stream_id IS NOT NULL`,
  ).all(a.id) as { stream_id: number }[];
  for (const { stream_id } of streams) {
    const s = findStreamById(db, user.realm_id, stream_id);
    if (s && canAccessStreamHistory(db, user, s)) return true;
  }
  return false;
}

/** Bytes stored by the whole organization (upload_space_used). */
export function uploadSpaceUsed(db: Db, realmId: number): number {
  return (stmt(db, 'SELECT COALESCE(SUM(size), 0) AS n FROM attachment WHERE realm_id = ?').get(realmId) as { n: number }).n;
}

/** The attachment object of GET /attachments and attachment events. */
export function formatAttachment(db: Db, a: AttachmentRow): Record<string, unknown> {
  const messages = stmt(
    db,
    `SELECT m.id, m.date_sent FROM attachment_message am JOIN message m ON m.id = am.message_id
      WHERE am.attachment_id = ? ORDER BY m.id`,
  ).all(a.id) as { id: number; date_sent: number }[];
  return {
    id: a.id,
    name: a.file_name,
    path_id: a.path_id,
    size: a.size,
    create_time: a.create_time * 1000,
    messages: messages.map((m) => ({ id: m.id, date_sent: m.date_sent * 1000 })),
  };
}

/** The user's own attachments, newest first. */
export function userAttachments(db: Db, user: UserRow): AttachmentRow[] {
  return stmt(db, 'SELECT * FROM attachment WHERE owner_id = ? ORDER BY id DESC').all(user.id) as AttachmentRow[];
}

// ---- temporary URLs ---------------------------------------------------------------------------------

/** Seconds a temporary URL stays valid (Zulip: 60). */
export const TEMPORARY_URL_SECONDS = 60;

const secrets = new WeakMap<App, Buffer>();

/** The signing key for temporary URLs, kept beside the uploads so links survive a restart. */
function signingKey(app: App): Buffer {
  let key = secrets.get(app);
  if (key) return key;
  const file = path.join(app.uploadsDir, '.url-signing-key');
  try {
    key = fs.readFileSync(file);
  } catch {
    fs.mkdirSync(app.uploadsDir, { recursive: true });
    const fresh = crypto.randomBytes(32);
    try {
      fs.writeFileSync(file, fresh, { mode: 0o600, flag: 'wx' });
      key = fresh;
    } catch {
      key = fs.readFileSync(file); // another process won the race
    }
  }
  if (key.length < 32) throw new Error(`${file} is too short`);
  secrets.set(app, key);
  return key;
}

const mac = (key: Buffer, data: string) => crypto.createHmac('sha256', key).update(data).digest('base64url');

/** A token naming `pathId` until now + TEMPORARY_URL_SECONDS. */
export function signTemporaryToken(app: App, pathId: string, nowSeconds: number): string {
  const payload = Buffer.from(JSON.stringify([pathId, nowSeconds + TEMPORARY_URL_SECONDS])).toString('base64url');
  return `${payload}.${mac(signingKey(app), payload)}`;
}

/** The path_id a token names, or null when it is forged, malformed or expired. */
export function verifyTemporaryToken(app: App, token: string, nowSeconds: number): string | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const want = Buffer.from(mac(signingKey(app), payload));
  if (given.length !== want.length || !crypto.timingSafeEqual(given, want)) return null;
  try {
    const [pathId, expires] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, number];
    if (typeof pathId !== 'string' || typeof expires !== 'number' || expires < nowSeconds) return null;
    return pathId;
  } catch {
    return null;
  }
}

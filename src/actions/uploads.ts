// Uploads: storing a finished file as an attachment (POST /user_uploads and the last tus PATCH), and
// deleting one. The bytes are already on disk in a temporary file; the action checks the limits,
// moves the file into the store and records the row, then tells the owner (attachment events).
import fs from 'node:fs';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { getRealmById } from '../lib/realm';
import type { UserRow } from '../lib/users';
import { findAttachment, formatAttachment, uploadSpaceUsed, type AttachmentRow } from '../uploads/access';
import { moveIntoStore, newPathId, pathIdName, removeFromStore, sanitizeName, uploadUrl } from '../uploads/store';

/** The upload size limit in MiB for the user's organization (its own setting, else the server's). */
export function maxUploadMib(app: App, realmId: number): number {
  const realm = getRealmById(app.db, realmId);
  const own = realm?.max_file_upload_size_mib;
  return typeof own === 'number' ? Math.min(own, app.config.maxFileUploadSizeMib) : app.config.maxFileUploadSizeMib;
}

/** Zulip's size and quota checks for a file of `size` bytes about to be stored. */
export function checkUpload(app: App, user: UserRow, size: number): void {
  const max = maxUploadMib(app, user.realm_id);
  if (size > max * 1024 * 1024) {
    throw errors.badRequest("File is larger than this server's configured maximum upload size ({max_size} MiB).", { max_size: max });
  }
  checkQuota(app, user.realm_id, size);
}

/** REALM_UPLOAD_QUOTA when `size` more bytes would pass the organization's quota. */
export function checkQuota(app: App, realmId: number, size: number): void {
  const realm = getRealmById(app.db, realmId);
  const quota = realm?.upload_quota_mib;
  if (typeof quota === 'number' && uploadSpaceUsed(app.db, realmId) + size > quota * 1024 * 1024) throw errors.realmUploadQuota();
}

export interface StoredUpload {
  url: string;
  uri: string;
  filename: string;
}

/**
 * Stores the finished temporary file `tmpFile` (of `size` bytes, client name `clientName`) as the
 * user's attachment and answers the Upload result. The temporary file is moved, never copied
 * through memory.
 */
export async function doStoreUpload(
  app: App,
  user: UserRow,
  file: { tmpFile: string; clientName: string; size: number; contentType: string | null },
): Promise<StoredUpload> {
  checkUpload(app, user, file.size);
  const name = sanitizeName(file.clientName);
  const pathId = newPathId(user.realm_id, name);
  await moveIntoStore(app.uploadsDir, file.tmpFile, pathId);
  try {
    app.batch.write(() => {
      // Again inside the write: other uploads may have landed while the file was moving.
      checkQuota(app, user.realm_id, file.size);
      const id = Number(
        stmt(
          app.db,
          `INSERT INTO attachment (realm_id, owner_id, path_id, file_name, content_type, size, create_time)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(user.realm_id, user.id, pathId, name, file.contentType, file.size, nowSeconds(app.clock)).lastInsertRowid,
      );
      app.batch.onCommit(() => {
        const row = findAttachment(app.db, user.realm_id, id);
        if (!row) return;
        app.events.send(
          { type: 'attachment', op: 'add', attachment: formatAttachment(app.db, row), upload_space_used: uploadSpaceUsed(app.db, user.realm_id) },
          [user.id],
        );
      });
    });
  } catch (err) {
    await removeFromStore(app.uploadsDir, pathId);
    throw err;
  }
  const url = uploadUrl(pathId);
  return { url, uri: url, filename: pathIdName(pathId) };
}

/** DELETE /attachments/{id}: the owner removes the file; "Invalid attachment" for anything else. */
export function doDeleteAttachment(app: App, user: UserRow, id: number): void {
  let row: AttachmentRow | null = null;
  app.batch.write(() => {
    row = findAttachment(app.db, user.realm_id, id);
    if (!row || row.owner_id !== user.id) throw errors.badRequest('Invalid attachment');
    stmt(app.db, 'DELETE FROM attachment WHERE id = ?').run(id);
    app.batch.onCommit(() => {
      app.events.send({ type: 'attachment', op: 'remove', attachment: { id }, upload_space_used: uploadSpaceUsed(app.db, user.realm_id) }, [user.id]);
      void removeFromStore(app.uploadsDir, (row as AttachmentRow).path_id);
    });
  });
}

/** Removes a temporary file (best effort). */
export function discardTemp(file: string): void {
  fs.rm(file, { force: true }, () => undefined);
}

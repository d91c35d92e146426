// Uploads: storing a finished file as an attachment (POST /user_uploads and the last tus PATCH), and
// deleting one. The bytes are already on disk in a temporary file; the action checks the limits,
// moves the file into the store and records the row, then tells the owner (attachment events).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import type { BodyStream } from '../http/route';
import { nowSeconds } from '../lib/clock';
import { getRealmById } from '../lib/realm';
import type { UserRow } from '../lib/users';
import { findAttachment, findAttachmentByPath, formatAttachment, uploadSpaceUsed, type AttachmentRow } from '../uploads/access';
import { findTusUpload, tusDir, tusFile, tusState, TUS_EXPIRY_SECONDS, TUS_SWEEP_MS, TUS_VERSION, type TusRow } from '../uploads/tus';
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

/** zulip-compat: how long an upload no message references is kept (delete_old_unclaimed_attachments --weeks). */
export const UNCLAIMED_ATTACHMENT_WEEKS = 5;
const UNCLAIMED_BATCH = 1000;

/**
 * Zulip's delete_old_unclaimed_attachments (its daily cron): removes uploads older than `weeks` that no
 * message or pending scheduled message references (by its content: scheduled messages are not linked
 * to attachments when scheduled), rows and files, at most a batch per call; tells each owner
 * (attachment remove events). Zulip keeps the files of deleted messages until its message archive is
 * purged; Parley keeps no archive, so a file whose messages were deleted counts as unclaimed once old.
 * Returns how many it removed.
 */
export function deleteOldUnclaimedAttachments(app: App, weeks = UNCLAIMED_ATTACHMENT_WEEKS): number {
  const cutoff = nowSeconds(app.clock) - weeks * 7 * 86400;
  return app.batch.write(() => {
    const rows = stmt(
      app.db,
      `SELECT * FROM attachment a WHERE a.create_time < ?
         AND NOT EXISTS (SELECT 1 FROM attachment_message m WHERE m.attachment_id = a.id)
         AND NOT EXISTS (SELECT 1 FROM attachment_scheduled_message s WHERE s.attachment_id = a.id)
         AND NOT EXISTS (SELECT 1 FROM scheduled_message sm WHERE sm.delivered = 0 AND instr(sm.content, a.path_id) > 0)
       ORDER BY a.id LIMIT ${UNCLAIMED_BATCH}`,
    ).all(cutoff) as AttachmentRow[];
    const del = stmt(app.db, 'DELETE FROM attachment WHERE id = ?');
    for (const r of rows) del.run(r.id);
    if (rows.length > 0) {
      app.batch.onCommit(() => {
        for (const r of rows) {
          app.events.send({ type: 'attachment', op: 'remove', attachment: { id: r.id }, upload_space_used: uploadSpaceUsed(app.db, r.realm_id) }, [r.owner_id]);
          void removeFromStore(app.uploadsDir, r.path_id);
        }
      });
    }
    return rows.length;
  });
}

/** Removes a temporary file (best effort). */
export function discardTemp(file: string): void {
  fs.rm(file, { force: true }, () => undefined);
}

// ---- tus (resumable uploads) ---------------------------------------------------------------------

const TUS_HEADERS = { 'Tus-Resumable': TUS_VERSION };

/** A tus failure: the status tells the client what to do; the body is the usual error envelope. */
export const tusError = (status: number, template: string, vars?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  new JsonableError(template, { status, vars, headers: { ...TUS_HEADERS, ...headers } });

/** The user's live upload `id`, or 404 (also for someone else's: never leak existence). */
function accessTusUpload(app: App, user: UserRow, id: string): TusRow {
  const row = /^[0-9a-f]{32}$/.test(id) ? findTusUpload(app.db, id) : null;
  if (!row || row.user_id !== user.id) throw tusError(404, 'Upload not found');
  if (row.expires < nowSeconds(app.clock)) throw tusError(410, 'Upload expired');
  return row;
}

/** tus creation: checks the declared length against the limits, records the upload, makes its file. */
export function doCreateTusUpload(app: App, user: UserRow, req: { length: number; fileName: string; contentType: string | null }): TusRow {
  const max = maxUploadMib(app, user.realm_id);
  if (req.length > max * 1024 * 1024) {
    throw tusError(413, "File is larger than this server's configured maximum upload size ({max_size} MiB).", { max_size: max });
  }
  try {
    checkQuota(app, user.realm_id, req.length);
  } catch {
    throw tusError(413, "Upload would exceed your organization's upload quota.");
  }
  startTusSweeper(app);
  const id = crypto.randomBytes(16).toString('hex');
  const now = nowSeconds(app.clock);
  fs.mkdirSync(tusDir(app), { recursive: true });
  fs.writeFileSync(tusFile(app, id), '', { mode: 0o600 });
  return app.batch.write(() => {
    stmt(
      app.db,
      `INSERT INTO tus_upload (id, realm_id, user_id, length, offset, file_name, content_type, created, expires)
       VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?)`,
    ).run(id, user.realm_id, user.id, req.length, req.fileName, req.contentType, now, now + TUS_EXPIRY_SECONDS);
    return findTusUpload(app.db, id) as TusRow;
  });
}

export interface TusProgress {
  row: TusRow;
  /** Set by the request that wrote the last byte: the stored attachment. */
  completed: StoredUpload | null;
}

/**
 * tus PATCH: appends `body` at `offset` (which must be the server's offset: 409 otherwise). Bytes are
 * written as they arrive, one chunk at a time, so a slow disk slows the client down instead of
 * filling memory; if the client goes away mid-body, what arrived is kept and the offset says so.
 * The request that reaches Upload-Length stores the file as an attachment.
 */
export async function doTusAppend(app: App, user: UserRow, id: string, offset: number, body: BodyStream | null): Promise<TusProgress> {
  const row = accessTusUpload(app, user, id);
  const state = tusState(app);
  if (state.busy.has(id)) throw tusError(423, 'Upload is locked by another request');
  if (offset !== row.offset) throw tusError(409, 'Upload-Offset does not match the upload (server offset: {offset})', { offset: row.offset });
  state.busy.add(id);
  let written = 0;
  let failure: unknown = null;
  try {
    const fh = await fs.promises.open(tusFile(app, id), 'r+');
    try {
      await fh.truncate(row.offset); // drop anything past the offset a broken request left behind
      if (body) {
        try {
          // Each chunk is written before the next is asked for: its buffer is reused after that.
          for await (const chunk of body) {
            const room = row.length - row.offset - written;
            if (chunk.length > room) {
              if (room > 0) {
                await fh.write(chunk, 0, room, row.offset + written);
                written += room;
              }
              failure = tusError(413, 'The request body goes past Upload-Length');
              break;
            }
            await fh.write(chunk, 0, chunk.length, row.offset + written);
            written += chunk.length;
          }
        } catch (err) {
          failure = err; // the client went away: keep what arrived
        }
      }
    } finally {
      await fh.close();
    }
    const now = nowSeconds(app.clock);
    const newOffset = row.offset + written;
    app.batch.write(() => {
      stmt(app.db, 'UPDATE tus_upload SET offset = ?, expires = ? WHERE id = ?').run(newOffset, now + TUS_EXPIRY_SECONDS, id);
    });
    if (failure) throw failure;
    const updated = { ...row, offset: newOffset, expires: now + TUS_EXPIRY_SECONDS };
    if (newOffset < row.length) return { row: updated, completed: null };
    return { row: updated, completed: await completeTusUpload(app, user, updated) };
  } finally {
    state.busy.delete(id);
  }
}

/** Stores a finished tus upload as an attachment and forgets the upload. */
export async function completeTusUpload(app: App, user: UserRow, row: TusRow): Promise<StoredUpload> {
  const stored = await doStoreUpload(app, user, {
    tmpFile: tusFile(app, row.id),
    clientName: row.file_name,
    size: row.length,
    contentType: row.content_type,
  });
  app.batch.write(() => {
    stmt(app.db, 'DELETE FROM tus_upload WHERE id = ?').run(row.id);
  });
  return stored;
}

/** tus termination: forgets the upload and removes its bytes. */
export function doTerminateTusUpload(app: App, user: UserRow, id: string): void {
  accessTusUpload(app, user, id);
  if (tusState(app).busy.has(id)) throw tusError(423, 'Upload is locked by another request');
  app.batch.write(() => {
    stmt(app.db, 'DELETE FROM tus_upload WHERE id = ?').run(id);
    app.batch.onCommit(() => discardTemp(tusFile(app, id)));
  });
}

/** Removes uploads nobody touched before their expiry (rows and partial files). Returns how many. */
export function sweepExpiredTusUploads(app: App): number {
  const state = tusState(app);
  const now = nowSeconds(app.clock);
  const expired = (stmt(app.db, 'SELECT id FROM tus_upload WHERE expires < ?').all(now) as { id: string }[])
    .map((r) => r.id)
    .filter((id) => !state.busy.has(id));
  if (expired.length === 0) return 0;
  app.batch.write(() => {
    const del = stmt(app.db, 'DELETE FROM tus_upload WHERE id = ?');
    for (const id of expired) del.run(id);
    app.batch.onCommit(() => {
      for (const id of expired) discardTemp(tusFile(app, id));
    });
  });
  return expired.length;
}

/** Starts the per-app timer that sweeps abandoned uploads (once; stopped at shutdown). */
export function startTusSweeper(app: App): void {
  const state = tusState(app);
  if (state.timer) return;
  state.timer = setInterval(() => {
    try {
      sweepExpiredTusUploads(app);
    } catch (err) {
      console.error('parley: sweeping tus uploads failed', err);
    }
  }, TUS_SWEEP_MS);
  state.timer.unref();
  app.onShutdown(() => {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
  });
  sweepExpiredTusUploads(app);
}

// ---- messages referencing uploads -------------------------------------------------------------------

/**
 * Zulip's do_claim_attachments: the message references these uploads of its sender (paths of other
 * people's uploads are ignored; reading an upload is granted through the messages that claim it).
 * The owner hears each newly claimed attachment's message list (attachment update event).
 */
export function claimUploads(app: App, sender: UserRow, messageId: number, paths: readonly string[]): void {
  for (const path of new Set(paths)) {
    const a = findAttachmentByPath(app.db, sender.realm_id, path);
    if (!a || a.owner_id !== sender.id) continue;
    if (stmt(app.db, 'INSERT OR IGNORE INTO attachment_message (attachment_id, message_id) VALUES (?, ?)').run(a.id, messageId).changes === 0) continue;
    const event = { type: 'attachment', op: 'update', attachment: formatAttachment(app.db, a), upload_space_used: uploadSpaceUsed(app.db, sender.realm_id) };
    app.batch.onCommit(() => app.events.send(event, [sender.id]));
  }
}

/**
 * Zulip's check_attachment_reference_change, for a content edit: uploads the new content no longer
 * references are released, new ones claimed. Returns the sender's uploads that no message
 * references any more (the edit's detached_uploads), for the client to offer deleting them.
 */
export function updateMessageUploads(app: App, sender: UserRow, messageId: number, paths: readonly string[]): Record<string, unknown>[] {
  const before = stmt(
    app.db,
    'SELECT a.* FROM attachment_message am JOIN attachment a ON a.id = am.attachment_id WHERE am.message_id = ? ORDER BY a.id',
  ).all(messageId) as AttachmentRow[];
  const wanted = new Set(paths);
  const released = before.filter((a) => !wanted.has(a.path_id));
  for (const a of released) stmt(app.db, 'DELETE FROM attachment_message WHERE attachment_id = ? AND message_id = ?').run(a.id, messageId);
  claimUploads(app, sender, messageId, paths);
  return released
    .filter((a) => a.owner_id === sender.id && !stmt(app.db, 'SELECT 1 FROM attachment_message WHERE attachment_id = ? LIMIT 1').get(a.id))
    .map((a) => formatAttachment(app.db, a));
}

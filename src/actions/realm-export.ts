// Data exports asked for over the API (Zulip's zerver/views/realm_export.py, zerver/actions/
// realm_export.py and the deferred_work worker's "realm_export" job): POST /export/realm records a
// request and answers at once; the export itself runs in another process (lib/export-process.ts)
// while the server keeps answering; when it ends, the row says so, administrators get the
// `realm_export` event and the person who asked gets a direct message from Notification Bot.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { EXPORT_TYPE, type ExportType } from '../export/filter';
import { errors, JsonableError } from '../http/errors';
import { supportAddress } from '../lib/email';
import { exportsDir, runExportProcess, type ExportProcess } from '../lib/export-process';
import { EMAIL_ADDRESS_VISIBILITY } from '../lib/user-emails';
import { ROLE } from '../lib/roles';
import { findUserById, type UserRow } from '../lib/users';
import { uploadSpaceUsed } from '../uploads/access';
import { humanAdminIds } from './export-consent';
import { doSendMessage } from './messages';
import { notificationBot } from './system-bots';

/** Zulip's RealmExport.status values. */
export const EXPORT_STATUS = { REQUESTED: 1, STARTED: 2, SUCCEEDED: 3, FAILED: 4, DELETED: 5 } as const;

/** Zulip's limits in export_realm: 5 exports a week, and larger organizations are exported by hand. */
const EXPORT_LIMIT = 5;
const EXPORT_LIMIT_WINDOW_SECONDS = 7 * 24 * 3600;
const MAX_MESSAGE_HISTORY = 250_000;
const MAX_UPLOAD_QUOTA = 20 * 1024 * 1024 * 1024;

/** The URL path prefix of export tarballs (Zulip's local upload backend serves them under /user_avatars/exports/). */
export const EXPORT_URL_PREFIX = '/user_avatars/exports/';

interface RealmExportRow {
  id: number;
  realm_id: number;
  acting_user_id: number | null;
  type: number;
  status: number;
  date_requested: number;
  date_started: number | null;
  date_succeeded: number | null;
  date_failed: number | null;
  date_deleted: number | null;
  export_path: string | null;
}

/** One export on the wire (Zulip's RealmExport schema, get_realm_exports_serialized). */
export interface RealmExportWire {
  id: number;
  export_time: number;
  acting_user_id: number;
  export_url: string | null;
  deleted_timestamp: number | null;
  failed_timestamp: number | null;
  pending: boolean;
  export_type: number;
}

const now = (app: App) => app.clock.nowMs() / 1000;
// Zulip's datetime_to_timestamp: whole seconds.
const ts = (t: number | null) => (t === null ? null : Math.floor(t));

/** Zulip's get_realm_exports_serialized: every export of the realm someone asked for, by id. */
export function realmExportsSerialized(app: App, realmId: number): RealmExportWire[] {
  const rows = stmt(app.db, 'SELECT * FROM realm_export WHERE realm_id = ? AND acting_user_id IS NOT NULL ORDER BY id').all(realmId) as RealmExportRow[];
  return rows.map((r) => ({
    id: r.id,
    export_time: Math.floor(r.date_requested),
    acting_user_id: r.acting_user_id as number,
    export_url: r.status === EXPORT_STATUS.SUCCEEDED && r.export_path ? app.publicUrl.replace(/\/$/, '') + r.export_path : null,
    deleted_timestamp: ts(r.date_deleted),
    failed_timestamp: ts(r.date_failed),
    pending: r.status === EXPORT_STATUS.REQUESTED || r.status === EXPORT_STATUS.STARTED,
    export_type: r.type,
  }));
}

/** Zulip's notify_realm_export, inside a write: the whole list, to every human administrator, after the commit. */
function notifyRealmExport(app: App, realmId: number): void {
  app.batch.onCommit(() => app.events.send({ type: 'realm_export', exports: realmExportsSerialized(app, realmId) }, humanAdminIds(app, realmId)));
}

/** Zulip's check_export_with_consent_is_usable: an active owner consents (or an import could not log anyone in to the private data). */
function consentExportUsable(app: App, realmId: number): boolean {
  return (
    stmt(app.db, 'SELECT 1 FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL AND role = ? AND allow_private_data_export = 1 LIMIT 1').get(
      realmId,
      ROLE.OWNER,
    ) !== undefined
  );
}

/** Zulip's check_public_export_is_usable: an active owner's real address is readable by administrators (it stays in a public export). */
function publicExportUsable(app: App, realmId: number): boolean {
  return (
    stmt(app.db, 'SELECT 1 FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL AND role = ? AND email_address_visibility != ? LIMIT 1').get(
      realmId,
      ROLE.OWNER,
      EMAIL_ADDRESS_VISIBILITY.NOBODY,
    ) !== undefined
  );
}

/** POST /export/realm (administrators): checks Zulip's limits, records the request, starts the export after the commit. Returns its id. */
export function doCreateRealmExport(app: App, user: UserRow, type: ExportType): number {
  const realmId = user.realm_id;
  return app.batch.write(() => {
    const t = now(app);
    const recent = stmt(app.db, 'SELECT count(*) FROM realm_export WHERE realm_id = ? AND date_requested >= ?').pluck().get(realmId, t - EXPORT_LIMIT_WINDOW_SECONDS) as number;
    if (recent >= EXPORT_LIMIT) throw errors.badRequest('Exceeded rate limit.');
    // zulip-compat: Zulip estimates from its analytics (RealmCount messages_sent), and its filter for
    // public exports is discarded (realm_count_query.filter(...) is not assigned), so every message counts.
    const messages = stmt(app.db, 'SELECT count(*) FROM message WHERE realm_id = ?').pluck().get(realmId) as number;
    if (messages > MAX_MESSAGE_HISTORY || uploadSpaceUsed(app.db, realmId) > MAX_UPLOAD_QUOTA) {
      throw errors.badRequest('Please request a manual export from {email}.', { email: supportAddress(app) });
    }
    if (type === EXPORT_TYPE.FULL_WITH_CONSENT && !consentExportUsable(app, realmId)) {
      throw errors.badRequest('Make sure at least one Organization Owner is consenting to the export or contact {email} for help.', { email: supportAddress(app) });
    }
    if (type === EXPORT_TYPE.PUBLIC && !publicExportUsable(app, realmId)) {
      throw errors.badRequest('Make sure at least one Organization Owner allows other Administrators to see their email address or contact {email} for help', {
        email: supportAddress(app),
      });
    }
    // Where the tarball will be: an unguessable folder (Zulip's upload_export_tarball), kept from the
    // start so that a failed or interrupted export's leftovers can be found and removed.
    const token = crypto.randomBytes(18).toString('base64url');
    const name = `zulip-export-${crypto.randomBytes(4).toString('hex')}.tar.gz`;
    const exportPath = `${EXPORT_URL_PREFIX}${realmId}/${token}/${name}`;
    const id = Number(
      stmt(app.db, 'INSERT INTO realm_export (realm_id, acting_user_id, type, status, date_requested, export_path) VALUES (?, ?, ?, ?, ?, ?)').run(
        realmId,
        user.id,
        type,
        EXPORT_STATUS.REQUESTED,
        t,
        exportPath,
      ).lastInsertRowid,
    );
    notifyRealmExport(app, realmId);
    app.batch.onCommit(() => enqueueExport(app, id));
    return id;
  });
}

/** DELETE /export/realm/{export_id} (administrators): removes the tarball and marks the export deleted. */
export function doDeleteRealmExport(app: App, user: UserRow, id: number): void {
  app.batch.write(() => {
    const row = stmt(app.db, 'SELECT * FROM realm_export WHERE id = ? AND realm_id = ?').get(id, user.realm_id) as RealmExportRow | undefined;
    if (!row) throw errors.badRequest('Invalid data export ID');
    if (row.status === EXPORT_STATUS.DELETED) throw errors.badRequest('Export already deleted');
    if (row.status === EXPORT_STATUS.FAILED) throw errors.badRequest('Export failed, nothing to delete');
    if (row.status !== EXPORT_STATUS.SUCCEEDED) throw errors.badRequest('Export still in progress');
    stmt(app.db, 'UPDATE realm_export SET status = ?, date_deleted = ? WHERE id = ?').run(EXPORT_STATUS.DELETED, now(app), id);
    notifyRealmExport(app, user.realm_id);
    // The file goes once the change is committed (a rolled-back delete keeps it).
    app.batch.onCommit(() => removeExportFiles(app, row.export_path));
  });
}

/** GET /export/realm/consents (administrators): Zulip's get_users_export_consents (active humans). */
export function listExportConsents(app: App, user: UserRow): { user_id: number; consented: boolean }[] {
  const rows = stmt(app.db, 'SELECT id, allow_private_data_export FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL ORDER BY id').all(user.realm_id) as {
    id: number;
    allow_private_data_export: number;
  }[];
  return rows.map((r) => ({ user_id: r.id, consented: r.allow_private_data_export === 1 }));
}

// --- the export job -------------------------------------------------------------------------------

/** The tarball's place on disk, from its URL path: DATA_DIR/exports/REALM/TOKEN/NAME (never outside DATA_DIR/exports). */
export function exportFile(app: App, exportPath: string | null): string | null {
  if (!exportPath?.startsWith(EXPORT_URL_PREFIX) || app.config.dataDir === ':memory:') return null;
  const parts = exportPath.slice(EXPORT_URL_PREFIX.length).split('/');
  if (parts.length !== 3 || parts.some((p) => p === '' || p === '.' || p === '..' || !/^[A-Za-z0-9._-]+$/.test(p))) return null;
  return path.join(exportsDir(app.config.dataDir), ...parts);
}

/** Removes an export's folder (its tarball and any leftover of an interrupted run). */
function removeExportFiles(app: App, exportPath: string | null): void {
  const file = exportFile(app, exportPath);
  if (!file) return;
  try {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  } catch (err) {
    app.log.warn(`could not remove ${path.dirname(file)}: ${(err as Error).message}`);
  }
}

interface JobState {
  queue: number[];
  running: ExportProcess | null;
  stopped: boolean;
}

const jobs = new WeakMap<App, JobState>();

function jobState(app: App): JobState {
  let state = jobs.get(app);
  if (!state) {
    const s: JobState = { queue: [], running: null, stopped: false };
    jobs.set(app, (state = s));
    // A stopping server ends its export; the next start marks it failed (failInterruptedExports).
    app.onShutdown(() => {
      s.stopped = true;
      s.queue = [];
      s.running?.kill();
    });
  }
  return state;
}

/** Queues an export (after its request committed): one runs at a time, as Zulip's deferred_work worker does. */
function enqueueExport(app: App, id: number): void {
  const state = jobState(app);
  if (state.stopped) return;
  state.queue.push(id);
  if (!state.running) startNext(app, state);
}

function startNext(app: App, state: JobState): void {
  const id = state.queue.shift();
  if (id === undefined || state.stopped) return;
  const row = app.batch.write(() => {
    const r = stmt(app.db, 'SELECT * FROM realm_export WHERE id = ?').get(id) as RealmExportRow | undefined;
    if (!r || r.status !== EXPORT_STATUS.REQUESTED) return null;
    stmt(app.db, 'UPDATE realm_export SET status = ?, date_started = ? WHERE id = ?').run(EXPORT_STATUS.STARTED, now(app), id);
    return r;
  });
  const file = row ? exportFile(app, row.export_path) : null;
  if (!row || !file) {
    if (row) finishFailed(app, row, 'no place to write the export (an in-memory database)');
    return startNext(app, state);
  }
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  } catch (err) {
    finishFailed(app, row, (err as Error).message);
    return startNext(app, state);
  }
  state.running = runExportProcess({
    dataDir: app.config.dataDir,
    out: file,
    exportType: row.type as ExportType,
    onDone: (result) => {
      state.running = null;
      if (state.stopped) return;
      if (result.ok) {
        finishSucceeded(app, row, file, result.counts)
          .catch((err: unknown) => {
            // Its write was rolled back: the export is failed rather than left pending.
            app.log.error(`data export ${row.id}: recording its success failed: ${(err as Error).stack ?? String(err)}`);
            if (!state.stopped) finishFailed(app, row, (err as Error).message);
          })
          .catch((err: unknown) => app.log.error(`data export ${row.id}: ${String(err)}`))
          .finally(() => startNext(app, state));
      } else {
        finishFailed(app, row, result.error);
        startNext(app, state);
      }
    },
  });
}

/** The export is written: Zulip's export_realm_wrapper success path, then the DM and the event. */
async function finishSucceeded(app: App, row: RealmExportRow, file: string, counts: Record<string, number> | null): Promise<void> {
  let sha256: string;
  let size: number;
  try {
    fs.chmodSync(file, 0o600);
    size = fs.statSync(file).size;
    const hash = crypto.createHash('sha256');
    for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
    sha256 = hash.digest('hex');
  } catch (err) {
    return finishFailed(app, row, (err as Error).message);
  }
  if (jobs.get(app)?.stopped) return;
  app.batch.write(() => {
    stmt(app.db, 'UPDATE realm_export SET status = ?, date_succeeded = ?, sha256sum_hex = ?, tarball_size_bytes = ?, stats = ? WHERE id = ? AND status = ?').run(
      EXPORT_STATUS.SUCCEEDED,
      now(app),
      sha256,
      size,
      counts ? JSON.stringify(counts) : null,
      row.id,
      EXPORT_STATUS.STARTED,
    );
    const owner = row.acting_user_id === null ? null : findUserById(app.db, row.realm_id, row.acting_user_id);
    if (owner) {
      // Zulip's text (zerver/worker/deferred_work.py), linking to the settings page that lists exports.
      const content = 'Your data export is complete. [View and download exports](/#organization/data-exports-admin).';
      try {
        doSendMessage(app, notificationBot(app, row.realm_id), { to: { kind: 'direct', userIds: [owner.id] }, content, client: 'Internal', system: true });
      } catch (err) {
        // internal_send_private_message swallows a refused message (a deactivated recipient).
        if (!(err instanceof JsonableError)) throw err;
      }
    }
    notifyRealmExport(app, row.realm_id);
  });
  app.log.info(`data export ${row.id} of realm ${row.realm_id} completed (${size} bytes)`);
}

/** The export failed: Zulip's export_realm_wrapper failure path (failed_timestamp, the event); its files go. */
function finishFailed(app: App, row: RealmExportRow, reason: string): void {
  removeExportFiles(app, row.export_path);
  if (jobs.get(app)?.stopped) return;
  app.batch.write(() => {
    stmt(app.db, 'UPDATE realm_export SET status = ?, date_failed = ? WHERE id = ? AND status IN (?, ?)').run(
      EXPORT_STATUS.FAILED,
      now(app),
      row.id,
      EXPORT_STATUS.REQUESTED,
      EXPORT_STATUS.STARTED,
    );
    notifyRealmExport(app, row.realm_id);
  });
  app.log.error(`data export ${row.id} of realm ${row.realm_id} failed: ${reason}`);
}

/**
 * At server start: an export still requested or started was cut off by the previous run's end (its
 * process stops with the server). Zulip's worker marks a retried export failed the same way ("possible
 * OOM during export?"); its leftovers are removed.
 */
export function failInterruptedExports(app: App): void {
  const rows = stmt(app.db, 'SELECT * FROM realm_export WHERE status IN (?, ?)').all(EXPORT_STATUS.REQUESTED, EXPORT_STATUS.STARTED) as RealmExportRow[];
  if (rows.length === 0) return;
  app.batch.write(() => {
    for (const r of rows) {
      stmt(app.db, 'UPDATE realm_export SET status = ?, date_failed = ? WHERE id = ?').run(EXPORT_STATUS.FAILED, now(app), r.id);
    }
  });
  app.batch.commit();
  for (const r of rows) removeExportFiles(app, r.export_path);
}

/**
 * GET /user_avatars/exports/REALM/TOKEN/NAME: the tarball file for an administrator of its realm while
 * the export stands (not deleted); 'forbidden' for anyone else of the realm, null when there is none to
 * see (another realm, a wrong token, a deleted export). Zulip serves these to whoever has the link;
 * Parley asks for the same people who may list exports.
 */
export function exportDownload(app: App, user: UserRow, realmId: number, token: string, name: string): { file: string } | 'forbidden' | null {
  if (realmId !== user.realm_id) return null;
  const exportPath = `${EXPORT_URL_PREFIX}${realmId}/${token}/${name}`;
  const row = stmt(app.db, 'SELECT id FROM realm_export WHERE realm_id = ? AND export_path = ? AND status = ?').get(realmId, exportPath, EXPORT_STATUS.SUCCEEDED);
  if (!row) return null;
  if (user.role > ROLE.ADMINISTRATOR) return 'forbidden';
  const file = exportFile(app, exportPath);
  return file ? { file } : null;
}

// `parley export`: the organization as a tarball in the layout Zulip's `manage.py import` reads
// (src/export/zulip-format.ts describes it). Safe while the server is serving: everything is read in
// one read transaction on a connection of its own, a consistent snapshot that writers do not wait
// for (WAL). Streaming: messages are read in id order, MESSAGE_CHUNK_SIZE at a time, each chunk (with
// its per-user rows) becomes one messages-NNNNNN.json; realm.json and attachment.json are written
// row by row to a staging file; files are copied from the uploads directory as streams. The tarball
// is written under a temporary name next to OUT and renamed to OUT only when complete, so a crash or
// an interruption never leaves a file at OUT that looks like a finished export.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import type TarStream from 'tar-stream';
import { loadTarStream } from '../lazy';
import { exportsDir } from '../lib/export-process';
import { loadSqliteAddon } from '../native';
import { ZULIP_VERSION } from '../version';
import { buildContext, type Db, type Row } from './context';
import { buildFilter, type ExportType } from './filter';
import { JsonTablesFile } from './json-writer';
import { writeMessages } from './message-files';
import { writeRealmTables } from './realm-tables';
import { writeAttachments, writeFiles } from './upload-files';
import { OTHER_FILES } from './zulip-format';

/** A mistake of the person running the export (a missing directory, no organization): one clear line. */
export class ExportError extends Error {}

export interface ExportOptions {
  /** The database file (DATA_DIR/parley.db). */
  dbFile: string;
  /** DATA_DIR/uploads. */
  uploadsDir: string;
  /** Where the .tar.gz goes. */
  out: string;
  /** Stops the export and removes its temporary files (synchronously, when it fires). */
  signal?: AbortSignal;
  /** Called after each file is in the tarball (for progress lines). */
  onEntry?: (name: string) => void | Promise<void>;
  /** What to leave out, as an API export of this type does (filter.ts); absent: everything. */
  exportType?: ExportType;
}

export interface ExportSummary {
  out: string;
  topDir: string;
  messages: number;
  usermessages: number;
  messageFiles: number;
  counts: Record<string, number>;
}
/** The tarball's top directory: OUT's name without .tar.gz, as Zulip's tarball is its output directory's name + ".tar.gz". */
export function topDirName(out: string): string {
  const base = path.basename(out).replace(/\.(tar\.gz|tgz)$/i, '');
  return base === '' || base === '.' || base === '..' ? 'parley-export' : base;
}

/** Adds one entry to the tarball: a buffer, or a file copied as a stream. Resolves when it is written. */
function addEntry(pack: TarStream.Pack, name: string, source: Buffer | { file: string; size: number }, mtime: Date): Promise<void> {
  return new Promise((resolve, reject) => {
    const size = Buffer.isBuffer(source) ? source.length : source.size;
    const sink = pack.entry({ name, size, mtime, mode: 0o644 }, (err) => (err ? reject(err) : resolve()));
    if (Buffer.isBuffer(source)) {
      sink.end(source);
      return;
    }
    const input = fs.createReadStream(source.file);
    input.on('error', reject);
    input.pipe(sink as unknown as NodeJS.WritableStream);
  });
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the export. Throws ExportError for the operator's mistakes; leaves nothing at OUT on any failure. */
export async function exportRealm(opts: ExportOptions): Promise<ExportSummary> {
  const out = path.resolve(opts.out);
  const dir = path.dirname(out);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw new ExportError(`cannot write ${out}: the directory ${dir} does not exist`);
  }
  if (!st.isDirectory()) throw new ExportError(`cannot write ${out}: ${dir} is not a directory`);
  if (fs.existsSync(out) && fs.statSync(out).isDirectory()) throw new ExportError(`cannot write ${out}: it is a directory`);
  // OUT is renamed into place: given the database (or its WAL, or a file of the uploads), it would
  // replace it under the running server. Nothing of the export belongs in the data directory, but for
  // DATA_DIR/exports, where the API's exports are kept (exportsDir).
  const dataDir = path.dirname(path.resolve(opts.dbFile));
  const inside = (real: string, root: string) => real === root || real.startsWith(root + path.sep);
  const realDir = fs.realpathSync(dir);
  let realExports: string | null = null;
  try {
    realExports = fs.realpathSync(exportsDir(dataDir));
  } catch {
    realExports = null; // none yet
  }
  const inExports = realExports !== null && realDir !== realExports && inside(realDir, realExports);
  for (const root of inExports ? [path.resolve(opts.uploadsDir)] : [dataDir, path.resolve(opts.uploadsDir)]) {
    let realRoot: string;
    try {
      realRoot = fs.realpathSync(root);
    } catch {
      continue; // no uploads directory yet
    }
    if (inside(realDir, realRoot)) throw new ExportError(`cannot write ${out}: it is inside the data directory ${dataDir} (write the export somewhere else)`);
  }

  const tag = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  const partial = path.join(dir, `.${path.basename(out)}.partial-${tag}`);
  const stage = fs.mkdtempSync(path.join(dir, `.${path.basename(out)}.stage-`));
  const cleanup = () => {
    fs.rmSync(stage, { recursive: true, force: true });
    fs.rmSync(partial, { force: true });
  };
  // Aborted (the CLI on SIGINT or SIGTERM), the temporary files go at once, synchronously: the caller
  // may exit right after. SIGKILL or a crash leaves them, under names no one takes for an export.
  const onAbort = () => cleanup();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const db = new Database(opts.dbFile, { readonly: true, fileMustExist: true, nativeBinding: loadSqliteAddon() as never });
  try {
    db.pragma('busy_timeout = 5000');
    // One read transaction for the whole export: every query sees the same snapshot.
    db.exec('BEGIN');
    const summary = await writeTarball(db, opts, out, partial, stage);
    db.exec('COMMIT');
    // On disk before it gets its name, and the name on disk after: a power cut never leaves a
    // truncated tarball at OUT.
    syncFile(partial);
    fs.renameSync(partial, out);
    syncFile(dir);
    return summary;
  } catch (err) {
    cleanup();
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    db.close();
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

async function writeTarball(db: Db, opts: ExportOptions, out: string, partial: string, stage: string): Promise<ExportSummary> {
  const realm = db.prepare('SELECT * FROM realm ORDER BY id LIMIT 1').get() as Row | undefined;
  if (!realm) throw new ExportError('the data directory has no organization to export');
  const top = topDirName(out);
  const now = new Date();
  const tar = loadTarStream();
  const pack = tar.pack();
  // Level 3, not gzip's default 6: a quarter less CPU for the whole export (zlib's thread is its
  // second busiest) for a tarball about 12 % larger (bench/data-move.ts: 22.3 against 20.0 MB).
  const gzip = zlib.createGzip({ level: 3 });
  // Opened here, synchronously: an asynchronous open still queued when an interruption removes the
  // temporary files would create the file again after them.
  const fd = fs.openSync(partial, 'wx', 0o600);
  const written = pipeline(pack as unknown as NodeJS.ReadableStream, gzip, fs.createWriteStream(partial, { fd }));
  // If the output fails (a full disk), every later entry would wait forever: fail them instead.
  let failed: unknown = null;
  written.catch((err) => (failed = err));
  const put = async (name: string, source: Buffer | { file: string; size: number }) => {
    if (opts.signal?.aborted) throw new ExportError('the export was interrupted');
    if (failed) throw failed;
    await Promise.race([addEntry(pack, `${top}/${name}`, source, now), written.then(() => undefined)]);
    if (failed) throw failed;
    await opts.onEntry?.(name);
  };

  const ctx = buildContext(db, realm);
  if (opts.exportType !== undefined) ctx.filter = buildFilter(db, ctx.realmId, opts.exportType);

  // Messages first: realm.json needs nothing from them, and their files are the bulk of the work.
  const msg = await writeMessages(db, ctx, put);

  const realmFile = new JsonTablesFile(path.join(stage, 'realm.json'));
  try {
    writeRealmTables(db, ctx, realmFile);
  } catch (err) {
    realmFile.abandon();
    throw err;
  }
  const realmCounts = realmFile.counts();
  await put('realm.json', { file: realmFile.file, size: realmFile.close() });

  const attachmentFile = new JsonTablesFile(path.join(stage, 'attachment.json'));
  let attachments: Row[];
  try {
    attachments = writeAttachments(db, ctx, attachmentFile, opts.uploadsDir);
  } catch (err) {
    attachmentFile.abandon();
    throw err;
  }
  const attachmentCounts = attachmentFile.counts();
  await put('attachment.json', { file: attachmentFile.file, size: attachmentFile.close() });

  const files = await writeFiles(db, ctx, opts.uploadsDir, attachments, put);

  // Zulip's importer reads this first (check_migration_status): the major version must be the
  // importing server's, and an app whose migrations the export does not list is only a warning.
  // Parley cannot name Zulip's migrations: it lists none, and names the Zulip version whose API it speaks.
  const migrationStatus = { zulip_version: ZULIP_VERSION, migrations_by_app: {} };
  await put(OTHER_FILES.migrationStatus, Buffer.from(JSON.stringify(migrationStatus, null, 2) + '\n'));
  // stats.json as Zulip's do_write_stats_file_for_realm_export writes it: rows per table of each
  // file (by file name without .json), then the records of each folder.
  const sorted = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  const stats = { attachment: sorted(attachmentCounts), ...msg.perFile, realm: sorted(realmCounts), ...files };
  await put('stats.json', Buffer.from(JSON.stringify(stats, null, 2) + '\n'));
  const counts: Record<string, number> = { ...realmCounts, ...attachmentCounts, zerver_message: msg.messages, zerver_usermessage: msg.usermessages, ...files };

  pack.finalize();
  await written;
  if (failed) throw failed;
  return { out, topDir: top, messages: msg.messages, usermessages: msg.usermessages, messageFiles: msg.files, counts };
}

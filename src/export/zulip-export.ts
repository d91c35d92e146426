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
import { loadTarStream } from '../lazy';
import { loadSqliteAddon } from '../native';
import { storePath } from '../uploads/store';
import { JsonTablesFile } from './json-writer';
import {
  CROSS_REALM_BOT_EMAILS,
  GROUP_GROUP_DEFAULTS,
  GROUP_GROUP_SETTINGS,
  IMPORT_SOURCE,
  MESSAGE_CHUNK_SIZE,
  OTHER_FILES,
  REALM_GROUP_DEFAULTS,
  REALM_GROUP_SETTINGS,
  RECIPIENT_TYPE,
  STREAM_GROUP_DEFAULTS,
  STREAM_GROUP_SETTINGS,
  USER_SETTING_TYPES,
  messageFileName,
} from './zulip-format';
import { ZULIP_VERSION } from '../version';
import { EDIT_HISTORY_VISIBILITY_POLICIES, REALM_EXTRA_SETTING_DEFAULTS, REALM_TOPICS_POLICIES, realmEditHistoryPolicy, realmExtraSetting, realmTopicsPolicy } from '../lib/realm-settings';
import type { RealmRow } from '../lib/realm';
import type TarStream from 'tar-stream';

type Db = Database.Database;
type Row = Record<string, any>;

/** A mistake of the person running the export (a missing directory, no organization): one clear line. */
export class ExportError extends Error {}

export interface ExportOptions {
  /** The database file (DATA_DIR/parley.db). */
  dbFile: string;
  /** DATA_DIR/uploads. */
  uploadsDir: string;
  /** Where the .tar.gz goes. */
  out: string;
  /** Called after each file is in the tarball (for progress lines). */
  onEntry?: (name: string) => void | Promise<void>;
}

export interface ExportSummary {
  out: string;
  topDir: string;
  messages: number;
  usermessages: number;
  messageFiles: number;
  counts: Record<string, number>;
}

const secs = (t: number | null | undefined): number | null => (t === null || t === undefined ? null : Number(t));
const bool = (v: unknown): boolean => v === 1 || v === true;
const nbool = (v: unknown): boolean | null => (v === null || v === undefined ? null : bool(v));

/** Zulip's StreamTopicsPolicyEnum (zerver/models/streams.py): Parley stores the names. */
const STREAM_TOPICS_POLICIES: Record<string, number> = { inherit: 1, allow_empty_topic: 2, disable_empty_topic: 3, empty_topic_only: 4 };

/** Parley's usermessage flag bits (schema.sql) to Zulip's bitfield: bits 7 and up move up two (Zulip keeps two retired flags there). */
export const zulipFlags = (parley: number): number => (parley & 0x7f) | ((parley & ~0x7f) << 2);

/** Zulip's get_direct_message_group_hash: SHA-1 of the sorted, distinct ids joined by ",". */
export const huddleHash = (ids: number[]): string =>
  crypto
    .createHash('sha1')
    .update([...new Set(ids)].sort((a, b) => a - b).join(','))
    .digest('hex');

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

  const tag = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  const partial = path.join(dir, `.${path.basename(out)}.partial-${tag}`);
  const stage = fs.mkdtempSync(path.join(dir, `.${path.basename(out)}.stage-`));
  const cleanup = () => {
    fs.rmSync(stage, { recursive: true, force: true });
    fs.rmSync(partial, { force: true });
  };
  // An interrupted export (Ctrl-C, `kill`) removes its temporary files on the way out; SIGKILL or a
  // crash leaves them under names that no one takes for a finished export.
  const onSignal = (signal: NodeJS.Signals) => {
    cleanup();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const db = new Database(opts.dbFile, { readonly: true, fileMustExist: true, nativeBinding: loadSqliteAddon() as never });
  try {
    db.pragma('busy_timeout = 5000');
    // One read transaction for the whole export: every query sees the same snapshot.
    db.exec('BEGIN');
    const summary = await writeTarball(db, opts, out, partial, stage);
    db.exec('COMMIT');
    fs.renameSync(partial, out);
    return summary;
  } catch (err) {
    cleanup();
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
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
  const gzip = zlib.createGzip({ level: 6 });
  const written = pipeline(pack as unknown as NodeJS.ReadableStream, gzip, fs.createWriteStream(partial, { mode: 0o600 }));
  // If the output fails (a full disk), every later entry would wait forever: fail them instead.
  let failed: unknown = null;
  written.catch((err) => (failed = err));
  const put = async (name: string, source: Buffer | { file: string; size: number }) => {
    if (failed) throw failed;
    await Promise.race([addEntry(pack, `${top}/${name}`, source, now), written.then(() => undefined)]);
    if (failed) throw failed;
    await opts.onEntry?.(name);
  };

  const ctx = buildContext(db, realm);

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
  const counts: Record<string, number> = { ...realmCounts, ...attachmentCounts, zerver_message: msg.messages, zerver_usermessage: msg.usermessages, ...files };
  await put('stats.json', Buffer.from(JSON.stringify(counts, null, 2) + '\n'));

  pack.finalize();
  await written;
  if (failed) throw failed;
  return { out, topDir: top, messages: msg.messages, usermessages: msg.usermessages, messageFiles: msg.files, counts };
}

/** What every part of the export needs: the id maps that stand in for Zulip's recipient table. */
interface Context {
  realm: Row;
  realmId: number;
  /** Every account of the realm (small: one row per person or bot). */
  users: Map<number, Row>;
  /** System bots (Zulip's cross-realm bots) by user id → Zulip's default address. */
  crossRealm: Map<number, string>;
  personalRecipient: Map<number, number>;
  streamRecipient: Map<number, number>;
  /** Parley direct_group id → its members. */
  directGroups: Map<number, number[]>;
  /** Group-DM member sets (sorted, joined) → huddle id (a Parley direct_group id, or a new one for scheduled messages). */
  huddles: Map<string, { id: number; members: number[]; recipient: number }>;
  clients: Map<string, number>;
  groupByName: Map<string, number>;
  nextRecipient: number;
}

function buildContext(db: Db, realm: Row): Context {
  const realmId = realm.id as number;
  const users = new Map<number, Row>();
  for (const u of db.prepare('SELECT * FROM user WHERE realm_id = ? ORDER BY id').all(realmId) as Row[]) users.set(u.id, u);
  const crossRealm = new Map<number, string>();
  for (const u of users.values()) {
    if (u.bot_type === null || u.bot_owner_id !== null) continue;
    const local = String(u.email).slice(0, String(u.email).lastIndexOf('@')).toLowerCase().replace(/\+.*$/, '');
    if (local === 'notification-bot') crossRealm.set(u.id, CROSS_REALM_BOT_EMAILS.notification);
    else if (local === 'welcome-bot') crossRealm.set(u.id, CROSS_REALM_BOT_EMAILS.welcome);
  }
  const ctx: Context = {
    realm,
    realmId,
    users,
    crossRealm,
    personalRecipient: new Map(),
    streamRecipient: new Map(),
    directGroups: new Map(),
    huddles: new Map(),
    clients: new Map(),
    groupByName: new Map(),
    nextRecipient: 1,
  };
  for (const id of users.keys()) ctx.personalRecipient.set(id, ctx.nextRecipient++);
  for (const s of db.prepare('SELECT id FROM stream WHERE realm_id = ? ORDER BY id').all(realmId) as { id: number }[]) ctx.streamRecipient.set(s.id, ctx.nextRecipient++);
  for (const r of db.prepare('SELECT m.group_id, m.user_id FROM direct_group_member m JOIN direct_group g ON g.id = m.group_id WHERE g.realm_id = ? ORDER BY m.group_id, m.user_id').all(realmId) as { group_id: number; user_id: number }[]) {
    let list = ctx.directGroups.get(r.group_id);
    if (!list) ctx.directGroups.set(r.group_id, (list = []));
    list.push(r.user_id);
  }
  for (const [groupId, members] of ctx.directGroups) if (members.length >= 3) huddleFor(ctx, members, groupId);
  // Zulip's sending_client: the names messages were sent with, and "API" for rows that need one
  // (statuses, scheduled messages) where Parley keeps none.
  ctx.clients.set('API', 1);
  for (const { client } of db.prepare('SELECT DISTINCT client FROM message WHERE realm_id = ? ORDER BY client').all(realmId) as { client: string }[]) {
    if (!ctx.clients.has(client)) ctx.clients.set(client, ctx.clients.size + 1);
  }
  for (const g of db.prepare('SELECT id, name FROM user_group WHERE realm_id = ? AND name IS NOT NULL').all(realmId) as { id: number; name: string }[]) ctx.groupByName.set(g.name, g.id);
  return ctx;
}

/** The huddle of a member set of three or more, made (with a new id past Parley's) if no message made it yet. */
function huddleFor(ctx: Context, members: number[], id?: number): { id: number; members: number[]; recipient: number } {
  const sorted = [...new Set(members)].sort((a, b) => a - b);
  const key = sorted.join(',');
  let h = ctx.huddles.get(key);
  if (!h) {
    const newId = id ?? Math.max(0, ...[...ctx.directGroups.keys()], ...[...ctx.huddles.values()].map((x) => x.id)) + 1;
    h = { id: newId, members: sorted, recipient: ctx.nextRecipient++ };
    ctx.huddles.set(key, h);
  }
  return h;
}

/** Zulip's recipient of a direct message: the other person's personal recipient, one's own for a note to self, the huddle's for three or more. */
function directRecipient(ctx: Context, members: number[], senderId: number): number {
  const set = [...new Set(members)];
  if (set.length >= 3) return huddleFor(ctx, set).recipient;
  const other = set.find((u) => u !== senderId) ?? senderId;
  const r = ctx.personalRecipient.get(other);
  if (r === undefined) throw new Error(`direct message to user ${other}, who is not in the organization`);
  return r;
}

function groupId(ctx: Context, value: number | null, fallbackName: string): number {
  if (value !== null && value !== undefined) return value;
  const id = ctx.groupByName.get(fallbackName);
  if (id === undefined) throw new Error(`the organization has no ${fallbackName} group`);
  return id;
}

type Put = (name: string, source: Buffer | { file: string; size: number }) => Promise<void>;

async function writeMessages(db: Db, ctx: Context, put: Put): Promise<{ messages: number; usermessages: number; files: number }> {
  const page = db.prepare('SELECT * FROM message WHERE realm_id = ? AND id > ? ORDER BY id LIMIT ?');
  // Stored rows, and the rows the usermessage_cursor scheme leaves implied (schema.sql): flags 0.
  const userRows = db.prepare(
    `SELECT user_id, message_id, flags FROM usermessage WHERE message_id BETWEEN ? AND ?
     UNION ALL
     SELECT p.user_id, p.message_id, 0 FROM usermessage_pending p
     WHERE p.message_id BETWEEN ? AND ?
       AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)
     ORDER BY 2, 1`,
  );
  let after = 0;
  let file = 0;
  let messages = 0;
  let usermessages = 0;
  for (;;) {
    const rows = page.all(ctx.realmId, after, MESSAGE_CHUNK_SIZE) as Row[];
    if (rows.length === 0) break;
    const first = rows[0].id as number;
    const last = rows[rows.length - 1].id as number;
    const zm = rows.map((m) => zulipMessage(ctx, m));
    const zum: Row[] = [];
    for (const r of userRows.all(first, last, first, last) as { user_id: number; message_id: number; flags: number }[]) {
      // As Zulip's fetch_usermessages: only the rows of the organization's own (exported) users.
      if (!ctx.users.has(r.user_id) || ctx.crossRealm.has(r.user_id)) continue;
      zum.push({ id: ++usermessages, user_profile: r.user_id, message: r.message_id, flags_mask: zulipFlags(r.flags) });
    }
    file++;
    messages += rows.length;
    await put(messageFileName(file), Buffer.from(JSON.stringify({ zerver_message: zm, zerver_usermessage: zum }) + '\n'));
    after = last;
  }
  return { messages, usermessages, files: file };
}

function zulipMessage(ctx: Context, m: Row): Row {
  let recipient: number;
  if (m.stream_id !== null) {
    recipient = ctx.streamRecipient.get(m.stream_id) as number;
  } else {
    const members = ctx.directGroups.get(m.direct_group_id);
    if (!members) throw new Error(`message ${m.id} has no conversation`);
    recipient = directRecipient(ctx, members, m.sender_id);
  }
  return {
    id: m.id,
    sender: m.sender_id,
    recipient,
    realm: ctx.realmId,
    subject: m.topic,
    content: m.content,
    rendered_content: m.rendered_content,
    // Zulip's markdown version when rendered_content was made; Parley renders Zulip's way.
    rendered_content_version: 1,
    date_sent: secs(m.date_sent),
    last_edit_time: secs(m.last_edit_time),
    // Stored as Zulip stores it: a JSON list, newest first (user_id, timestamp, prev_content, ...).
    edit_history: m.edit_history,
    sending_client: ctx.clients.get(m.client) as number,
    has_attachment: bool(m.has_attachment),
    has_image: bool(m.has_image),
    has_link: bool(m.has_link),
    is_channel_message: m.stream_id !== null,
  };
}

function writeRealmTables(db: Db, ctx: Context, f: JsonTablesFile): void {
  const R = ctx.realmId;
  const realm = ctx.realm;
  f.value('import_source', IMPORT_SOURCE);
  const z: Row = {
    id: R,
    string_id: realm.string_id,
    name: realm.name,
    description: realm.description,
    date_created: secs(realm.date_created),
    deactivated: bool(realm.deactivated),
    invite_required: bool(realm.invite_required),
    emails_restricted_to_domains: bool(realm.emails_restricted_to_domains),
    disallow_disposable_email_addresses: bool(realm.disallow_disposable_email_addresses),
    waiting_period_threshold: realm.waiting_period_threshold,
    default_language: realm.default_language,
    // Zulip's column is NOT NULL with -1 for unlimited; Parley's is NULL.
    message_retention_days: realm.message_retention_days ?? -1,
    allow_message_editing: bool(realm.allow_message_editing),
    // Zulip replaced allow_edit_history with this enum (zerver/models/realms.py).
    message_edit_history_visibility_policy: EDIT_HISTORY_VISIBILITY_POLICIES[realmEditHistoryPolicy(realm as RealmRow)],
    topics_policy: REALM_TOPICS_POLICIES[realmTopicsPolicy(realm as RealmRow)],
    welcome_message_custom_text: realm.welcome_message_custom_text,
    message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds,
    message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds,
    move_messages_within_stream_limit_seconds: realm.move_messages_within_stream_limit_seconds,
    move_messages_between_streams_limit_seconds: realm.move_messages_between_streams_limit_seconds,
    enable_spectator_access: bool(realm.enable_spectator_access),
    icon_source: realm.icon_source,
    icon_version: realm.icon_version,
    // Parley has no announcement channels: Zulip's default, none.
    new_stream_announcements_stream: null,
    signup_announcements_stream: null,
    zulip_update_announcements_stream: null,
    moderation_request_channel: null,
  };
  // The settings Parley keeps in extra_settings are Realm fields of the same names in Zulip.
  for (const name of Object.keys(REALM_EXTRA_SETTING_DEFAULTS) as (keyof typeof REALM_EXTRA_SETTING_DEFAULTS)[]) z[name] = realmExtraSetting(realm as RealmRow, name);
  // can_manage_billing_group has no Parley column: Zulip's default group.
  for (const s of REALM_GROUP_SETTINGS) z[s] = groupId(ctx, s in realm ? realm[s] : null, REALM_GROUP_DEFAULTS[s]);
  f.tableOf('zerver_realm', [z]);
  // Parley logs in with email and password, Zulip's "Email" backend.
  f.tableOf('zerver_realmauthenticationmethod', [{ id: 1, realm: R, name: 'Email' }]);
  f.tableOf('zerver_presencesequence', [{ id: 1, realm: R, last_update_id: realm.presence_last_update_id }]);

  let n = 0;
  f.table('zerver_defaultstream');
  for (const r of db.prepare('SELECT stream_id FROM default_stream WHERE realm_id = ? ORDER BY stream_id').all(R) as Row[]) f.row({ id: ++n, realm: R, stream: r.stream_id });

  f.table('zerver_customprofilefield');
  for (const c of db.prepare('SELECT * FROM custom_profile_field WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({
      id: c.id,
      realm: R,
      name: c.name,
      hint: c.hint,
      field_type: c.field_type,
      field_data: c.field_data,
      order: c.order,
      display_in_profile_summary: bool(c.display_in_profile_summary),
      required: bool(c.required),
      editable_by_user: bool(c.editable_by_user),
    });
  }

  f.table('zerver_realmemoji');
  for (const e of db.prepare('SELECT * FROM realm_emoji WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({ id: e.id, realm: R, name: e.name, author: e.author_id, file_name: e.file_name, deactivated: bool(e.deactivated) });
  }

  n = 0;
  f.table('zerver_realmdomain');
  for (const d of db.prepare('SELECT * FROM realm_domain WHERE realm_id = ? ORDER BY domain').all(R) as Row[]) f.row({ id: ++n, realm: R, domain: d.domain, allow_subdomains: bool(d.allow_subdomains) });

  f.table('zerver_realmfilter');
  for (const l of db.prepare('SELECT * FROM linkifier WHERE realm_id = ? ORDER BY id').all(R) as Row[]) f.row({ id: l.id, realm: R, pattern: l.pattern, url_template: l.url_template, order: l.order });

  f.table('zerver_realmplayground');
  for (const p of db.prepare('SELECT * FROM realm_playground WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({ id: p.id, realm: R, name: p.name, pygments_language: p.pygments_language, url_template: p.url_template });
  }

  f.tableOf(
    'zerver_client',
    [...ctx.clients].map(([name, id]) => ({ id, name })),
  );

  f.table('zerver_userprofile');
  for (const u of ctx.users.values()) if (!ctx.crossRealm.has(u.id)) f.row(zulipUser(ctx, u));
  f.tableOf('zerver_userprofile_mirrordummy', []);
  f.tableOf(
    'zerver_userprofile_crossrealm',
    [...ctx.crossRealm].map(([id, email]) => ({ id, email, recipient_id: ctx.personalRecipient.get(id) })),
  );

  writeGroups(db, ctx, f);

  f.table('zerver_channelfolder');
  for (const c of db.prepare('SELECT * FROM channel_folder WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({
      id: c.id,
      realm: R,
      name: c.name,
      description: c.description,
      rendered_description: c.rendered_description,
      order: c.order,
      date_created: secs(c.date_created),
      creator: c.creator_id,
      is_archived: bool(c.is_archived),
    });
  }

  f.table('zerver_stream');
  for (const s of db.prepare('SELECT * FROM stream WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    const row: Row = {
      id: s.id,
      realm: R,
      name: s.name,
      description: s.description,
      rendered_description: s.rendered_description,
      date_created: secs(s.date_created),
      creator: s.creator_id,
      invite_only: bool(s.invite_only),
      is_web_public: bool(s.is_web_public),
      history_public_to_subscribers: bool(s.history_public_to_subscribers),
      message_retention_days: s.message_retention_days,
      topics_policy: STREAM_TOPICS_POLICIES[s.topics_policy as string] ?? STREAM_TOPICS_POLICIES.inherit,
      deactivated: bool(s.deactivated),
      first_message_id: s.first_message_id,
      is_recently_active: bool(s.is_recently_active),
      folder: s.folder_id,
    };
    for (const g of STREAM_GROUP_SETTINGS) row[g] = groupId(ctx, s[g], STREAM_GROUP_DEFAULTS[g]);
    f.row(row);
  }

  // Scheduled messages first decide which group DMs exist (one may be scheduled to a new set of people).
  const scheduled = db.prepare('SELECT * FROM scheduled_message WHERE realm_id = ? ORDER BY id').all(R) as Row[];
  const scheduledRecipient = new Map<number, number>();
  for (const s of scheduled) {
    if (s.type === 'stream') scheduledRecipient.set(s.id, ctx.streamRecipient.get(s.stream_id) as number);
    else scheduledRecipient.set(s.id, directRecipient(ctx, [s.sender_id, ...(JSON.parse(s.recipient_ids ?? '[]') as number[])], s.sender_id));
  }

  f.table('zerver_huddle');
  for (const h of ctx.huddles.values()) f.row({ id: h.id, huddle_hash: huddleHash(h.members), group_size: h.members.length });

  f.table('zerver_recipient');
  for (const [userId, rid] of ctx.personalRecipient) if (!ctx.crossRealm.has(userId)) f.row({ id: rid, type: RECIPIENT_TYPE.personal, type_id: userId });
  for (const [streamId, rid] of ctx.streamRecipient) f.row({ id: rid, type: RECIPIENT_TYPE.stream, type_id: streamId });
  for (const h of ctx.huddles.values()) f.row({ id: h.recipient, type: RECIPIENT_TYPE.huddle, type_id: h.id });

  n = 0;
  const sub = (user: number, recipient: number, extra: Row = {}): Row => ({
    id: ++n,
    user_profile: user,
    recipient,
    active: true,
    is_user_active: bool(ctx.users.get(user)?.is_active),
    is_muted: false,
    color: '#c2c2c2',
    pin_to_top: false,
    desktop_notifications: null,
    audible_notifications: null,
    push_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    ...extra,
  });
  f.table('zerver_subscription');
  for (const [userId, rid] of ctx.personalRecipient) if (!ctx.crossRealm.has(userId)) f.row(sub(userId, rid));
  for (const s of db.prepare('SELECT s.* FROM subscription s JOIN stream c ON c.id = s.stream_id WHERE c.realm_id = ? ORDER BY s.stream_id, s.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(s.user_id)) continue;
    f.row(
      sub(s.user_id, ctx.streamRecipient.get(s.stream_id) as number, {
        active: bool(s.active),
        is_muted: bool(s.is_muted),
        color: s.color,
        pin_to_top: bool(s.pin_to_top),
        desktop_notifications: nbool(s.desktop_notifications),
        audible_notifications: nbool(s.audible_notifications),
        push_notifications: nbool(s.push_notifications),
        email_notifications: nbool(s.email_notifications),
        wildcard_mentions_notify: nbool(s.wildcard_mentions_notify),
      }),
    );
  }
  for (const h of ctx.huddles.values()) for (const u of h.members) if (!ctx.crossRealm.has(u)) f.row(sub(u, h.recipient));

  n = 0;
  f.table('zerver_alertword');
  for (const a of db.prepare('SELECT a.* FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.realm_id = ? ORDER BY a.user_id, a.word').all(R) as Row[]) {
    f.row({ id: ++n, user_profile: a.user_id, realm: R, word: a.word });
  }

  n = 0;
  f.table('zerver_usertopic');
  for (const t of db.prepare('SELECT t.* FROM user_topic t JOIN user u ON u.id = t.user_id WHERE u.realm_id = ? ORDER BY t.user_id, t.stream_id, t.topic_key').all(R) as Row[]) {
    f.row({
      id: ++n,
      user_profile: t.user_id,
      stream: t.stream_id,
      recipient: ctx.streamRecipient.get(t.stream_id),
      topic_name: t.topic_name,
      last_updated: secs(t.last_updated),
      visibility_policy: t.visibility_policy,
    });
  }

  n = 0;
  f.table('zerver_muteduser');
  for (const m of db.prepare('SELECT m.* FROM muted_user m JOIN user u ON u.id = m.user_id WHERE u.realm_id = ? ORDER BY m.user_id, m.muted_user_id').all(R) as Row[]) {
    f.row({ id: ++n, user_profile: m.user_id, muted_user: m.muted_user_id, date_muted: secs(m.date_muted) });
  }

  n = 0;
  f.table('zerver_userstatus');
  for (const s of db.prepare('SELECT s.* FROM user_status s JOIN user u ON u.id = s.user_id WHERE u.realm_id = ? ORDER BY s.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(s.user_id)) continue;
    f.row({
      id: ++n,
      user_profile: s.user_id,
      // Parley does not keep the client a status was set from.
      client: ctx.clients.get('API'),
      timestamp: secs(s.timestamp),
      status_text: s.status_text,
      emoji_name: s.emoji_name,
      emoji_code: s.emoji_code,
      reaction_type: s.reaction_type,
    });
  }

  n = 0;
  f.table('zerver_userpresence');
  for (const p of db.prepare('SELECT * FROM presence WHERE realm_id = ? ORDER BY user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(p.user_id)) continue;
    f.row({
      id: ++n,
      user_profile: p.user_id,
      realm: R,
      last_active_time: secs(p.last_active_time),
      last_connected_time: secs(p.last_connected_time),
      last_update_id: p.last_update_id,
    });
  }
  f.tableOf('zerver_useractivity', []);
  f.tableOf('zerver_useractivityinterval', []);

  n = 0;
  f.table('zerver_customprofilefieldvalue');
  for (const v of db.prepare('SELECT v.* FROM custom_profile_field_value v JOIN custom_profile_field c ON c.id = v.field_id WHERE c.realm_id = ? ORDER BY v.field_id, v.user_id').all(R) as Row[]) {
    f.row({ id: ++n, user_profile: v.user_id, field: v.field_id, value: v.value, rendered_value: v.rendered_value });
  }

  f.table('zerver_scheduledmessage');
  const messageExists = db.prepare('SELECT 1 FROM message WHERE id = ?').pluck();
  const scheduledAttachments = db.prepare('SELECT count(*) FROM attachment_scheduled_message WHERE scheduled_message_id = ?').pluck();
  for (const s of scheduled) {
    const delivered = s.delivered_message_id !== null && messageExists.get(s.delivered_message_id) ? s.delivered_message_id : null;
    f.row({
      id: s.id,
      sender: s.sender_id,
      recipient: scheduledRecipient.get(s.id),
      subject: s.topic,
      content: s.content,
      rendered_content: s.rendered_content,
      sending_client: ctx.clients.get('API'),
      stream: s.type === 'stream' ? s.stream_id : null,
      realm: R,
      scheduled_timestamp: secs(s.scheduled_timestamp),
      request_timestamp: secs(s.created),
      read_by_sender: bool(s.read_by_sender),
      delivered: bool(s.delivered),
      delivered_message: delivered,
      has_attachment: (scheduledAttachments.get(s.id) as number) > 0,
      failed: bool(s.failed),
      failure_message: s.failure_message,
      delivery_type: s.delivery_type,
      reminder_target_message_id: s.reminder_target_message_id,
      reminder_note: s.reminder_note,
    });
  }

  // Reactions to the exported messages: every message of the organization is exported. Read in id
  // order, a page at a time (the table can be as large as the history).
  f.table('zerver_reaction');
  const reactions = db.prepare(
    `SELECT r.id, r.message_id, r.user_id, r.emoji_name, r.emoji_code, r.reaction_type FROM reaction r JOIN message m ON m.id = r.message_id
     WHERE m.realm_id = ? AND r.id > ? ORDER BY r.id LIMIT 5000`,
  );
  for (let after = 0; ; ) {
    const page = reactions.all(R, after) as Row[];
    if (page.length === 0) break;
    for (const r of page) {
      if (!ctx.crossRealm.has(r.user_id)) {
        f.row({ id: r.id, message: r.message_id, user_profile: r.user_id, emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type });
      }
    }
    after = page[page.length - 1].id;
  }
}

function zulipUser(ctx: Context, u: Row): Row {
  const row: Row = {
    id: u.id,
    realm: ctx.realmId,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    is_active: bool(u.is_active),
    is_bot: u.bot_type !== null,
    bot_type: u.bot_type,
    bot_owner: u.bot_owner_id,
    role: u.role,
    is_mirror_dummy: false,
    date_joined: secs(u.date_joined),
    // Zulip's last_login is never empty (it defaults to the creation time).
    last_login: secs(u.last_login ?? u.date_joined),
    last_reminder: null,
    tos_version: u.tos_version,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    default_sending_stream: u.default_sending_stream_id,
    default_events_register_stream: u.default_events_register_stream_id,
    default_all_public_streams: bool(u.default_all_public_streams),
    // Parley does not track it; the importer leaves it empty too when absent from the history.
    last_active_message_id: null,
    groups: [],
    user_permissions: [],
  };
  for (const [name, type] of Object.entries(USER_SETTING_TYPES)) {
    const v = u[name];
    if (v === undefined) continue;
    row[name] = type === 'bool' ? bool(v) : v;
  }
  return row;
}

function writeGroups(db: Db, ctx: Context, f: JsonTablesFile): void {
  const R = ctx.realmId;
  const groups = db.prepare('SELECT * FROM user_group WHERE realm_id = ? ORDER BY id').all(R) as Row[];
  f.tableOf(
    'zerver_usergroup',
    groups.map((g) => ({ id: g.id, realm: R })),
  );
  f.table('zerver_namedusergroup');
  for (const g of groups) {
    if (!g.named || g.name === null) continue;
    const row: Row = {
      id: g.id,
      usergroup_ptr: g.id,
      realm_for_sharding: R,
      name: g.name,
      description: g.description,
      is_system_group: bool(g.is_system_group),
      deactivated: bool(g.deactivated),
      date_created: secs(g.date_created),
      creator: g.creator_id,
    };
    for (const s of GROUP_GROUP_SETTINGS) row[s] = groupId(ctx, g[s], GROUP_GROUP_DEFAULTS[s]);
    f.row(row);
  }
  let n = 0;
  f.table('zerver_usergroupmembership');
  for (const m of db.prepare('SELECT m.group_id, m.user_id FROM user_group_member m JOIN user_group g ON g.id = m.group_id WHERE g.realm_id = ? ORDER BY m.group_id, m.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(m.user_id)) continue;
    f.row({ id: ++n, user_group: m.group_id, user_profile: m.user_id });
  }
  n = 0;
  f.table('zerver_groupgroupmembership');
  for (const m of db.prepare('SELECT s.supergroup_id, s.subgroup_id FROM user_group_subgroup s JOIN user_group g ON g.id = s.supergroup_id WHERE g.realm_id = ? ORDER BY 1, 2').all(R) as Row[]) {
    f.row({ id: ++n, supergroup: m.supergroup_id, subgroup: m.subgroup_id });
  }
}

/** attachment.json: the files linked from a message or a scheduled message (as Zulip's fetch_attachment_data). Returns them for the uploads folder. */
function writeAttachments(db: Db, ctx: Context, f: JsonTablesFile, uploadsDir: string): Row[] {
  const messagesOf = db.prepare('SELECT message_id FROM attachment_message WHERE attachment_id = ? ORDER BY message_id').pluck();
  const scheduledOf = db.prepare('SELECT scheduled_message_id FROM attachment_scheduled_message WHERE attachment_id = ? ORDER BY scheduled_message_id').pluck();
  const kept: Row[] = [];
  f.table('zerver_attachment');
  for (const a of db.prepare('SELECT * FROM attachment WHERE realm_id = ? ORDER BY id').all(ctx.realmId) as Row[]) {
    const messages = messagesOf.all(a.id) as number[];
    const scheduled = scheduledOf.all(a.id) as number[];
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
async function writeFiles(db: Db, ctx: Context, uploadsDir: string, attachments: Row[], put: Put): Promise<Record<string, number>> {
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

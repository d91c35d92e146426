// Forward-only migrations tracked with PRAGMA user_version. A new database gets schema.sql whole and
// the newest version number; an older one runs each later step in order, in one transaction.
// Steps create new objects from their definitions in schema.sql (schemaStatement), so the file stays
// the one place a table, index, view or trigger is written down.
import type Database from 'better-sqlite3';
import { schemaSql } from './schema-source';

type Db = Database.Database;

/**
 * The CREATE statement of the named table, index, view or trigger in schema.sql (from its CREATE line
 * to the `;` that ends it: the line `END;` for a trigger).
 */
export function schemaStatement(name: string): string {
  const lines = schemaSql().split('\n');
  const head = new RegExp(`^CREATE (?:UNIQUE )?(?:VIRTUAL )?(TABLE|INDEX|VIEW|TRIGGER) ${name}\\b`);
  const start = lines.findIndex((l) => head.test(l));
  if (start === -1) throw new Error(`schema.sql has no ${name}`);
  const trigger = (head.exec(lines[start]) as RegExpExecArray)[1] === 'TRIGGER';
  for (let i = start; i < lines.length; i++) {
    const line = lines[i].replace(/--.*$/, '').trimEnd();
    if (trigger ? line === 'END;' : line.endsWith(';')) return lines.slice(start, i + 1).join('\n');
  }
  throw new Error(`schema.sql: ${name} does not end`);
}

/**
 * Rebuilds a table as schema.sql now defines it, keeping its rows (SQLite's twelve-step ALTER
 * procedure; foreign keys are off while the steps run, see migrate). Its indexes are recreated.
 */
function rebuildTable(db: Db, table: string, indexes: string[]): void {
  db.exec(schemaStatement(table).replace(`CREATE TABLE ${table} (`, `CREATE TABLE ${table}_rebuilt (`));
  const columns = (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((c) => `"${c.name}"`).join(', ');
  db.exec(`INSERT INTO ${table}_rebuilt (${columns}) SELECT ${columns} FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${table}_rebuilt RENAME TO ${table}`);
  for (const index of indexes) db.exec(schemaStatement(index));
}

/**
 * Creates the named schema.sql objects that the database lacks. A step that only adds objects uses it:
 * the migration tests label a database made from today's schema.sql as older, so it may hold them.
 */
function createMissing(db: Db, names: string[]): void {
  for (const name of names) {
    if (!db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(name)) db.exec(schemaStatement(name));
  }
}

/** Steps that move a database from version N-1 to N (index 0 moves 1 → 2). schema.sql is version 1 + steps. */
const STEPS: ((db: Db) => void)[] = [
  // 2: message ids are never reused (AUTOINCREMENT), and a channel message's plain per-user rows are
  // implied until read (usermessage_cursor). Existing rows are all written: every cursor starts at
  // the newest message. Pushed messages get their own index.
  (db) => {
    rebuildTable(db, 'message', ['message_stream_topic', 'message_stream', 'message_direct_group', 'message_sender']);
    for (const name of [
      'usermessage_active_push',
      'usermessage_cursor',
      'usermessage_cursor_position',
      'usermessage_pending',
      'usermessage_cursor_advance',
      'usermessage_cursor_forward_only',
      'subscription_insert_cursor',
      'subscription_update_cursor',
      'subscription_delete_cursor',
      'user_active_cursor',
      'message_move_cursor',
    ]) {
      db.exec(schemaStatement(name));
    }
    db.exec('INSERT INTO usermessage_cursor (user_id, message_id) SELECT id, (SELECT coalesce(max(id), 0) FROM message) FROM user');
  },
  // 3: the full-text index stems English words (porter): recreated with its new tokenizer, and
  // rebuilt from the messages it indexes.
  (db) => {
    db.exec('DROP TABLE message_fts');
    db.exec(schemaStatement('message_fts'));
    db.exec("INSERT INTO message_fts (message_fts) VALUES ('rebuild')");
  },
  // 4: new users unmute topics of muted channels when they send to them (2, "on send"), Zulip's
  // default; it was 3 ("on initiation"). Only the column default changes, so the user table is
  // rebuilt; the view and trigger that read it are set aside meanwhile (a rename checks every view).
  (db) => {
    db.exec('DROP TRIGGER usermessage_cursor_advance');
    db.exec('DROP VIEW usermessage_pending');
    rebuildTable(db, 'user', ['user_realm_email', 'user_realm_delivery_email', 'user_api_key', 'user_bot_owner']);
    for (const name of ['usermessage_pending', 'usermessage_cursor_advance', 'user_active_cursor']) db.exec(schemaStatement(name));
  },
  // 5: enter_sends is a stored setting (PATCH /settings changed nothing and register always said
  // false). The user table is rebuilt as in step 4; everyone starts with Zulip's default, false.
  (db) => {
    db.exec('DROP TRIGGER usermessage_cursor_advance');
    db.exec('DROP VIEW usermessage_pending');
    rebuildTable(db, 'user', ['user_realm_email', 'user_realm_delivery_email', 'user_api_key', 'user_bot_owner']);
    for (const name of ['usermessage_pending', 'usermessage_cursor_advance', 'user_active_cursor']) db.exec(schemaStatement(name));
  },
  // 6: a sign-up through a multi-use link waits for its address to be confirmed by email
  // (invitation.registration_of names the link); before, the link made the account at once.
  (db) => {
    rebuildTable(db, 'invitation', ['invitation_realm_status']);
  },
  // 7: the tables issue 15 and 16 added: code playgrounds, saved snippets and navigation views
  // (register listed none), widget submessages (/poll, /todo), and health_probe (GET /health proves
  // the database takes writes with a DELETE from it).
  (db) =>
    createMissing(db, [
      'realm_playground',
      'realm_playground_unique',
      'saved_snippet',
      'saved_snippet_user',
      'navigation_view',
      'navigation_view_user_fragment',
      'submessage',
      'submessage_message',
      'health_probe',
    ]),
  // 8: every table whose schema changed, rebuilt once as schema.sql has it, rows kept:
  // - ids that reach clients are never used twice (AUTOINCREMENT), as in Zulip: deleting the newest
  //   linkifier, draft, scheduled message, profile field or upload gave its id to the next one.
  //   Copying the rows into the AUTOINCREMENT table starts sqlite_sequence at its max(id) (an id
  //   deleted before this step, above every kept one, is not known and may come again);
  // - message reminders are scheduled messages with delivery_type 2 (Zulip's REMIND), the message they
  //   point at and the user's note: existing rows are messages sent later (delivery_type 1);
  // - uploaded icons and avatars: the realm's icon source and version, a user's avatar file (defaults:
  //   nothing uploaded);
  // - an E2EE registration remembers when its token last changed and whether the push service
  //   acknowledged it; existing ones count as acknowledged, sent to the service long ago.
  // The user table's view and trigger are set aside meanwhile, as in step 4.
  (db) => {
    db.exec('DROP TRIGGER usermessage_cursor_advance');
    db.exec('DROP VIEW usermessage_pending');
    const tables: [string, string[]][] = [
      ['realm', []],
      ['user', ['user_realm_email', 'user_realm_delivery_email', 'user_api_key', 'user_bot_owner']],
      ['user_group', ['user_group_realm_name']],
      ['channel_folder', ['channel_folder_realm_name']],
      ['stream', ['stream_realm_name']],
      ['direct_group', ['direct_group_key']],
      ['linkifier', ['linkifier_realm_pattern']],
      ['realm_emoji', []],
      ['custom_profile_field', ['custom_profile_field_name']],
      ['attachment', ['attachment_owner']],
      ['client_device', []],
      ['push_device', ['push_device_user']],
      ['invitation', ['invitation_realm_status']],
      ['scheduled_message', ['scheduled_message_due', 'scheduled_message_sender']],
      ['draft', ['draft_user']],
    ];
    for (const [table, indexes] of tables) rebuildTable(db, table, indexes);
    for (const name of ['usermessage_pending', 'usermessage_cursor_advance', 'user_active_cursor']) db.exec(schemaStatement(name));
    db.exec('UPDATE push_device SET token_updated = updated, registered_token_id = token_id WHERE token_id IS NOT NULL');
  },
  // 9: the system bots (Notification Bot, Welcome Bot) are Zulip's cross-realm bots, members of no
  // organization: they leave the role groups they were put in when created (lists of members,
  // permissions). Known as isSystemBot knows them (lib/users.ts), written out here as that test stood.
  (db) => {
    db.exec(`DELETE FROM user_group_member WHERE user_id IN (
      SELECT id FROM user WHERE bot_type IS NOT NULL AND bot_owner_id IS NULL
        AND lower(substr(email, 1, instr(email, '@') - 1)) IN ('notification-bot', 'welcome-bot'))`);
  },
  // 10: a database made by the very first Parley (before reactions kept the order they were added in,
  // a change made without a new version) still has reaction WITHOUT ROWID keyed by
  // (message, user, type, code) and no reaction_unique: rebuilt as schema.sql has it. Its reactions
  // get ids in key order, the order that Parley listed them in. Other databases have it already.
  (db) => {
    const hasId = db.prepare("SELECT 1 FROM pragma_table_info('reaction') WHERE name = 'id'").get();
    if (!hasId) rebuildTable(db, 'reaction', ['reaction_unique']);
  },
  // 11: one-time links to set a password, for people `parley import` brought in without one.
  (db) => createMissing(db, ['password_link', 'password_link_user']),
  // 12: usermessage_unread covers the flags (issue 17, first load): remade when it does not yet.
  (db) => {
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'usermessage_unread'").get() as { sql: string } | undefined)?.sql ?? '';
    if (sql.includes('message_id, flags)')) return;
    db.exec('DROP INDEX IF EXISTS usermessage_unread');
    db.exec(schemaStatement('usermessage_unread'));
  },
  // 13: @-mentions and :emoji: find their user or custom emoji by name through an index.
  (db) => createMissing(db, ['user_realm_full_name', 'realm_emoji_realm_name']),
  // 14: data exports requested over the API (POST /export/realm).
  (db) => createMissing(db, ['realm_export', 'realm_export_realm']),
];

export const SCHEMA_VERSION = 1 + STEPS.length;

/** A database from a newer Parley: this one cannot know what its schema means, so it does not touch it. */
export class NewerSchemaError extends Error {}

/** Creates or upgrades the schema. */
export function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new NewerSchemaError(
      `the database was made by a newer Parley (schema version ${version}; this Parley knows up to ${SCHEMA_VERSION}). Run that Parley, or restore the backup taken before upgrading.`,
    );
  }
  if (version === SCHEMA_VERSION) return;
  // Rebuilding a table drops the old one, which with foreign keys on would cascade to the rows that
  // refer to it. The pragma has no effect inside a transaction: it is set around it, and the steps'
  // result is checked with foreign_key_check before the commit.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  if (version > 0) db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      if (version === 0) {
        db.exec(schemaSql());
      } else {
        for (let v = version; v < SCHEMA_VERSION; v++) STEPS[v - 1](db);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`migration left ${broken.length} broken foreign key(s): ${JSON.stringify(broken.slice(0, 3))}`);
      }
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  } finally {
    if (version > 0) db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}

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
  // 7: code playgrounds, saved snippets and navigation views are stored (register listed none).
  (db) => createMissing(db, ['realm_playground', 'realm_playground_unique', 'saved_snippet', 'saved_snippet_user', 'navigation_view', 'navigation_view_user_fragment']),
  // 8: widgets (/poll, /todo) keep their data in submessages.
  (db) => createMissing(db, ['submessage', 'submessage_message']),
  // 9: message reminders are scheduled messages with delivery_type 2 (Zulip's REMIND), with the message
  // they point at and the user's note: the table is rebuilt with the new columns, rows kept as
  // messages sent later (delivery_type 1).
  (db) => {
    rebuildTable(db, 'scheduled_message', ['scheduled_message_due', 'scheduled_message_sender']);
  },
  // 10: GET /health proves the database takes writes with a DELETE from the empty health_probe.
  (db) => createMissing(db, ['health_probe']),
];

export const SCHEMA_VERSION = 1 + STEPS.length;

/** Creates or upgrades the schema. */
export function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`database schema version ${version} is newer than this Parley (${SCHEMA_VERSION})`);
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

// Upgrades: a database made by the oldest schema in the tree (the first commit's schema.sql, 66090c7:
// firstSchema below) opens in this Parley with every row kept and exactly the schema a new database
// gets; a database from a newer Parley is refused with a clear message and a non-zero exit. Nothing
// here counts the migration steps: more are appended as Parley grows.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, type Db } from '../../src/db/open';
import { SCHEMA_VERSION } from '../../src/db/migrations';
import { loadSqliteAddon } from '../../src/native';
import { runCli } from '../helpers/cli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-upgrade-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const T = 1700000000;

/** A row or more in every table the first schema had, as that Parley wrote them. */
const V1_DATA = `
  INSERT INTO realm (id, string_id, name, date_created, message_retention_days) VALUES (1, '', 'Old Org', ${T}, 365);
  INSERT INTO realm_domain (realm_id, domain, allow_subdomains) VALUES (1, 'example.com', 1);
  INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined, role) VALUES
    (1, 1, 'a@example.com', 'a@example.com', 'Ann', 'key-a', ${T}, 100),
    (2, 1, 'b@example.com', 'b@example.com', 'Ben', 'key-b', ${T}, 400),
    (3, 1, 'c@example.com', 'c@example.com', 'Cid', 'key-c', ${T}, 600);
  INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined, bot_type, bot_owner_id) VALUES
    (4, 1, 'helper-bot@example.com', 'helper-bot@example.com', 'Helper', 'key-bot', ${T}, 1, 2);
  INSERT INTO session (token_hash, user_id, created, expires) VALUES ('hash-1', 1, ${T}, ${T + 1209600});
  INSERT INTO user_group (id, realm_id, name, is_system_group, date_created) VALUES (1, 1, 'role:members', 1, ${T}), (2, 1, 'team', 0, ${T});
  INSERT INTO user_group (id, realm_id, name, named) VALUES (3, 1, NULL, 0);
  INSERT INTO user_group_member (group_id, user_id) VALUES (1, 1), (1, 2), (2, 2);
  INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (3, 2);
  INSERT INTO channel_folder (id, realm_id, name, date_created) VALUES (1, 1, 'Work', ${T});
  INSERT INTO stream (id, realm_id, name, date_created, description) VALUES (1, 1, 'general', ${T}, 'Everyone'), (2, 1, 'quiet', ${T}, '');
  INSERT INTO default_stream (realm_id, stream_id) VALUES (1, 1);
  INSERT INTO subscription (user_id, stream_id, color, is_muted) VALUES (1, 1, '#76ce90', 0), (2, 1, '#c2c2c2', 1), (2, 2, '#c2c2c2', 0);
  INSERT INTO direct_group (id, realm_id, member_key) VALUES (1, 1, '1,3');
  INSERT INTO direct_group_member (group_id, user_id) VALUES (1, 1), (1, 3);
  INSERT INTO message (id, realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent) VALUES
    (1, 1, 1, 1, 'Plans', 'plans', 'first words', '<p>first words</p>', ${T + 1}),
    (2, 1, 2, 1, 'Plans', 'plans', 'second words [f.txt](/user_uploads/1/ab/f.txt)', '<p>second words</p>', ${T + 2});
  INSERT INTO message (id, realm_id, sender_id, direct_group_id, content, rendered_content, date_sent) VALUES
    (3, 1, 1, 1, 'private words', '<p>private words</p>', ${T + 3});
  INSERT INTO message_fts (rowid, topic, content) SELECT id, topic, content FROM message;
  INSERT INTO usermessage (user_id, message_id, flags) VALUES (1, 1, 1), (2, 1, 0), (1, 2, 2), (2, 2, 1), (1, 3, 513), (3, 3, 512);
  INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code) VALUES (1, 2, 'smile', '1f604'), (1, 1, 'octopus', '1f419');
  INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code, reaction_type) VALUES (2, 1, 'zulip', 'zulip', 'zulip_extra_emoji');
  INSERT INTO user_topic (user_id, stream_id, topic_key, topic_name, visibility_policy, last_updated) VALUES (2, 1, 'plans', 'Plans', 1, ${T});
  INSERT INTO muted_user (user_id, muted_user_id, date_muted) VALUES (3, 2, ${T});
  INSERT INTO alert_word (user_id, word) VALUES (1, 'lunch');
  INSERT INTO user_status (user_id, status_text, emoji_name, emoji_code, timestamp) VALUES (1, 'away', 'car', '1f697', ${T});
  INSERT INTO presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id) VALUES (1, 1, ${T}, ${T}, 1);
  INSERT INTO linkifier (id, realm_id, pattern, url_template) VALUES (1, 1, '#(?P<id>[0-9]+)', 'https://example.com/{id}');
  INSERT INTO realm_emoji (id, realm_id, name, author_id) VALUES (1, 1, 'party', 1);
  INSERT INTO custom_profile_field (id, realm_id, name, field_type) VALUES (1, 1, 'Phone', 1);
  INSERT INTO custom_profile_field_value (user_id, field_id, value) VALUES (1, 1, '555');
  INSERT INTO bot_storage (bot_id, key, value) VALUES (4, 'k', 'v');
  INSERT INTO bot_service (id, bot_id, name, base_url) VALUES (1, 4, 'svc', 'https://bot.example.com');
  INSERT INTO attachment (id, realm_id, owner_id, path_id, file_name, size, create_time) VALUES (1, 1, 2, '1/ab/f.txt', 'f.txt', 3, ${T}),
    (2, 1, 1, '1/cd/g.png', 'g.png', 70, ${T});
  INSERT INTO attachment_message (attachment_id, message_id) VALUES (1, 2);
  INSERT INTO scheduled_message (id, realm_id, sender_id, type, stream_id, topic, content, rendered_content, scheduled_timestamp, created)
    VALUES (1, 1, 1, 'stream', 1, 'Later', 'see [g](/user_uploads/1/cd/g.png)', '<p>see</p>', ${T + 86400}, ${T});
  INSERT INTO scheduled_message (id, realm_id, sender_id, type, recipient_ids, content, rendered_content, scheduled_timestamp, created, delivered, delivered_message_id)
    VALUES (2, 1, 1, 'private', '[3]', 'private words', '<p>private words</p>', ${T + 3}, ${T}, 1, 3);
  INSERT INTO attachment_scheduled_message (attachment_id, scheduled_message_id) VALUES (2, 1);
  INSERT INTO tus_upload (id, realm_id, user_id, length, offset, file_name, created, expires) VALUES ('tus-1', 1, 1, 100, 40, 'big.bin', ${T}, ${T + 86400});
  INSERT INTO client_device (id, user_id, created) VALUES (1, 1, ${T}), (2, 2, ${T});
  INSERT INTO push_device (device_id, user_id, push_key_id, push_key, token_kind, token_id, bouncer_public_key, encrypted_push_registration, updated)
    VALUES (2, 2, 7, x'31', 'fcm', 'AAAAAAAAAAA=', 'cGs=', 'cmVn', ${T + 100});
  INSERT INTO legacy_push_token (id, user_id, kind, token, updated) VALUES (1, 1, 'fcm', 'tok', ${T});
  INSERT INTO invitation (id, realm_id, email, referrer_id, confirmation_key, created, expires, stream_ids) VALUES (1, 1, 'new@example.com', 1, 'conf-1', ${T}, ${T + 864000}, '[1]');
  INSERT INTO invitation (id, realm_id, referrer_id, confirmation_key, created, multiuse) VALUES (2, 1, 1, 'conf-2', ${T}, 1);
  INSERT INTO email_change (id, user_id, new_email, confirmation_key, created, expires) VALUES (1, 2, 'ben@example.com', 'conf-3', ${T}, ${T + 86400});
  INSERT INTO draft (id, user_id, type, "to", topic, content, timestamp) VALUES (1, 1, 'stream', '[1]', 'Plans', 'half a thought', ${T});
`;

/**
 * schema.sql as the first commit had it (66090c7, PRAGMA user_version 1). It differs from
 * test/db/schema-v1.sql only in reaction: commit 4915588 made it a rowid table with reaction_unique
 * (keeping the order reactions were added in) without a new version.
 */
function firstSchema(): string {
  const later = fs.readFileSync(path.join(__dirname, 'schema-v1.sql'), 'utf8');
  const reaction = /CREATE TABLE reaction \([\s\S]*?\n\);\nCREATE UNIQUE INDEX reaction_unique [^\n]*\n/;
  assert.match(later, reaction);
  return later.replace(
    reaction,
    `CREATE TABLE reaction (
  message_id     INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  user_id        INTEGER NOT NULL REFERENCES user(id),
  emoji_name     TEXT NOT NULL,
  emoji_code     TEXT NOT NULL,
  reaction_type  TEXT NOT NULL DEFAULT 'unicode_emoji',
  PRIMARY KEY (message_id, user_id, reaction_type, emoji_code)
) WITHOUT ROWID;
`,
  );
}

function makeV1(file: string): void {
  const db = new Database(file, { nativeBinding: loadSqliteAddon() as never });
  db.pragma('journal_mode = WAL');
  db.exec(firstSchema());
  db.pragma('user_version = 1');
  db.exec(V1_DATA);
  db.close();
}

/** Every schema object as (type, name, SQL with quoting and spacing normalised), as migrations.test.ts. */
function schemaOf(db: Db): string[] {
  return (db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all() as { type: string; name: string; sql: string | null }[]).map(
    (r) => `${r.type} ${r.name}: ${(r.sql ?? '').replace(/"/g, '').replace(/--[^\n]*/g, '').replace(/\s+/g, ' ').trim()}`,
  );
}

/** The plain tables of a database (not the full-text index or its shadow tables) and their columns. */
function tablesOf(db: Db): Map<string, string[]> {
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'message_fts%' ORDER BY name")
    .pluck()
    .all() as string[];
  return new Map(names.map((n) => [n, (db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').pluck().all(n) as string[]).map((c) => `"${c}"`)]));
}

/** The table's rows, only the given columns, in an order that does not depend on its keys. */
function rowsOf(db: Db, table: string, columns: string[]): unknown[] {
  const list = columns.join(', ');
  return db.prepare(`SELECT ${list} FROM "${table}" ORDER BY ${list}`).raw().all();
}

describe('upgrading a data directory', () => {
  it('moves a database made by the oldest schema to the current one, keeping every row', () => {
    const file = path.join(dir, 'oldest.db');
    makeV1(file);
    const old = new Database(file, { readonly: true, nativeBinding: loadSqliteAddon() as never });
    const oldTables = tablesOf(old);
    const before = new Map([...oldTables].map(([t, cols]) => [t, rowsOf(old, t, cols)]));
    old.close();
    // The fixture's data touches every table that schema had.
    assert.deepEqual(
      [...before].filter(([, rows]) => rows.length === 0).map(([t]) => t),
      [],
    );

    const db = openDatabase(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    const fresh = openDatabase(':memory:');
    assert.deepEqual(schemaOf(db), schemaOf(fresh));
    fresh.close();
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(db.pragma('foreign_key_check'), []);

    // Every old row is there, with every old column's value.
    for (const [table, cols] of oldTables) assert.deepEqual(rowsOf(db, table, cols), before.get(table), table);
    // Reactions keep the order they were added in (the first schema had no rowid to keep it by:
    // they come in key order, which is the order the old server listed them in).
    assert.deepEqual(db.prepare('SELECT message_id, user_id, emoji_name FROM reaction ORDER BY id').raw().all(), [
      [1, 1, 'octopus'],
      [1, 2, 'smile'],
      [2, 1, 'zulip'],
    ]);
    // The same reaction cannot be added twice (reaction_unique).
    assert.throws(() => db.prepare("INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code) VALUES (1, 2, 'smile', '1f604')").run(), /UNIQUE/);
    // The search index still finds the old messages.
    assert.deepEqual(db.prepare("SELECT rowid FROM message_fts WHERE message_fts MATCH 'word' ORDER BY rowid").pluck().all(), [1, 2, 3]);
    db.close();

    // A second open finds nothing to do.
    const again = openDatabase(file);
    assert.equal(again.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    again.close();
  });

  it('refuses a data directory from a newer Parley, with a message and exit 1, and leaves it untouched', async () => {
    const dataDir = path.join(dir, 'newer');
    fs.mkdirSync(dataDir);
    const file = path.join(dataDir, 'parley.db');
    const db = openDatabase(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const schemaBefore = (() => {
      const d = new Database(file, { readonly: true, nativeBinding: loadSqliteAddon() as never });
      const s = schemaOf(d);
      d.close();
      return s;
    })();

    assert.throws(() => openDatabase(file), {
      message: `${file}: the database was made by a newer Parley (schema version ${SCHEMA_VERSION + 1}; this Parley knows up to ${SCHEMA_VERSION}). Run that Parley, or restore the backup taken before upgrading.`,
    });
    const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0']);
    assert.deepEqual(result, {
      code: 1,
      signal: null,
      stdout: '',
      stderr: `parley: ${file}: the database was made by a newer Parley (schema version ${SCHEMA_VERSION + 1}; this Parley knows up to ${SCHEMA_VERSION}). Run that Parley, or restore the backup taken before upgrading.\n`,
    });

    const d = new Database(file, { readonly: true, nativeBinding: loadSqliteAddon() as never });
    assert.equal(d.pragma('user_version', { simple: true }), SCHEMA_VERSION + 1);
    assert.deepEqual(schemaOf(d), schemaBefore);
    d.close();
  });
  it('refuses a damaged database (garbage bytes) naming the file, exit 1, and leaves it untouched', async () => {
    // Finding: the start said only "parley: file is not a database", naming no file.
    const dataDir = path.join(dir, 'garbage');
    fs.mkdirSync(dataDir);
    const file = path.join(dataDir, 'parley.db');
    const bytes = Buffer.alloc(64 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) & 255;
    fs.writeFileSync(file, bytes);
    const want = `${file}: not a Parley database, or a damaged one (SQLite: file is not a database); it was left as it is: restore it from a backup, or move it away to start a new one`;
    assert.throws(() => openDatabase(file), { message: want });
    const result = await runCli(['serve', '--data-dir', dataDir, '--port', '0']);
    assert.deepEqual(result, { code: 1, signal: null, stdout: '', stderr: `parley: ${want}\n` });
    assert.deepEqual(fs.readFileSync(file), bytes);
    assert.deepEqual(fs.readdirSync(dataDir), ['parley.db']);
  });
});

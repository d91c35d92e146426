// Schema migrations: a database made by an older Parley opens in this one with its rows intact and
// with exactly the schema a new database gets from schema.sql. schema-v1.sql is schema.sql as it was
// at version 1 (before message ids were AUTOINCREMENT and per-user rows could be implied), schema-v6.sql
// as it was at version 6 (before the other client-visible ids were AUTOINCREMENT).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, type Db } from '../../src/db/open';
import { SCHEMA_VERSION, schemaStatement } from '../../src/db/migrations';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-migrate-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A version-1 database with an organization, three users, a channel, messages, flags and reactions. */
function makeV1(file: string): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(fs.readFileSync(path.join(__dirname, 'schema-v1.sql'), 'utf8'));
  db.pragma('user_version = 1');
  db.exec(`
    INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Old Org', 1700000000);
    INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined) VALUES
      (1, 1, 'a@example.com', 'a@example.com', 'A', 'a'||hex(randomblob(15)), 1700000000),
      (2, 1, 'b@example.com', 'b@example.com', 'B', 'b'||hex(randomblob(15)), 1700000000),
      (3, 1, 'c@example.com', 'c@example.com', 'C', 'c'||hex(randomblob(15)), 1700000000);
    INSERT INTO stream (id, realm_id, name, date_created) VALUES (1, 1, 'old', 1700000000);
    INSERT INTO subscription (user_id, stream_id) VALUES (1, 1), (2, 1);
    INSERT INTO direct_group (id, realm_id, member_key) VALUES (1, 1, '1,3');
    INSERT INTO direct_group_member (group_id, user_id) VALUES (1, 1), (1, 3);
    INSERT INTO message (id, realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent)
      VALUES (1, 1, 1, 1, 'Topic', 'topic', 'first words', '<p>first words</p>', 1700000001),
             (2, 1, 2, 1, 'Topic', 'topic', 'second words', '<p>second words</p>', 1700000002);
    INSERT INTO message (id, realm_id, sender_id, direct_group_id, content, rendered_content, date_sent)
      VALUES (3, 1, 1, 1, 'private words', '<p>private words</p>', 1700000003);
    INSERT INTO message_fts (rowid, topic, content) SELECT id, topic, content FROM message;
    INSERT INTO usermessage (user_id, message_id, flags) VALUES (1, 1, 1), (2, 1, 0), (1, 2, 2), (2, 2, 1), (1, 3, 513), (3, 3, 512);
    INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code) VALUES (1, 2, 'smile', '1f604');
    INSERT INTO attachment (id, realm_id, owner_id, path_id, file_name, size, create_time) VALUES (1, 1, 1, '1/ab/f.txt', 'f.txt', 3, 1700000000);
    INSERT INTO attachment_message (attachment_id, message_id) VALUES (1, 2);
    INSERT INTO client_device (id, user_id, created) VALUES (1, 1, 1700000000), (2, 1, 1700000000);
    INSERT INTO push_device (device_id, user_id, push_key_id, push_key, token_kind, token_id, bouncer_public_key, encrypted_push_registration, updated)
      VALUES (2, 1, 7, x'31', 'fcm', 'AAAAAAAAAAA=', 'cGs=', 'cmVn', 1700000100);
  `);
  db.close();
}

/** Every schema object as (type, name, SQL with quoting and spacing normalised). */
function schemaOf(db: Db): string[] {
  return (db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all() as { type: string; name: string; sql: string | null }[]).map(
    (r) => `${r.type} ${r.name}: ${(r.sql ?? '').replace(/"/g, '').replace(/--[^\n]*/g, '').replace(/\s+/g, ' ').trim()}`,
  );
}

const rows = (db: Db, sql: string) => JSON.stringify(db.prepare(sql).all());

describe('migrations', () => {
  it('moves a version-1 database to the current schema, keeping every row', () => {
    const file = path.join(dir, 'v1.db');
    makeV1(file);
    const old = new Database(file, { readonly: true });
    const before = ['SELECT * FROM message ORDER BY id', 'SELECT * FROM usermessage ORDER BY user_id, message_id', 'SELECT * FROM reaction', 'SELECT * FROM attachment_message'].map(
      (q) => rows(old, q),
    );
    old.close();

    const db = openDatabase(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    const fresh = openDatabase(':memory:');
    assert.deepEqual(schemaOf(db), schemaOf(fresh));
    fresh.close();

    // Rows survive the rebuild of message (no cascade to reactions or attachment links).
    assert.deepEqual(
      ['SELECT * FROM message ORDER BY id', 'SELECT * FROM usermessage ORDER BY user_id, message_id', 'SELECT * FROM reaction', 'SELECT * FROM attachment_message'].map((q) =>
        rows(db, q),
      ),
      before,
    );
    assert.deepEqual(db.prepare("SELECT rowid FROM message_fts WHERE message_fts MATCH 'words' ORDER BY rowid").pluck().all(), [1, 2, 3]);
    // The index stems English words (version 3).
    assert.deepEqual(db.prepare("SELECT rowid FROM message_fts WHERE message_fts MATCH 'word' ORDER BY rowid").pluck().all(), [1, 2, 3]);
    // Every user's rows were written: the cursors start at the newest message, nothing is implied.
    assert.deepEqual(db.prepare('SELECT user_id, message_id FROM usermessage_cursor ORDER BY user_id').all(), [
      { user_id: 1, message_id: 3 },
      { user_id: 2, message_id: 3 },
      { user_id: 3, message_id: 3 },
    ]);
    assert.equal(db.prepare('SELECT count(*) FROM usermessage_pending').pluck().get(), 0);
    // enter_sends (version 5) starts at Zulip's default for everyone.
    assert.deepEqual(db.prepare('SELECT enter_sends FROM user ORDER BY id').pluck().all(), [0, 0, 0]);
    // Devices keep their E2EE registrations (version 8), which learn when their token last changed
    // and count as acknowledged by the push service; device ids are not reused.
    assert.deepEqual(db.prepare('SELECT device_id, push_key_id, token_id, updated, token_updated, registered_token_id, registration_error FROM push_device').all(), [
      {
        device_id: 2,
        push_key_id: 7,
        token_id: 'AAAAAAAAAAA=',
        updated: 1700000100,
        token_updated: 1700000100,
        registered_token_id: 'AAAAAAAAAAA=',
        registration_error: null,
      },
    ]);
    db.prepare('DELETE FROM client_device WHERE id = 2').run();
    assert.equal(db.prepare('SELECT count(*) FROM push_device').pluck().get(), 0);
    assert.equal(Number(db.prepare('INSERT INTO client_device (user_id, created) VALUES (1, 1)').run().lastInsertRowid), 3);
    // Ids are not reused after the newest message is deleted.
    db.prepare('DELETE FROM usermessage WHERE message_id = 3').run();
    db.prepare('DELETE FROM message WHERE id = 3').run();
    const id = db
      .prepare("INSERT INTO message (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent) VALUES (1, 1, 1, 't', 't', 'x', '<p>x</p>', 1)")
      .run().lastInsertRowid;
    assert.equal(Number(id), 4);
    db.close();
    // A second open finds nothing to do.
    const again = openDatabase(file);
    assert.equal(again.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    again.close();
  });

  it('version 3 rebuilds the full-text index with the porter tokenizer, keeping what it indexes', () => {
    // A version-2 database: today's schema with the full-text index as it was.
    const file = path.join(dir, 'v2.db');
    const db = openDatabase(file);
    db.exec(`
      INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Old Org', 1700000000);
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined) VALUES (1, 1, 'a@example.com', 'a@example.com', 'A', 'k', 1700000000);
      INSERT INTO stream (id, realm_id, name, date_created) VALUES (1, 1, 'old', 1700000000);
      DROP TABLE message_fts;
      CREATE VIRTUAL TABLE message_fts USING fts5(topic, content, content='message', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
      INSERT INTO message (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent)
        VALUES (1, 1, 1, 'Running plans', 'running plans', 'she runs', '<p>she runs</p>', 1), (1, 1, 1, 'Other', 'other', 'we ran', '<p>we ran</p>', 2);
      INSERT INTO message_fts (rowid, topic, content) SELECT id, topic, content FROM message;
    `);
    db.pragma('user_version = 2');
    const match = (d: Db, q: string) => d.prepare('SELECT rowid FROM message_fts WHERE message_fts MATCH ? ORDER BY rowid').pluck().all(q);
    assert.deepEqual(match(db, 'run'), []);
    db.close();

    const migrated = openDatabase(file);
    assert.equal(migrated.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.deepEqual(match(migrated, 'run'), [1]);
    assert.deepEqual(match(migrated, 'topic:run'), [1]);
    assert.deepEqual(match(migrated, 'ran'), [2]);
    const fresh = openDatabase(':memory:');
    assert.deepEqual(schemaOf(migrated), schemaOf(fresh));
    fresh.close();
    migrated.close();
  });

  it('version 8 gives scheduled messages the reminder columns, keeping every row as a message sent later', () => {
    // A version-6 database: today's schema with scheduled_message as it was.
    const file = path.join(dir, 'v6.db');
    const db = openDatabase(file);
    db.exec(`
      INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Old Org', 1700000000);
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined) VALUES (1, 1, 'a@example.com', 'a@example.com', 'A', 'k', 1700000000);
      ALTER TABLE scheduled_message DROP COLUMN delivery_type;
      ALTER TABLE scheduled_message DROP COLUMN reminder_target_message_id;
      ALTER TABLE scheduled_message DROP COLUMN reminder_note;
      INSERT INTO scheduled_message (id, realm_id, sender_id, type, recipient_ids, content, rendered_content, scheduled_timestamp, created)
        VALUES (5, 1, 1, 'private', '[1]', 'later', '<p>later</p>', 1800000000, 1700000000);
    `);
    db.pragma('user_version = 6');
    db.close();

    const migrated = openDatabase(file);
    assert.equal(migrated.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.deepEqual(
      migrated.prepare('SELECT id, content, scheduled_timestamp, delivery_type, reminder_target_message_id, reminder_note FROM scheduled_message').all(),
      [{ id: 5, content: 'later', scheduled_timestamp: 1800000000, delivery_type: 1, reminder_target_message_id: null, reminder_note: null }],
    );
    const fresh = openDatabase(':memory:');
    assert.deepEqual(schemaOf(migrated), schemaOf(fresh));
    fresh.close();
    migrated.close();
  });

  it('version 8 makes client-visible ids AUTOINCREMENT, keeping every row and never reusing a kept id; version 9 takes the system bots out of groups', () => {
    // A version-6 database (schema-v6.sql: schema.sql before this step) with rows in every rebuilt
    // table and in the tables whose rows would cascade away with theirs.
    const file = path.join(dir, 'v6-ids.db');
    const old = new Database(file);
    old.exec(fs.readFileSync(path.join(__dirname, 'schema-v6.sql'), 'utf8'));
    old.pragma('user_version = 6');
    old.exec(`
      INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Old Org', 1700000000), (3, 'other', 'Other Org', 1700000000);
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined, role) VALUES
        (1, 1, 'a@example.com', 'a@example.com', 'A', 'ka', 1700000000, 100),
        (2, 1, 'b@example.com', 'b@example.com', 'B', 'kb', 1700000000, 400),
        (5, 3, 'c@example.com', 'c@example.com', 'C', 'kc', 1700000000, 400);
      INSERT INTO user_group (id, realm_id, name, is_system_group) VALUES (1, 1, 'role:owners', 1), (4, 1, 'team', 0);
      INSERT INTO user_group_member (group_id, user_id) VALUES (1, 1), (4, 1), (4, 2);
      INSERT INTO channel_folder (id, realm_id, name, date_created) VALUES (1, 1, 'Work', 1), (2, 1, 'Play', 1);
      INSERT INTO stream (id, realm_id, name, date_created, folder_id) VALUES (1, 1, 'one', 1, 1), (6, 1, 'six', 1, NULL);
      INSERT INTO subscription (user_id, stream_id) VALUES (1, 1), (2, 1), (2, 6);
      INSERT INTO direct_group (id, realm_id, member_key) VALUES (1, 1, '1,2'), (2, 1, '1');
      INSERT INTO direct_group_member (group_id, user_id) VALUES (1, 1), (1, 2), (2, 1);
      INSERT INTO message (id, realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent)
        VALUES (1, 1, 1, 1, 'T', 't', 'hello', '<p>hello</p>', 1);
      INSERT INTO message (id, realm_id, sender_id, direct_group_id, content, rendered_content, date_sent) VALUES (2, 1, 2, 1, 'psst', '<p>psst</p>', 2);
      INSERT INTO usermessage (user_id, message_id, flags) VALUES (1, 1, 1), (1, 2, 512), (2, 2, 513);
      INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code) VALUES (1, 2, 'smile', '1f604');
      INSERT INTO linkifier (id, realm_id, pattern, url_template) VALUES (1, 1, '#(?P<id>[0-9]+)', 'https://t/{id}'), (7, 1, 'PR(?P<id>[0-9]+)', 'https://p/{id}');
      INSERT INTO realm_emoji (id, realm_id, name, author_id, file_name) VALUES (1, 1, 'parrot', 1, '1.png'), (2, 1, 'cat', 2, '2.png');
      INSERT INTO custom_profile_field (id, realm_id, name, field_type) VALUES (1, 1, 'Phone', 1), (3, 1, 'Bio', 2);
      INSERT INTO custom_profile_field_value (user_id, field_id, value) VALUES (1, 1, '123'), (2, 3, 'hi');
      INSERT INTO attachment (id, realm_id, owner_id, path_id, file_name, size, create_time) VALUES (1, 1, 1, '1/ab/f.txt', 'f.txt', 3, 1), (4, 1, 2, '1/cd/g.txt', 'g.txt', 3, 1);
      INSERT INTO attachment_message (attachment_id, message_id) VALUES (1, 1), (4, 2);
      INSERT INTO client_device (id, user_id, created) VALUES (1, 1, 1), (2, 2, 1);
      INSERT INTO push_device (device_id, user_id, updated) VALUES (2, 2, 1);
      INSERT INTO invitation (id, realm_id, email, referrer_id, confirmation_key, created) VALUES (1, 1, 'x@example.com', 1, 'key1', 1);
      INSERT INTO invitation (id, realm_id, email, referrer_id, confirmation_key, created, registration_of) VALUES (2, 1, 'y@example.com', 1, 'key2', 1, 1);
      INSERT INTO scheduled_message (id, realm_id, sender_id, type, stream_id, topic, content, rendered_content, scheduled_timestamp, created)
        VALUES (1, 1, 1, 'stream', 1, 'T', 'later', '<p>later</p>', 9999999999, 1), (5, 1, 2, 'stream', 1, 'T', 'later too', '<p>later too</p>', 9999999999, 1);
      INSERT INTO attachment_scheduled_message (attachment_id, scheduled_message_id) VALUES (4, 5);
      INSERT INTO draft (id, user_id, content, timestamp) VALUES (1, 1, 'one', 1), (2, 1, 'two', 2), (8, 2, 'eight', 3);
    `);
    const rebuilt = ['realm', 'user', 'user_group', 'channel_folder', 'stream', 'direct_group', 'linkifier', 'realm_emoji', 'custom_profile_field', 'attachment', 'client_device', 'invitation', 'scheduled_message', 'draft'];
    const kept = [
      ...rebuilt,
      'user_group_member',
      'subscription',
      'direct_group_member',
      'message',
      'usermessage',
      'usermessage_cursor',
      'reaction',
      'custom_profile_field_value',
      'attachment_message',
      'attachment_scheduled_message',
      'push_device',
    ];
    // The columns each table had at version 6 (step 8 adds some: reminders, icons, avatars).
    const columns = Object.fromEntries(
      kept.map((table) => [table, (old.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((c) => `"${c.name}"`).join(', ')]),
    );
    const snapshot = (db: Db) => kept.map((table) => rows(db, `SELECT ${columns[table]} FROM ${table} ORDER BY 1, 2`));
    const before = snapshot(old);
    // Version 9: Notification Bot (a system bot) leaves the role group it was put in; a member's bot
    // with a system bot's name (it has an owner) stays.
    old.exec(`
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined, bot_type, bot_owner_id) VALUES
        (6, 3, 'notification-bot@example.com', 'notification-bot@example.com', 'Notification Bot', 'kn', 1, 1, NULL),
        (7, 3, 'welcome-bot@other.example.com', 'welcome-bot@other.example.com', 'Mine', 'kw', 1, 1, 5);
      INSERT INTO user_group (id, realm_id, name, is_system_group) VALUES (8, 3, 'role:members', 1);
      INSERT INTO user_group_member (group_id, user_id) VALUES (8, 5), (8, 6), (8, 7);
    `);
    old.close();

    const db = openDatabase(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    const fresh = openDatabase(':memory:');
    assert.deepEqual(schemaOf(db), schemaOf(fresh));
    fresh.close();
    // Each rebuilt table's sequence starts at its largest id, so no kept id is handed out again.
    const maxIds = Object.fromEntries(rebuilt.map((table) => [table, db.prepare(`SELECT max(id) FROM ${table}`).pluck().get()]));
    assert.deepEqual(Object.fromEntries(db.prepare(`SELECT name, seq FROM sqlite_sequence WHERE name <> 'message'`).all().map((r: any) => [r.name, r.seq])), maxIds);
    assert.deepEqual(db.prepare('SELECT user_id FROM user_group_member WHERE group_id = 8 ORDER BY user_id').pluck().all(), [5, 7]);
    db.exec('DELETE FROM user_group_member WHERE group_id = 8; DELETE FROM user_group WHERE id = 8; DELETE FROM user WHERE id IN (6, 7)');
    // Every row is kept, in the rebuilt tables and in those that refer to them (no cascade).
    assert.deepEqual(snapshot(db), before);
    // Deleting the newest row and adding one gives a new id, in the tables the API deletes from.
    db.prepare('DELETE FROM draft WHERE id = 8').run();
    assert.equal(db.prepare("INSERT INTO draft (user_id, content, timestamp) VALUES (2, 'nine', 4)").run().lastInsertRowid, 9);
    db.prepare('DELETE FROM linkifier WHERE id = 7').run();
    assert.equal(db.prepare("INSERT INTO linkifier (realm_id, pattern, url_template) VALUES (1, 'x', 'https://x')").run().lastInsertRowid, 8);
    db.prepare('DELETE FROM custom_profile_field_value WHERE field_id = 3').run();
    db.prepare('DELETE FROM custom_profile_field WHERE id = 3').run();
    assert.equal(db.prepare("INSERT INTO custom_profile_field (realm_id, name, field_type) VALUES (1, 'Other', 1)").run().lastInsertRowid, 4);
    // The usermessage view and triggers set aside during the rebuild of user work again.
    // (deactivating user 2 moves their cursor, which writes their implied row for message 1).
    assert.deepEqual(db.prepare('SELECT message_id FROM usermessage_pending WHERE user_id = 2').pluck().all(), [1]);
    db.prepare('UPDATE user SET is_active = 0 WHERE id = 2').run();
    assert.deepEqual(db.prepare('SELECT message_id, flags FROM usermessage WHERE user_id = 2 ORDER BY message_id').all(), [
      { message_id: 1, flags: 0 },
      { message_id: 2, flags: 513 },
    ]);
    assert.deepEqual(db.pragma('foreign_key_check'), []);
    db.close();
  });

  it('schemaStatement finds whole statements, triggers up to their END', () => {
    assert.match(schemaStatement('usermessage_cursor'), /^CREATE TABLE usermessage_cursor \([\s\S]*\);$/);
    const trigger = schemaStatement('usermessage_cursor_advance');
    assert.match(trigger, /^CREATE TRIGGER usermessage_cursor_advance /);
    assert.match(trigger, /\nEND;$/);
    assert.throws(() => schemaStatement('no_such_thing'), /schema.sql has no no_such_thing/);
  });
});

describe('usermessage_cursor triggers', () => {
  /** A fresh database with one organization, users 1–3 in channel 1, and user 1 sending. */
  function small(): Db {
    const db = openDatabase(':memory:');
    db.exec(`
      INSERT INTO realm (id, string_id, name, date_created) VALUES (1, '', 'Org', 0);
      INSERT INTO user (id, realm_id, email, delivery_email, full_name, api_key, date_joined) VALUES
        (1, 1, 'a@x', 'a@x', 'A', 'k1', 0), (2, 1, 'b@x', 'b@x', 'B', 'k2', 0), (3, 1, 'c@x', 'c@x', 'C', 'k3', 0);
      INSERT INTO stream (id, realm_id, name, date_created) VALUES (1, 1, 'one', 0), (2, 1, 'two', 0);
      INSERT INTO subscription (user_id, stream_id) VALUES (1, 1), (2, 1), (3, 1);
    `);
    return db;
  }
  const send = (db: Db, stream: number) =>
    Number(
      db
        .prepare("INSERT INTO message (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent) VALUES (1, 1, ?, 't', 't', 'x', '<p>x</p>', 0)")
        .run(stream).lastInsertRowid,
    );
  const written = (db: Db) => db.prepare('SELECT user_id, message_id, flags FROM usermessage ORDER BY user_id, message_id').all();

  it('an outer INSERT OR REPLACE cannot turn the written rows into plain ones', () => {
    const db = small();
    const m = send(db, 1);
    db.prepare('INSERT INTO usermessage (user_id, message_id, flags) VALUES (2, ?, 10)').run(m); // starred + mentioned
    // Re-subscribing through REPLACE fires the insert trigger, which writes user 2's implied rows.
    db.prepare('INSERT OR REPLACE INTO subscription (user_id, stream_id, color) VALUES (2, 1, ?)').run('#000000');
    assert.deepEqual(written(db), [{ user_id: 2, message_id: m, flags: 10 }]);
    db.close();
  });

  it('cursors only move forward', () => {
    const db = small();
    send(db, 1);
    db.prepare('UPDATE usermessage_cursor SET message_id = 1 WHERE user_id = 3').run();
    assert.throws(() => db.prepare('UPDATE usermessage_cursor SET message_id = 0 WHERE user_id = 3').run(), /usermessage_cursor only moves forward/);
    assert.deepEqual(written(db), [{ user_id: 3, message_id: 1, flags: 0 }]);
    db.close();
  });

  it('a first subscription starts the cursor at the newest message: no history is implied', () => {
    const db = small();
    const old = send(db, 2);
    db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (3, 2)').run();
    const later = send(db, 2);
    assert.deepEqual(db.prepare('SELECT user_id, message_id FROM usermessage_pending WHERE message_id IN (?, ?) ORDER BY message_id').all(old, later), [
      { user_id: 3, message_id: later },
    ]);
    db.close();
  });
});

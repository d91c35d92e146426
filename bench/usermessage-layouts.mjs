// What the per-user message rows cost at send time, in plain better-sqlite3 (no Parley code): the
// message insert, its full-text row and 50 per-user rows, 16 messages per commit, each in its own
// SAVEPOINT (as WriteBatch) or not, for several layouts of the usermessage table. Run by hand:
//   node bench/usermessage-layouts.mjs
// The finding it documents (bench/README.md): every index keyed by user first costs ~6 µs per row,
// because the 50 rows of a message land on 50 different pages: B-tree seeks, the savepoint's
// statement journal copying each page, and ~50 more pages written to the WAL at each commit.
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const MESSAGE = `CREATE TABLE message (id INTEGER PRIMARY KEY, realm_id INTEGER NOT NULL, sender_id INTEGER NOT NULL, stream_id INTEGER,
  direct_group_id INTEGER, topic TEXT NOT NULL DEFAULT '', topic_key TEXT NOT NULL DEFAULT '', content TEXT NOT NULL,
  rendered_content TEXT NOT NULL, date_sent INTEGER NOT NULL, has_link INTEGER NOT NULL DEFAULT 0, client TEXT NOT NULL DEFAULT 'API');
CREATE INDEX message_stream_topic ON message(stream_id, topic_key, id) WHERE stream_id IS NOT NULL;
CREATE INDEX message_stream ON message(stream_id, id) WHERE stream_id IS NOT NULL;
CREATE INDEX message_sender ON message(sender_id, id);
CREATE VIRTUAL TABLE message_fts USING fts5(topic, content, content='message', content_rowid='id', tokenize='unicode61 remove_diacritics 2');`;

const RARE_FLAGS = `CREATE INDEX usermessage_starred ON usermessage(user_id, message_id) WHERE (flags & 2) <> 0;
CREATE INDEX usermessage_mentioned ON usermessage(user_id, message_id) WHERE (flags & 120) <> 0;
CREATE INDEX usermessage_private ON usermessage(user_id, message_id) WHERE (flags & 512) <> 0;`;

const LAYOUTS = {
  'schema.sql today: PK (user, message) + (message, user) + unread (user, message)': `CREATE TABLE usermessage (user_id INTEGER NOT NULL, message_id INTEGER NOT NULL,
    flags INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (user_id, message_id)) WITHOUT ROWID;
    CREATE INDEX usermessage_message ON usermessage(message_id, user_id);
    CREATE INDEX usermessage_unread ON usermessage(user_id, message_id) WHERE (flags & 1) = 0; ${RARE_FLAGS}`,
  'PK (user, message) + (message, user), no unread index': `CREATE TABLE usermessage (user_id INTEGER NOT NULL, message_id INTEGER NOT NULL,
    flags INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (user_id, message_id)) WITHOUT ROWID;
    CREATE INDEX usermessage_message ON usermessage(message_id, user_id); ${RARE_FLAGS}`,
  'PK (message, user) + unread (user, message)': `CREATE TABLE usermessage (message_id INTEGER NOT NULL, user_id INTEGER NOT NULL,
    flags INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (message_id, user_id)) WITHOUT ROWID;
    CREATE INDEX usermessage_unread ON usermessage(user_id, message_id) WHERE (flags & 1) = 0; ${RARE_FLAGS}`,
  'PK (message, user) only, rare-flag indexes': `CREATE TABLE usermessage (message_id INTEGER NOT NULL, user_id INTEGER NOT NULL,
    flags INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (message_id, user_id)) WITHOUT ROWID; ${RARE_FLAGS}`,
};

function run(name, ddl, { savepoints }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-layouts-'));
  const db = new Database(path.join(dir, 'x.db'));
  // Parley's pragmas (src/db/open.ts).
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -16384');
  db.pragma('temp_store = MEMORY');
  db.pragma('wal_autocheckpoint = 10000');
  db.exec(MESSAGE + ddl);
  const all = JSON.stringify(Array.from({ length: 50 }, (_, i) => i + 1));
  const insM = db.prepare(`INSERT INTO message (realm_id, sender_id, stream_id, topic, topic_key, content, rendered_content, date_sent) VALUES (1, 1, 1, ?, ?, ?, ?, 0)`);
  const insF = db.prepare('INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)');
  const insU = db.prepare('INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) SELECT value, ?, 0 FROM json_each(?)');
  const read = db.prepare('UPDATE usermessage SET flags = flags | 1 WHERE user_id = 1 AND message_id = ?');
  const N = 4000;
  let commitMs = 0;
  const t0 = performance.now();
  for (let i = 0; i < N; i += 16) {
    db.exec('BEGIN');
    for (let j = 0; j < 16; j++) {
      if (savepoints) db.exec('SAVEPOINT w');
      const content = `hello from client ${j}, message ${i}`;
      const id = Number(insM.run(`topic ${j % 4}`, `topic ${j % 4}`, content, `<p>${content}</p>`).lastInsertRowid);
      insF.run(id, `topic ${j % 4}`, content);
      insU.run(id, all);
      read.run(id); // the sender has read it
      if (savepoints) db.exec('RELEASE w');
    }
    const c = performance.now();
    db.exec('COMMIT');
    commitMs += performance.now() - c;
  }
  const ms = performance.now() - t0;
  console.log(`${((ms / N) * 1000).toFixed(0).padStart(5)} µs/message (commit ${((commitMs / N) * 1000).toFixed(0).padStart(3)})  ${savepoints ? 'savepoints   ' : 'no savepoints'}  ${name}`);
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

console.log(`4,000 messages to 50 users, 16 per commit; load average ${os.loadavg()[0].toFixed(2)}`);
for (const savepoints of [true, false]) for (const [name, ddl] of Object.entries(LAYOUTS)) run(name, ddl, { savepoints });

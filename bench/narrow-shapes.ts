// Per-narrow query timings on a large database, in process (no HTTP): each narrow's 100 newest
// messages as GET /messages asks for them, for a user who received most of them. Run by hand:
//   node --import tsx bench/narrow-shapes.ts        (BENCH_MESSAGES, default 1,000,000)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { FLAG, narrowToSql, type NarrowTerm } from '../src/lib/narrow';
import { messageWindow } from '../src/lib/fetch';

const count = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-narrows-'));
const config = configFromEnv({});
config.dataDir = dir;
const app = createApp(config);
const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
const others = [1, 2, 3, 4].map((i) => doCreateUser(app, { realmId, email: `u${i}@bench.example.com`, password: null, fullName: `U${i}`, role: ROLE.MEMBER, acting: null }).userId);
const me = findUserById(app.db, realmId, owner.userId) as UserRow;
const channels = ['big', 'mid', 'small'].map((name) => doCreateChannel(app, me, realmId, { name }).id);
const sub = app.db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (?, ?)');
for (const c of channels) for (const u of [me.id, ...others]) sub.run(u, c);
app.batch.commit();
const dg = Number(app.db.prepare("INSERT INTO direct_group (realm_id, member_key) VALUES (?, ?)").run(realmId, [me.id, others[0]].sort((a, b) => a - b).join(',')).lastInsertRowid);
app.db.prepare('INSERT INTO direct_group_member (group_id, user_id) VALUES (?, ?), (?, ?)').run(dg, me.id, dg, others[0]);
const insMsg = app.db.prepare(
  'INSERT INTO message (realm_id, sender_id, stream_id, direct_group_id, topic, topic_key, content, rendered_content, date_sent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
);
const insFts = app.db.prepare('INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)');
const insUm = app.db.prepare('INSERT INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
const t0 = Date.now();
for (let done = 0; done < count; done += 50_000) {
  app.db.transaction(() => {
    for (let i = done; i < Math.min(count, done + 50_000); i++) {
      const dm = i % 100 === 0; // 1 % direct messages
      const stream = dm ? null : channels[i % 10 < 7 ? 0 : i % 10 < 9 ? 1 : 2];
      const topic = dm ? '' : `topic ${i % 50}`;
      const content = `message ${i} ${i % 997 === 0 ? 'needle' : 'hay'}`;
      const id = Number(insMsg.run(realmId, others[i % 4], stream, dm ? dg : null, topic, topic, content, `<p>${content}</p>`, 1_700_000_000 + i).lastInsertRowid);
      insFts.run(id, topic, content);
      // The reader has read all but the newest 2 %; 0.1 % starred, 0.5 % mentioned.
      let flags = i < count * 0.98 ? FLAG.read : 0;
      if (dm) flags |= FLAG.is_private;
      if (i % 1000 === 1) flags |= FLAG.starred;
      if (i % 200 === 3) flags |= FLAG.mentioned;
      insUm.run(me.id, id, flags);
    }
  })();
}
app.db.prepare('UPDATE usermessage_cursor SET message_id = (SELECT max(id) FROM message) WHERE user_id = ?').run(me.id);
console.log(`${count} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s; load ${os.loadavg()[0].toFixed(2)}`);

const shapes: [string, NarrowTerm[]][] = [
  ['no narrow', []],
  ['channel (big)', [{ operator: 'channel', operand: channels[0], negated: false }]],
  ['channel (small) + topic', [{ operator: 'channel', operand: channels[2], negated: false }, { operator: 'topic', operand: 'topic 9', negated: false }]],
  ['topic (no channel)', [{ operator: 'topic', operand: 'topic 9', negated: false }]],
  ['channels:public', [{ operator: 'channels', operand: 'public', negated: false }]],
  ['dm-including', [{ operator: 'dm-including', operand: others[0], negated: false }]],
  ['is:starred + search', [{ operator: 'is', operand: 'starred', negated: false }, { operator: 'search', operand: 'hay', negated: false }]],
  ['is:dm', [{ operator: 'is', operand: 'dm', negated: false }]],
  ['dm with one user', [{ operator: 'dm', operand: [others[0]], negated: false }]],
  ['is:starred', [{ operator: 'is', operand: 'starred', negated: false }]],
  ['is:mentioned', [{ operator: 'is', operand: 'mentioned', negated: false }]],
  ['is:unread', [{ operator: 'is', operand: 'unread', negated: false }]],
  ['sender', [{ operator: 'sender', operand: others[1], negated: false }]],
  ['search needle', [{ operator: 'search', operand: 'needle', negated: false }]],
  ['in:home', [{ operator: 'in', operand: 'home', negated: false }]],
];
for (const [label, terms] of shapes) {
  const times: number[] = [];
  let n = 0;
  for (let i = 0; i < 21; i++) {
    app.batch.begin();
    const s = performance.now();
    const w = messageWindow(app, me, narrowToSql(app.db, me, terms), 'newest', true, 100, 0);
    times.push(performance.now() - s);
    n = w.rows.length;
    app.batch.commit();
  }
  times.sort((a, b) => a - b);
  const fu = (() => {
    app.batch.begin();
    const s = performance.now();
    messageWindow(app, me, narrowToSql(app.db, me, terms), 'first_unread', true, 50, 50);
    const ms = performance.now() - s;
    app.batch.commit();
    return ms;
  })();
  console.log(`${label.padEnd(24)} ${String(n).padStart(3)} rows  newest p50 ${times[10].toFixed(2).padStart(7)} ms   first_unread ${fu.toFixed(2).padStart(7)} ms`);
}
app.close();
fs.rmSync(dir, { recursive: true, force: true });

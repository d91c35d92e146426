// POST /messages without HTTP: doSendMessage in batches of 16 per commit (as 16 concurrent clients
// share a turn), to a channel of 50 subscribers, timing the sends and the commits apart. Run by hand:
//   node --import tsx bench/send-inprocess.ts          N=4000 messages
//   DROP=usermessage_unread node --import tsx bench/send-inprocess.ts   (what an index costs)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSendMessage } from '../src/actions/messages';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-send-'));
const config = configFromEnv({});
config.dataDir = dir;
const app = createApp(config);
const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
const ids = [owner.userId];
for (let i = 1; i < 50; i++) {
  ids.push(doCreateUser(app, { realmId, email: `user${i}@bench.example.com`, password: null, fullName: `User ${i}`, role: ROLE.MEMBER, acting: null }).userId);
}
const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
const stream = doCreateChannel(app, ownerRow, realmId, { name: 'bench' });
const sub = app.db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (?, ?)');
app.batch.write(() => {
  for (const id of ids) if (id !== owner.userId) sub.run(id, stream.id);
});
app.batch.commit();
if (process.env.DROP) for (const ix of process.env.DROP.split(',')) app.db.exec(`DROP INDEX ${ix}`);

const N = Number(process.env.N ?? 4000);
let send = 0;
let commit = 0;
const t0 = performance.now();
for (let i = 0; i < N; i += 16) {
  const a = performance.now();
  for (let j = 0; j < 16; j++) {
    doSendMessage(app, ownerRow, { to: { kind: 'channel', streamId: stream.id, topic: `topic ${j % 4}` }, content: `hello from client ${j}, message ${i}` });
  }
  const b = performance.now();
  app.batch.commit();
  commit += performance.now() - b;
  send += b - a;
}
const total = performance.now() - t0;
const load = os.loadavg()[0].toFixed(2);
console.log(
  `${N} messages in process (50 subscribers, 16 per commit): ${((N / total) * 1000).toFixed(0)} messages/s; ` +
    `per message: send ${((send / N) * 1000).toFixed(0)} µs, commit ${((commit / N) * 1000).toFixed(0)} µs (load average ${load})`,
);
app.close();
fs.rmSync(dir, { recursive: true, force: true });

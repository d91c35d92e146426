// A year of a small team, compressed (issue 16): how much disk Parley's database takes. Run by hand:
// `node --import tsx bench/soak-year.ts [--days 365]`; prints numbers, never part of the tests.
//
// The soak of bench/soak.ts measures a busy server in real time; this one measures what a year of
// ordinary use leaves on disk. A team of 20 (by default) in 6 channels (each member in 4), on a fake
// clock that walks through the year day by day: on each working day (5 of 7) every member sends about
// --messages-per-day messages between 9:00 and 18:00, 70 % to a channel topic (a new topic every ~15
// messages of a channel) and 30 % direct (1:1 or a group of 3); lengths as chat (most under 150
// characters, a quarter up to 500, one in twenty a long one with a code block), words drawn from a
// 3,000-word vocabulary. A quarter of the messages get a reaction, one in twenty is edited once (its
// edit history is kept), and at the end of each day every member reads everything (which writes the
// per-user rows that stay implied until read). Everything goes through Parley's actions in-process
// (the same code the API runs, without HTTP), committed in small batches as the server would.
// Uploads are not simulated: their files take what they take (uploads/), deleted with their messages.
// The database maintenance of a real server (src/db/maintenance.ts) runs after every simulated day.
//
// Options: --days N (365) --users N (20) --channels N (6) --messages-per-day N (40, per member and
//          working day) --seed N (1)
// Prints: rows and database size at the end of each simulated month, then the totals, bytes per
// message, and the size a year takes (scaled from the days run when --days is less than 365).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp, type App } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSubscribe } from '../src/actions/subscriptions';
import { doReaction, doSendMessage } from '../src/actions/messages';
import { doEditMessage } from '../src/actions/message-edit';
import { doMarkAllAsRead } from '../src/actions/message-extras';
import { runMaintenance } from '../src/db/maintenance';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';

const { values: opt } = parseArgs({
  options: {
    days: { type: 'string', default: '365' },
    users: { type: 'string', default: '20' },
    channels: { type: 'string', default: '6' },
    'messages-per-day': { type: 'string', default: '40' },
    seed: { type: 'string', default: '1' },
  },
});
const DAYS = Number(opt.days);
const USERS = Number(opt.users);
const CHANNELS = Number(opt.channels);
const PER_DAY = Number(opt['messages-per-day']);

// A small deterministic PRNG (mulberry32), so runs compare.
let state = Number(opt.seed) >>> 0;
function rand(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

// Words of 2-10 letters, some more frequent than others (Zipf-like: index drawn as rand()^2).
const VOCABULARY = Array.from({ length: 3000 }, (_, i) => {
  let w = '';
  const len = 2 + (i % 9);
  let x = i * 2654435761;
  for (let j = 0; j < len; j++) {
    w += 'etaoinshrdlucmfwypvbgkjqxz'[Math.abs(x) % 26];
    x = Math.imul(x ^ (x >>> 13), 1274126177) + j;
  }
  return w;
});
const word = () => VOCABULARY[Math.floor(rand() * rand() * VOCABULARY.length)];
function sentence(chars: number): string {
  const words: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = word();
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}
/** Chat-like content: mostly short, sometimes a paragraph, now and then code or a link. */
function content(): string {
  const r = rand();
  if (r < 0.7) return sentence(15 + Math.floor(rand() * 135));
  if (r < 0.95) return sentence(150 + Math.floor(rand() * 350)) + (rand() < 0.2 ? ` https://example.com/${word()}/${word()}` : '');
  return `${sentence(200)}\n\n\`\`\`\n${Array.from({ length: 10 + Math.floor(rand() * 30) }, () => `  ${sentence(40)};`).join('\n')}\n\`\`\`\n${sentence(100)}`;
}
const EMOJI = ['thumbs_up', 'heart', 'smile', 'tada', 'eyes', 'check', 'joy', 'rocket'];

interface Team {
  app: App;
  dir: string;
  clock: { now: number };
  users: UserRow[];
  channels: { id: number; members: number[]; topic: string; left: number }[];
}

function seed(): Team {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-year-'));
  const config = configFromEnv({});
  config.dataDir = dir;
  const clock = { now: Date.UTC(2025, 0, 1) / 1000 };
  const app = createApp(config, { clock: { nowMs: () => clock.now * 1000 } });
  const { realmId, owner } = doCreateRealm(app, { name: 'Team', ownerEmail: 'owner@team.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  app.batch.commit();
  const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
  const users: UserRow[] = [ownerRow];
  for (let i = 1; i < USERS; i++) {
    const u = doCreateUser(app, { realmId, email: `member${i}@team.example.com`, password: null, fullName: `Member ${i}`, role: ROLE.MEMBER, acting: null });
    app.batch.commit();
    users.push(findUserById(app.db, realmId, u.userId) as UserRow);
  }
  const channels: Team['channels'] = [];
  for (let c = 0; c < CHANNELS; c++) {
    const name = `channel ${c}`;
    const id = doCreateChannel(app, ownerRow, realmId, { name }).id;
    app.batch.commit();
    const members = users.filter((_, i) => [c, c + 1, c + 2, c + 3].some((k) => i % CHANNELS === k % CHANNELS));
    doSubscribe(app, ownerRow, { streams: [{ name }], principals: members, authorizationErrorsFatal: true, channelSpec: {} });
    app.batch.commit();
    channels.push({ id, members: members.map((u) => u.id), topic: word(), left: 15 });
  }
  return { app, dir, clock, users, channels };
}

const fileSize = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const count = (app: App, table: string) => app.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function report(team: Team, day: number): { live: number; file: number } {
  const { app } = team;
  const pageSize = app.db.pragma('page_size', { simple: true }) as number;
  const pages = app.db.pragma('page_count', { simple: true }) as number;
  const free = app.db.pragma('freelist_count', { simple: true }) as number;
  const file = fileSize(path.join(team.dir, 'parley.db'));
  const live = (pages - free) * pageSize;
  console.log(
    `day ${String(day).padStart(3)}: messages ${count(app, 'message')}, usermessage rows ${count(app, 'usermessage')}, reactions ${count(app, 'reaction')}; ` +
      `database ${mb(file)} MB (${mb(live)} MB in use), WAL ${mb(fileSize(path.join(team.dir, 'parley.db-wal')))} MB`,
  );
  return { live, file };
}

function simulateDay(team: Team, day: number): number {
  const { app, clock, users, channels } = team;
  const dayStart = Date.UTC(2025, 0, 1) / 1000 + day * 86_400;
  const weekday = (new Date(dayStart * 1000).getUTCDay() + 6) % 7; // Monday 0
  if (weekday >= 5) return 0;
  // The day's messages, each at a random time between 9:00 and 18:00, in time order.
  const sends: { at: number; user: UserRow }[] = [];
  for (const user of users) {
    const n = Math.max(0, Math.round(PER_DAY * (0.5 + rand())));
    for (let i = 0; i < n; i++) sends.push({ at: dayStart + 9 * 3600 + Math.floor(rand() * 9 * 3600), user });
  }
  sends.sort((a, b) => a.at - b.at);
  const sent: { id: number; sender: UserRow; recipients: number[] }[] = [];
  let writes = 0;
  const commitSometimes = () => {
    if (++writes % 50 === 0) app.batch.commit();
  };
  for (const s of sends) {
    clock.now = s.at;
    const mine = channels.filter((c) => c.members.includes(s.user.id));
    let id: number;
    let recipients: number[];
    if (rand() < 0.7 && mine.length > 0) {
      const c = pick(mine);
      if (--c.left <= 0) {
        c.topic = `${word()} ${word()}`;
        c.left = 5 + Math.floor(rand() * 20);
      }
      id = doSendMessage(app, s.user, { to: { kind: 'channel', streamId: c.id, topic: c.topic }, content: content(), readBySender: true }).id;
      recipients = c.members;
    } else {
      const others = users.filter((u) => u.id !== s.user.id);
      const to = rand() < 0.8 ? [pick(others).id] : [...new Set([pick(others).id, pick(others).id])];
      id = doSendMessage(app, s.user, { to: { kind: 'direct', userIds: to }, content: content(), readBySender: true }).id;
      recipients = [s.user.id, ...to];
    }
    sent.push({ id, sender: s.user, recipients });
    commitSometimes();
    // Reactions come from someone who got the message; edits from its sender, soon after.
    if (rand() < 0.25) {
      const reactorId = pick(recipients);
      const reactor = users.find((u) => u.id === reactorId) as UserRow;
      try {
        doReaction(app, reactor, id, { emojiName: pick(EMOJI) }, 'add');
      } catch {
        /* the same emoji twice, or an unknown name: skipped */
      }
      commitSometimes();
    }
    if (rand() < 0.05) {
      clock.now += 30;
      doEditMessage(app, s.user, id, { content: content(), propagateMode: 'change_one' });
      commitSometimes();
    }
  }
  app.batch.commit();
  // Evening: everyone has read everything.
  clock.now = dayStart + 20 * 3600;
  for (const user of users) {
    doMarkAllAsRead(app, user);
    app.batch.commit();
  }
  return sends.length;
}

function main(): void {
  const started = Date.now();
  const team = seed();
  console.log(`a team of ${USERS}, ${CHANNELS} channels, about ${PER_DAY} messages per member and working day, ${DAYS} days`);
  const startSize = report(team, 0);
  let messages = 0;
  for (let day = 0; day < DAYS; day++) {
    messages += simulateDay(team, day);
    team.app.batch.commit();
    runMaintenance(team.app.db, { idle: true });
    if ((day + 1) % 30 === 0) report(team, day + 1);
  }
  runMaintenance(team.app.db, { idle: true, maxPages: Infinity });
  const end = report(team, DAYS);
  const perMessage = (end.live - startSize.live) / Math.max(1, messages);
  const yearScale = 365 / DAYS;
  console.log(
    `\n${messages} messages in ${DAYS} days: ${mb(end.live - startSize.live)} MB of database, ${Math.round(perMessage)} bytes per message ` +
      `(all included: message, search index, per-user rows, reactions, edit history)`,
  );
  console.log(`a year: about ${mb(startSize.live + (end.live - startSize.live) * yearScale)} MB${DAYS === 365 ? '' : ` (scaled from ${DAYS} days)`}`);
  console.log(`ran in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  team.app.close();
  fs.rmSync(team.dir, { recursive: true, force: true });
}

main();

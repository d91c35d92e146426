// Data in and out (issue 18): `parley export` and `parley import` of an organization of 20 people and
// 10 channels, everyone subscribed to every channel, holding 1,000,000 messages (so about 20,000,000
// per-user message rows in Zulip's format). Each command runs as its own process of the built bundle
// (`node dist/parley.cjs`, what the executable runs: build first with `npm run build`), timed from
// start to exit, its peak RSS read by /usr/bin/time (the kernel's maxrss of the child).
//   node --import tsx bench/data-move.ts --seed-only        (seeds the cached organization, unlocked)
//   flock /tmp/bench.lock node --import tsx bench/data-move.ts [--messages 1000000] [--skip-import] [--rounds 1] [--tree DIR[,DIR...]]
// --tree: the Parley checkouts whose dist/parley.cjs runs (default: this one); with two or more (before
// and after), each round runs every tree's export (then import), the order reversed every other
// round, and the medians are printed side by side: noise from the rest of the machine falls on both.
// Goals (issue 18): export >= 20,000 messages/s, import >= 10,000 messages/s, peak RSS < 300 MB each.
//
// Seeding: 2,000 messages are sent with the real actions (doSendMessage: a mix of formatting, about
// 1 % direct messages, reactions, most rows read, some starred), every user's rows written out, and
// then the whole template is copied by SQL, ids and dates shifted, until the history holds --messages
// messages, with every per-user row and reaction copied alike. The full-text index is rebuilt last.
// Cached under .cache/bench-data-move-v<SEED_VERSION>-<messages>.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doSubscribe } from '../src/actions/subscriptions';
import { doSendMessage } from '../src/actions/messages';
import { materializeUserMessages } from '../src/lib/user-messages';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { prng } from '../test/helpers/prng';

const root = path.join(__dirname, '..');
const SEED_VERSION = 1;
const USERS = 20;
const CHANNELS = 10;
const TEMPLATE = 2000;
const DAY = 86_400;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
const MESSAGES = Number(arg('messages', '1000000'));

const WORDS = ['deploy', 'review', 'the build', 'lunch', 'release notes', 'the outage', 'design doc', 'tests', 'metrics', 'the migration'];

function content(r: () => number, i: number): string {
  const w = () => WORDS[Math.floor(r() * WORDS.length)];
  switch (i % 8) {
    case 0:
      return `Did anyone look at **${w()}**? Message ${i}.`;
    case 1:
      return `See \`${w()}\` and https://example.com/${i} for ${w()}.`;
    case 2:
      return `Quick list:\n- ${w()}\n- ${w()}\n- ${w()} (${i})`;
    case 3:
      return `\`\`\`\nmake ${i}\n\`\`\`\nthat fixed ${w()} :thumbs_up:`;
    case 4:
      return `> ${w()} is done\n\nthanks! ${i}`;
    case 5:
      return `@**User 3** can you take ${w()}? (${i})`;
    default:
      return `ok, ${w()} then ${w()} after ${i}`;
  }
}

function seed(dir: string): void {
  const r = prng(18);
  const start = Math.floor(Date.now() / 1000) - 2 * 365 * DAY;
  let now = start * 1000;
  const app = createApp({ ...configFromEnv({}), dataDir: dir }, { clock: { nowMs: () => now }, logSink: null });
  const t0 = Date.now();
  const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  const ids = [owner.userId];
  app.batch.write(() => {
    for (let i = 1; i < USERS; i++) {
      ids.push(doCreateUser(app, { realmId, email: `user${i}@bench.example.com`, password: null, fullName: `User ${i}`, role: ROLE.MEMBER, acting: null }).userId);
    }
  });
  app.batch.commit();
  const rows = ids.map((id) => findUserById(app.db, realmId, id) as UserRow);
  const channels: number[] = [];
  for (let c = 0; c < CHANNELS; c++) {
    doSubscribe(app, rows[0], {
      streams: [{ name: `channel ${c}`, description: `Channel number ${c}` }],
      principals: rows,
      authorizationErrorsFatal: true,
      channelSpec: { inviteOnly: c === CHANNELS - 1 },
    });
    app.batch.commit();
    channels.push((app.db.prepare('SELECT id FROM stream WHERE name = ?').get(`channel ${c}`) as { id: number }).id);
  }
  // The template: TEMPLATE messages a minute apart.
  const first = (app.db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM message').get() as { id: number }).id;
  for (let i = 0; i < TEMPLATE; i += 500) {
    app.batch.write(() => {
      for (let j = i; j < Math.min(TEMPLATE, i + 500); j++) {
        now += 60_000;
        const sender = rows[Math.floor(r() * USERS)];
        if (r() < 0.01) {
          const other = rows[(rows.indexOf(sender) + 1 + Math.floor(r() * (USERS - 1))) % USERS];
          doSendMessage(app, sender, { to: { kind: 'direct', userIds: [sender.id, other.id] }, content: content(r, j) });
        } else {
          const topic = `topic ${Math.floor(1 / (r() * 0.95 + 0.05)) - 1}`;
          doSendMessage(app, sender, { to: { kind: 'channel', streamId: channels[Math.floor(r() * CHANNELS)], topic }, content: content(r, j) });
        }
      }
    });
    app.batch.commit();
  }
  const last = (app.db.prepare('SELECT max(id) AS id FROM message').get() as { id: number }).id;
  const span = last - first + 1;
  const db = app.db;
  db.transaction(() => {
    for (const id of ids) materializeUserMessages(db, id);
    // Most of the history is read; one message in 50 starred; reactions on one in ten.
    db.prepare('UPDATE usermessage SET flags = flags | 1 WHERE message_id BETWEEN ? AND ? AND (message_id % 10) <> 0').run(first, last);
    db.prepare('UPDATE usermessage SET flags = flags | 2 WHERE message_id BETWEEN ? AND ? AND ((message_id + user_id) % 50) = 0').run(first, last);
    const react = db.prepare('INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code) VALUES (?, ?, ?, ?)');
    for (let m = first; m <= last; m += 10) {
      react.run(m, ids[m % USERS], 'thumbs_up', '1f44d');
      react.run(m, ids[(m + 7) % USERS], 'heart', '2764');
    }
  })();
  // Copies of the template until MESSAGES: ids shifted by span, dates by span minutes.
  const copies = Math.ceil(MESSAGES / span) - 1;
  const cols = 'realm_id, sender_id, stream_id, direct_group_id, topic, topic_key, content, rendered_content, last_edit_time, last_moved_time, edit_history, has_link, has_image, has_attachment, client';
  const copyMessages = db.prepare(
    `INSERT INTO message (id, date_sent, ${cols}) SELECT id + @shift, date_sent + @shift * 60, ${cols} FROM message WHERE id BETWEEN @first AND @last AND id + @shift <= @max`,
  );
  const copyRows = db.prepare('INSERT INTO usermessage (user_id, message_id, flags) SELECT user_id, message_id + @shift, flags FROM usermessage WHERE message_id BETWEEN @first AND @last AND message_id + @shift <= @max');
  const copyReactions = db.prepare(
    'INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code, reaction_type) SELECT message_id + @shift, user_id, emoji_name, emoji_code, reaction_type FROM reaction WHERE message_id BETWEEN @first AND @last AND message_id + @shift <= @max',
  );
  const max = first + MESSAGES - 1;
  for (let k = 1; k <= copies; k++) {
    const p = { shift: k * span, first, last, max };
    db.transaction(() => {
      copyMessages.run(p);
      copyRows.run(p);
      copyReactions.run(p);
    })();
    if (k % 20 === 0) process.stderr.write(`\rseeded ${Math.min(max, last + k * span) - first + 1} / ${MESSAGES} messages (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  // Every row is written: the cursors stand at the newest message, so none is implied.
  db.prepare('UPDATE usermessage_cursor SET message_id = (SELECT max(id) FROM message)').run();
  process.stderr.write('\rrebuilding the full-text index…                         ');
  db.prepare("INSERT INTO message_fts (message_fts) VALUES ('rebuild')").run();
  app.close();
  process.stderr.write(`\rseeded ${MESSAGES} messages in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
}

/** The seeded data dir from the cache, seeding it first if needed. */
function seeded(): string {
  const dir = path.join(root, '.cache', `bench-data-move-v${SEED_VERSION}-${MESSAGES}`);
  if (fs.existsSync(path.join(dir, 'seeded'))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  seed(tmp);
  fs.writeFileSync(path.join(tmp, 'seeded'), '');
  fs.renameSync(tmp, dir);
  return dir;
}

interface Run {
  seconds: number;
  /** User + system CPU seconds of the child (all its threads: zlib's too). */
  cpu: number;
  peakMb: number;
  status: number | null;
  stderr: string;
  stdout: string;
}

/** Runs `node TREE/dist/parley.cjs ARGS` under /usr/bin/time: wall time, CPU time and the child's peak RSS. */
function timed(tree: string, args: string[]): Run {
  const t0 = process.hrtime.bigint();
  const res = spawnSync('/usr/bin/time', ['-f', 'PEAK_RSS_KB %M CPU_S %U %S', process.execPath, path.join(tree, 'dist/parley.cjs'), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PARLEY_LOG_LEVEL: 'warn' },
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const m = /PEAK_RSS_KB (\d+) CPU_S ([\d.]+) ([\d.]+)/.exec(res.stderr);
  return {
    seconds,
    cpu: m ? Number(m[2]) + Number(m[3]) : NaN,
    peakMb: m ? Number(m[1]) / 1024 : NaN,
    status: res.status,
    stderr: res.stderr.replace(/PEAK_RSS_KB .*\n?/, ''),
    stdout: res.stdout,
  };
}

function counts(dir: string): { messages: number; rows: number } {
  // Counted by a throwaway reader of the file, not by the commands measured.
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(path.join(dir, 'parley.db'), { readonly: true });
  const messages = (db.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n;
  const rows = (db.prepare('SELECT count(*) AS n FROM usermessage').get() as { n: number }).n;
  db.close();
  return { messages, rows };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => Math.round(n).toLocaleString('en');

function main(): void {
  const trees = arg('tree', root).split(',').map((t) => path.resolve(t));
  for (const tree of trees) if (!fs.existsSync(path.join(tree, 'dist/parley.cjs'))) throw new Error(`${tree}/dist/parley.cjs is missing: run \`npm run build\` there first`);
  const rounds = Number(arg('rounds', '1'));
  const dir = seeded();
  if (process.argv.includes('--seed-only')) return;
  const seededCounts = counts(dir);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-move-'));
  const results = trees.map(() => ({ export: [] as Run[], import: [] as Run[], size: 0, imported: null as null | { messages: number; rows: number } }));
  const skipImport = process.argv.includes('--skip-import');
  try {
    console.log(`organization: ${USERS} users, ${CHANNELS} channels (everyone in each), ${fmt(seededCounts.messages)} messages, ${fmt(seededCounts.rows)} per-user rows`);
    const load0 = os.loadavg()[0];
    for (let r = 0; r < rounds; r++) {
      const order = trees.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const tarball = path.join(work, `export-${i}.tar.gz`);
        fs.rmSync(tarball, { force: true });
        const ex = timed(trees[i], ['export', '--data-dir', dir, tarball]);
        if (ex.status !== 0) throw new Error(`export (${trees[i]}) failed (${ex.status}): ${ex.stderr}`);
        results[i].export.push(ex);
        results[i].size = fs.statSync(tarball).size;
        if (skipImport) continue;
        const target = path.join(work, `imported-${i}`);
        fs.rmSync(target, { recursive: true, force: true });
        const im = timed(trees[i], ['import', '--data-dir', target, tarball]);
        if (im.status !== 0) {
          console.log(`import (${trees[i]}): failed (exit ${im.status}): ${im.stderr.trim().split('\n').slice(-3).join(' / ')}`);
          process.exitCode = 1;
          continue;
        }
        results[i].import.push(im);
        results[i].imported = counts(target);
        fs.rmSync(target, { recursive: true, force: true });
      }
    }
    console.log(`load average ${load0.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end; ${rounds} round(s), medians`);
    trees.forEach((tree, i) => {
      const res = results[i];
      const label = trees.length > 1 ? `${path.basename(tree)}: ` : '';
      const ex = res.export;
      const exRate = seededCounts.messages / median(ex.map((x) => x.seconds));
      const exPeak = Math.max(...ex.map((x) => x.peakMb));
      console.log(
        `${label}export: ${median(ex.map((x) => x.seconds)).toFixed(1)} s (CPU ${median(ex.map((x) => x.cpu)).toFixed(1)} s), ${fmt(exRate)} messages/s (goal >= 20,000: ${exRate >= 20_000 ? 'met' : 'missed'}), ` +
          `peak RSS ${exPeak.toFixed(0)} MB (goal < 300: ${exPeak < 300 ? 'met' : 'missed'}), tarball ${(res.size / 1e6).toFixed(0)} MB`,
      );
      if (res.import.length === 0 || !res.imported) return;
      const im = res.import;
      const imRate = res.imported.messages / median(im.map((x) => x.seconds));
      const imPeak = Math.max(...im.map((x) => x.peakMb));
      console.log(
        `${label}import: ${median(im.map((x) => x.seconds)).toFixed(1)} s (CPU ${median(im.map((x) => x.cpu)).toFixed(1)} s), ${fmt(imRate)} messages/s (goal >= 10,000: ${imRate >= 10_000 ? 'met' : 'missed'}), ` +
          `peak RSS ${imPeak.toFixed(0)} MB (goal < 300: ${imPeak < 300 ? 'met' : 'missed'}); ${fmt(res.imported.messages)} messages, ${fmt(res.imported.rows)} stored per-user rows`,
      );
    });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();

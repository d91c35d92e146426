// First load (issue 17): what the web client and the Zulip mobile app do when they open, timed
// against a real server process. Run by hand:
//   node --import tsx bench/register.ts --seed-only     (seeds the cached organization, ~3 min, unlocked)
//   flock /tmp/bench.lock node --import tsx bench/register.ts [--runs 30] [--warmup 5] [--tree DIR[,DIR...]]
// --tree: the Parley checkout(s) whose src/main.ts serves (default: this one). With two or more,
// one server per tree runs on its own copy of the same data and the requests alternate between them
// (before/after in one run: noise from the rest of the machine falls on both alike). Besides the
// latencies it prints the server's CPU time per request (from /proc, 10 ms ticks summed over the
// runs), which a busy machine inflates far less than the wall-clock times.
//
// The organization: 1,000 users (a few bots, guests and deactivated users), 200 channels whose sizes
// fall off as in real organizations (the ten largest have everyone), 100,000 messages over a year,
// channels and topics weighted by size, 5 % direct messages (the measured user's with a circle of 40). The measured user is a member in 50
// channels with 2,000 unread messages (some mentions), 150 starred. Seeded with the real actions in
// process (doSendMessage in transactions of 500), then cached under .cache/bench-register-v<SEED>.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { apiRequest, cpuSeconds, whenListening, type ServerProcess } from './server-process';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser, doDeactivateUser } from '../src/actions/users';
import { doSubscribe } from '../src/actions/subscriptions';
import { doSendMessage } from '../src/actions/messages';
import { doUpdateFlags } from '../src/actions/flags';
import { doUpdatePresence } from '../src/actions/presence';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { prng } from '../test/helpers/prng';
import { REGISTER_PARAMS } from '../web/src/state/store';

const root = path.join(__dirname, '..');
/** Bump when the seeded data changes: the cache key. */
const SEED_VERSION = 3;
const USERS = 1000;
const CHANNELS = 200;
const MESSAGES = 100_000;
const MY_CHANNELS = 50;
const UNREAD = 2000;
const STARRED = 150;
const DAY = 86_400_000;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}

interface SeedInfo {
  email: string;
  apiKey: string;
}

const WORDS = ['deploy', 'review', 'the build', 'lunch', 'release notes', 'the outage', 'design doc', 'tests', 'metrics', 'the migration', 'standup', 'docs'];

function content(r: () => number, i: number, mention: string | null): string {
  const w = () => WORDS[Math.floor(r() * WORDS.length)];
  const k = i % 10;
  const head = mention ? `@**${mention}** ` : '';
  if (k === 0) return `${head}Did anyone look at **${w()}**? Message ${i}.`;
  if (k === 1) return `${head}See \`${w()}\` and https://example.com/${i} for ${w()}.`;
  if (k === 2) return `${head}Quick list:\n- ${w()}\n- ${w()}\n- ${w()} (${i})`;
  if (k === 3) return `${head}\`\`\`\nmake ${i}\n\`\`\`\nthat fixed ${w()} :thumbs_up:`;
  if (k === 4) return `${head}> ${w()} is done\n\nthanks! ${i}`;
  return `${head}ok, ${w()} then ${w()} after ${i}`;
}

function seed(dir: string): SeedInfo {
  const r = prng(17);
  let now = Date.now() - 366 * DAY;
  const clock = { nowMs: () => now };
  const config = configFromEnv({});
  config.dataDir = dir;
  const app = createApp(config, { clock, logSink: null });
  const started = Date.now();
  const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
  const me = doCreateUser(app, { realmId, email: 'measured@bench.example.com', password: null, fullName: 'Measured User', role: ROLE.MEMBER, acting: null });
  const ids = [owner.userId, me.userId];
  const humans = [owner.userId, me.userId];
  app.batch.write(() => {
    for (let i = 2; i < USERS; i++) {
      const role = i % 97 === 0 ? ROLE.GUEST : i % 50 === 0 ? ROLE.MODERATOR : i % 200 === 0 ? ROLE.ADMINISTRATOR : ROLE.MEMBER;
      const bot = i % 100 === 7;
      const u = doCreateUser(app, {
        realmId,
        email: bot ? `bot${i}-bot@bench.example.com` : `user${i}@bench.example.com`,
        password: null,
        fullName: bot ? `Bot ${i}` : `User ${i}`,
        role,
        acting: null,
        ...(bot ? { botType: 1, botOwnerId: owner.userId } : {}),
      });
      ids.push(u.userId);
      if (!bot && role !== ROLE.GUEST) humans.push(u.userId);
    }
  });
  app.batch.commit();
  const rows = new Map(ids.map((id) => [id, findUserById(app.db, realmId, id) as UserRow]));
  // Channel c has about 1000 / (1 + c/4) subscribers (at least 5); the ten largest have everyone.
  const members: number[][] = [];
  const mine: number[] = [];
  const channelIds: number[] = [];
  for (let c = 0; c < CHANNELS; c++) {
    const size = c < 10 ? ids.length : Math.max(5, Math.floor(1000 / (1 + c / 4)));
    const set = new Set<number>(c < 10 ? ids : []);
    const isMine = c < 10 || (c - 10) % 4 === 0; // 10 + 40 = 50
    if (isMine && mine.length < MY_CHANNELS) set.add(me.userId);
    else set.delete(me.userId);
    while (set.size < size) {
      const id = ids[Math.floor(r() * ids.length)];
      if (id !== me.userId) set.add(id);
    }
    const list = [...set];
    const res = doSubscribe(app, ownerRow, {
      streams: [{ name: `channel ${c}`, description: `Channel number ${c}` }],
      principals: list.map((id) => rows.get(id) as UserRow),
      authorizationErrorsFatal: true,
      channelSpec: { inviteOnly: c % 9 === 8 },
    });
    app.batch.commit();
    void res;
    const sid = (app.db.prepare('SELECT id FROM stream WHERE name = ?').get(`channel ${c}`) as { id: number }).id;
    channelIds.push(sid);
    members.push(list);
    if (set.has(me.userId)) mine.push(c);
  }
  // Message plan: channels weighted by size, 20 topics per channel weighted 1/(t+1), 5 % DMs.
  const weights = members.map((m) => m.length);
  const total = weights.reduce((a, b) => a + b, 0);
  const pickChannel = () => {
    let x = r() * total;
    for (let c = 0; c < weights.length; c++) if ((x -= weights[c]) < 0) return c;
    return weights.length - 1;
  };
  const others = humans.filter((id) => id !== me.userId);
  const circle = others.filter((_, i) => i % 23 === 5).slice(0, 40);
  const step = (365 * DAY) / MESSAGES;
  // Channel creation notices so far: read, like everything older than the unread ones.
  const myStreams = JSON.stringify(mine.map((c) => channelIds[c]));
  const notices = (app.db.prepare('SELECT id FROM message WHERE stream_id IN (SELECT value FROM json_each(?))').all(myStreams) as { id: number }[]).map((m) => m.id);
  const myIds: number[] = [];
  const batch = 500;
  for (let i = 0; i < MESSAGES; i += batch) {
    app.batch.write(() => {
      for (let j = i; j < Math.min(MESSAGES, i + batch); j++) {
        now += step;
        let res: { id: number };
        let isMine = false;
        if (r() < 0.05) {
          const withMe = r() < 0.3;
          const n = r() < 0.7 ? 2 : 3 + Math.floor(r() * 3);
          const group = new Set<number>(withMe ? [me.userId] : []);
          // The measured user talks with a circle of 40 colleagues, as people do.
          const pool = withMe ? circle : others;
          while (group.size < n) group.add(pool[Math.floor(r() * pool.length)]);
          const list = [...group];
          const sender = list[Math.floor(r() * list.length)];
          res = doSendMessage(app, rows.get(sender) as UserRow, { to: { kind: 'direct', userIds: list }, content: content(r, j, null) });
          isMine = withMe;
        } else {
          const c = pickChannel();
          const m = members[c];
          const sender = m[Math.floor(r() * m.length)];
          const topic = `topic ${Math.floor(1 / (r() * 0.95 + 0.05)) - 1}`;
          isMine = mine.includes(c);
          const mention = isMine && r() < 0.02 && sender !== me.userId ? 'Measured User' : null;
          res = doSendMessage(app, rows.get(sender) as UserRow, { to: { kind: 'channel', streamId: channelIds[c], topic }, content: content(r, j, mention) });
        }
        if (isMine) myIds.push(res.id);
      }
    });
    app.batch.commit();
    if (i % 10_000 === 0) process.stderr.write(`\rseeded ${i} / ${MESSAGES} messages (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  // The measured user has read all but 2,000: most of them recent, some old.
  const meRow = findUserById(app.db, realmId, me.userId) as UserRow;
  const unread = new Set<number>();
  const recent = myIds.slice(-6000);
  while (unread.size < UNREAD - 300) unread.add(recent[Math.floor(r() * recent.length)]);
  while (unread.size < UNREAD) unread.add(myIds[Math.floor(r() * myIds.length)]);
  const read = [...notices, ...myIds.filter((id) => !unread.has(id))];
  for (let i = 0; i < read.length; i += 5000) {
    doUpdateFlags(app, meRow, read.slice(i, i + 5000), 'read', 'add');
    app.batch.commit();
  }
  const starred = new Set<number>();
  while (starred.size < STARRED) starred.add(myIds[Math.floor(r() * myIds.length)]);
  doUpdateFlags(app, meRow, [...starred], 'starred', 'add');
  app.batch.commit();
  // Some left the organization.
  const gone = new Set(Array.from({ length: 20 }, (_, i) => ids[900 + i * 5]));
  for (const id of gone) doDeactivateUser(app, ownerRow, id);
  app.batch.commit();
  // Most people were online lately.
  now = Date.now() - 60_000;
  for (const id of humans) if (r() < 0.7 && !gone.has(id)) doUpdatePresence(app, rows.get(id) as UserRow, r() < 0.8 ? 'active' : 'idle');
  app.batch.commit();
  app.close();
  process.stderr.write(`\rseeded ${MESSAGES} messages, ${myIds.length} the measured user's, in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return { email: 'measured@bench.example.com', apiKey: me.apiKey };
}

/** The seeded data dir from the cache, seeding it first if needed. */
function seeded(): SeedInfo & { dir: string } {
  const dir = path.join(root, '.cache', `bench-register-v${SEED_VERSION}`);
  const info = path.join(dir, 'bench.json');
  if (fs.existsSync(info)) return { dir, ...(JSON.parse(fs.readFileSync(info, 'utf8')) as SeedInfo) };
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const s = seed(tmp);
  fs.writeFileSync(path.join(tmp, 'bench.json'), JSON.stringify(s));
  fs.renameSync(tmp, dir);
  return { dir, ...s };
}

function startServer(tree: string, dataDir: string): Promise<ServerProcess> {
  const proc = spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', path.join(tree, 'src/main.ts'), 'serve', '--data-dir', dataDir, '--port', '0', '--no-rate-limits'],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: tree, env: { ...process.env, PARLEY_LOG_LEVEL: 'warn' } },
  );
  return whenListening(proc);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const form = (o: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(o).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();

// What our web client sends (web/src/state/store.ts REGISTER_PARAMS; web/src/client/client.ts fetch of home).
const WEB_REGISTER = REGISTER_PARAMS;
const WEB_MESSAGES = {
  anchor: 'first_unread',
  num_before: 50,
  num_after: 50,
  narrow: [{ operator: 'in', operand: 'home' }],
  apply_markdown: true,
  client_gravatar: false,
  allow_empty_topic_name: true,
};
// What zulip-flutter sends (lib/api/route/events.dart registerQueue: no event_types, so every type;
// lib/model/message_list.dart fetchInitial for the combined feed, lib/api/route/messages.dart).
const MOBILE_REGISTER = {
  apply_markdown: true,
  slim_presence: true,
  client_gravatar: false,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: false,
    stream_typing_notifications: true,
    user_settings_object: true,
    include_deactivated_groups: true,
    empty_topic_name: true,
  },
};
const MOBILE_MESSAGES = { narrow: [], anchor: 'newest', num_before: 100, num_after: 0, allow_empty_topic_name: true };

interface Case {
  label: string;
  kind: 'register' | 'messages';
  body: string;
  goalMs: number;
}

const CASES: Case[] = [
  { label: 'POST /register, web client', kind: 'register', body: form(WEB_REGISTER), goalMs: 25 },
  { label: 'POST /register, mobile app', kind: 'register', body: form(MOBILE_REGISTER), goalMs: 25 },
  { label: 'GET /messages home, web client (first_unread, 50+50, in:home)', kind: 'messages', body: form(WEB_MESSAGES), goalMs: 5 },
  { label: 'GET /messages home, mobile app (newest, 100, combined feed)', kind: 'messages', body: form(MOBILE_MESSAGES), goalMs: 5 },
];
const MAX_REGISTER_BYTES = 1_000_000;

async function main(): Promise<void> {
  const runs = Number(arg('runs', '30'));
  const warmup = Number(arg('warmup', '5'));
  const trees = arg('tree', root).split(',').map((t) => path.resolve(t));
  const s = seeded();
  if (process.argv.includes('--seed-only')) return;
  const auth = 'Basic ' + Buffer.from(`${s.email}:${s.apiKey}`).toString('base64');
  const servers: { tree: string; dir: string; srv: ServerProcess }[] = [];
  for (const tree of trees) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-register-'));
    fs.cpSync(s.dir, dir, { recursive: true });
    servers.push({ tree, dir, srv: await startServer(tree, dir) });
  }
  const once = async (port: number, c: Case) => {
    if (c.kind === 'register') {
      const res = await apiRequest(agent, port, auth, 'POST', '/api/v1/register', c.body);
      if (res.status !== 200) throw new Error(`${c.label}: ${res.status} ${res.body.slice(0, 300)}`);
      const q = JSON.parse(res.body) as { queue_id: string; unread_msgs: { count: number } };
      // Not timed: the queue goes, as many queues would otherwise pile up.
      await apiRequest(agent, port, auth, 'DELETE', `/api/v1/events?queue_id=${encodeURIComponent(q.queue_id)}`);
      return { ms: res.ms, bytes: Buffer.byteLength(res.body), note: `${q.unread_msgs.count} unread` };
    }
    const res = await apiRequest(agent, port, auth, 'GET', `/api/v1/messages?${c.body}`);
    if (res.status !== 200) throw new Error(`${c.label}: ${res.status} ${res.body.slice(0, 300)}`);
    return { ms: res.ms, bytes: Buffer.byteLength(res.body), note: `${(JSON.parse(res.body).messages as unknown[]).length} messages` };
  };
  const load0 = os.loadavg()[0];
  let allPass = true;
  for (const c of CASES) {
    const times = servers.map(() => [] as number[]);
    // Server CPU seconds over the measured requests (for /register with its untimed DELETE /events):
    // what the answer costs the server whatever else the machine runs.
    const cpu = servers.map(() => 0);
    const last = servers.map(() => ({ bytes: 0, note: '' }));
    for (let i = 0; i < warmup + runs; i++) {
      for (let k = 0; k < servers.length; k++) {
        const pid = servers[k].srv.proc.pid as number;
        const c0 = cpuSeconds(pid);
        const r = await once(servers[k].srv.port, c);
        if (i >= warmup) {
          times[k].push(r.ms);
          cpu[k] += cpuSeconds(pid) - c0;
        }
        last[k] = r;
      }
    }
    console.log(c.label);
    for (let k = 0; k < servers.length; k++) {
      const t = times[k].sort((a, b) => a - b);
      const p50 = pct(t, 0.5);
      const pass = p50 < c.goalMs && (c.kind !== 'register' || last[k].bytes < MAX_REGISTER_BYTES);
      if (k === servers.length - 1) allPass &&= pass;
      const tag = servers.length > 1 ? `  [${path.basename(servers[k].tree)}] ` : '  ';
      console.log(
        `${tag}p50 ${p50.toFixed(2)} ms, p95 ${pct(t, 0.95).toFixed(2)} ms, max ${t[t.length - 1].toFixed(2)} ms over ${t.length}; ` +
          `server CPU ${((cpu[k] / t.length) * 1000).toFixed(1)} ms per request; ${(last[k].bytes / 1024).toFixed(0)} KiB, ${last[k].note}; goal p50 < ${c.goalMs} ms${c.kind === 'register' ? ', < 1 MB' : ''}: ${pass ? 'PASS' : 'FAIL'}`,
      );
    }
  }
  console.log(`load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}; ${runs} runs after ${warmup} warm-up; first load goals: ${allPass ? 'PASS' : 'FAIL'}`);
  for (const s2 of servers) {
    // SIGINT lets --cpu-prof (BENCH_NODE_ARGS) write its profile.
    s2.srv.proc.kill('SIGINT');
    await s2.srv.stop();
    fs.rmSync(s2.dir, { recursive: true, force: true });
  }
  agent.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

// Soak benchmark (issue 7), run by hand: `node --import tsx bench/soak.ts [--minutes 10]`; prints
// numbers, never part of the tests.
// 200 simulated users against one server for a fixed time. Each user keeps one event queue with a
// GET /events long-poll parked on its own keep-alive connection (re-parking after every answer), and on
// a second connection runs a loop of actions with random think times: channel messages, direct
// messages, reads of a topic's newest messages, presence, mark-as-read of messages it received,
// typing, file uploads and downloads of its own last upload, GET /users/me.
// Reports: throughput and latency per operation, errors (any 5xx, any 4xx, a failed or timed-out
// request: no 4xx is expected from this mix; target 0), and the server's resident memory at the end
// of the warm-up and at the end (target: growth <= 10 %), with samples along the way.
// Options: --minutes M (10) --users N (200) --channels N (10; each user in 3 of them)
//          --think-ms MS (1000: mean pause between one user's actions, exponential)
//          --warmup-seconds S (min(60, a fifth of the run)) --server FILE.cjs (run a bundle such as
//          dist/parley.cjs with node instead of src/main.ts through tsx) --ops send,read,... (only these)
//          --fresh-upload-connections: each upload on its own connection, closed afterwards (works around
//          the server leaving a keep-alive connection paused after a multipart upload; see bench/README.md)
// Everything binds 127.0.0.1; the server (rate limits off, default heartbeat and queue lifespan) gets
// a temp data dir, removed at the end. Presence and uploads are probed first: a route answering 404
// is skipped with a note.
import { spawn } from 'node:child_process';
import { gcHook, whenListening, type ServerProcess } from './server-process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSubscribe } from '../src/actions/subscriptions';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';

const ROOT = path.join(__dirname, '..');
const { values: opt } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    users: { type: 'string', default: '200' },
    channels: { type: 'string', default: '10' },
    'think-ms': { type: 'string', default: '1000' },
    'warmup-seconds': { type: 'string' },
    server: { type: 'string' },
    ops: { type: 'string' },
    'fresh-upload-connections': { type: 'boolean', default: false },
  },
});
const DURATION_S = Number(opt.minutes) * 60;
const USERS = Number(opt.users);
const CHANNELS = Number(opt.channels);
const THINK_MS = Number(opt['think-ms']);
const WARMUP_S = opt['warmup-seconds'] !== undefined ? Number(opt['warmup-seconds']) : Math.min(60, DURATION_S / 5);
const REQUEST_TIMEOUT_MS = 30_000;
/** A parked poll answers within the heartbeat interval (50 s by default). */
const POLL_TIMEOUT_MS = 90_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (email: string, key: string) => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

interface SimUser {
  index: number;
  id: number;
  auth: string;
  channels: number[];
  queueId: string;
  lastEventId: number;
  /** Ids of messages received through the queue and not yet marked read (bounded). */
  unread: number[];
  lastUpload: string | null;
}

interface Seeded {
  dir: string;
  users: SimUser[];
  channelIds: number[];
}

/** Realm, USERS members (password null), CHANNELS channels; member i is in channels i, i+3 and i+7 (mod CHANNELS). */
function seed(): Seeded {
  const t0 = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-soak-'));
  const config = configFromEnv({});
  config.dataDir = dir;
  const app = createApp(config);
  const { realmId, owner } = doCreateRealm(app, { name: 'Soak', ownerEmail: 'owner@soak.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  app.batch.commit();
  const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
  const users: SimUser[] = [];
  for (let i = 0; i < USERS; i++) {
    const email = `soak${i}@soak.example.com`;
    const u = doCreateUser(app, { realmId, email, password: null, fullName: `Soak User ${i}`, role: ROLE.MEMBER, acting: null });
    const channels = [...new Set([i % CHANNELS, (i + 3) % CHANNELS, (i + 7) % CHANNELS])];
    users.push({ index: i, id: u.userId, auth: basic(email, u.apiKey), channels, queueId: '', lastEventId: -1, unread: [], lastUpload: null });
  }
  app.batch.commit();
  const channelIds: number[] = [];
  for (let c = 0; c < CHANNELS; c++) {
    channelIds.push(doCreateChannel(app, ownerRow, realmId, { name: `soak ${c}` }).id);
    app.batch.commit();
    const principals = users.filter((u) => u.channels.includes(c)).map((u) => findUserById(app.db, realmId, u.id) as UserRow);
    doSubscribe(app, ownerRow, { streams: [{ name: `soak ${c}` }], principals, authorizationErrorsFatal: true, channelSpec: {} });
    app.batch.commit();
  }
  for (const u of users) u.channels = u.channels.map((c) => channelIds[c]);
  app.close();
  console.log(`seeded ${USERS} users and ${CHANNELS} channels (${Math.round((USERS * 3) / CHANNELS)} subscribers each) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { dir, users, channelIds };
}

const hook = gcHook();

type Server = ServerProcess;

function startServer(dir: string): Promise<Server> {
  const proc = spawn(
    process.execPath,
    [
      ...hook.nodeArgs,
      ...(opt.server ? [path.resolve(opt.server)] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')]),
      'serve',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--no-rate-limits',
    ],
    { cwd: ROOT, env: { ...process.env, ...hook.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Server stderr (unexpected errors are logged there) is passed through, a bounded amount of it.
  let errBytes = 0;
  proc.stderr!.on('data', (d: Buffer) => {
    if (errBytes < 20_000) process.stderr.write(`[server] ${d}`);
    errBytes += d.length;
  });
  return whenListening(proc);
}

function rssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
}

/** JS heap used after two forced full GCs, in kB (see bench/server-process.ts). */
async function heapAfterGc(pid: number): Promise<number> {
  const m = await hook.memoryAfterGc(pid);
  return m ? m.heapUsed / 1024 : NaN;
}

interface Response {
  status: number;
  body: Buffer;
}

/**
 * One keep-alive connection, one request at a time, reconnecting when the server closed it. uWS sends
 * a Content-Length with every response (also streamed files), so a response ends at head + length.
 */
class Conn {
  private sock: net.Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  /** Requests sent on this connection and when the last response arrived (for error reports). */
  sent = 0;
  lastDone = 0;
  reconnects = 0;
  private waiting: { resolve: (r: Response) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | null = null;

  constructor(readonly port: number) {}

  private connect(): net.Socket {
    const sock = net.connect(this.port, '127.0.0.1');
    sock.setNoDelay(true);
    this.buf = Buffer.alloc(0);
    sock.on('error', () => undefined);
    sock.on('close', () => {
      // Only the current socket's close fails the request waiting on it.
      if (this.sock !== sock) return;
      this.sock = null;
      this.fail(new Error('connection closed'));
    });
    sock.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      for (;;) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = this.buf.subarray(0, end).toString('latin1');
        const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const total = end + 4 + len;
        if (this.buf.length < total) return;
        const status = Number(head.slice(9, 12));
        const body = this.buf.subarray(end + 4, total);
        this.buf = this.buf.subarray(total);
        const w = this.waiting;
        this.waiting = null;
        this.lastDone = Date.now();
        if (w) {
          clearTimeout(w.timer);
          w.resolve({ status, body });
        }
        if (/^connection: *close/im.test(head)) sock.destroy();
      }
    });
    return sock;
  }

  private fail(err: Error): void {
    const w = this.waiting;
    this.waiting = null;
    if (w) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }

  request(method: string, url: string, auth: string, body?: Buffer | string, contentType = 'application/x-www-form-urlencoded', timeoutMs = REQUEST_TIMEOUT_MS): Promise<Response> {
    if (this.waiting) return Promise.reject(new Error('one request at a time'));
    // uWS closes a keep-alive connection after ~10 s idle; a request written just then would be lost,
    // so (like a careful client) reconnect rather than reuse a connection idle for 8 s or more.
    if (this.sock && this.lastDone && Date.now() - this.lastDone >= 8000) this.close();
    if (!this.sock) {
      this.sock = this.connect();
      this.reconnects++;
    }
    this.sent++;
    const head =
      `${method} ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n` +
      (body !== undefined ? `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') +
      '\r\n';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`timed out after ${timeoutMs} ms`));
        this.close();
      }, timeoutMs);
      this.waiting = { resolve, reject, timer };
      const sock = this.sock as net.Socket;
      sock.write(head);
      if (body !== undefined) sock.write(body);
    });
  }

  close(): void {
    const sock = this.sock;
    this.sock = null;
    sock?.destroy();
    this.fail(new Error('connection closed by the client'));
  }
}

const OPS = ['send', 'direct', 'read', 'presence', 'flags', 'typing', 'upload', 'download', 'me', 'poll', 'register'] as const;
type Op = (typeof OPS)[number];
/** Relative weights of the action loop (polls run on their own). */
const MIX: [Op, number][] = [
  ['send', 22],
  ['direct', 5],
  ['read', 20],
  ['presence', 20],
  ['flags', 10],
  ['typing', 8],
  ['upload', 5],
  ['download', 5],
  ['me', 5],
];

interface OpStats {
  count: number;
  errors: number;
  latencies: number[];
}

const stats = new Map<Op, OpStats>(OPS.map((o) => [o, { count: 0, errors: 0, latencies: [] }]));
const skipped = new Set<Op>();
const errorSamples: string[] = [];
let errorsTotal = 0;
let runStart = Date.now();
const eventCounts = new Map<string, number>();

function record(op: Op, ms: number, ok: boolean, detail: string): void {
  const s = stats.get(op) as OpStats;
  s.count++;
  s.latencies.push(ms);
  if (!ok) {
    s.errors++;
    errorsTotal++;
    if (errorSamples.length < 10) errorSamples.push(`${op} at ${((Date.now() - runStart) / 1000).toFixed(1)} s after ${ms.toFixed(0)} ms: ${detail.slice(0, 300)}`);
  }
}

/** Runs one request, records it under `op`, and returns the response (null on a network error or timeout). */
async function timed(op: Op, conn: Conn, method: string, url: string, auth: string, body?: Buffer | string, contentType?: string, timeoutMs?: number): Promise<Response | null> {
  const t0 = performance.now();
  try {
    const r = await conn.request(method, url, auth, body, contentType, timeoutMs);
    const ok = r.status >= 200 && r.status < 300;
    record(op, performance.now() - t0, ok, `${method} ${url.split('?')[0]} ${r.status} ${r.body.toString('utf8')}`);
    return r;
  } catch (err) {
    record(op, performance.now() - t0, false, `${method} ${url.split('?')[0]} ${(err as Error).message} (request ${conn.sent} on this connection, ${conn.reconnects} connects, idle ${conn.lastDone ? ((t0 + performance.timeOrigin - conn.lastDone) / 1000).toFixed(1) : '-'} s before)`);
    return null;
  }
}

const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
const sentence = () => Array.from({ length: 5 + Math.floor(Math.random() * 20) }, () => pick(words)).join(' ');
const TOPICS = ['general', 'standup', 'random', 'release', 'support'];

/** POST /register (all event types, the full initial state, as a client would). */
async function register(u: SimUser, conn: Conn): Promise<boolean> {
  const r = await timed('register', conn, 'POST', '/api/v1/register', u.auth, form({ apply_markdown: 'true', client_gravatar: 'true', slim_presence: 'true' }));
  if (!r || r.status !== 200) return false;
  const b = JSON.parse(r.body.toString('utf8')) as { queue_id: string; last_event_id: number };
  u.queueId = b.queue_id;
  u.lastEventId = b.last_event_id;
  return true;
}

let running = true;

async function pollLoop(u: SimUser, conn: Conn): Promise<void> {
  while (running) {
    const url = '/api/v1/events?' + form({ queue_id: u.queueId, last_event_id: String(u.lastEventId) });
    const t0 = performance.now();
    let r: Response | null = null;
    let failure = '';
    try {
      r = await conn.request('GET', url, u.auth, undefined, undefined, POLL_TIMEOUT_MS);
    } catch (err) {
      failure = (err as Error).message;
    }
    if (!running) return; // the poll was cut off by the end of the run
    const ok = r !== null && r.status === 200;
    // Poll latency is how long it stayed parked: counted, but not a useful percentile.
    record('poll', performance.now() - t0, ok, r ? `GET /events ${r.status} ${r.body.toString('utf8')}` : `GET /events ${failure}`);
    if (!ok) {
      // Counted above; re-register (bounded by the sleep) so the user keeps receiving events.
      await sleep(1000);
      if (running) await register(u, conn).catch(() => false);
      continue;
    }
    const events = (JSON.parse(r!.body.toString('utf8')) as { events: { id: number; type: string; message?: { id: number; sender_id: number } }[] }).events;
    for (const e of events) {
      u.lastEventId = Math.max(u.lastEventId, e.id);
      eventCounts.set(e.type, (eventCounts.get(e.type) ?? 0) + 1);
      if (e.type === 'message' && e.message && e.message.sender_id !== u.id) {
        u.unread.push(e.message.id);
        if (u.unread.length > 50) u.unread.shift();
      }
    }
  }
}

function multipart(name: string, content: Buffer): { body: Buffer; type: string } {
  const boundary = '----parleysoak' + crypto.randomBytes(8).toString('hex');
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), content, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

async function act(u: SimUser, conn: Conn, all: SimUser[], op: Op): Promise<void> {
  switch (op) {
    case 'send': {
      await timed('send', conn, 'POST', '/api/v1/messages', u.auth, form({ type: 'stream', to: String(pick(u.channels)), topic: pick(TOPICS), content: sentence() }));
      return;
    }
    case 'direct': {
      const other = all[(u.index + 1 + Math.floor(Math.random() * (all.length - 1))) % all.length];
      await timed('direct', conn, 'POST', '/api/v1/messages', u.auth, form({ type: 'private', to: JSON.stringify([other.id]), content: sentence() }));
      return;
    }
    case 'read': {
      const narrow = JSON.stringify([
        { operator: 'channel', operand: pick(u.channels) },
        { operator: 'topic', operand: pick(TOPICS) },
      ]);
      await timed('read', conn, 'GET', '/api/v1/messages?' + form({ anchor: 'newest', num_before: '50', num_after: '0', narrow }), u.auth);
      return;
    }
    case 'presence': {
      await timed('presence', conn, 'POST', '/api/v1/users/me/presence', u.auth, form({ status: 'active', slim_presence: 'true', new_user_input: 'true' }));
      return;
    }
    case 'flags': {
      if (u.unread.length === 0) return act(u, conn, all, 'me');
      const ids = u.unread.splice(0);
      await timed('flags', conn, 'POST', '/api/v1/messages/flags', u.auth, form({ messages: JSON.stringify(ids), op: 'add', flag: 'read' }));
      return;
    }
    case 'typing': {
      await timed('typing', conn, 'POST', '/api/v1/typing', u.auth, form({ type: 'channel', op: 'start', stream_id: String(pick(u.channels)), topic: pick(TOPICS) }));
      return;
    }
    case 'upload': {
      const m = multipart(`soak-${u.index}.bin`, crypto.randomBytes(1024 + Math.floor(Math.random() * 31 * 1024)));
      const c = opt['fresh-upload-connections'] ? new Conn(conn.port) : conn;
      const r = await timed('upload', c, 'POST', '/api/v1/user_uploads', u.auth, m.body, m.type);
      if (c !== conn) c.close();
      if (r?.status === 200) u.lastUpload = (JSON.parse(r.body.toString('utf8')) as { url: string }).url;
      return;
    }
    case 'download': {
      if (!u.lastUpload) return act(u, conn, all, 'me');
      await timed('download', conn, 'GET', u.lastUpload, u.auth);
      return;
    }
    case 'me':
      await timed('me', conn, 'GET', '/api/v1/users/me', u.auth);
      return;
    default:
      return;
  }
}

const ONLY = opt.ops ? new Set(opt.ops.split(',')) : null;

function chooseOp(): Op {
  const mix = MIX.filter(([op]) => !skipped.has(op) && (!ONLY || ONLY.has(op)));
  const total = mix.reduce((a, [, w]) => a + w, 0);
  let x = Math.random() * total;
  for (const [op, w] of mix) {
    if ((x -= w) < 0) return op;
  }
  return mix[mix.length - 1][0];
}

async function actionLoop(u: SimUser, conn: Conn, all: SimUser[], until: number): Promise<void> {
  // Spread the users' first actions over one think time.
  await sleep(Math.random() * THINK_MS);
  while (running && Date.now() < until) {
    await act(u, conn, all, chooseOp());
    await sleep(Math.min(10 * THINK_MS, -Math.log(1 - Math.random()) * THINK_MS));
  }
}

/** Probes the routes other issues are still building: a 404 skips the operation. */
async function probe(u: SimUser, conn: Conn): Promise<void> {
  const p = await conn.request('POST', '/api/v1/users/me/presence', u.auth, form({ status: 'active' }));
  if (p.status === 404) {
    skipped.add('presence');
    console.log('note: POST /users/me/presence answered 404: presence is skipped in this run');
  } else if (p.status !== 200) console.log(`note: presence probe answered ${p.status} ${p.body.toString('utf8').slice(0, 200)}`);
  const m = multipart('probe.txt', Buffer.from('probe'));
  const up = await conn.request('POST', '/api/v1/user_uploads', u.auth, m.body, m.type);
  if (up.status === 404) {
    skipped.add('upload');
    skipped.add('download');
    console.log('note: POST /user_uploads answered 404: uploads and downloads are skipped in this run');
  } else if (up.status !== 200) console.log(`note: upload probe answered ${up.status} ${up.body.toString('utf8').slice(0, 200)}`);
}

const pct = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return n;
}

async function main(): Promise<void> {
  console.log(`Parley soak, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.availableParallelism()}, Linux ${os.release()}, Node ${process.version}, load average ${loadavg()}`,
  );
  console.log(
    `${USERS} users, ${(DURATION_S / 60).toFixed(1)} min (warm-up ${WARMUP_S} s), mean think time ${THINK_MS} ms` +
      (opt['fresh-upload-connections'] ? ', uploads on fresh connections' : ', uploads on the keep-alive action connection'),
  );
  const s = seed();
  const server = await startServer(s.dir);
  const pid = server.proc.pid!;
  const pollConns = s.users.map(() => new Conn(server.port));
  const actionConns = s.users.map(() => new Conn(server.port));
  try {
    await probe(s.users[0], actionConns[0]);
    const t0 = Date.now();
    for (let i = 0; i < USERS; i += 20) await Promise.all(s.users.slice(i, i + 20).map((u, k) => register(u, actionConns[i + k])));
    console.log(`${USERS} queues registered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (s.users.some((u) => !u.queueId)) throw new Error('registration failed: ' + errorSamples.join('\n'));

    const start = Date.now();
    runStart = start;
    const until = start + DURATION_S * 1000;
    const polls = s.users.map((u, i) => pollLoop(u, pollConns[i]));
    const actions = s.users.map((u, i) => actionLoop(u, actionConns[i], s.users, until));

    // Samples while it runs (bounded: one per interval until the end).
    const interval = Math.max(10, Math.round(DURATION_S / 20)) * 1000;
    const samples: { t: number; rss: number }[] = [];
    let warm: { rss: number; heap: number } | null = null;
    let lastCount = 0;
    let lastT = start;
    const countAll = () => [...stats.entries()].filter(([op]) => op !== 'poll' && op !== 'register').reduce((a, [, st]) => a + st.count, 0);
    while (Date.now() < until) {
      const nextSample = Math.min(until, lastT + interval, warm ? Infinity : start + WARMUP_S * 1000);
      await sleep(Math.max(0, nextSample - Date.now()));
      const now = Date.now();
      const rss = rssKb(pid);
      samples.push({ t: (now - start) / 1000, rss });
      if (!warm && now >= start + WARMUP_S * 1000) {
        warm = { rss, heap: await heapAfterGc(pid) };
        console.log(`  warm at ${((now - start) / 1000).toFixed(0)} s: VmRSS ${mb(warm.rss)}, JS heap after GC ${mb(warm.heap)}`);
      }
      const c = countAll();
      console.log(
        `  ${((now - start) / 1000).toFixed(0).padStart(5)} s: ${((c - lastCount) / ((now - lastT) / 1000)).toFixed(0)} actions/s, ` +
          `errors ${errorsTotal}, VmRSS ${mb(rss)}, load average ${loadavg()}`,
      );
      lastCount = c;
      lastT = now;
    }
    await Promise.all(actions);
    const elapsed = (Date.now() - start) / 1000;
    const endRss = rssKb(pid);
    const endHeap = await heapAfterGc(pid);
    running = false;
    for (const c of pollConns) c.close();
    await Promise.all(polls);

    console.log(`\nresults over ${elapsed.toFixed(0)} s (${USERS} users; load average at the end ${loadavg()})`);
    console.log(`  ${'operation'.padEnd(10)} ${'count'.padStart(8)} ${'per s'.padStart(8)} ${'errors'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}`);
    for (const op of OPS) {
      const st = stats.get(op) as OpStats;
      if (skipped.has(op)) {
        console.log(`  ${op.padEnd(10)} skipped (route answered 404)`);
        continue;
      }
      const l = [...st.latencies].sort((a, b) => a - b);
      const lat = op === 'poll' ? ['(parked)', '', ''] : [pct(l, 0.5).toFixed(1), pct(l, 0.99).toFixed(1), (l[l.length - 1] ?? NaN).toFixed(1)];
      console.log(
        `  ${op.padEnd(10)} ${String(st.count).padStart(8)} ${(st.count / elapsed).toFixed(1).padStart(8)} ${String(st.errors).padStart(7)} ` +
          `${lat[0].padStart(8)} ${lat[1].padStart(8)} ${lat[2].padStart(8)}`,
      );
    }
    console.log(`  events received: ${[...eventCounts.entries()].sort((a, b) => b[1] - a[1]).map(([t, n]) => `${t} ${n}`).join(', ')}`);
    console.log(`  unexpected errors: ${errorsTotal} (target 0): ${errorsTotal === 0 ? 'PASS' : 'FAIL'}`);
    for (const e of errorSamples) console.log(`    ${e}`);
    if (warm) {
      const growth = (endRss - warm.rss) / warm.rss;
      const peak = Math.max(...samples.map((x) => x.rss), endRss);
      console.log(
        `  VmRSS warm ${mb(warm.rss)} → end ${mb(endRss)} (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %, peak ${mb(peak)}); ` +
          `JS heap after GC ${mb(warm.heap)} → ${mb(endHeap)}; target growth <= 10 %: ${growth <= 0.1 ? 'PASS' : 'FAIL'}`,
      );
    }
    console.log(`  VmRSS samples (s: MB): ${samples.map((x) => `${x.t.toFixed(0)}: ${(x.rss / 1024).toFixed(0)}`).join(', ')}`);
    const size = (f: string) => (fs.existsSync(path.join(s.dir, f)) ? fs.statSync(path.join(s.dir, f)).size / 1048576 : 0);
    const uploads = fs.existsSync(path.join(s.dir, 'uploads')) ? dirBytes(path.join(s.dir, 'uploads')) : 0;
    console.log(`  data at the end: database ${size('parley.db').toFixed(1)} MB, WAL ${size('parley.db-wal').toFixed(1)} MB, uploads ${(uploads / 1048576).toFixed(1)} MB`);
  } finally {
    running = false;
    for (const c of [...pollConns, ...actionConns]) c.close();
    await server.stop();
    fs.rmSync(s.dir, { recursive: true, force: true });
    hook.remove();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

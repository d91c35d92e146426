// Event delivery benchmark (issues 4 and 17), run by hand: `node --import tsx bench/events.ts`; prints
// numbers, never part of the tests.
//  (a) fan-out latency: a channel whose 1,000 members each have one registered queue with a GET /events
//      long-poll parked on its own keep-alive connection; a sender (the owner, subscribed, not polling)
//      POSTs messages to the channel one at a time. For every message and poller: the time from the
//      moment the sender's POST /messages reply arrives to the moment that poller has the whole
//      /events response (the poller then re-parks). Per round: p50 of every delivery and p50 of the
//      per-message last poller. Also memory per idle queue (VmRSS with 1,000 registered queues).
//  (b) memory per idle queue: server VmRSS after 1,000 registered queues (no poll parked) minus VmRSS
//      before registering, / 1,000; also 5,000 queues. Target < 2 KB (issue 17). Plus the exact JS heap
//      of a queue, allocated in this process through allocateQueue with a forced GC around it.
//  (c) (--parts c, not run by default) the floor: a bare uWebSockets.js server (no Parley code) that holds
//      1,000 parked GETs and, on the sender's request, answers the sender and then writes one fixed
//      pre-serialised reply of the same size to every parked poll, in the same way Parley does
//      (cork, status, two headers, end). Measured like (a), with the same client: what a single-threaded
//      uWS server and this machine allow at best.
// With --parts ac both servers hold their parked polls at once and take turns, --rounds N (at least 5)
// rounds of --messages each (Parley, floor, Parley, ...); each round prints both sides and their ratio,
// and the run ends with the median ratio and its spread, last line
// `fan-out/floor median ratio: p50 X, last poller Y (N rounds)` (issue 17: target <= 1.15 on both).
// Options: --users N (1000 pollers) --messages N (20 measured per round, after 2 unmeasured warm-up messages)
//          --rounds N (5) --gap-ms N (300: pause after every poller has its event, for the re-parks to land)
//          --queues-max N (5000) --parts ab --cpu-prof DIR (the server, and the floor, write a .cpuprofile there on exit)
//          --server FILE.cjs (run a bundle such as dist/parley.cjs with node instead of src/main.ts through tsx)
//          --repark immediate|after-all (after-all: pollers re-park only once every poller has the message,
//          so the server and client CPU of the delivery alone can be read; Parley only)
// The server is `node --import tsx src/main.ts serve` (the working tree, not dist/parley) on 127.0.0.1,
// port 0, rate limits off, PARLEY_HEARTBEAT_SECONDS=3600 so no heartbeat wakes a poll mid-run. The
// clients are raw keep-alive sockets in this one process: each /events response is timestamped
// in its socket's data callback; parsing and re-parking wait for a setImmediate so that they do not
// delay the timestamps of the other sockets that became readable in the same event-loop turn.
import { spawn } from 'node:child_process';
import { gcHook, whenListening, type ServerProcess } from './server-process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSubscribe } from '../src/actions/subscriptions';
import { allocateQueue } from '../src/events/registry';
import { capabilities } from '../src/events/queue';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { loadUws } from '../src/native';

const ROOT = path.join(__dirname, '..');
const { values: opt } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    messages: { type: 'string', default: '20' },
    'gap-ms': { type: 'string', default: '300' },
    'queues-max': { type: 'string', default: '5000' },
    parts: { type: 'string', default: 'ab' },
    rounds: { type: 'string', default: '5' },
    'cpu-prof': { type: 'string' },
    repark: { type: 'string', default: 'immediate' },
    server: { type: 'string' },
    'floor-server': { type: 'boolean', default: false },
    'floor-bytes': { type: 'string', default: '1300' },
  },
});
/** Size of the floor's reply: --floor-bytes, or the size of the /events replies that (a) measured. */
let FLOOR_BYTES = Number(opt['floor-bytes']);
const USERS = Number(opt.users);
const MESSAGES = Number(opt.messages);
const WARMUP_MESSAGES = 2;
const GAP_MS = Number(opt['gap-ms']);
const QUEUES_MAX = Number(opt['queues-max']);
const REPARK_AFTER_ALL = opt.repark === 'after-all';
// Parley against the floor needs several alternating rounds: one run of each was as noisy as the gap.
const ROUNDS = opt.parts!.includes('a') && opt.parts!.includes('c') ? Math.max(5, Number(opt.rounds)) : Math.max(1, Number(opt.rounds));

interface Seeded {
  dir: string;
  realmId: number;
  owner: { id: number; auth: string };
  members: { id: number; auth: string }[];
  streamId: number;
}

const basic = (email: string, key: string) => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

/** Realm, owner, USERS members (password null), one channel with all of them subscribed: through the actions. */
function seed(): Seeded {
  const t0 = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-events-'));
  const config = configFromEnv({});
  config.dataDir = dir;
  const app = createApp(config);
  const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  app.batch.commit();
  const members: Seeded['members'] = [];
  for (let i = 0; i < USERS; i++) {
    const email = `user${i}@bench.example.com`;
    const u = doCreateUser(app, { realmId, email, password: null, fullName: `User ${i}`, role: ROLE.MEMBER, acting: null });
    members.push({ id: u.userId, auth: basic(email, u.apiKey) });
    if (i % 200 === 199) app.batch.commit();
  }
  app.batch.commit();
  const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
  const stream = doCreateChannel(app, ownerRow, realmId, { name: 'bench' });
  app.batch.commit();
  const principals = [ownerRow, ...members.map((m) => findUserById(app.db, realmId, m.id) as UserRow)];
  doSubscribe(app, ownerRow, { streams: [{ name: 'bench' }], principals, authorizationErrorsFatal: true, channelSpec: {} });
  app.batch.commit();
  app.close();
  console.log(`seeded ${USERS} members + owner, channel "bench" with ${USERS + 1} subscribers, in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { dir, realmId, owner: { id: owner.userId, auth: basic(owner.email, owner.apiKey) }, members, streamId: stream.id };
}

type Server = ServerProcess;
const hook = gcHook();

function startServer(dir: string): Promise<Server> {
  const proc = spawn(
    process.execPath,
    [...(opt['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(opt['cpu-prof'])] : []), ...hook.nodeArgs, ...(opt.server ? [path.resolve(opt.server)] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')]), 'serve', '--data-dir', dir, '--port', '0', '--no-rate-limits'],
    {
      cwd: ROOT,
      env: { ...process.env, PARLEY_HEARTBEAT_SECONDS: '3600', ...hook.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return whenListening(proc);
}

interface Mem {
  /** VmRSS from /proc after the GC, kB. */
  rss: number;
  /** V8 heapUsed after the GC, kB. */
  heap: number;
  /** Off-heap memory held by JS objects (Buffers), kB. */
  external: number;
}

/** The server's memory after two forced full GCs (see bench/server-process.ts), once idle for `waitMs`. */
async function serverMem(pid: number, waitMs = 1000): Promise<Mem> {
  await sleep(waitMs);
  const m = await hook.memoryAfterGc(pid);
  if (!m) throw new Error('the server did not answer SIGUSR2 (GC hook)');
  await sleep(300);
  return { rss: rssKb(pid), heap: m.heapUsed / 1024, external: m.external / 1024 };
}

/** CPU seconds (user + system) process `pid` has used so far. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** VmRSS of `pid` in kB. */
function rssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Response {
  status: number;
  body: string;
  /** process.hrtime.bigint() in ns, taken in the data callback that completed the response. */
  at: bigint;
}

/**
 * One keep-alive connection sending one request at a time. uWS always answers with a Content-Length,
 * so a response ends at head + length. Completed responses go to `onResponse` with their arrival time;
 * when `deferred` is set the callback runs in a setImmediate (after this turn's other sockets).
 */
class Conn {
  private sock: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: ((r: Response) => void) | null = null;
  readonly ready: Promise<void>;
  closed = false;

  constructor(port: number) {
    this.sock = net.connect(port, '127.0.0.1');
    this.sock.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.sock.once('connect', () => resolve());
      this.sock.once('error', reject);
    });
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => {
      this.closed = true;
    });
    this.sock.on('data', (d: Buffer) => {
      const at = process.hrtime.bigint();
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      for (;;) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = this.buf.subarray(0, end).toString('latin1');
        const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const total = end + 4 + len;
        if (this.buf.length < total) return;
        const status = Number(head.slice(9, 12));
        const body = this.buf.subarray(end + 4, total).toString('utf8');
        this.buf = this.buf.subarray(total);
        const w = this.waiting;
        this.waiting = null;
        w?.({ status, body, at });
      }
    });
  }

  /** Sends one request; resolves with its response. */
  request(method: string, url: string, auth: string, form?: string): Promise<Response> {
    if (this.waiting) throw new Error('one request at a time');
    const body = form ?? '';
    const head =
      `${method} ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n` +
      (form !== undefined ? `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') +
      '\r\n';
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.sock.write(head + body);
    });
  }

  close(): void {
    this.sock.destroy();
  }
}

/** Runs `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

/** Opens `n` keep-alive connections. */
async function conns(port: number, n: number): Promise<Conn[]> {
  const out = Array.from({ length: n }, () => new Conn(port));
  await Promise.all(out.map((c) => c.ready));
  return out;
}

const REGISTER_FORM = new URLSearchParams({ event_types: '["message"]', apply_markdown: 'true' }).toString();

/** POST /register for every user in `auths` over `cs` (in parallel, one request per connection at a time). */
async function registerAll(cs: Conn[], auths: string[]): Promise<string[]> {
  const ids: string[] = new Array(auths.length);
  const free = [...cs];
  await pool(auths, cs.length, async (auth, i) => {
    const c = free.pop() as Conn;
    const r = await c.request('POST', '/api/v1/register', auth, REGISTER_FORM);
    free.push(c);
    if (r.status !== 200) throw new Error(`register: ${r.status} ${r.body.slice(0, 200)}`);
    ids[i] = (JSON.parse(r.body) as { queue_id: string }).queue_id;
  });
  return ids;
}

/** Every member does one authenticated request (fills the server's credential cache) and the register path runs once per member; those queues are deleted again. */
async function warmUp(port: number, s: Seeded): Promise<void> {
  const cs = await conns(port, 16);
  const free = [...cs];
  await pool(s.members, 16, async (m) => {
    const c = free.pop() as Conn;
    const r = await c.request('GET', '/api/v1/users/me', m.auth);
    if (r.status !== 200) throw new Error(`GET /users/me: ${r.status} ${r.body.slice(0, 200)}`);
    free.push(c);
  });
  const auths = s.members.map((m) => m.auth);
  const ids = await registerAll(cs, auths);
  await pool(ids, 16, async (id, i) => {
    const c = free.pop() as Conn;
    const r = await c.request('DELETE', '/api/v1/events?' + new URLSearchParams({ queue_id: id }), auths[i]);
    if (r.status !== 200) throw new Error(`DELETE /events: ${r.status} ${r.body.slice(0, 200)}`);
    free.push(c);
  });
  for (const c of cs) c.close();
}

const kbStr = (x: number) => `${x.toFixed(2)} KB`;
const mbStr = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;

// (b) Memory per idle queue over the wire: 0 → USERS → QUEUES_MAX registered queues, no poll parked.
async function memory(s: Seeded): Promise<void> {
  console.log(`\n(b) memory per idle queue (registered with event_types ["message"], no poll parked; every reading after two forced GCs)`);
  const server = await startServer(s.dir);
  try {
    await warmUp(server.port, s);
    const pid = server.proc.pid!;
    const base = await serverMem(pid);
    console.log(`  0 queues (after warm-up): VmRSS ${mbStr(base.rss)}, JS heap used ${mbStr(base.heap)}`);
    const cs = await conns(server.port, 16);
    const auths = s.members.map((m) => m.auth);
    let total = 0;
    let atUsers = NaN;
    const steps: number[] = [USERS];
    if (QUEUES_MAX > USERS) steps.push(QUEUES_MAX);
    for (const target of steps) {
      // Users take turns: queue k belongs to member k mod USERS (at most 50 queues per user).
      const batch: string[] = [];
      for (let k = total; k < target; k++) batch.push(auths[k % auths.length]);
      const t0 = performance.now();
      await registerAll(cs, batch);
      const ms = performance.now() - t0;
      total = target;
      const m = await serverMem(pid);
      const perRss = (m.rss - base.rss) / total;
      if (target === USERS) atUsers = perRss;
      console.log(
        `  ${String(total).padStart(5)} queues: VmRSS ${mbStr(m.rss)} (+${mbStr(m.rss - base.rss)}, ${kbStr(perRss)} per queue), ` +
          `JS heap used ${mbStr(m.heap)} (+${mbStr(m.heap - base.heap)}, ${kbStr((m.heap - base.heap) / total)} per queue); ` +
          `${batch.length} registrations in ${(ms / 1000).toFixed(1)} s (${(batch.length / (ms / 1000)).toFixed(0)}/s)`,
      );
    }
    for (const c of cs) c.close();
    console.log(`  target < 2 KB per idle queue (VmRSS delta at ${USERS} queues / ${USERS}): ${kbStr(atUsers)}, ${atUsers < 2 ? 'PASS' : 'FAIL'}`);
  } finally {
    await server.stop();
  }
  // The JS heap a queue costs, measured exactly in this process.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const config = configFromEnv({});
  config.dataDir = s.dir;
  const app = createApp(config);
  try {
    const rows = s.members.map((m) => findUserById(app.db, s.realmId, m.id) as UserRow);
    const req = {
      eventTypes: ['message'],
      narrow: [],
      allPublicStreams: undefined,
      applyMarkdown: true,
      clientGravatar: true,
      slimPresence: false,
      capabilities: capabilities({}),
      lifespanSeconds: 0,
    };
    const measure = (n: number) => {
      gc();
      gc();
      const h0 = process.memoryUsage().heapUsed;
      const keep = [];
      for (let k = 0; k < n; k++) keep.push(allocateQueue(app, rows[k % rows.length], req));
      gc();
      gc();
      const h1 = process.memoryUsage().heapUsed;
      for (const q of keep) app.queues.remove(q);
      return (h1 - h0) / n;
    };
    measure(USERS); // warm up the code paths
    const one = measure(USERS);
    const many = measure(QUEUES_MAX);
    console.log(`  JS heap per queue (allocateQueue in this process, after a forced GC): ${(one / 1024).toFixed(2)} KB at ${USERS} queues, ${(many / 1024).toFixed(2)} KB at ${QUEUES_MAX}`);
  } finally {
    app.close();
  }
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const sortedCopy = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => {
  const s = sortedCopy(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

/** One round of one side (Parley or the floor): `messages` messages, each delivered to every poller. */
interface RoundStats {
  /** Every delivery, reply → poller has it (ms), sorted. */
  fromReply: number[];
  /** Per message: the first and the last poller to have it (ms). */
  first: number[];
  last: number[];
  missing: number;
  /** Side-specific numbers for the round's line. */
  note: string;
}

/** p50 of every delivery and p50 of the per-message last poller: the two numbers the ratio compares. */
const p50Of = (r: RoundStats) => pct(r.fromReply, 0.5);
const lastP50Of = (r: RoundStats) => pct(sortedCopy(r.last), 0.5);

function roundLine(name: string, r: RoundStats): string {
  const fr = r.fromReply;
  return (
    `  ${name}: p50 ${ms(p50Of(r))}, p90 ${ms(pct(fr, 0.9))}, p99 ${ms(pct(fr, 0.99))}, max ${ms(fr[fr.length - 1])}; ` +
    `last poller p50 ${ms(lastP50Of(r))}, max ${ms(Math.max(...r.last))}; first poller p50 ${ms(pct(sortedCopy(r.first), 0.5))}` +
    (r.missing ? `; MISSING ${r.missing}` : '') +
    r.note
  );
}

/** A side of the comparison: a server with USERS parked polls, driven one message at a time. */
interface Side {
  /** Sends one message (the floor: one /go) and adds its deliveries to `into`, then waits --gap-ms. */
  one(into: RoundStats): Promise<void>;
  /** Fills `into.note` and sorts its deliveries once the round's messages are in. */
  end(into: RoundStats): void;
  stop(): Promise<void>;
}

const newRound = (): RoundStats => ({ fromReply: [], first: [], last: [], missing: 0, note: '' });

/** `messages` messages on one side alone (the warm-up). */
async function soloRound(side: Side, messages: number): Promise<RoundStats> {
  const out = newRound();
  for (let m = 0; m < messages; m++) await side.one(out);
  side.end(out);
  return out;
}

/**
 * Per message: waits (bounded) until every poller has it, then collects the deliveries measured from
 * the sender's reply `replyAt`.
 */
async function collect(arrivalsOf: () => (bigint | undefined)[], replyAt: bigint, into: RoundStats): Promise<void> {
  const deadline = Date.now() + 10_000;
  let got = arrivalsOf();
  while (got.filter((x) => x !== undefined).length < USERS && Date.now() < deadline) {
    await sleep(5);
    got = arrivalsOf();
  }
  let first = Infinity;
  let worst = -Infinity;
  for (const at of got) {
    if (at === undefined) {
      into.missing++;
      continue;
    }
    const d = Number(at - replyAt) / 1e6;
    into.fromReply.push(d);
    first = Math.min(first, d);
    worst = Math.max(worst, d);
  }
  into.first.push(first);
  into.last.push(worst);
}

// (a) Fan-out latency: Parley with USERS registered queues, each with a GET /events parked on its own connection.
async function startParley(s: Seeded): Promise<Side & { memPerQueueKb: number }> {
  const server = await startServer(s.dir);
  const pid = server.proc.pid!;
  try {
    await warmUp(server.port, s);
    const mem0 = await serverMem(pid);
    const setup = await conns(server.port, 16);
    const queueIds = await registerAll(
      setup,
      s.members.map((m) => m.auth),
    );
    for (const c of setup) c.close();
    const memRegistered = await serverMem(pid);

    // One connection per poller; each parks GET /events and re-parks after every response.
    const pollConns = await conns(server.port, USERS);
    const lastEventId = new Array<number>(USERS).fill(-1);
    /** message id → arrival time (ns) per poller. */
    const arrivals: Map<number, bigint>[] = Array.from({ length: USERS }, () => new Map());
    let unexpected = 0;
    let pending: { i: number; r: Response }[] = [];
    /** Pollers waiting to re-park (--repark after-all). */
    let held: number[] = [];
    let stopping = false;
    const park = (i: number) => {
      const url = '/api/v1/events?' + new URLSearchParams({ queue_id: queueIds[i], last_event_id: String(lastEventId[i]) });
      pollConns[i].request('GET', url, s.members[i].auth).then((r) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({ i, r });
      });
    };
    const flush = () => {
      const batch = pending;
      pending = [];
      const again: number[] = [];
      for (const { i, r } of batch) {
        if (r.status !== 200) {
          // Not re-parked: a failing poller stays down (counted) rather than looping.
          if (unexpected++ < 3) console.error(`  poller ${i}: ${r.status} ${r.body.slice(0, 200)}`);
          continue;
        }
        again.push(i);
        FLOOR_BYTES = Buffer.byteLength(r.body);
        const events = (JSON.parse(r.body) as { events: { id: number; type: string; message?: { id: number } }[] }).events;
        for (const e of events) {
          lastEventId[i] = Math.max(lastEventId[i], e.id);
          if (e.type === 'message' && e.message) arrivals[i].set(e.message.id, r.at);
        }
      }
      if (REPARK_AFTER_ALL) held.push(...again);
      else if (!stopping) for (const i of again) park(i);
    };
    for (let i = 0; i < USERS; i++) park(i);
    // Let every poll reach the server and park (nothing answers a parked poll, so wait a fixed time).
    await sleep(1500);
    const memParked = await serverMem(pid, 500);
    const memPerQueueKb = (memRegistered.rss - mem0.rss) / USERS;
    console.log(
      `  Parley: server VmRSS (JS heap used) after GC: ${mbStr(mem0.rss)} (${mbStr(mem0.heap)}) with 0 queues, ` +
        `${mbStr(memRegistered.rss)} (${mbStr(memRegistered.heap)}) with ${USERS} registered (${kbStr(memPerQueueKb)} VmRSS per idle queue), ` +
        `${mbStr(memParked.rss)} (${mbStr(memParked.heap)}) with ${USERS} polls parked: ` +
        `${kbStr((memParked.rss - memRegistered.rss) / USERS)} VmRSS, ${kbStr((memParked.heap - memRegistered.heap) / USERS)} heap per parked poll and its connection`,
    );

    const sender = (await conns(server.port, 1))[0];
    let k = 0;
    /** Per round: the sender's round trips and the server's CPU seconds, by the round's stats. */
    const extra = new Map<RoundStats, { roundTrips: number[]; cpu: number }>();
    const one = async (out: RoundStats): Promise<void> => {
      let x = extra.get(out);
      if (!x) extra.set(out, (x = { roundTrips: [], cpu: 0 }));
      const cpu0 = cpuSeconds(pid);
      k++;
      const form = new URLSearchParams({ type: 'stream', to: String(s.streamId), topic: 'fan-out', content: `message ${k}` }).toString();
      const sent = process.hrtime.bigint();
      const r = await sender.request('POST', '/api/v1/messages', s.owner.auth, form);
      if (r.status !== 200) throw new Error(`POST /messages: ${r.status} ${r.body}`);
      const id = (JSON.parse(r.body) as { id: number }).id;
      x.roundTrips.push(Number(r.at - sent) / 1e6);
      await collect(() => arrivals.map((a) => a.get(id)), r.at, out);
      for (const a of arrivals) a.delete(id);
      if (REPARK_AFTER_ALL) {
        await sleep(20); // the flush of the last responses
        const h = held;
        held = [];
        for (const i of h) park(i);
      }
      await sleep(GAP_MS);
      x.cpu += cpuSeconds(pid) - cpu0;
    };
    const end = (out: RoundStats): void => {
      const x = extra.get(out) ?? { roundTrips: [NaN], cpu: NaN };
      extra.delete(out);
      out.fromReply.sort((a, b) => a - b);
      const cpu = (x.cpu / x.roundTrips.length) * 1000;
      out.note =
        `; sender's POST p50 ${ms(median(x.roundTrips))}; server CPU per message (send, ${USERS} deliveries and re-parks, 10 ms ticks) ${cpu.toFixed(0)} ms` +
        (unexpected ? `; UNEXPECTED poll answers so far: ${unexpected}` : '');
    };
    return {
      memPerQueueKb,
      one,
      end,
      async stop() {
        stopping = true;
        sender.close();
        for (const c of pollConns) c.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** The floor server of part (c), run as `bench/events.ts --floor-server` in a child process. */
function floorServer(): void {
  const uws = loadUws();
  process.on('SIGTERM', () => process.exit(0)); // exits through node, so --cpu-prof writes its profile
  const app = uws.App();
  const reply = (content: string) => JSON.stringify({ result: 'success', msg: '', events: [{ type: 'message', message: { content }, flags: [], id: 0 }], queue_id: 'q' });
  const body = reply('x'.repeat(Math.max(0, FLOOR_BYTES - reply('').length))); // exactly FLOOR_BYTES
  let parked: import('@trufflesuite/uws-js-unofficial').HttpResponse[] = [];
  app.get('/park', (res) => {
    res.onAborted(() => undefined);
    parked.push(res);
  });
  app.get('/go', (res) => {
    res.cork(() => res.end('{}'));
    // Like Parley's commit hooks: the sender's reply first, then every parked poll in one turn.
    setImmediate(() => {
      const list = parked;
      parked = [];
      for (const r of list) {
        r.cork(() => {
          r.writeStatus('200 OK');
          r.writeHeader('Content-Type', 'application/json');
          r.writeHeader('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate, private');
          r.end(body);
        });
      }
    });
  });
  app.listen('127.0.0.1', 0, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`listening on http://127.0.0.1:${uws.us_socket_local_port(sock)}\n`);
  });
}

// (c) The floor: the same measurement against the bare uWS server above.
async function startFloor(s: Seeded): Promise<Side> {
  // With --cpu-prof the floor is profiled too, so that its work per poll can be set beside Parley's.
  const prof = opt['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(opt['cpu-prof'])] : [];
  const proc = spawn(process.execPath, [...prof, '--import', 'tsx', __filename, '--floor-server', '--floor-bytes', String(FLOOR_BYTES)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const server = await whenListening(proc);
  try {
    const pollConns = await conns(server.port, USERS);
    let current = -1;
    /** Arrival time (ns) per poller of the current message's reply. */
    let arrivals: (bigint | undefined)[] = new Array(USERS);
    let pending: { i: number; r: Response }[] = [];
    let stopping = false;
    // The client does for the floor what it does for Parley (the same request sizes, a JSON.parse of
    // each reply): on two shared cores its work competes with the server's, so it must not differ.
    const queueIds = s.members.map(() => crypto.randomUUID());
    const lastEventId = new Array<number>(USERS).fill(-1);
    const park = (i: number) => {
      const url = '/park?' + new URLSearchParams({ queue_id: queueIds[i], last_event_id: String(lastEventId[i]) });
      pollConns[i].request('GET', url, s.members[i].auth).then((r) => {
        if (current >= 0) arrivals[i] = r.at;
        if (pending.length === 0) setImmediate(flush);
        pending.push({ i, r });
      });
    };
    const flush = () => {
      const batch = pending;
      pending = [];
      for (const { i, r } of batch) {
        const events = (JSON.parse(r.body) as { events: { id: number }[] }).events;
        for (const e of events) lastEventId[i] = Math.max(lastEventId[i], e.id);
        if (!stopping) park(i);
      }
    };
    for (let i = 0; i < USERS; i++) park(i);
    await sleep(1000);
    const sender = (await conns(server.port, 1))[0];
    const one = async (out: RoundStats): Promise<void> => {
      arrivals = new Array(USERS);
      current = 0;
      const r = await sender.request('GET', '/go', '');
      await collect(() => arrivals, r.at, out);
      current = -1;
      await sleep(GAP_MS);
    };
    return {
      one,
      end: (out) => void out.fromReply.sort((a, b) => a - b),
      async stop() {
        stopping = true;
        sender.close();
        for (const c of pollConns) c.close();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** "median (min-max)" of per-round values. */
const spread = (xs: number[], f: (x: number) => string) => `${f(median(xs))} (${f(Math.min(...xs))}-${f(Math.max(...xs))})`;

/**
 * Parts a and c: both servers hold USERS parked polls at once and take turns message by message
 * (Parley, the floor, Parley, ...; MESSAGES of each per round), so that a change in the machine's load
 * (other processes on the shared cores) falls on both sides of a ratio rather than deciding it.
 */
async function fanOut(s: Seeded, parts: string): Promise<string | null> {
  const withA = parts.includes('a');
  const withC = parts.includes('c');
  console.log(
    `\n(${withA ? 'a' : ''}${withC ? 'c' : ''}) fan-out latency: ${USERS} pollers, one parked poll each; ${ROUNDS} round(s) of ${MESSAGES} messages ` +
      `(+${WARMUP_MESSAGES} warm-up) one at a time${withA && withC ? ', Parley and the floor taking turns message by message' : ''}; ` +
      `latency = the poller has its whole reply − the sender has its reply; re-park ${REPARK_AFTER_ALL ? 'once every poller has the message' : 'at once'}`,
  );
  const parley = withA ? await startParley(s) : null;
  let floorSide: Side | null = null;
  try {
    if (parley) {
      await soloRound(parley, WARMUP_MESSAGES);
      console.log(`  one poll reply: ${FLOOR_BYTES} bytes of JSON (the floor writes the same size)`);
    }
    if (withC) {
      floorSide = await startFloor(s);
      await soloRound(floorSide, WARMUP_MESSAGES);
    }
    const ratios: { p50: number; last: number }[] = [];
    const a50: number[] = [];
    const c50: number[] = [];
    const aLast: number[] = [];
    const cLast: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`  round ${round}/${ROUNDS}, load average ${os.loadavg()[0].toFixed(2)}`);
      const ra = parley ? newRound() : null;
      const rc = floorSide ? newRound() : null;
      for (let m = 0; m < MESSAGES; m++) {
        if (ra) await parley!.one(ra);
        if (rc) await floorSide!.one(rc);
      }
      if (ra) {
        parley!.end(ra);
        console.log(roundLine('  Parley', ra));
        a50.push(p50Of(ra));
        aLast.push(lastP50Of(ra));
      }
      if (rc) {
        floorSide!.end(rc);
        console.log(roundLine('  floor ', rc));
        c50.push(p50Of(rc));
        cLast.push(lastP50Of(rc));
      }
      if (ra && rc) {
        const r = { p50: p50Of(ra) / p50Of(rc), last: lastP50Of(ra) / lastP50Of(rc) };
        ratios.push(r);
        console.log(`    Parley/floor: p50 ${r.p50.toFixed(2)}, last poller ${r.last.toFixed(2)}`);
      }
    }
    console.log(`  over ${ROUNDS} rounds, median (min-max) of the per-round numbers:`);
    if (parley) console.log(`    Parley: p50 ${spread(a50, ms)}, last poller ${spread(aLast, ms)}`);
    if (floorSide) console.log(`    floor:  p50 ${spread(c50, ms)}, last poller ${spread(cLast, ms)}`);
    if (parley) {
      const kb = parley.memPerQueueKb;
      console.log(`  memory per idle queue (VmRSS with ${USERS} registered queues − with none, / ${USERS}): ${kbStr(kb)}; target < 2 KB: ${kb < 2 ? 'PASS' : 'FAIL'}`);
    }
    if (ratios.length > 0) {
      const p = ratios.map((r) => r.p50);
      const l = ratios.map((r) => r.last);
      const f2 = (x: number) => x.toFixed(2);
      console.log(`  Parley/floor ratio, median (min-max) of ${ratios.length} rounds: p50 ${spread(p, f2)}, last poller ${spread(l, f2)}; target ≤ 1.15 on both: ${median(p) <= 1.15 && median(l) <= 1.15 ? 'PASS' : 'FAIL'}`);
      return `fan-out/floor median ratio: p50 ${f2(median(p))}, last poller ${f2(median(l))} (${ratios.length} rounds)`;
    }
    return null;
  } finally {
    await parley?.stop();
    await floorSide?.stop();
  }
}

async function main(): Promise<void> {
  console.log(`Parley event benchmarks, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.availableParallelism()}, Linux ${os.release()}, Node ${process.version}, ` +
      `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
  );
  const s = seed();
  const parts = opt.parts!;
  let ratioLine: string | null = null;
  try {
    if (parts.includes('a') || parts.includes('c')) ratioLine = await fanOut(s, parts);
    if (parts.includes('b')) await memory(s);
  } finally {
    fs.rmSync(s.dir, { recursive: true, force: true });
    hook.remove();
  }
  console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  // The summary the issue asks for comes last, so that `tail -1` is the result.
  if (ratioLine) console.log(ratioLine);
}

if (opt['floor-server']) floorServer();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });

// Web client benchmark, run by hand (`npm run bench:web` = `node --import tsx bench/web.ts`); prints
// numbers and exits 0 (non-zero only on a crash), never part of the tests.
//  (1) size: every JS and CSS file the app page loads at start (its <script>/<link rel=stylesheet> tags
//      and, recursively, every chunk those scripts import statically), raw and gzipped as served (the
//      bytes on the wire with Accept-Encoding: gzip). Budget: 120 KB gzipped in all (1 KB = 1024 bytes).
//  (2) first messages: an organization of 50 channels (the viewer subscribed to all) holding 10,000
//      messages (~500 unread for the viewer); headless Chromium, already logged in (the session cookie
//      put into the browser context), from page.goto('/') to the moment the first `article` is in the
//      Messages region, read in the page (a MutationObserver installed before the app's script, taking
//      performance.now(), i.e. ms since navigation start; its callback runs when the microtask that
//      drew the list ends, so the app's own work after drawing, such as reading layout, is included).
//      A fresh page per run on a warm server, alternating: a new browser context (cold HTTP cache) and
//      a new page in one long-lived context (warm cache). p50/p90/max; goal p50 < 400 ms. The split comes from the Performance API (navigation and
//      resource timing of the page, the script, POST /json/register and GET /json/messages).
//  (3) live delivery: 5 tabs (5 users, one browser context each) showing a topic (40 earlier messages,
//      read, so the view holds the newest; a list that does not reach the newest shows new messages only
//      once scrolled to, and this measures what appears without scrolling); another user sends
//      POST /api/v1/messages (Basic auth) from this process, ~100 ms apart; from the arrival of the POST
//      reply here to the moment the message's article is in each tab (MutationObserver again). One
//      clock: both sides read performance.timeOrigin + performance.now() (wall-clock based ms); the
//      offset between the two processes' readings is measured per tab (round trips of page.evaluate,
//      the sample with the shortest round trip) and subtracted. p50/p90 over all tabs and messages;
//      goal p50 < 150 ms.
// Data is seeded in this process through the server's own actions (doCreateRealm, doCreateUser,
// doCreateChannel, doSubscribe, doSendMessage, doUpdateFlags) into a temp data dir, with an injected
// clock spreading the messages over 30 days; then the server runs as its own process: by default a copy
// of the built executable dist/parley (web assets embedded), or with --server source the working tree
// (`node --import tsx src/main.ts`, web assets from dist/web). 127.0.0.1 only, rate limits off.
// Messages the page marks read during (2) are marked unread again after each run (POST
// /messages/flags), so every run sees the same unread set.
// Options: --runs N (25 per cache state) --warmup N (3) --messages N (10000) --channels N (50)
//          --tabs N (5) --live N (60 measured, after 5 warm-up) --gap-ms N (100) --parts 123
//          --server binary|source --binary PATH (dist/parley) --chromium PATH
//          --profile (one more cold load under Chromium's tracing: where the page's main thread spends
//          its time until the first article, by trace event and by JS function)
//          --trace FILE (with --profile: also write that trace, for chrome://tracing / Perfetto)
//          --css TEXT (an experiment: this style sheet is added to every page, with the page's CSP
//          bypassed, e.g. 'article { content-visibility: auto; contain-intrinsic-size: auto 80px }')
//          --page-size N (an experiment: the app's GET /json/messages asks num_before = num_after = N
//          instead of its own 50, rewritten in flight by a Playwright route, which adds its own delay
//          to that request: compare the "messages received → first article" phase, not the total)
//          --cpu-prof DIR (--server source only: the server writes a .cpuprofile there on exit)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { cpuSeconds, whenListening, type ServerProcess } from './server-process';
import { createApp, type App } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSubscribe } from '../src/actions/subscriptions';
import { doSendMessage } from '../src/actions/messages';
import { doUpdateFlags } from '../src/actions/flags';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { prng } from '../test/helpers/prng';

const ROOT = path.join(__dirname, '..');
const { values: opt } = parseArgs({
  options: {
    runs: { type: 'string', default: '25' },
    warmup: { type: 'string', default: '3' },
    messages: { type: 'string', default: '10000' },
    channels: { type: 'string', default: '50' },
    tabs: { type: 'string', default: '5' },
    live: { type: 'string', default: '60' },
    'gap-ms': { type: 'string', default: '100' },
    parts: { type: 'string', default: '123' },
    server: { type: 'string', default: 'binary' },
    binary: { type: 'string', default: path.join(ROOT, 'dist', 'parley') },
    chromium: { type: 'string' },
    profile: { type: 'boolean', default: false },
    css: { type: 'string' },
    'page-size': { type: 'string' },
    trace: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const RUNS = Number(opt.runs);
const WARMUP = Number(opt.warmup);
const MESSAGES = Number(opt.messages);
const CHANNELS = Number(opt.channels);
const TABS = Number(opt.tabs);
const LIVE = Number(opt.live);
const LIVE_WARMUP = 5;
const GAP_MS = Number(opt['gap-ms']);
const PASSWORD = 'benchmark-pw';
const BUDGET_KB = 120;
const FIRST_GOAL_MS = 400;
const LIVE_GOAL_MS = 150;
const VIEWPORT = { width: 1280, height: 800 };
const LIVE_TOPIC = 'live bench';

/** Wall-clock-based ms, the same reading the pages take (performance.timeOrigin + performance.now()). */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Nearest-rank percentile of an ascending array. */
const pct = (sorted: number[], q: number) => sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))];
const ms = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '   n/a' : `${x.toFixed(1)} ms`.padStart(9));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const basic = (email: string, key: string) => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

interface Stats {
  n: number;
  p50: number;
  p90: number;
  max: number;
  min: number;
}
function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 0.5), p90: pct(s, 0.9), max: s[s.length - 1], min: s[0] };
}
const fmtStats = (s: Stats) => `p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  max ${ms(s.max)}  (min ${s.min.toFixed(1)}, n=${s.n})`;

// --- seeding -----------------------------------------------------------------------------------------------

interface Person {
  id: number;
  email: string;
  apiKey: string;
  name: string;
}

interface Seeded {
  dir: string;
  viewers: Person[];
  sender: Person;
  channels: { id: number; name: string }[];
  messageCount: number;
  unreadPerViewer: number;
}

const WORDS = (
  'the a we it this that deploy build review merge branch release test flaky server client queue cache ' +
  'latency index query schema migration ticket customer meeting lunch tomorrow today friday design draft ' +
  'proposal budget numbers report dashboard alert outage fix patch rollback config staging production ' +
  'should could would maybe probably definitely agree think looks works breaks again later soon after before ' +
  'with without into over under about around because since until while and or but so then also just really'
).split(' ');
const CHANNEL_NAMES = (
  'general engineering design product support sales marketing random announcements backend frontend mobile ' +
  'infra security data ops releases qa docs hiring social finance legal research platform api web android ' +
  'ios desktop performance reliability incidents oncall billing growth analytics ml search storage network ' +
  'build tooling ux accessibility i18n partners events feedback'
).split(' ');
const TOPICS = ['standup', 'weekly sync', 'release 2.4', 'bug triage', 'planning', 'questions', 'ideas', 'status', 'retro', 'lunch'];

/** A chat-like message: a sentence or a few, sometimes with Markdown (emphasis, code, links, lists, quotes). */
function messageText(rnd: () => number, mention: string): string {
  const sentence = () => {
    const n = 4 + Math.floor(rnd() * 18);
    const w = Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return w.join(' ') + (rnd() < 0.15 ? '?' : '.');
  };
  let text = Array.from({ length: 1 + Math.floor(rnd() * 3) }, sentence).join(' ');
  const r = rnd();
  if (r < 0.1) text = text.replace(/(\w+) (\w+)/, '**$1 $2**');
  else if (r < 0.18) text += ' See `config.yaml` line ' + Math.floor(rnd() * 400) + '.';
  else if (r < 0.23) text += ` https://example.com/tickets/${Math.floor(rnd() * 10000)}`;
  else if (r < 0.26) text += '\n```\n$ npm run build\nerror: exit code ' + Math.floor(rnd() * 3) + '\n```';
  else if (r < 0.29) text += '\n- ' + sentence() + '\n- ' + sentence();
  else if (r < 0.31) text = '> ' + sentence() + '\n\n' + text;
  else if (r < 0.32) text = mention + ' ' + text;
  return text;
}

/** The organization, through the actions, with an injected clock; the app is closed at the end. */
function seed(): Seeded {
  const t0 = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-web-'));
  const config = configFromEnv({});
  config.dataDir = path.join(dir, 'data');
  const end = Date.now() - 60_000;
  let clockMs = end - 30 * 86_400_000;
  const app: App = createApp(config, { clock: { nowMs: () => clockMs } });
  const { realmId, owner } = doCreateRealm(app, { name: 'Bench Web', ownerEmail: 'owner@bench.example.com', ownerPassword: PASSWORD, ownerFullName: 'Olivia Owner' });
  // As the test server does: no Notification Bot message per new channel (the counts below are exact).
  app.db.prepare(`UPDATE realm SET extra_settings = json_set(extra_settings, '$.send_channel_events_messages', json('false')) WHERE id = ?`).run(realmId);
  app.batch.commit();
  const make = (email: string, name: string, password: string | null): Person => {
    const u = doCreateUser(app, { realmId, email, password, fullName: name, role: ROLE.MEMBER, acting: null });
    return { id: u.userId, email, apiKey: u.apiKey, name };
  };
  const viewers = Array.from({ length: Math.max(TABS, 1) }, (_, i) => make(`viewer${i}@bench.example.com`, `Viewer ${i}`, PASSWORD));
  const senders = Array.from({ length: 12 }, (_, i) => make(`sender${i}@bench.example.com`, `Sender ${i}`, null));
  const live = make('live@bench.example.com', 'Live Sender', null);
  app.batch.commit();
  const row = (id: number) => findUserById(app.db, realmId, id) as UserRow;
  const ownerRow = row(owner.userId);
  const channels: Seeded['channels'] = [];
  for (let i = 0; i < CHANNELS; i++) {
    const name = CHANNEL_NAMES[i % CHANNEL_NAMES.length] + (i >= CHANNEL_NAMES.length ? `-${Math.floor(i / CHANNEL_NAMES.length)}` : '');
    channels.push({ id: doCreateChannel(app, ownerRow, realmId, { name, description: `All about ${name}.` }).id, name });
  }
  app.batch.commit();
  const everyone = [ownerRow, ...[...viewers, ...senders, live].map((p) => row(p.id))];
  doSubscribe(app, ownerRow, { streams: channels.map((c) => ({ name: c.name })), principals: everyone, authorizationErrorsFatal: true, channelSpec: {} });
  app.batch.commit();

  // Messages: a few busy channels and a long tail (weight 1/(k+1)), 10 topics each, a dozen senders.
  const rnd = prng(42);
  const weights = channels.map((_, k) => 1 / (k + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const pickChannel = () => {
    let x = rnd() * total;
    for (let k = 0; k < weights.length; k++) if ((x -= weights[k]) <= 0) return k;
    return weights.length - 1;
  };
  const senderRows = senders.map((p) => row(p.id));
  const step = (end - clockMs) / MESSAGES;
  const ids: number[] = [];
  const byChannel: number[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    clockMs += step * (0.5 + rnd());
    const k = pickChannel();
    const topic = TOPICS[Math.floor(rnd() * (3 + (k % 8)))];
    const content = messageText(rnd, `@**${viewers[Math.floor(rnd() * viewers.length)].name}**`);
    ids.push(doSendMessage(app, senderRows[Math.floor(rnd() * senderRows.length)], { to: { kind: 'channel', streamId: channels[k].id, topic }, content }).id);
    byChannel.push(k);
    if (i % 200 === 199) app.batch.commit();
  }
  app.batch.commit();
  // Unread for each viewer: the newest 300 (away for the afternoon) and every message since the middle
  // of the history in two quiet channels (~100); everything else read.
  const unread = new Set<number>();
  ids.forEach((id, i) => {
    if (i >= ids.length - 300 || (i >= ids.length / 2 && (byChannel[i] === 7 || byChannel[i] === 11))) unread.add(id);
  });
  // The topic the live part (3) watches: some history, all read, so that its view holds the newest
  // messages (a list that does not reach the newest shows new messages only when scrolled to).
  for (let i = 0; i < 40; i++) {
    clockMs = end + i * 1000;
    ids.push(doSendMessage(app, senderRows[i % senderRows.length], { to: { kind: 'channel', streamId: channels[0].id, topic: LIVE_TOPIC }, content: messageText(rnd, '') }).id);
  }
  app.batch.commit();
  const read = ids.filter((id) => !unread.has(id));
  for (const v of viewers) {
    for (let i = 0; i < read.length; i += 2000) doUpdateFlags(app, row(v.id), read.slice(i, i + 2000), 'read', 'add');
    app.batch.commit();
  }
  app.close();
  console.log(
    `seeded through the actions in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${CHANNELS} channels, ${ids.length} messages over 30 days, ` +
      `${viewers.length} viewer${viewers.length === 1 ? '' : 's'} + ${senders.length} senders + 1 live sender + owner, all subscribed to every channel; ${unread.size} unread per viewer`,
  );
  return { dir, viewers, sender: live, channels, messageCount: ids.length, unreadPerViewer: unread.size };
}

// --- the server ----------------------------------------------------------------------------------------------

interface Running extends ServerProcess {
  url: string;
  describe: string;
}

async function startServer(s: Seeded): Promise<Running> {
  const serveArgs = ['serve', '--data-dir', path.join(s.dir, 'data'), '--host', '127.0.0.1', '--port', '0', '--no-rate-limits'];
  let proc;
  let describe: string;
  if (opt.server === 'source') {
    const prof = opt['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(opt['cpu-prof'])] : [];
    proc = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...serveArgs], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const manifest = path.join(ROOT, 'dist', 'web', 'manifest.json');
    describe = `node --import tsx src/main.ts serve (the working tree, own process; web assets from dist/web, built ${fs.existsSync(manifest) ? fs.statSync(manifest).mtime.toISOString() : 'NOT BUILT'})`;
  } else {
    const source = path.resolve(opt.binary!);
    if (!fs.existsSync(source)) throw new Error(`${source} is missing: run npm run build (or use --server source)`);
    // A copy, as an installation would run it (and safe from a rebuild during the run).
    const binary = path.join(s.dir, 'parley');
    fs.copyFileSync(source, binary);
    fs.chmodSync(binary, 0o755);
    proc = spawn(binary, serveArgs, { cwd: s.dir, env: { ...process.env, PARLEY_CACHE_DIR: path.join(s.dir, 'cache') }, stdio: ['ignore', 'pipe', 'inherit'] });
    describe = `a copy of ${path.relative(ROOT, source) || source} (the built executable, web assets embedded; built ${fs.statSync(source).mtime.toISOString()}), own process`;
  }
  const running = await whenListening(proc);
  return { ...running, url: `http://127.0.0.1:${running.port}`, describe };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as it came over the wire (not decompressed). */
  body: Buffer;
  /** now() when the last byte of the response arrived. */
  at: number;
}

function request(url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), at: now() }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const form = (params: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();

async function api(base: string, who: Person, method: string, p: string, params: Record<string, unknown>): Promise<Raw> {
  const res = await request(base + '/api/v1' + p, method, { authorization: basic(who.email, who.apiKey), 'content-type': 'application/x-www-form-urlencoded' }, form(params));
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${res.body.toString()}`);
  return res;
}

/** Logs in through POST /login: the session cookie's value. */
async function login(base: string, who: Person): Promise<string> {
  const res = await request(base + '/login', 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, form({ username: who.email, password: PASSWORD }));
  const m = /parley_session=([^;]+)/.exec(String(res.headers['set-cookie'] ?? ''));
  if (res.status !== 303 || !m) throw new Error(`login of ${who.email}: ${res.status} ${res.body.toString()}`);
  return m[1];
}

// --- (1) sizes ---------------------------------------------------------------------------------------------

interface Asset {
  url: string;
  kind: 'js' | 'css';
  raw: number;
  gzip: number;
  encoding: string;
}

/** Chunks the app's JS loads on demand (import()), found while reading it. */
const lazyChunks = new Set<string>();

/** The app page's JS and CSS: its tags, then every chunk a script imports statically (not import()). */
async function sizes(base: string, session: string): Promise<{ assets: Asset[]; html: number }> {
  const page = await request(base + '/', 'GET', { cookie: `parley_session=${session}` });
  if (page.status !== 200) throw new Error(`GET / answered ${page.status}`);
  const htmlText = page.body.toString();
  const found: { url: string; kind: 'js' | 'css' }[] = [];
  const add = (url: string, kind: 'js' | 'css') => {
    if (!found.some((f) => f.url === url)) found.push({ url, kind });
  };
  for (const m of htmlText.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)) add(m[1], 'js');
  for (const m of htmlText.matchAll(/<link\b[^>]*>/g)) {
    const href = /\bhref="([^"]+)"/.exec(m[0])?.[1];
    if (!href) continue;
    if (/\brel="stylesheet"/.test(m[0])) add(href, 'css');
    else if (/\brel="modulepreload"/.test(m[0])) add(href, 'js');
  }
  const assets: Asset[] = [];
  for (let i = 0; i < found.length; i++) {
    const { url, kind } = found[i];
    const abs = new URL(url, base + '/').toString();
    const identity = await request(abs, 'GET', { 'accept-encoding': 'identity' });
    const gz = await request(abs, 'GET', { 'accept-encoding': 'gzip' });
    if (identity.status !== 200 || gz.status !== 200) throw new Error(`${url}: ${identity.status}/${gz.status}`);
    const encoding = String(gz.headers['content-encoding'] ?? 'identity');
    if (encoding === 'gzip' && !zlib.gunzipSync(gz.body).equals(identity.body)) throw new Error(`${url}: the gzip body differs from the plain one`);
    assets.push({ url, kind, raw: identity.body.length, gzip: gz.body.length, encoding });
    if (kind === 'js') {
      // Static imports in esbuild's output: `import{a as b}from"./chunk-X.js"`, `import"./chunk-X.js"`,
      // `export{...}from"./x.js"`; `import("./x.js")` (loaded on demand) is not matched.
      const text = identity.body.toString();
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*)["']([^"']+\.m?js)["']/g)) add(new URL(m[1], abs).pathname, 'js');
      for (const m of text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g)) lazyChunks.add(new URL(m[1], abs).pathname);
    }
  }
  return { assets, html: page.body.length };
}
// --- the browser -------------------------------------------------------------------------------------------

// Runs in every page before the app's script (as a string: the bench is typechecked without DOM types).
// Records, in ms since navigation start, when the Messages region first holds an article and the next
// animation frame after that; and, once __bench.live is switched on, when each live token (lv-R-N) first
// appears in an article (absolute: timeOrigin + now), with the end of every /json/events response.
const PAGE_PROBE = `(() => {
  if (window.__bench) return;
  const b = { first: null, firstFrame: null, firstCount: 0, live: false, seen: {}, frames: {}, events: [], requests: {}, version0: 0 };
  window.__bench = b;
  try { performance.setResourceTimingBufferSize(10000); } catch (e) {}
  const abs = () => performance.timeOrigin + performance.now();
  const TOKEN = /\\blv-\\d+-\\d+\\b/g;
  const scan = (article, t, fresh) => {
    const text = article.textContent || '';
    for (const m of text.matchAll(TOKEN)) if (!(m[0] in b.seen)) { b.seen[m[0]] = t; fresh.push(m[0]); }
  };
  new MutationObserver((records) => {
    if (b.first === null) {
      const region = document.querySelector('section[aria-label="Messages"]');
      const first = region && region.querySelector('article');
      if (first) {
        b.first = performance.now();
        performance.mark('bench-first-article');
        b.firstCount = region.querySelectorAll('article').length;
        requestAnimationFrame(() => { b.firstFrame = performance.now(); });
      }
    }
    if (!b.live) return;
    const t = abs();
    const fresh = [];
    const articles = new Set();
    for (const r of records) {
      const nodes = r.type === 'childList' ? [...r.addedNodes] : [r.target];
      for (const n of nodes) {
        const el = n.nodeType === 1 ? n : n.parentElement;
        if (!el) continue;
        const inside = el.closest('article');
        if (inside) articles.add(inside);
        else for (const a of el.querySelectorAll('article')) articles.add(a);
      }
    }
    for (const a of articles) scan(a, t, fresh);
    if (fresh.length) requestAnimationFrame(() => { const f = abs(); for (const k of fresh) b.frames[k] = f; });
  }).observe(document, { childList: true, subtree: true, characterData: true });
  new PerformanceObserver((list) => {
    if (!b.live) return;
    for (const e of list.getEntries()) {
      const p = new URL(e.name).pathname;
      b.requests[p] = (b.requests[p] || 0) + 1;
      if (p === '/json/events') b.events.push({ start: performance.timeOrigin + e.startTime, end: performance.timeOrigin + e.responseEnd });
    }
  }).observe({ type: 'resource' });
})();`;

// Predicates for waitForFunction: functions, not strings (a string would be eval()ed, which the page's
// CSP forbids), each self-contained (only its source text reaches the page); globalThis is the page's
// window (no DOM types here).
const firstDrawn = () => (globalThis as any).__bench?.firstFrame != null;
const appIdle = () => (globalThis as any).parley?.ui.fetching.size === 0;

/** What a load's Performance API shows, in ms since navigation start. */
interface LoadTiming {
  first: number;
  firstFrame: number;
  articles: number;
  docResponseEnd: number;
  domContentLoaded: number;
  scriptEnd: number;
  cssEnd: number;
  registerStart: number;
  registerEnd: number;
  messagesStart: number;
  messagesEnd: number;
  registerBytes: number;
  messagesBytes: number;
  /** The JS/CSS files the page fetched before the first article. */
  loaded: string[];
}

const READ_TIMING = `(() => {
  const b = window.__bench;
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const find = (re) => res.find((e) => re.test(new URL(e.name).pathname));
  const sc = find(/\\/static\\/web\\/app-[^/]*\\.js$/), css = find(/\\.css$/), reg = find(/^\\/json\\/register$/), msg = find(/^\\/json\\/messages$/);
  return {
    first: b.first, firstFrame: b.firstFrame, articles: b.firstCount,
    docResponseEnd: nav ? nav.responseEnd : NaN, domContentLoaded: nav ? nav.domContentLoadedEventEnd : NaN,
    scriptEnd: sc ? sc.responseEnd : NaN, cssEnd: css ? css.responseEnd : NaN,
    registerStart: reg ? reg.startTime : NaN, registerEnd: reg ? reg.responseEnd : NaN,
    messagesStart: msg ? msg.startTime : NaN, messagesEnd: msg ? msg.responseEnd : NaN,
    registerBytes: reg ? reg.encodedBodySize : NaN, messagesBytes: msg ? msg.encodedBodySize : NaN,
    loaded: res.filter((e) => e.startTime <= b.first && /\\.(js|css)$/.test(new URL(e.name).pathname)).map((e) => new URL(e.name).pathname),
  };
})()`;

function launch(): Promise<Browser> {
  const candidates = [opt.chromium, process.env.PARLEY_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter(Boolean) as string[];
  const executablePath = candidates.find((p) => fs.existsSync(p));
  if (!executablePath) throw new Error('No Chromium found: apt-get install -y chromium, or --chromium PATH');
  // The browser tests' flags (test/helpers/browser.ts).
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

async function newContext(browser: Browser, base: string, session: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORT, bypassCSP: opt.css !== undefined });
  if (opt.css !== undefined) {
    await context.addInitScript(
      `document.addEventListener('DOMContentLoaded', () => { const s = document.createElement('style'); s.textContent = ${JSON.stringify(opt.css)}; document.head.append(s); });`,
    );
  }
  await context.addCookies([{ name: 'parley_session', value: session, url: base }]);
  await context.route('https://secure.gravatar.com/**', (route) => route.abort());
  await context.addInitScript(PAGE_PROBE);
  if (opt['page-size'] !== undefined) {
    await context.route(
      (u) => u.pathname === '/json/messages',
      (route) => {
        const u = new URL(route.request().url());
        if (u.searchParams.get('num_before') !== '0') u.searchParams.set('num_before', opt['page-size'] as string);
        if (u.searchParams.get('num_after') !== '0') u.searchParams.set('num_after', opt['page-size'] as string);
        void route.continue({ url: u.toString() });
      },
    );
  }
  return context;
}

/** Read marks the page sends (POST /json/messages/flags add read): the ids, and a wait for the requests. */
function watchReads(page: Page): { ids: number[]; settled(): Promise<void> } {
  const ids: number[] = [];
  const pending = new Set<Request>();
  const done = (r: Request) => pending.delete(r);
  page.on('request', (r) => {
    if (r.method() !== 'POST' || new URL(r.url()).pathname !== '/json/messages/flags') return;
    const q = new URLSearchParams(r.postData() ?? '');
    if (q.get('flag') === 'read' && q.get('op') === 'add') {
      ids.push(...(JSON.parse(q.get('messages') ?? '[]') as number[]));
      pending.add(r);
    }
  });
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return {
    ids,
    async settled() {
      for (let i = 0; i < 100 && pending.size; i++) await sleep(20);
    },
  };
}

/** Every process descended from this one except the server's tree: Chromium's. */
function chromiumPids(serverPid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      parent.set(Number(d), Number(fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]));
    } catch {
      // gone
    }
  }
  const under = (pid: number, root: number): boolean => {
    for (let p = pid, i = 0; p > 1 && i < 50; p = parent.get(p) ?? 0, i++) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter((p) => p !== process.pid && under(p, process.pid) && !under(p, serverPid));
}
/**
 * CPU seconds of those processes by kind (browser, renderer, gpu, network, other utility), with the
 * time of their exited children (renderers of closed contexts, reaped by the zygote) as "exited".
 */
function chromiumCpu(pids: number[]): Map<string, number> {
  const out = new Map<string, number>();
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v);
  for (const p of pids) {
    try {
      const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const type = /--type=([\w-]+)/.exec(cmd)?.[1];
      const kind = !type ? 'browser' : type === 'utility' ? (/NetworkService/.test(cmd) ? 'network' : 'utility') : type === 'gpu-process' ? 'gpu' : type;
      add(kind, (Number(f[11]) + Number(f[12])) / 100);
      add('exited', (Number(f[13]) + Number(f[14])) / 100);
    } catch {
      // gone
    }
  }
  return out;
}
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
/** "renderer 120 %, gpu 30 %, ..." for the difference of two readings over `seconds`. */
function cpuBreakdown(a: Map<string, number>, b: Map<string, number>, seconds: number): string {
  return [...b.keys()]
    .map((k) => [k, (b.get(k) ?? 0) - (a.get(k) ?? 0)] as const)
    .filter(([, v]) => v > 0.005)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${((v / seconds) * 100).toFixed(0)} %`)
    .join(', ');
}

// --- (2) first messages ----------------------------------------------------------------------------------

interface LoadResult {
  timing: LoadTiming;
  /** now() at the page.goto() call to the first article on the page's clock (both wall-clock based ms; part 3 measures their offset at well under 1 ms). */
  fromGoto: number;
  reads: number;
}

async function loadOnce(context: BrowserContext, base: string, viewer: Person): Promise<LoadResult> {
  const page = await context.newPage();
  const reads = watchReads(page);
  const t0 = now();
  await page.goto(base + '/', { waitUntil: 'commit' });
  await page.waitForFunction(firstDrawn, null, { polling: 20, timeout: 60_000 });
  const timing = (await page.evaluate(READ_TIMING)) as LoadTiming;
  const origin = (await page.evaluate('performance.timeOrigin')) as number;
  // Let the app settle (its fetches done, read marks sent) before closing, so that nothing lands later.
  await page.waitForFunction(appIdle, null, { polling: 20, timeout: 30_000 });
  await sleep(150);
  await reads.settled();
  await page.close();
  if (reads.ids.length) await api(base, viewer, 'POST', '/messages/flags', { messages: [...new Set(reads.ids)], op: 'remove', flag: 'read' });
  return { timing, fromGoto: origin + timing.first - t0, reads: reads.ids.length };
}

async function firstMessages(browser: Browser, base: string, s: Seeded, session: string, serverPid: number): Promise<Record<string, LoadResult[]>> {
  const viewer = s.viewers[0];
  const out: Record<string, LoadResult[]> = {};
  console.log(`\n(2) navigation to the first messages: ${s.viewers[0].email}, home view, ${RUNS} runs per cache state after ${WARMUP} warm-up loads`);
  // Warm the server (and Chromium) first.
  for (let i = 0; i < WARMUP; i++) {
    const c = await newContext(browser, base, session);
    await loadOnce(c, base, viewer);
    await c.close();
  }
  const chrome0 = chromiumCpu(chromiumPids(serverPid));
  const server0 = cpuSeconds(serverPid);
  const started = now();
  // Cold HTTP cache: a new context (its own cookie jar and cache) per run. Warm HTTP cache: one context,
  // a new page per run (the hashed files come from its cache). Interleaved, so that other work on the
  // machine weighs on both alike.
  out.cold = [];
  out.warm = [];
  const warm = await newContext(browser, base, session);
  await loadOnce(warm, base, viewer);
  const load0 = os.loadavg()[0];
  for (let i = 0; i < RUNS; i++) {
    const c = await newContext(browser, base, session);
    out.cold.push(await loadOnce(c, base, viewer));
    await c.close();
    out.warm.push(await loadOnce(warm, base, viewer));
  }
  await warm.close();
  const seconds = (now() - started) / 1000;
  const chrome1 = chromiumCpu(chromiumPids(serverPid));
  const chromeCpu = total(chrome1) - total(chrome0);
  const serverCpu = cpuSeconds(serverPid) - server0;

  for (const [label, results] of Object.entries(out)) {
    const t = results.map((r) => r.timing);
    const col = (f: (x: LoadTiming) => number) => stats(t.map(f).filter((x) => !Number.isNaN(x)));
    console.log(`  ${label} HTTP cache (${label === 'cold' ? 'a new browser context per run' : 'new pages in one context'}):`);
    console.log(`    first article in the DOM           ${fmtStats(col((x) => x.first))}  goal p50 < ${FIRST_GOAL_MS} ms: ${col((x) => x.first).p50 < FIRST_GOAL_MS ? 'PASS' : 'FAIL'}`);
    console.log(`    next animation frame after it      ${fmtStats(col((x) => x.firstFrame))}`);
    console.log(`    page.goto() call → first article   ${fmtStats(stats(results.map((r) => r.fromGoto)))}  (Node's clock at the call; includes the CDP round trip)`);
    console.log(`    split (p50 of each mark, ms since navigation start):`);
    const marks: [string, (x: LoadTiming) => number][] = [
      ['document response end', (x) => x.docResponseEnd],
      ['CSS response end', (x) => x.cssEnd],
      ['app JS response end', (x) => x.scriptEnd],
      ['POST /json/register sent', (x) => x.registerStart],
      ['POST /json/register response end', (x) => x.registerEnd],
      ['GET /json/messages sent', (x) => x.messagesStart],
      ['GET /json/messages response end', (x) => x.messagesEnd],
      ['first article in the DOM', (x) => x.first],
      ['DOMContentLoaded end', (x) => x.domContentLoaded],
    ];
    for (const [name, f] of marks) console.log(`      ${name.padEnd(36)} ${ms(col(f).p50)}`);
    const phase = (a: (x: LoadTiming) => number, b: (x: LoadTiming) => number) => stats(t.map((x) => b(x) - a(x)).filter((x) => !Number.isNaN(x))).p50;
    console.log(
      `    phases (p50 of per-run differences): HTML ${ms(phase(() => 0, (x) => x.docResponseEnd))}, JS fetched ${ms(phase((x) => x.docResponseEnd, (x) => x.scriptEnd))}, ` +
        `JS run → register sent ${ms(phase((x) => x.scriptEnd, (x) => x.registerStart))}, register round trip ${ms(phase((x) => x.registerStart, (x) => x.registerEnd))}, ` +
        `register handled → messages sent ${ms(phase((x) => x.registerEnd, (x) => x.messagesStart))}, messages round trip ${ms(phase((x) => x.messagesStart, (x) => x.messagesEnd))}, ` +
        `messages received → first article ${ms(phase((x) => x.messagesEnd, (x) => x.first))}`,
    );
    const last = t[t.length - 1];
    console.log(
      `    register body ${kb(last.registerBytes)}, messages body ${kb(last.messagesBytes)} (encoded sizes), ${last.articles} articles drawn at once; ` +
        `read marks sent per run (undone after each): p50 ${stats(results.map((r) => r.reads)).p50}`,
    );
  }
  const loadedSets = new Set(out.cold.map((r) => r.timing.loaded.filter((u) => u.startsWith('/static/')).sort().join(' ')));
  console.log(`  JS/CSS the page fetched before the first article: ${[...loadedSets].join(' | ')}`);
  console.log(
    `  load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}; CPU over the ${2 * RUNS + 1} loads (${seconds.toFixed(1)} s): Chromium (all its processes) ${(chromeCpu / seconds * 100).toFixed(0)} % of a core ` +
      `(${((chromeCpu / (2 * RUNS + 1)) * 1000).toFixed(0)} ms per load), server ${(serverCpu / seconds * 100).toFixed(0)} % (${((serverCpu / (2 * RUNS + 1)) * 1000).toFixed(0)} ms per load); Chromium by process: ${cpuBreakdown(chrome0, chrome1, seconds)}`,
  );
  return out;
}

// --- profile of one load -------------------------------------------------------------------------------

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  id?: string;
  args?: any;
}

const TRACE_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.execute', 'blink', 'blink.user_timing', 'loading', 'disabled-by-default-v8.cpu_profiler'];

/**
 * Where a renderer's main thread spent [from, to] (trace clock, µs): self time by trace event (complete
 * events nest by time on one thread) and, from the sampling profiler's chunks, by JS function (the app's
 * files are minified: each function is shown with the start of its code). `per` divides every figure
 * (e.g. by the number of messages).
 */
async function summarizeTrace(events: TraceEvent[], pid: number, tid: number, from: number, to: number, base: string, per = 1): Promise<void> {
  const xs = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X' && e.dur !== undefined && e.ts < to && e.ts + (e.dur ?? 0) > from).sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const self = new Map<string, number>();
  const stack: { e: TraceEvent; child: number }[] = [];
  const clip = (e: TraceEvent) => Math.min(to, e.ts + (e.dur ?? 0)) - Math.max(from, e.ts);
  const pop = () => {
    const top = stack.pop() as { e: TraceEvent; child: number };
    self.set(top.e.name, (self.get(top.e.name) ?? 0) + clip(top.e) - top.child);
    if (stack.length) stack[stack.length - 1].child += clip(top.e);
  };
  for (const e of xs) {
    while (stack.length && stack[stack.length - 1].e.ts + (stack[stack.length - 1].e.dur ?? 0) <= e.ts) pop();
    stack.push({ e, child: 0 });
  }
  while (stack.length) pop();
  const busy = [...self.values()].reduce((a, b) => a + b, 0);
  const f = (us: number) => (us / 1000 / per).toFixed(1);
  console.log(`    main thread busy ${f(busy)} ms of ${f(to - from)} ms; self time by trace event (ms):`);
  console.log('      ' + [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([n, t]) => `${n} ${f(t)}`).join(', '));
  // The sampling profiler: 'Profile' gives each profile's start time, its 'ProfileChunk's the samples.
  const starts = new Map<string, number>();
  for (const e of events) if (e.name === 'Profile' && e.pid === pid && e.id !== undefined) starts.set(e.id, e.args?.data?.startTime ?? e.ts);
  const nodes = new Map<number, { callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }>();
  const selfByNode = new Map<number, number>();
  const clock = new Map<string, number>();
  for (const e of events) {
    if (e.name !== 'ProfileChunk' || e.pid !== pid || e.id === undefined || !starts.has(e.id)) continue;
    const data = e.args?.data;
    for (const n of data?.cpuProfile?.nodes ?? []) nodes.set(n.id, n);
    const samples: number[] = data?.cpuProfile?.samples ?? [];
    const deltas: number[] = data?.timeDeltas ?? [];
    let t = clock.get(e.id) ?? (starts.get(e.id) as number);
    for (let i = 0; i < samples.length; i++) {
      t += deltas[i] ?? 0;
      const next = deltas[i + 1] ?? 0;
      if (t >= from && t < to) selfByNode.set(samples[i], (selfByNode.get(samples[i]) ?? 0) + next);
    }
    clock.set(e.id, t);
  }
  const sources = new Map<string, string[]>();
  const snippet = async (url: string, line: number, col: number) => {
    if (!/\/static\/web\/.*\.js$/.test(url)) return '';
    if (!sources.has(url)) sources.set(url, (await request(new URL(url, base).toString(), 'GET')).body.toString().split('\n'));
    return ((sources.get(url) as string[])[line]?.slice(col, col + 60) ?? '').replace(/\s+/g, ' ');
  };
  const byFn = new Map<string, number>();
  for (const [id, us] of selfByNode) {
    const c = nodes.get(id)?.callFrame;
    if (!c) continue;
    const file = c.url ? path.basename(new URL(c.url, base).pathname) : '';
    const code = c.url ? await snippet(c.url, c.lineNumber, c.columnNumber) : '';
    const key = `${c.functionName || '(anonymous)'}${file ? ` ${file}:${c.lineNumber + 1}:${c.columnNumber + 1}` : ''}${code ? `  ${code}` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  if (byFn.size) {
    console.log(`    JS sampling profile, top self time (ms; a function that forces style and layout, e.g. by reading getBoundingClientRect, carries that time; (program) is native work outside JS):`);
    for (const [k, us] of [...byFn.entries()].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`      ${f(us).padStart(6)}  ${k}`);
  }
}

const parseTrace = (buf: Buffer) => ((JSON.parse(buf.toString()) as { traceEvents: TraceEvent[] }).traceEvents ?? []).filter((e) => e.ts !== undefined);

/** One cold load under Chromium's tracing: the renderer main thread's time until the first article. */
async function profileLoad(browser: Browser, base: string, session: string, viewer: Person): Promise<void> {
  const context = await newContext(browser, base, session);
  await browser.startTracing(undefined, { categories: TRACE_CATEGORIES });
  const r = await loadOnce(context, base, viewer);
  const buf = await browser.stopTracing();
  await context.close();
  if (opt.trace) fs.writeFileSync(path.resolve(opt.trace), buf);
  const events = parseTrace(buf);
  const mark = events.find((e) => e.name === 'bench-first-article');
  if (!mark) {
    console.log('  profile: no first-article mark in the trace');
    return;
  }
  // Navigation start: the app page's own (not about:blank's, nor the SVG favicon's document's).
  const navStart =
    events
      .filter((e) => e.pid === mark.pid && e.name === 'navigationStart' && String(e.args?.data?.documentLoaderURL ?? '').startsWith(base) && e.ts < mark.ts)
      .map((e) => e.ts)
      .sort((a, b) => a - b)
      .pop() ?? mark.ts - 1e6;
  console.log(`  profile of one more cold load under tracing (slower than untraced: first article at ${r.timing.first.toFixed(1)} ms), renderer main thread from navigation start to the first article:`);
  await summarizeTrace(events, mark.pid, mark.tid, navStart, mark.ts, base);
  if (opt.trace) console.log(`    trace written to ${opt.trace}`);
}

/** The app's own first two requests, replayed from Node with its cookies: the server's share of a load. */
async function serverSide(base: string, session: string, browser: Browser): Promise<void> {
  const context = await newContext(browser, base, session);
  const page = await context.newPage();
  const captured: { register?: string; messages?: string } = {};
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname === '/json/register' && !captured.register) captured.register = r.postData() ?? '';
    if (u.pathname === '/json/messages' && !captured.messages) captured.messages = u.search;
  });
  await page.goto(base + '/');
  await page.waitForFunction(firstDrawn, null, { polling: 20, timeout: 60_000 });
  const csrf = (await context.cookies(base)).find((c) => c.name === 'csrftoken')?.value ?? '';
  await page.close();
  await context.close();
  const cookie = `parley_session=${session}; csrftoken=${csrf}`;
  const time = async (fn: () => Promise<Raw>, n: number) => {
    const xs: number[] = [];
    let body: Buffer = Buffer.alloc(0);
    for (let i = 0; i < n; i++) {
      const t0 = now();
      const r = await fn();
      if (r.status !== 200) throw new Error(`replay answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
      xs.push(r.at - t0);
      body = r.body;
    }
    return { s: stats(xs), bytes: body.length, gzip: zlib.gzipSync(body).length };
  };
  const headers = { cookie, 'x-csrftoken': csrf, 'content-type': 'application/x-www-form-urlencoded', 'accept-encoding': 'identity' };
  const html = await time(() => request(base + '/', 'GET', { cookie }), 20);
  const reg = await time(() => request(base + '/json/register', 'POST', headers, captured.register ?? ''), 20);
  const msgs = await time(() => request(base + '/json/messages' + (captured.messages ?? ''), 'GET', { cookie }), 20);
  const gzipped = (await request(base + '/json/register', 'POST', { ...headers, 'accept-encoding': 'gzip' }, captured.register ?? '')).headers['content-encoding'] ?? 'none';
  console.log(`  the same requests from Node (keep-alive, 20 each; the server's time plus loopback):`);
  console.log(`    GET / (the page)           ${fmtStats(html.s)}  ${kb(html.bytes)}`);
  console.log(`    POST /json/register        ${fmtStats(reg.s)}  ${kb(reg.bytes)} (gzip would make it ${kb(reg.gzip)}; Content-Encoding when asked for gzip: ${gzipped})`);
  console.log(`    GET /json/messages         ${fmtStats(msgs.s)}  ${kb(msgs.bytes)} (gzip: ${kb(msgs.gzip)})`);
  console.log(`      ${captured.messages}`);
}

// --- (3) live delivery ---------------------------------------------------------------------------------------

/** Page clock minus Node clock (ms), from the page.evaluate round trip with the least delay. */
async function clockOffset(page: Page): Promise<{ offset: number; rtt: number }> {
  let best = { offset: 0, rtt: Infinity };
  for (let i = 0; i < 15; i++) {
    const a = now();
    const p = (await page.evaluate('performance.timeOrigin + performance.now()')) as number;
    const b = now();
    if (b - a < best.rtt) best = { offset: p - (a + b) / 2, rtt: b - a };
  }
  return best;
}

async function liveDelivery(browser: Browser, base: string, s: Seeded, sessions: string[], serverPid: number): Promise<Stats | null> {
  const channel = s.channels[0];
  const hash = `#narrow/channel/${channel.id}-${channel.name}/topic/${LIVE_TOPIC.replace(/ /g, '.20')}`;
  console.log(`\n(3) live delivery: ${TABS} tab${TABS === 1 ? '' : 's'} (user${TABS === 1 ? '' : 's'} ${s.viewers.slice(0, TABS).map((v) => v.email.split('@')[0]).join(', ')}, a browser context each) on ${hash}; ${s.sender.email} sends ${LIVE_WARMUP} + ${LIVE} messages ${GAP_MS} ms apart`);
  const tabs: { context: BrowserContext; page: Page; offset: number; rtt: number }[] = [];
  for (let i = 0; i < TABS; i++) {
    const context = await newContext(browser, base, sessions[i]);
    const page = await context.newPage();
    await page.goto(base + '/' + hash);
    await page.waitForFunction(() => (globalThis as any).__bench?.firstFrame != null && (globalThis as any).parley?.ui.fetching.size === 0, null, { polling: 20, timeout: 60_000 });
    tabs.push({ context, page, offset: 0, rtt: 0 });
  }
  await sleep(500);
  for (const t of tabs) {
    Object.assign(t, await clockOffset(t.page));
    await t.page.evaluate('window.__bench.live = true; window.__bench.version0 = window.parley.version');
  }
  const vis = await Promise.all(tabs.map((t) => t.page.evaluate('document.visibilityState + (document.hasFocus() ? "+focus" : "")')));
  console.log(`  tabs: ${vis.join(', ')}; page clock − Node clock per tab: ${tabs.map((t) => `${t.offset.toFixed(2)} ms (±${(t.rtt / 2).toFixed(2)})`).join(', ')}`);

  // Baseline: what the open tabs cost while nothing happens (animations, timers, the browser's own work).
  const idle0 = chromiumCpu(chromiumPids(serverPid));
  const idleStart = now();
  await sleep(2000);
  const idle1 = chromiumCpu(chromiumPids(serverPid));
  const idleSeconds = (now() - idleStart) / 1000;
  console.log(`  idle, before sending (${idleSeconds.toFixed(1)} s): Chromium ${(((total(idle1) - total(idle0)) / idleSeconds) * 100).toFixed(1)} % of a core (${cpuBreakdown(idle0, idle1, idleSeconds) || 'nothing'})`);
  const sent: { token: string; at: number; sentAt: number; rtt: number }[] = [];
  const load0 = os.loadavg()[0];
  const chrome0 = chromiumCpu(chromiumPids(serverPid));
  const server0 = cpuSeconds(serverPid);
  const node0 = process.cpuUsage();
  const started = now();
  for (let i = 0; i < LIVE_WARMUP + LIVE; i++) {
    const token = `lv-${process.pid % 1000}-${i}`;
    const t0 = now();
    const r = await api(base, s.sender, 'POST', '/messages', { type: 'stream', to: channel.id, topic: LIVE_TOPIC, content: `Live message ${token}: ${messageText(prng(i), '')}` });
    if (i >= LIVE_WARMUP) sent.push({ token, at: r.at, sentAt: t0, rtt: r.at - t0 });
    await sleep(GAP_MS);
  }
  // Everything arrived (or 10 s passed)?
  const deadline = Date.now() + 10_000;
  for (const t of tabs) {
    await t.page
      .waitForFunction((tokens) => tokens.every((k) => k in (globalThis as any).__bench.seen), sent.map((x) => x.token), { polling: 100, timeout: Math.max(1, deadline - Date.now()) })
      .catch(() => undefined);
  }
  const seconds = (now() - started) / 1000;
  const chrome1 = chromiumCpu(chromiumPids(serverPid));
  const chromeCpu = total(chrome1) - total(chrome0);
  const serverCpu = cpuSeconds(serverPid) - server0;
  const cpuNode = process.cpuUsage(node0);

  const all: number[] = [];
  const frames: number[] = [];
  const fromSend: number[] = [];
  const netPart: number[] = [];
  const pagePart: number[] = [];
  let missing = 0;
  let notifications = 0;
  const requests = new Map<string, number>();
  const perTab: string[] = [];
  for (const [ti, t] of tabs.entries()) {
    const b = (await t.page.evaluate('({ ...window.__bench, notifications: window.parley.version - window.__bench.version0 })')) as {
      notifications: number;
      requests: Record<string, number>;
      seen: Record<string, number>;
      frames: Record<string, number>;
      events: { start: number; end: number }[];
    };
    const mine: number[] = [];
    for (const x of sent) {
      const seen = b.seen[x.token];
      if (seen === undefined) {
        missing++;
        continue;
      }
      const lat = seen - t.offset - x.at;
      mine.push(lat);
      all.push(lat);
      fromSend.push(seen - t.offset - x.sentAt);
      if (b.frames[x.token] !== undefined) frames.push(b.frames[x.token] - t.offset - x.at);
      // The /json/events response that brought it: the last one to end before the article appeared.
      const ev = b.events.filter((e) => e.end <= seen).sort((p, q) => q.end - p.end)[0];
      if (ev && ev.end >= seen - 5000) {
        netPart.push(ev.end - t.offset - x.at);
        pagePart.push(seen - ev.end);
      }
    }
    notifications += b.notifications;
    for (const [k, v] of Object.entries(b.requests)) requests.set(k, (requests.get(k) ?? 0) + v);
    const st = stats(mine);
    perTab.push(mine.length ? `tab ${ti + 1} p50 ${st.p50.toFixed(1)} / p90 ${st.p90.toFixed(1)}${mine.length < sent.length ? ` (${sent.length - mine.length} missing)` : ''}` : `tab ${ti + 1}: none arrived`);
  }
  if (opt.profile) await profileLive(browser, base, s, tabs[0].page, channel.id);
  for (const t of tabs) await t.context.close();
  if (!all.length) {
    console.log('  no message reached any tab');
    return null;
  }
  const st = stats(all);
  console.log(`  POST reply → article in the tab (DOM)   ${fmtStats(st)}  goal p50 < ${LIVE_GOAL_MS} ms: ${st.p50 < LIVE_GOAL_MS ? 'PASS' : 'FAIL'}; missing ${missing}`);
  if (frames.length) console.log(`  POST reply → next animation frame       ${fmtStats(stats(frames))}`);
  console.log(`  POST sent → article in the tab (DOM)    ${fmtStats(stats(fromSend))}`);
  const early = all.filter((x) => x < 0).length;
  if (early) {
    console.log(
      `  ${early} samples are negative: the tab drew the message before this process had read the POST reply (the server writes the reply and ` +
        `the parked /events answers in the same turn; with the CPUs busy this process reads its socket late)`,
    );
  }
  if (netPart.length) {
    console.log(`    of which POST reply → /json/events response end (server, network, fetch)   ${fmtStats(stats(netPart))}`);
    console.log(`    and /json/events response end → article in the DOM (the app)               ${fmtStats(stats(pagePart))}`);
  }
  console.log(`  per tab: ${perTab.join('; ')}`);
  console.log(`  sender's POST round trip: ${fmtStats(stats(sent.map((x) => x.rtt)))}`);
  // Cost drivers in the page: how often the app redrew (Client.version counts its notifications) and
  // what it asked the server, per message and tab (warm-up messages included).
  const perMsg = (x: number) => (x / (LIVE + LIVE_WARMUP) / TABS).toFixed(2);
  console.log(
    `  per message and tab: ${perMsg(notifications)} app notifications (redraws), requests: ` +
      [...requests.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${perMsg(v)}`).join(', '),
  );
  console.log(
    `  load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}; CPU during the ${seconds.toFixed(1)} s of sending (2 cores = 200 %): Chromium ${(chromeCpu / seconds * 100).toFixed(0)} % ` +
      `(${cpuBreakdown(chrome0, chrome1, seconds)}), server ${(serverCpu / seconds * 100).toFixed(0)} %, this process ${((cpuNode.user + cpuNode.system) / 1e6 / seconds * 100).toFixed(0)} %; ` +
      `Chromium per message and tab: ${((chromeCpu / (LIVE + LIVE_WARMUP) / TABS) * 1000).toFixed(1)} ms`,
  );
  return st;
}

/** 20 more messages (not counted) under Chromium's tracing: where the first tab's main thread spends its time per message. */
async function profileLive(browser: Browser, base: string, s: Seeded, page: Page, streamId: number): Promise<void> {
  const n = 20;
  await browser.startTracing(undefined, { categories: TRACE_CATEGORIES });
  await page.evaluate("performance.mark('bench-live-start')");
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const token = `lv-${process.pid % 1000}-${100_000 + i}`;
    tokens.push(token);
    await api(base, s.sender, 'POST', '/messages', { type: 'stream', to: streamId, topic: LIVE_TOPIC, content: `Live message ${token}: ${messageText(prng(i), '')}` });
    await sleep(GAP_MS);
  }
  await page.waitForFunction((ks) => ks.every((k) => k in (globalThis as any).__bench.seen), tokens, { polling: 100, timeout: 10_000 }).catch(() => undefined);
  await sleep(300);
  await page.evaluate("performance.mark('bench-live-end')");
  const buf = await browser.stopTracing();
  const events = parseTrace(buf);
  const a = events.find((e) => e.name === 'bench-live-start');
  const b = events.find((e) => e.name === 'bench-live-end');
  if (!a || !b) return;
  console.log(`  profile: ${n} more messages under tracing (not counted above), tab 1's renderer main thread, per message:`);
  await summarizeTrace(events, a.pid, a.tid, a.ts, b.ts, base, n);
}

// --- main --------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const parts = opt.parts!;
  console.log(`Parley web client benchmark, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.availableParallelism()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM, Linux ${os.release()}, Node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
  );
  const git = (args: string[]) => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : '?';
  };
  const dirty = git(['status', '--porcelain', '--', 'src', 'web']).split('\n').filter(Boolean).length;
  console.log(`tree: ${git(['log', '-1', '--format=%h (%cI)'])}${dirty ? `, ${dirty} uncommitted changes in src/ or web/` : ''}`);
  const s = seed();
  const server = await startServer(s);
  let browser: Browser | null = null;
  const summary: string[] = [];
  try {
    console.log(`server: ${server.describe}, pid ${server.proc.pid}, ${server.url}`);
    if (opt.css !== undefined) console.log(`EXPERIMENT: every page gets this style sheet (CSP bypassed): ${opt.css}`);
    if (opt['page-size'] !== undefined) console.log(`EXPERIMENT: GET /json/messages asks ${opt['page-size']} before and after the anchor (rewritten by a route)`);
    const sessions = await Promise.all(s.viewers.map((v) => login(server.url, v)));

    if (parts.includes('1')) {
      const { assets, html } = await sizes(server.url, sessions[0]);
      console.log(`\n(1) what the app page loads at start (page HTML ${kb(html)}):`);
      for (const a of assets) console.log(`  ${a.url.padEnd(40)} ${a.kind.padEnd(3)} raw ${kb(a.raw).padStart(9)}   as served with gzip ${kb(a.gzip).padStart(8)} (${a.encoding})`);
      const raw = assets.reduce((x, a) => x + a.raw, 0);
      const gz = assets.reduce((x, a) => x + a.gzip, 0);
      const js = assets.filter((a) => a.kind === 'js').reduce((x, a) => x + a.gzip, 0);
      const verdict = gz / 1024 <= BUDGET_KB ? 'PASS' : 'FAIL';
      console.log(`  total: raw ${kb(raw)}, gzipped ${kb(gz)} (JS ${kb(js)}, CSS ${kb(gz - js)}) against the budget of ${BUDGET_KB} KB gzipped: ${verdict} (KB = 1024 bytes)`);
      console.log(`  chunks loaded on demand (import()): ${lazyChunks.size ? [...lazyChunks].join(', ') : 'none'}`);
      summary.push(`(1) JS + CSS at start: ${assets.length} files, ${kb(raw)} raw, ${kb(gz)} gzipped; budget ${BUDGET_KB} KB: ${verdict}`);
    }

    if (parts.includes('2') || parts.includes('3')) browser = await launch();
    if (parts.includes('2') && browser) {
      const out = await firstMessages(browser, server.url, s, sessions[0], server.proc.pid as number);
      await serverSide(server.url, sessions[0], browser);
      if (opt.profile) await profileLoad(browser, server.url, sessions[0], s.viewers[0]);
      for (const [label, results] of Object.entries(out)) {
        const st = stats(results.map((r) => r.timing.first));
        summary.push(`(2) navigation → first article, ${label} cache: p50 ${st.p50.toFixed(0)} ms, p90 ${st.p90.toFixed(0)} ms, max ${st.max.toFixed(0)} ms (${st.n} runs); goal p50 < ${FIRST_GOAL_MS} ms: ${st.p50 < FIRST_GOAL_MS ? 'PASS' : 'FAIL'}`);
      }
    }
    if (parts.includes('3') && browser) {
      const st = await liveDelivery(browser, server.url, s, sessions, server.proc.pid as number);
      summary.push(
        st
          ? `(3) POST reply → article in ${TABS} tabs: p50 ${st.p50.toFixed(1)} ms, p90 ${st.p90.toFixed(1)} ms, max ${st.max.toFixed(1)} ms (${st.n} samples); goal p50 < ${LIVE_GOAL_MS} ms: ${st.p50 < LIVE_GOAL_MS ? 'PASS' : 'FAIL'}`
          : '(3) live delivery: no message arrived: FAIL',
      );
    }
    console.log(`\nSummary (${s.messageCount} messages in ${CHANNELS} channels, ${s.unreadPerViewer} unread; server: ${opt.server === 'source' ? 'working tree via tsx' : 'dist/parley'}; load average now ${os.loadavg()[0].toFixed(2)}):`);
    for (const line of summary) console.log('  ' + line);
  } finally {
    await browser?.close();
    await server.stop();
    agent.destroy();
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

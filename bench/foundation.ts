// Foundation benchmarks, run by hand (`npm run bench`); prints numbers, never part of the tests.
//  (a) GET /api/v1/users/me with Basic auth at 50 keep-alive connections beside a bare uWebSockets.js
//      hello-world (bench/bare-uws.ts), same load generator, same run. Target: >= 50 % of the bare rate.
//  (b) dist/parley start (exec of `serve --port 0` on an initialised data dir) to first answered
//      request, median of 20 runs. Target: < 200 ms.
//  (c) idle resident memory (VmRSS) of the started server. Target: < 60 MB.
//  (d) the request log's cost: GET /users/me throughput with the log on (level info, text and json)
//      and off (level warn), rounds alternating, median of each. Target: on costs <= 5 %.
// Options: --duration S (10) --connections N (50) --threads N (wrk threads) --runs N (20)
//          --client wrk|node (wrk when installed) --binary PATH (dist/parley) --parts abcd (which to run)
//          --rounds N (3: rounds of part d)
// Everything binds 127.0.0.1; data and the extracted addons live in a temp dir removed at the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import { withCpu } from './server-process';

const ROOT = path.resolve(__dirname, '..');

const { values: opt } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    threads: { type: 'string' },
    runs: { type: 'string', default: '20' },
    client: { type: 'string' },
    binary: { type: 'string', default: path.join(ROOT, 'dist', 'parley') },
    parts: { type: 'string', default: 'abcd' },
    rounds: { type: 'string', default: '3' },
  },
});
const DURATION = Number(opt.duration);
const CONNECTIONS = Number(opt.connections);
const RUNS = Number(opt.runs);
const CPUS = os.availableParallelism();
// The server is one thread: leave it a core, give the rest to the load generator.
const THREADS = Number(opt.threads ?? Math.max(1, Math.min(4, CPUS - 1)));
const SOURCE_BINARY = path.resolve(opt.binary!);
/** The copy of SOURCE_BINARY that runs (set in main). */
let BINARY = SOURCE_BINARY;

interface Proc {
  child: ChildProcess;
  url: string;
  /** ms from spawn() to the listening line. */
  readyMs: number;
  stop(): Promise<number | null>;
}

/** Spawns a server command and waits for its `listening on URL` line. */
function startProc(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  // Only the end is kept (for an error message): a server logging each request writes megabytes.
  child.stderr!.on('data', (d) => (err = (err + d).slice(-4096)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening on (\S+)\n/.exec(out);
      if (!m || (child as { _ready?: boolean })._ready) return;
      (child as { _ready?: boolean })._ready = true;
      resolve({
        child,
        url: m[1],
        readyMs: performance.now() - t0,
        stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
    exited.then((code) => reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before listening\n${out}${err}`)));
  });
}

/** One GET with a fresh connection; resolves to the status once the whole body has arrived. */
function get(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** Memory of a process from /proc/PID/status, in kB. */
function rssKb(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') };
}


const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

interface LoadResult {
  rps: number;
  requests: number;
  errors: number;
  p50?: string;
  p99?: string;
}

function hasWrk(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** Runs wrk against `url` and parses its summary. */
function runWrk(url: string, headers: Record<string, string>, seconds: number): LoadResult {
  const args = ['-t', String(THREADS), '-c', String(CONNECTIONS), '-d', `${seconds}s`, '--latency'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const r = spawnSync('wrk', [...args, url], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const num = (re: RegExp) => Number(re.exec(r.stdout)?.[1] ?? NaN);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    requests: num(/(\d+) requests in/),
    errors:
      (num(/Non-2xx or 3xx responses: (\d+)/) || 0) +
      (/Socket errors: (.*)/.exec(r.stdout)?.[1].match(/\d+/g) ?? []).reduce((a, n) => a + Number(n), 0),
    p50: /^\s+50%\s+(\S+)/m.exec(r.stdout)?.[1],
    p99: /^\s+99%\s+(\S+)/m.exec(r.stdout)?.[1],
  };
}

// The Node fallback client: worker threads, each holding keep-alive connections that send one request,
// read the whole response (uWS always sends Content-Length), and send the next. No pipelining.
const NODE_CLIENT = `
const net = require('node:net');
const { workerData, parentPort } = require('node:worker_threads');
const { port, request, connections, until } = workerData;
let ok = 0, bad = 0, open = connections;
for (let i = 0; i < connections; i++) {
  const s = net.connect(port, '127.0.0.1');
  s.setNoDelay(true);
  let buf = Buffer.alloc(0);
  s.on('connect', () => s.write(request));
  s.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      const end = buf.indexOf('\\r\\n\\r\\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const m = /content-length: *(\\d+)/i.exec(head);
      const total = end + 4 + (m ? Number(m[1]) : 0);
      if (buf.length < total) return;
      if (head.startsWith('HTTP/1.1 200')) ok++; else bad++;
      buf = buf.subarray(total);
      if (Date.now() < until) s.write(request); else { s.end(); return; }
    }
  });
  s.on('error', () => { bad++; });
  s.on('close', () => { if (--open === 0) parentPort.postMessage({ ok, bad }); });
}
`;

async function runNodeClient(url: string, headers: Record<string, string>, seconds: number): Promise<LoadResult> {
  const u = new URL(url);
  const request =
    `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  const t0 = Date.now();
  const until = t0 + seconds * 1000;
  const per = Math.ceil(CONNECTIONS / THREADS);
  const results = await Promise.all(
    Array.from({ length: THREADS }, (_, i) => {
      const connections = Math.min(per, CONNECTIONS - i * per);
      return new Promise<{ ok: number; bad: number }>((resolve, reject) => {
        const w = new Worker(NODE_CLIENT, { eval: true, workerData: { port: Number(u.port), request, connections, until } });
        w.once('message', (m) => {
          resolve(m);
          void w.terminate();
        });
        w.once('error', reject);
      });
    }),
  );
  const elapsed = (Date.now() - t0) / 1000;
  const ok = results.reduce((a, r) => a + r.ok, 0);
  const bad = results.reduce((a, r) => a + r.bad, 0);
  return { rps: (ok + bad) / elapsed, requests: ok + bad, errors: bad };
}

interface Ctx {
  client: 'wrk' | 'node';
  load(url: string, headers: Record<string, string>, seconds: number): Promise<LoadResult>;
  auth: Record<string, string>;
  serveArgs: string[];
  /** Environment of every Parley process: PARLEY_CACHE_DIR inside the work dir. */
  env: Record<string, string>;
  work: string;
  /** Everything started, stopped at the end whatever happens. */
  procs: Proc[];
}

// (a) Throughput: one server at a time, each warmed up first, the same client for both.
async function throughput(ctx: Ctx): Promise<void> {
  console.log(
    `\n(a) throughput: ${CONNECTIONS} keep-alive connections, ${DURATION} s each, load generator: ` +
      (ctx.client === 'wrk' ? `wrk (${THREADS} threads)` : `the Node client in bench/foundation.ts (${THREADS} worker threads), not wrk`),
  );
  const bare = await startProc(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'bare-uws.ts')]);
  ctx.procs.push(bare);
  await ctx.load(bare.url + '/', {}, 2);
  const bareResult = await withCpu(bare.child.pid!, () => ctx.load(bare.url + '/', {}, DURATION));
  await bare.stop();

  const parley = await startProc(BINARY, ctx.serveArgs, ctx.env);
  ctx.procs.push(parley);
  const meUrl = parley.url + '/api/v1/users/me';
  if ((await get(meUrl, ctx.auth)) !== 200) throw new Error('GET /users/me did not answer 200');
  await ctx.load(meUrl, ctx.auth, 2);
  const parleyResult = await withCpu(parley.child.pid!, () => ctx.load(meUrl, ctx.auth, DURATION));
  const afterLoad = rssKb(parley.child.pid!);
  await parley.stop();

  const line = (name: string, r: LoadResult & { cpu: number }) =>
    `  ${name.padEnd(30)} ${r.rps.toFixed(0).padStart(8)} req/s   server CPU ${(r.cpu * 100).toFixed(0)} %` +
    (r.p50 ? `   latency p50 ${r.p50}, p99 ${r.p99}` : '') +
    (r.errors ? `   (${r.errors} errors or non-2xx)` : '');
  console.log(line('bare uWS hello-world', bareResult));
  console.log(line('Parley GET /api/v1/users/me', parleyResult));
  const ratio = parleyResult.rps / bareResult.rps;
  console.log(`  ratio ${(ratio * 100).toFixed(1)} % of bare (target >= 50 %): ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`);
  if (bareResult.cpu < 0.9) {
    console.log(`  note: the bare server was only ${(bareResult.cpu * 100).toFixed(0)} % busy: the load generator limits its rate, so the ratio flatters Parley`);
  }
  console.log(`  Parley RSS after the load: ${mb(afterLoad.rss)} (peak ${mb(afterLoad.hwm)})`);
}

// (d) The request log's cost: the same server with the log off (level warn) and on (level info; text
// and json), one server at a time, rounds alternating so drifts in machine load hit all. Stderr is a
// pipe the benchmark reads, as journald reads a service's. Beside them the floor: a copy of the
// bundle whose request() appends one constant text line of the usual length and nothing else, so
// what is left is what writing a line per request to the pipe costs at all. All four run as
// `node dist/parley.cjs` (the floor needs a patched copy of the bundle; the executable runs the same code).
const FLOOR_LINE = '2026-11-26T09:46:23.123Z info - user=8 GET /api/v1/users/me 200 0.05ms id=abcd0123-2an1\n';

/** dist/parley.cjs with Logger.request writing FLOOR_LINE only; null when the bundle no longer has the expected shape. */
function floorBundle(bundle: string): string | null {
  const text = fs.readFileSync(bundle, 'utf8');
  const head = '  request(r) {\n    if (!this.requests) return;\n    const out = this.out;\n';
  if (!text.includes(head) || !text.includes('\nfunction putBytes(')) return null;
  const patched = text.replace(
    head,
    `${head}    if (!out.reserve(200)) return;\n    out.len = putBytes(out.b, out.len, FLOOR_LINE_BYTES);\n    out.done();\n    return;\n`,
  );
  const file = path.join(path.dirname(bundle), '.bench-log-floor.cjs');
  fs.writeFileSync(file, `${patched}\nvar FLOOR_LINE_BYTES = Buffer.from(${JSON.stringify(FLOOR_LINE)}, 'latin1');\n`);
  return file;
}

async function logCost(ctx: Ctx): Promise<void> {
  const rounds = Number(opt.rounds);
  const bundle = path.join(ROOT, 'dist', 'parley.cjs');
  const floor = floorBundle(bundle);
  const modes = [
    { name: 'log off (--log-level warn)', file: bundle, env: { PARLEY_LOG_LEVEL: 'warn' } },
    { name: 'log on (info, text)', file: bundle, env: { PARLEY_LOG_LEVEL: 'info', PARLEY_LOG_FORMAT: 'text' } },
    { name: 'log on (info, json)', file: bundle, env: { PARLEY_LOG_LEVEL: 'info', PARLEY_LOG_FORMAT: 'json' } },
    ...(floor ? [{ name: 'floor (a constant line)', file: floor, env: { PARLEY_LOG_LEVEL: 'info', PARLEY_LOG_FORMAT: 'text' } }] : []),
  ];
  console.log(`\n(d) request log cost: GET /api/v1/users/me, ${CONNECTIONS} connections, ${DURATION} s per run, ${rounds} alternating rounds, node dist/parley.cjs`);
  if (!floor) console.log('  (the floor is not measured: dist/parley.cjs no longer has the request() this benchmark patches)');
  const rates: number[][] = modes.map(() => []);
  // The server's CPU time per request: on a machine shared with other work the rate follows the CPU
  // share the server gets, while its CPU cost per request does not.
  const cpuPerRequest: number[][] = modes.map(() => []);
  try {
    for (let round = 0; round < rounds; round++) {
      // Each round starts with another mode, so that no mode always runs first (or last).
      for (let k = 0; k < modes.length; k++) {
        const i = (round + k) % modes.length;
        const mode = modes[i];
        const p = await startProc(process.execPath, [mode.file, ...ctx.serveArgs], { ...ctx.env, ...mode.env });
        ctx.procs.push(p);
        const meUrl = p.url + '/api/v1/users/me';
        if ((await get(meUrl, ctx.auth)) !== 200) throw new Error('GET /users/me did not answer 200');
        await ctx.load(meUrl, ctx.auth, 2);
        const r = await withCpu(p.child.pid!, () => ctx.load(meUrl, ctx.auth, DURATION));
        rates[i].push(r.rps);
        const us = (r.cpu * DURATION * 1e6) / r.requests;
        cpuPerRequest[i].push(us);
        console.log(
          `  round ${round + 1} ${mode.name.padEnd(28)} ${r.rps.toFixed(0).padStart(8)} req/s   server CPU ${(r.cpu * 100).toFixed(0)} %   ${us.toFixed(2)} µs CPU/request`,
        );
        await p.stop();
      }
    }
  } finally {
    if (floor) fs.rmSync(floor, { force: true });
  }
  const off = median(rates[0]);
  const offUs = median(cpuPerRequest[0]);
  for (const [i, mode] of modes.entries()) {
    const med = median(rates[i]);
    const us = median(cpuPerRequest[i]);
    const cost =
      i === 0
        ? ''
        : `   throughput cost ${(((off - med) / off) * 100).toFixed(1)} %${i < 3 ? ` (target <= 5 %): ${(off - med) / off <= 0.05 ? 'PASS' : 'FAIL'}` : ''}` +
          `; CPU per request +${(((us - offUs) / offUs) * 100).toFixed(1)} %`;
    console.log(`  median ${mode.name.padEnd(28)} ${med.toFixed(0).padStart(8)} req/s   ${us.toFixed(2)} µs CPU/request${cost}`);
  }
  if (floor) {
    const extra = (i: number) => median(cpuPerRequest[i]) - offUs;
    console.log(
      `  the log's CPU per request over the floor's: text ${(extra(1) / extra(3)).toFixed(2)}x, json ${(extra(2) / extra(3)).toFixed(2)}x ` +
        `(+${extra(1).toFixed(2)}, +${extra(2).toFixed(2)} against +${extra(3).toFixed(2)} µs)`,
    );
  }
}

// (b) Start to first answered request (the first start extracts the addons into an empty cache dir),
// then (c) the idle memory of the last start.
async function startAndMemory(ctx: Ctx): Promise<void> {
  console.log(`\n(b) start: exec of ${path.basename(BINARY)} serve --port 0 to first answered GET /users/me, ${RUNS} runs`);
  const startOnce = async (env: Record<string, string>) => {
    const t0 = performance.now();
    const p = await startProc(BINARY, ctx.serveArgs, env);
    ctx.procs.push(p);
    const status = await get(p.url + '/api/v1/users/me', ctx.auth);
    const total = performance.now() - t0;
    if (status !== 200) throw new Error(`first request answered ${status}`);
    return { p, ready: p.readyMs, total };
  };
  const cold = await startOnce({ PARLEY_CACHE_DIR: path.join(ctx.work, 'cache-cold') });
  await cold.p.stop();
  const totals: number[] = [];
  const readies: number[] = [];
  let idle = { rss: 0, hwm: 0, anon: 0, file: 0 };
  for (let i = 0; i < RUNS; i++) {
    const r = await startOnce(ctx.env);
    totals.push(r.total);
    readies.push(r.ready);
    if (i === RUNS - 1) {
      await new Promise((res) => setTimeout(res, 1000));
      idle = rssKb(r.p.child.pid!);
    }
    await r.p.stop();
  }
  const med = median(totals);
  console.log(`  first start (extracting the addons): ${cold.total.toFixed(1)} ms`);
  console.log(
    `  warm cache: median ${med.toFixed(1)} ms (min ${Math.min(...totals).toFixed(1)}, max ${Math.max(...totals).toFixed(1)}); ` +
      `to the listening line: median ${median(readies).toFixed(1)} ms`,
  );
  console.log(`  target < 200 ms: ${med < 200 ? 'PASS' : 'FAIL'}`);

  console.log(`\n(c) idle memory: VmRSS of the last started server, 1 s after its first request`);
  console.log(
    `  ${mb(idle.rss)} (peak ${mb(idle.hwm)}; private RssAnon ${mb(idle.anon)}, file-backed RssFile ${mb(idle.file)}); ` +
      `target < 60 MB: ${idle.rss < 60 * 1024 ? 'PASS' : 'FAIL'}`,
  );
}

async function main(): Promise<void> {
  if (!fs.existsSync(SOURCE_BINARY)) {
    console.error(`bench: ${SOURCE_BINARY} is missing; run npm run build first`);
    process.exit(1);
  }
  const client: Ctx['client'] = opt.client === 'node' ? 'node' : hasWrk() ? 'wrk' : 'node';
  if (opt.client === 'wrk' && client !== 'wrk') console.error('bench: wrk is not installed (apt-get install -y wrk); using the Node client');
  if (!opt.client && client === 'node') console.error('bench: wrk not found, using the Node client (for wrk: apt-get install -y wrk)');

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
  const env = { PARLEY_CACHE_DIR: path.join(work, 'cache') };
  // Run a copy, as an installation would. (Executing the file build.mjs just wrote can show ~13 MB
  // more RssFile: the kernel maps its freshly written page cache in larger folios.)
  BINARY = path.join(work, 'parley');
  fs.copyFileSync(SOURCE_BINARY, BINARY);
  fs.chmodSync(BINARY, 0o755);
  const procs: Proc[] = [];
  try {
    console.log(`Parley foundation benchmarks, ${new Date().toISOString()}`);
    console.log(
      `machine: ${os.cpus()[0]?.model ?? 'unknown cpu'} x${CPUS}, ${mb(os.totalmem() / 1024)} RAM, ` +
        `Linux ${os.release()}, Node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}; binary: a copy of ${path.relative(ROOT, SOURCE_BINARY) || SOURCE_BINARY}`,
    );
    const dataDir = path.join(work, 'data');
    const init = spawnSync(BINARY, ['init', '--data-dir', dataDir, '--realm-name', 'Bench', '--email', 'bench@example.com', '--password', 'secret123'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
    const creds = JSON.parse(init.stdout) as { email: string; api_key: string };
    const ctx: Ctx = {
      client,
      load: (url, headers, seconds) => (client === 'wrk' ? Promise.resolve(runWrk(url, headers, seconds)) : runNodeClient(url, headers, seconds)),
      auth: { Authorization: 'Basic ' + Buffer.from(`${creds.email}:${creds.api_key}`).toString('base64') },
      serveArgs: ['serve', '--data-dir', dataDir, '--port', '0', '--no-rate-limits'],
      env,
      work,
      procs,
    };
    if (opt.parts!.includes('a')) await throughput(ctx);
    if (opt.parts!.includes('b') || opt.parts!.includes('c')) await startAndMemory(ctx);
    if (opt.parts!.includes('d')) await logCost(ctx);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

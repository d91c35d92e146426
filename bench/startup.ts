// Demo start-up benchmark, run by hand (`node --import tsx bench/startup.ts`); prints numbers.
// From exec of `dist/parley serve --demo --data-dir :memory: --port 0` to the first answered request
// (GET /api/v1/users/me as the demo owner, sent as soon as the `listening on` line arrives), median of
// --runs N (20) runs with the native addons already extracted. Target: < 150 ms.
// It also prints two floors, `parley --version` and `node -e 0`, and when NODE_EXTRA_CA_CERTS is set
// (Node 20 reads and parses that file at every start, before any JavaScript runs) the demo start
// without it, so that the environment's share is visible.
// Options: --runs N (20) --binary PATH (dist/parley)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(__dirname, '..');
const { values: opt } = parseArgs({
  options: { runs: { type: 'string', default: '20' }, binary: { type: 'string', default: path.join(ROOT, 'dist', 'parley') } },
});
const RUNS = Number(opt.runs);
const BINARY = path.resolve(opt.binary!);
const TARGET_MS = 150;
const OWNER = 'Basic ' + Buffer.from('owner@example.com:demoOwnerKey00000000000000000001').toString('base64');

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url + '/api/v1/users/me', { headers: { authorization: OWNER } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** One start: ms from spawn to the first answered request, and ms to the listening line. */
function startOnce(env: NodeJS.ProcessEnv): Promise<{ total: number; listening: number }> {
  const t0 = performance.now();
  const child = spawn(BINARY, ['serve', '--demo', '--data-dir', ':memory:', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`parley exited (${code}) before answering: ${err}`)));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening on (\S+)\n/.exec(out);
      if (!m) return;
      const listening = performance.now() - t0;
      get(m[1]).then((status) => {
        const total = performance.now() - t0;
        child.removeAllListeners('close');
        child.kill('SIGKILL');
        if (status !== 200) reject(new Error(`GET /users/me answered ${status}`));
        else resolve({ total, listening });
      }, reject);
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  if (!fs.existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build`);
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-startup-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PARLEY_')) env[k] = v;
  env.PARLEY_CACHE_DIR = cache;
  try {
    const cold = await startOnce(env); // extracts the addons into the cache
    const runs: { total: number; listening: number }[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await startOnce(env));
    const totals = runs.map((r) => r.total);
    const m = median(totals);
    /** Median ms from spawn to exit of `cmd args`, RUNS times. */
    const timeExit = async (cmd: string, args: string[], e: NodeJS.ProcessEnv) => {
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await new Promise((resolve) => spawn(cmd, args, { env: e, stdio: 'ignore' }).on('close', resolve));
        ms.push(performance.now() - t0);
      }
      return median(ms);
    };
    // The floors: the same executable doing nothing but print its version (Node + bundle load), and
    // Node alone.
    const floor = await timeExit(BINARY, ['--version'], env);
    const nodeFloor = await timeExit(process.execPath, ['-e', '0'], env);
    let withoutCaCerts = '';
    if (env.NODE_EXTRA_CA_CERTS) {
      const bare = { ...env };
      delete bare.NODE_EXTRA_CA_CERTS;
      const bareRuns: number[] = [];
      for (let i = 0; i < RUNS; i++) bareRuns.push((await startOnce(bare)).total);
      withoutCaCerts =
        `NODE_EXTRA_CA_CERTS is set (${env.NODE_EXTRA_CA_CERTS}): Node loads it at every start. Without it: ` +
        `demo start median ${median(bareRuns).toFixed(1)} ms, \`node -e 0\` ${(await timeExit(process.execPath, ['-e', '0'], bare)).toFixed(1)} ms`;
    }
    console.log(`binary: ${path.relative(process.cwd(), BINARY)}; load average ${os.loadavg()[0].toFixed(2)}`);
    console.log(`first start (extracting the addons): ${cold.total.toFixed(1)} ms`);
    console.log(
      `demo start to first answered request, median of ${RUNS}: ${m.toFixed(1)} ms ` +
        `(listening line ${median(runs.map((r) => r.listening)).toFixed(1)} ms; min ${Math.min(...totals).toFixed(1)}, max ${Math.max(...totals).toFixed(1)}) ` +
        (m < TARGET_MS ? 'PASS' : 'FAIL') + ` (target < ${TARGET_MS} ms)`,
    );
    console.log(`floor: \`parley --version\`, median of ${RUNS}: ${floor.toFixed(1)} ms; \`node -e 0\`: ${nodeFloor.toFixed(1)} ms`);
    if (withoutCaCerts) console.log(withoutCaCerts);
    console.log(`load average at the end: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

// Demo start-up benchmark, run by hand (`node --import tsx bench/startup.ts`); prints numbers.
// From exec of `dist/parley serve --demo --data-dir :memory: --port 0` to the first answered request
// (GET /api/v1/users/me as the demo owner, sent as soon as the `listening on` line arrives), median of
// --runs N (20) runs with the native addons already extracted. Target: < 150 ms.
// It also prints two floors, `parley --version` and `node -e 0`, and when NODE_EXTRA_CA_CERTS is set
// (Node 20 reads and parses that file at every start, before any JavaScript runs) the demo start
// without it, so that the environment's share is visible; and the idle memory (VmRSS 1 s after the
// first answer, median of 5 starts).
// Several --binary options compare executables fairly: their starts alternate, in one run, and each
// runs from a copy (executing the very file a build just wrote can show ~13 MB more RssFile).
// --qemu runs arm64 executables (dist/parley-linux-arm64) under qemu-aarch64-static: the start under
// emulation (no floors, no idle memory: they would measure qemu).
// Options: --runs N (20) --binary PATH (dist/parley; repeatable) --qemu
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(__dirname, '..');
const { values: opt } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    binary: { type: 'string', multiple: true, default: [path.join(ROOT, 'dist', 'parley')] },
    qemu: { type: 'boolean', default: false },
  },
});
const RUNS = Number(opt.runs);
const QEMU = opt.qemu;
// Debian's qemu-user-static and the sysroot of gcc-aarch64-linux-gnu (scripts/arm64-toolchain.mjs).
const EMULATE = ['qemu-aarch64-static', '-L', '/usr/aarch64-linux-gnu'];
const SOURCES = opt.binary!.map((b) => path.resolve(b));
const TARGET_MS = 150;
const IDLE_RUNS = 5;
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

/** [command, args] that run `file` (under qemu with --qemu). */
function command(file: string, args: string[]): [string, string[]] {
  return QEMU ? [EMULATE[0], [...EMULATE.slice(1), file, ...args]] : [file, args];
}

type Memory = { rss: number; anon: number; file: number };

/** Memory of a process from /proc/PID/status, in kB. */
function memoryKb(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/**
 * One start: ms from spawn to the first answered request, and ms to the listening line; with
 * `idleMs`, also the memory that long after the answer.
 */
function startOnce(binary: string, env: NodeJS.ProcessEnv, idleMs = 0): Promise<{ total: number; listening: number; memory?: Memory }> {
  const t0 = performance.now();
  const child = spawn(...command(binary, ['serve', '--demo', '--data-dir', ':memory:', '--port', '0']), { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      get(m[1]).then(async (status) => {
        const total = performance.now() - t0;
        let memory: Memory | undefined;
        if (idleMs) {
          await new Promise((r) => setTimeout(r, idleMs));
          memory = memoryKb(child.pid!);
        }
        child.removeAllListeners('close');
        child.kill('SIGKILL');
        if (status !== 200) reject(new Error(`GET /users/me answered ${status}`));
        else resolve({ total, listening, memory });
      }, reject);
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;

/** Median ms from spawn to exit of `cmd args`, RUNS times. */
async function timeExit(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await new Promise((resolve) => spawn(cmd, args, { env, stdio: 'ignore' }).on('close', resolve));
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** RUNS rounds, each starting every binary once in turn (so that a change of load hits all alike). */
async function interleaved(binaries: string[], env: NodeJS.ProcessEnv, rounds: number, idleMs = 0) {
  const results = binaries.map(() => [] as { total: number; listening: number; memory?: Memory }[]);
  for (let i = 0; i < rounds; i++) for (const [b, binary] of binaries.entries()) results[b].push(await startOnce(binary, env, idleMs));
  return results;
}

async function main(): Promise<void> {
  for (const b of SOURCES) if (!fs.existsSync(b)) throw new Error(`${b} is missing: run npm run build${QEMU ? ':arm64' : ''}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-startup-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PARLEY_')) env[k] = v;
  env.PARLEY_CACHE_DIR = path.join(work, 'cache');
  try {
    // Copies, as an installation would run them.
    const binaries = SOURCES.map((src, i) => {
      const copy = path.join(work, String(i), path.basename(src));
      fs.mkdirSync(path.dirname(copy));
      fs.copyFileSync(src, copy);
      fs.chmodSync(copy, 0o755);
      return copy;
    });
    console.log(`load average ${os.loadavg()[0].toFixed(2)}${QEMU ? '; under qemu-aarch64-static' : ''}`);
    for (const [b, binary] of binaries.entries()) {
      const cold = await startOnce(binary, env); // extracts the addons into the cache
      console.log(`${path.relative(process.cwd(), SOURCES[b])}: first start (extracting the addons): ${cold.total.toFixed(1)} ms`);
    }
    const runs = await interleaved(binaries, env, RUNS);
    const memories = QEMU ? [] : await interleaved(binaries, env, IDLE_RUNS, 1000);
    for (const [b, binary] of binaries.entries()) {
      const totals = runs[b].map((r) => r.total);
      const m = median(totals);
      console.log(`\n${path.relative(process.cwd(), SOURCES[b])} (${mb(fs.statSync(binary).size / 1024)})`);
      console.log(
        `  demo start to first answered request, median of ${RUNS}: ${m.toFixed(1)} ms ` +
          `(listening line ${median(runs[b].map((r) => r.listening)).toFixed(1)} ms; min ${Math.min(...totals).toFixed(1)}, max ${Math.max(...totals).toFixed(1)})` +
          (QEMU ? '' : ' ' + (m < TARGET_MS ? 'PASS' : 'FAIL') + ` (target < ${TARGET_MS} ms)`),
      );
      if (QEMU) continue;
      const mems = memories[b].map((r) => r.memory!);
      const med = (key: keyof Memory) => mb(median(mems.map((x) => x[key])));
      console.log(`  idle memory 1 s after the first answer, median of ${IDLE_RUNS}: VmRSS ${med('rss')} (RssAnon ${med('anon')}, RssFile ${med('file')})`);
      // The floors: the same executable doing nothing but print its version (Node + bundle load).
      console.log(`  floor: \`parley --version\`, median of ${RUNS}: ${(await timeExit(binary, ['--version'], env)).toFixed(1)} ms`);
    }
    if (!QEMU) {
      console.log(`\n\`node -e 0\`, median of ${RUNS}: ${(await timeExit(process.execPath, ['-e', '0'], env)).toFixed(1)} ms`);
      if (env.NODE_EXTRA_CA_CERTS) {
        const bare = { ...env };
        delete bare.NODE_EXTRA_CA_CERTS;
        const bareRuns = await interleaved(binaries, bare, RUNS);
        console.log(
          `NODE_EXTRA_CA_CERTS is set (${env.NODE_EXTRA_CA_CERTS}): Node loads it at every start. Without it: ` +
            binaries.map((_, b) => `${path.basename(SOURCES[b])} demo start median ${median(bareRuns[b].map((r) => r.total)).toFixed(1)} ms`).join(', ') +
            `, \`node -e 0\` ${(await timeExit(process.execPath, ['-e', '0'], bare)).toFixed(1)} ms`,
        );
      }
    }
    console.log(`load average at the end: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

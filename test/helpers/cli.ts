// Test helpers for the `parley` command line as a real process: run a command to completion, or start
// `serve` and wait for its one `listening on` line. Everything binds 127.0.0.1 and lives in temp dirs.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

/** The CLI run from source (tsx), so tests see the current code without a build. */
export const SOURCE_CLI: readonly string[] = [process.execPath, '--import', 'tsx', path.join(ROOT, 'src', 'main.ts')];

/** The single executable that `npm run build` writes. */
export const BINARY = path.join(ROOT, 'dist', 'parley');

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The command to run, argv[0] first; SOURCE_CLI unless told. */
  cli?: readonly string[];
  /** Working directory (ROOT by default: `--import tsx` resolves tsx from there). */
  cwd?: string;
  /** Extra environment variables. The child never inherits PARLEY_* from the test runner. */
  env?: Record<string, string>;
  /** Kill the child (SIGKILL) and fail after this many ms. */
  timeoutMs?: number;
}

/** The runner's environment without PARLEY_* variables, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PARLEY_')) env[k] = v;
  return { ...env, ...extra };
}

function spawnCli(args: readonly string[], opts: RunOptions): ChildProcess {
  const [cmd, ...pre] = opts.cli ?? SOURCE_CLI;
  return spawn(cmd, [...pre, ...args], { cwd: opts.cwd ?? ROOT, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `parley ARGS` to completion and collects its exit code and output. */
export function runCli(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, opts);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`parley ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 15_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 15_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface Credentials {
  realm_id: number;
  user_id: number;
  email: string;
  api_key: string;
}

/** Runs `parley init` on `dataDir` and returns the credentials it prints (fails on anything else). */
export async function initDataDir(
  dataDir: string,
  opts: RunOptions & { email?: string; password?: string; realmName?: string } = {},
): Promise<Credentials> {
  const r = await runCli(
    ['init', '--data-dir', dataDir, '--realm-name', opts.realmName ?? 'Test Org', '--email', opts.email ?? 'owner@example.com', '--password', opts.password ?? 'secret123'],
    opts,
  );
  if (r.code !== 0) throw new Error(`parley init failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Credentials;
}

export interface ServeProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` (https with TLS) from the `listening on` line. */
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit; SIGKILLs and fails after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

const LISTENING = /^listening on (https?:\/\/127\.0\.0\.1:(\d+))\n/;

/** Starts `parley serve ARGS` (add `--port 0`) and resolves once it has printed its listening line. */
export function startServe(args: readonly string[], opts: RunOptions = {}): Promise<ServeProcess> {
  const child = spawnCli(['serve', ...args], opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`parley serve printed no listening line in ${opts.timeoutMs ?? 15_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 15_000);
    let ready = false;
    child.stdout!.on('data', (d: string) => {
      stdout += d;
      if (ready || !stdout.includes('\n')) return;
      ready = true;
      clearTimeout(timer);
      const m = LISTENING.exec(stdout);
      if (!m) {
        child.kill('SIGKILL');
        reject(new Error(`unexpected first line from parley serve: ${JSON.stringify(stdout)}\nstderr: ${stderr}`));
        return;
      }
      resolve({
        child,
        url: m[1],
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
        async stop(signal = 'SIGTERM', timeoutMs = 5_000) {
          const t0 = performance.now();
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
          const r = await exited;
          clearTimeout(killer);
          return { ...r, ms: performance.now() - t0 };
        },
      });
    });
    exited.then(({ code, signal }) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`parley serve exited (${code ?? signal}) before listening\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** A fresh temporary directory; `cleanup()` removes every one made so far. */
export function makeTempDirs(prefix = 'parley-cli-') {
  const made: string[] = [];
  return {
    make(): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup(): void {
      for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

export interface HttpResult {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Calls the server's API with Basic auth (form-encoded body for POST). */
export async function apiCall(
  url: string,
  auth: { email: string; apiKey: string } | null,
  method: string,
  apiPath: string,
  form?: Record<string, string>,
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = 'Basic ' + Buffer.from(`${auth.email}:${auth.apiKey}`).toString('base64');
  let body: string | undefined;
  if (form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(form).toString();
  }
  const res = await fetch(url + '/api/v1' + apiPath, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

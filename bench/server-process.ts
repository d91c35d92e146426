// Shared by the benchmarks that run Parley as a child process: waiting for its ready line, stopping
// it, reading its memory after forced garbage collections, and timed API requests to it.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

export interface ServerProcess {
  proc: ChildProcess;
  port: number;
  /** SIGTERM, SIGKILL after 10 s; resolves when the process has exited. */
  stop(): Promise<void>;
}

/** Resolves once the server prints `listening on http://HOST:PORT`; rejects if it exits first. */
export function whenListening(proc: ChildProcess): Promise<ServerProcess> {
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        out = '';
        resolve({
          proc,
          port: Number(m[1]),
          stop: () => {
            if (proc.exitCode === null) proc.kill('SIGTERM');
            const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
            return exited.then(() => clearTimeout(killer));
          },
        });
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code} before listening`)));
  });
}

// A preload for the server process (written to a temp dir; src/ is untouched): on SIGUSR2 it runs two
// full garbage collections and writes process.memoryUsage() to BENCH_MEM_FILE, so that memory is read
// after a GC rather than at whatever point V8's heap happens to be.
const GC_HOOK = `
const fs = require('node:fs');
process.on('SIGUSR2', () => {
  global.gc(); global.gc();
  const f = process.env.BENCH_MEM_FILE;
  fs.writeFileSync(f + '.tmp', JSON.stringify(process.memoryUsage()));
  fs.renameSync(f + '.tmp', f);
});
`;

export interface GcHook {
  /** Node arguments that load the hook (before the script). */
  nodeArgs: string[];
  /** Environment the server needs for the hook. */
  env: Record<string, string>;
  /** process.memoryUsage() of `pid` after two full GCs, or null if it does not answer within 10 s. */
  memoryAfterGc(pid: number): Promise<NodeJS.MemoryUsage | null>;
  /** Removes the hook's temp dir. */
  remove(): void;
}

/** Writes the GC hook to a temp dir. */
export function gcHook(): GcHook {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-hook-'));
  const hookFile = path.join(dir, 'gc-hook.cjs');
  const memFile = path.join(dir, 'mem.json');
  fs.writeFileSync(hookFile, GC_HOOK);
  return {
    nodeArgs: ['--expose-gc', '--require', hookFile],
    env: { BENCH_MEM_FILE: memFile },
    async memoryAfterGc(pid) {
      fs.rmSync(memFile, { force: true });
      process.kill(pid, 'SIGUSR2');
      const deadline = Date.now() + 10_000;
      while (!fs.existsSync(memFile)) {
        if (Date.now() > deadline) return null;
        await new Promise((r) => setTimeout(r, 20));
      }
      return JSON.parse(fs.readFileSync(memFile, 'utf8')) as NodeJS.MemoryUsage;
    },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Runs `fn` and reports how busy process `pid` was meanwhile (1.0 = one core fully used). */
export async function withCpu<T>(pid: number, fn: () => Promise<T>): Promise<T & { cpu: number }> {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  const r = await fn();
  return { ...r, cpu: (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000) };
}

export interface ApiReply {
  status: number;
  body: string;
  /** From the request's start to its last byte. */
  ms: number;
}

/** One request to a bench server on 127.0.0.1 with Basic `auth` and an optional form body, timed. */
export function apiRequest(agent: http.Agent, port: number, auth: string, method: string, p: string, body?: string | Buffer): Promise<ApiReply> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: p,
        agent,
        headers: {
          authorization: auth,
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - start }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

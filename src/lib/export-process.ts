// Runs `parley export` in a child process for POST /export/realm. The server is one thread and
// better-sqlite3 is synchronous: an export of a large history in the server's own process would stop
// it from answering for minutes. The child reads its own snapshot of the database (WAL: writers do not
// wait for it) and writes the tarball; the server only waits for its exit.
//
// The same program is started again, whichever way this one runs:
// - the single executable: process.execPath is parley itself;
// - the bundle (`node dist/parley.cjs`): node with this file, the bundle;
// - the sources (tsx, and the test suite, whose process is the test runner): node --import tsx src/main.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ExportType } from '../export/filter';
import { isSea } from '../native';

export type ExportResult = { ok: true; counts: Record<string, number> | null } | { ok: false; error: string };

export interface ExportProcess {
  /** Stops the export (it removes its temporary files); onDone is still called. */
  kill(): void;
}

/** DATA_DIR/exports: the tarballs of the exports asked for over the API (POST /export/realm). */
export function exportsDir(dataDir: string): string {
  return path.join(dataDir, 'exports');
}

/** Most of the child's stderr kept for the failure message. */
const STDERR_TAIL = 4096;

/** argv (program first) that starts this same Parley. */
export function parleyCommand(): string[] {
  if (isSea()) return [process.execPath];
  if (__filename.endsWith('.ts')) return [process.execPath, '--import', 'tsx', path.join(__dirname, '..', 'main.ts')];
  return [process.execPath, __filename];
}

/** Where `--import tsx` resolves from when running the sources (the repository root). */
function childCwd(): string | undefined {
  return __filename.endsWith('.ts') ? path.join(__dirname, '..', '..') : undefined;
}

/** Starts `parley export --data-dir DIR --export-type TYPE OUT`; `onDone` gets the outcome once. */
export function runExportProcess(opts: { dataDir: string; out: string; exportType: ExportType; onDone: (r: ExportResult) => void }): ExportProcess {
  const [cmd, ...pre] = parleyCommand();
  const typeName = opts.exportType === 1 ? 'public' : 'consent';
  let child: ChildProcess;
  let stderr = '';
  let counts: Record<string, number> | null = null;
  let done = false;
  const finish = (r: ExportResult) => {
    if (done) return;
    done = true;
    opts.onDone(r);
  };
  try {
    child = spawn(cmd, [...pre, 'export', '--data-dir', path.resolve(opts.dataDir), '--export-type', typeName, opts.out], {
      cwd: childCwd(),
      // The data dir is given; no configuration file may move it or change what the child reads.
      env: { ...process.env, PARLEY_CONFIG: '/dev/null' },
      // The IPC channel: the counts come back through it, and its closing tells the child that the server is gone.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
  } catch (err) {
    setImmediate(() => finish({ ok: false, error: (err as Error).message }));
    return { kill: () => undefined };
  }
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL);
  });
  child.on('message', (m: unknown) => {
    const msg = m as { type?: string; counts?: Record<string, number> };
    if (msg && msg.type === 'exported' && msg.counts && typeof msg.counts === 'object') counts = msg.counts;
  });
  child.on('error', (err) => finish({ ok: false, error: err.message }));
  child.on('exit', (code, signal) => {
    if (code === 0) finish({ ok: true, counts });
    else finish({ ok: false, error: `exit ${signal ?? code}: ${stderr.trim()}` });
  });
  return {
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}

// Response recording for the schema conformance check (scripts/check-conformance.mjs): with
// PARLEY_RECORD_RESPONSES=<file or dir/> set, every JSON reply is appended as one line
// {method, route, status, body}. Off (the default) it is a null the server checks once per reply.
import fs from 'node:fs';
import path from 'node:path';

export type Recorder = (method: string, route: string, status: number, body: string) => void;

/** A recorder for `target` (a .jsonl file, or a directory that gets one file per process), or null. */
export function recorderFromEnv(target = process.env.PARLEY_RECORD_RESPONSES): Recorder | null {
  if (!target) return null;
  let file = path.resolve(target);
  const isDir = target.endsWith('/') || (fs.existsSync(file) && fs.statSync(file).isDirectory());
  if (isDir) file = path.join(file, `responses-${process.pid}.jsonl`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return (method, route, status, body) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return; // not an API envelope (HTML, files, tus)
    }
    // One write per line with O_APPEND: lines from concurrent test processes never interleave.
    fs.appendFileSync(file, JSON.stringify({ method, route, status, body: parsed }) + '\n');
  };
}

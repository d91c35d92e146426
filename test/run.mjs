// Runs every test/**/*.test.ts with node:test (Node 20 does not expand globs itself).
// A run that finds no test files, or whose runner reports zero tests, fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(new URL(import.meta.url).pathname);
const filter = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.test.ts')) files.push(path.relative(process.cwd(), full));
  }
})(root);
files.sort();
const selected = filter.length ? files.filter((f) => filter.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error('test/run.mjs: no test files found');
  process.exit(1);
}
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...selected], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (d) => {
  out += d;
  process.stdout.write(d);
});
child.on('close', (code) => {
  const m = /(?:^|\n)\S*\s*tests (\d+)/.exec(out);
  if (code === 0 && m && Number(m[1]) === 0) {
    console.error('test/run.mjs: the runner executed no tests');
    process.exit(1);
  }
  const pass = /ℹ pass (\d+)/.exec(out);
  const fail = /ℹ fail (\d+)/.exec(out);
  if (pass && fail) console.log(`tests: ${pass[1]} passed, ${fail[1]} failed`);
  process.exit(code ?? 1);
});

// `npm run smoke:arm64`: the arm64 executable (dist/parley-linux-arm64, made by `npm run build:arm64`)
// run under qemu, as CI's separate step after `npm test` (.ci/run). It must:
//   1. start with `--demo --data-dir :memory:`, answer GET /api/v1/server_settings, and send and read
//      back a message with Markdown and math (`$$x^2$$` loads the KaTeX chunk, markdown-it another);
//   2. start on an empty data directory (which creates an organization on disk), take a message, stop
//      on SIGTERM, start again on the same directory and read that message back.
// When dist/parley (the x64 executable) exists, its answers to the same requests must be the same.
// Prints the time to the ready file and to the first answer of every start. Exits 1 on any failure.
// Options: --binary PATH (dist/parley-linux-arm64) --native (run the binary directly, no qemu: to try
// the script itself on an x64 build).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { APT_INSTALL, QEMU, SYSROOT } from './arm64-toolchain.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: { binary: { type: 'string', default: path.join(root, 'dist', 'parley-linux-arm64') }, native: { type: 'boolean', default: false } },
});
const BINARY = path.resolve(opt.binary);
const X64 = path.join(root, 'dist', 'parley');
// An emulated start takes seconds; a loaded CI machine can make it many more.
const START_TIMEOUT_MS = 180_000;
const MESSAGE = '**Bold**, *italic*, `code` and math: $$x^2$$';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-smoke-arm64-'));
const children = new Set();

/** Starts `exe serve ARGS --port 0 --ready-file F`; resolves once the ready file is there. */
async function start(exe, args, { emulate, label }) {
  const ready = path.join(tmp, `ready-${children.size}-${Date.now()}.json`);
  const argv = [exe, 'serve', ...args, '--port', '0', '--ready-file', ready];
  const [cmd, cmdArgs] = emulate ? [QEMU, ['-L', SYSROOT, ...argv]] : [argv[0], argv.slice(1)];
  // Its own addon cache: the first start extracts the embedded addons, as on a fresh machine.
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PARLEY_'))), PARLEY_CACHE_DIR: path.join(tmp, 'cache') };
  const t0 = performance.now();
  const child = spawn(cmd, cmdArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let gone = null;
  exited.then((r) => (gone = r));
  while (!fs.existsSync(ready)) {
    if (gone) throw new Error(`${label}: exited (${gone.code ?? gone.signal}) before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${label}: not ready after ${START_TIMEOUT_MS / 1000} s:\n${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const toReady = performance.now() - t0;
  const info = JSON.parse(fs.readFileSync(ready, 'utf8'));
  const settings = await api(info.url, 'GET', '/api/v1/server_settings');
  const toAnswer = performance.now() - t0;
  return { child, info, settings, toReady, toAnswer, exited, output: () => output, label };
}

/** Stops a server with SIGTERM; it must exit 0. */
async function stop(server) {
  server.child.kill('SIGTERM');
  const { code, signal } = await server.exited;
  children.delete(server.child);
  assert.equal(code, 0, `${server.label}: exit ${code ?? signal} on SIGTERM:\n${server.output()}`);
}

async function api(url, method, route, user, form) {
  const headers = {};
  if (user) headers.authorization = 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64');
  const res = await fetch(url + route, { method, headers, body: form ? new URLSearchParams(form) : undefined, signal: AbortSignal.timeout(60_000) });
  const body = await res.json();
  assert.equal(res.status, 200, `${method} ${route}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Sends MESSAGE to the first channel as the first user; returns its id and GET /messages/{id}. */
async function sendAndRead(server, topic) {
  const [user] = server.info.users;
  const channel = server.info.channels[0].name;
  const sent = await api(server.info.url, 'POST', '/api/v1/messages', user, { type: 'stream', to: channel, topic, content: MESSAGE });
  assert.equal(sent.result, 'success');
  assert.ok(Number.isInteger(sent.id));
  return { id: sent.id, read: await readMessage(server, user, sent.id) };
}

async function readMessage(server, user, id) {
  const body = await api(server.info.url, 'GET', `/api/v1/messages/${id}`, user);
  const { content, sender_email, subject, display_recipient } = body.message;
  return { raw_content: body.raw_content, content, sender_email, subject, display_recipient };
}

/** `body` with the server's address (its port differs from start to start) replaced by SERVER. */
function portable(body, url) {
  return JSON.parse(JSON.stringify(body).replaceAll(url, 'SERVER'));
}

const timings = [];
const note = (s) => timings.push(`${s.label}: ready file ${(s.toReady / 1000).toFixed(2)} s, first answer ${(s.toAnswer / 1000).toFixed(2)} s`);

async function smoke(exe, emulate, name) {
  // 1. The demo, in memory.
  const demo = await start(exe, ['--demo', '--data-dir', ':memory:'], { emulate, label: `${name} --demo :memory:` });
  note(demo);
  assert.equal(demo.settings.result, 'success');
  assert.equal(typeof demo.settings.zulip_version, 'string');
  const demoMessage = await sendAndRead(demo, 'smoke');
  await stop(demo);

  // 2. On disk: a first start creates the organization, a second one finds it and the message.
  const dataDir = path.join(tmp, `data-${name}`);
  const first = await start(exe, ['--data-dir', dataDir], { emulate, label: `${name} first start on disk` });
  note(first);
  assert.match(first.output(), /created a new organization/);
  const owner = first.info.users[0];
  const saved = await sendAndRead(first, 'on disk');
  await stop(first);
  assert.ok(fs.existsSync(path.join(dataDir, 'parley.db')), `no ${path.join(dataDir, 'parley.db')}: ${fs.readdirSync(dataDir)}`);
  const again = await start(exe, ['--data-dir', dataDir], { emulate, label: `${name} restart on disk` });
  note(again);
  assert.doesNotMatch(again.output(), /created a new organization/);
  assert.deepEqual(await readMessage(again, owner, saved.id), saved.read);
  const me = await api(again.info.url, 'GET', '/api/v1/users/me', owner);
  assert.equal(me.email, owner.email);
  await stop(again);
  return { settings: portable(demo.settings, demo.info.url), demoMessage: demoMessage.read, saved: saved.read };
}

const t0 = performance.now();
// Never hang CI: a server that stops answering fails the smoke test.
setTimeout(() => {
  console.error('smoke:arm64: FAILED: not done after 15 minutes');
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, 15 * 60_000).unref();
let failed = false;
try {
  if (!fs.existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build:arm64`);
  if (!opt.native && !fs.existsSync(path.join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) throw new Error(`qemu and the aarch64 sysroot are needed: ${APT_INSTALL}`);
  const arm = await smoke(BINARY, !opt.native, path.basename(BINARY));
  // Markdown (markdown-it chunk) and math (KaTeX chunk) were rendered inside the executable.
  assert.equal(arm.demoMessage.raw_content, MESSAGE);
  assert.match(arm.demoMessage.content, /^<p><strong>Bold<\/strong>, <em>italic<\/em>, <code>code<\/code> and math: <span class="katex"><span class="katex-mathml"><math /);
  assert.equal(arm.saved.content, arm.demoMessage.content);
  if (fs.existsSync(X64) && path.resolve(X64) !== BINARY) {
    // The x64 executable, natively: the same answers, byte for byte.
    const x64 = await smoke(X64, false, 'parley (x64)');
    assert.deepEqual(arm, x64);
    timings.push('the same answers as dist/parley (x64)');
  } else timings.push('answers not compared with dist/parley (x64): not built, or the binary under test');
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
}
for (const line of timings) console.log(`smoke:arm64: ${line}`);
console.log(`smoke:arm64: ${failed ? 'FAILED' : 'passed'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);

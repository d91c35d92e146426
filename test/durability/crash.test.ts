// Durability: the built server is killed with SIGKILL while several clients send messages; after a
// restart every message that got a success reply is there, the database passes integrity_check, and
// the server answers normally. Also: `parley backup` while the server is serving writes gives a
// database that a fresh server serves.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

const root = path.join(__dirname, '..', '..');
const binary = path.join(root, 'dist', 'parley');

function run(args: string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(binary, args, { env, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function serve(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(binary, ['serve', '--data-dir', dataDir, '--port', '0', '--no-rate-limits'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 15_000);
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]) });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}: ${out}`));
    });
  });
}

function post(port: number, auth: string, p: string, form: Record<string, string>): Promise<{ status: number; body: any }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: p,
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) });
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function get(port: number, auth: string, p: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, headers: { authorization: auth } }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
      })
      .on('error', reject);
  });
}

describe('crash durability of the built server', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let auth: string;
  before(() => {
    assert.ok(fs.existsSync(binary), `${binary} is missing: run npm run build first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-durability-'));
    env = { ...process.env, PARLEY_CACHE_DIR: path.join(dir, 'cache') };
    const init = run(['init', '--data-dir', path.join(dir, 'data'), '--realm-name', 'Crash', '--email', 'owner@crash.example.com', '--password', 'crash-test-pw'], env);
    assert.equal(init.code, 0, init.stderr);
    const creds = JSON.parse(init.stdout);
    auth = 'Basic ' + Buffer.from(`${creds.email}:${creds.api_key}`).toString('base64');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged message across SIGKILL, with integrity_check ok', async () => {
    const data = path.join(dir, 'data');
    const { proc, port } = await serve(data, env);
    const created = await post(port, auth, '/api/v1/channels/create', { name: 'load', subscribers: '[1]' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const streamId = created.body.id;
    const acknowledged = new Set<number>();
    let stop = false;
    const clients = Array.from({ length: 6 }, async (_, c) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await post(port, auth, '/api/v1/messages', { type: 'stream', to: String(streamId), topic: `t${c}`, content: `client ${c} message ${i}` });
          if (res.status === 200) acknowledged.add(res.body.id);
        } catch {
          return; // the connection died with the server
        }
      }
    });
    await new Promise((r) => setTimeout(r, 700));
    proc.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);
    await new Promise((r) => proc.once('exit', r));
    assert.ok(acknowledged.size > 20, `only ${acknowledged.size} messages were acknowledged before the kill`);

    const db = new Database(path.join(data, 'parley.db'));
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const stored = new Set((db.prepare('SELECT id FROM message').all() as { id: number }[]).map((r) => r.id));
    db.close();
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    assert.deepEqual(lost, [], `${lost.length} acknowledged messages were lost`);

    const again = await serve(data, env);
    const me = await get(again.port, auth, '/api/v1/users/me');
    assert.equal(me.status, 200);
    const res = await post(again.port, auth, '/api/v1/messages', { type: 'stream', to: String(streamId), topic: 'after', content: 'still here' });
    assert.equal(res.status, 200);
    again.proc.kill('SIGTERM');
    await new Promise((r) => again.proc.once('exit', r));
  });

  it('makes a consistent backup while serving writes, and the copy serves', async () => {
    const data = path.join(dir, 'data');
    const { proc, port } = await serve(data, env);
    const streams = await get(port, auth, '/api/v1/streams');
    const streamId = streams.body.streams[0].stream_id;
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        await post(port, auth, '/api/v1/messages', { type: 'stream', to: String(streamId), topic: 'backup', content: `during backup ${i}` });
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    const file = path.join(dir, 'backup.db');
    const b = run(['backup', '--data-dir', data, file], env);
    stop = true;
    await writer;
    assert.equal(b.code, 0, b.stderr);
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));

    const restored = path.join(dir, 'restored');
    fs.mkdirSync(restored);
    fs.copyFileSync(file, path.join(restored, 'parley.db'));
    const db = new Database(path.join(restored, 'parley.db'));
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
    const second = await serve(restored, env);
    const me = await get(second.port, auth, '/api/v1/users/me');
    assert.equal(me.status, 200);
    const msgs = await get(second.port, auth, '/api/v1/messages?anchor=newest&num_before=5&num_after=0');
    assert.equal(msgs.status, 200);
    assert.ok(msgs.body.messages.length > 0);
    second.proc.kill('SIGTERM');
    await new Promise((r) => second.proc.once('exit', r));
  });
});

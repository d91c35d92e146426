// `parley serve --demo` as a CI job uses it: the single executable started in the background with an
// in-memory database, --port 0 and --ready-file; the job waits for the file and uses its credentials.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BINARY, apiCall, childEnv, makeTempDirs, runCli } from '../helpers/cli';
import { DEMO_PASSWORD, DEMO_USERS } from '../../src/demo';

const tmp = makeTempDirs('parley-demo-');
let child: ChildProcess | null = null;
let ready: any;
let cacheDir: string;
let stdout = '';
let stderr = '';

before(async () => {
  // Missing binary is a failure, not a skip: `npm test` builds it first.
  assert.ok(fs.existsSync(BINARY), `${BINARY} is missing: run npm run build`);
  const dir = tmp.make();
  cacheDir = path.join(dir, 'cache');
  const readyFile = path.join(dir, 'ready.json');
  child = spawn(BINARY, ['serve', '--demo', '--data-dir', ':memory:', '--port', '0', '--ready-file', readyFile], {
    cwd: dir,
    env: childEnv({ PARLEY_CACHE_DIR: cacheDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // Wait on the file as a CI job would (no polling of the port).
  const deadline = Date.now() + 15_000;
  while (!fs.existsSync(readyFile)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ready file; stdout: ${stdout}\nstderr: ${stderr}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  ready = JSON.parse(fs.readFileSync(readyFile, 'utf8'));
  // Written atomically: no temporary file is left beside it.
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
});

after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('close', r));
    child.kill('SIGTERM');
    await exited;
  }
  tmp.cleanup();
});

const auth = (u: { email: string; api_key: string }) => ({ email: u.email, apiKey: u.api_key });

describe('parley serve --demo --data-dir :memory: --port 0 --ready-file', () => {
  it('writes the URL, every demo user with role and fixed API key, and the channels', () => {
    assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(stdout, `listening on ${ready.url}\n`);
    assert.deepEqual(
      ready.users.map((u: any) => [u.email, u.full_name, u.role, u.api_key]),
      DEMO_USERS.map((u) => [u.email, u.fullName, u.role, u.apiKey]),
    );
    assert.deepEqual(ready.users.map((u: any) => u.user_id), [1, 2, 3, 4, 5, 6, 7]);
    for (const u of ready.users) assert.match(u.api_key, /^[A-Za-z0-9]{32}$/);
    assert.deepEqual(
      ready.channels.map((c: any) => c.name),
      ['general', 'random', 'bot-testing', 'staff'],
    );
  });

  it('has one owner, administrator, moderator, guest and bot, and members', async () => {
    const owner = ready.users[0];
    const res = await apiCall(ready.url, auth(owner), 'GET', '/users');
    assert.equal(res.status, 200, res.text);
    const byEmail = new Map(res.body.members.map((m: any) => [m.email, m]));
    const roles = ready.users.map((u: any) => (byEmail.get(u.email) as any).role);
    assert.deepEqual(roles, [100, 200, 300, 400, 400, 600, 400]);
    assert.equal((byEmail.get('demo-bot@example.com') as any).is_bot, true);
  });

  it('accepts every API key and the documented password', async () => {
    for (const u of ready.users) {
      const me = await apiCall(ready.url, auth(u), 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.user_id, u.user_id);
    }
    const login = await apiCall(ready.url, null, 'POST', '/fetch_api_key', { username: 'alice@example.com', password: DEMO_PASSWORD });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.api_key, 'demoAliceKey00000000000000000004');
  });

  it('subscribes users to channels they may post in, with messages', async () => {
    for (const u of ready.users) {
      const subs = await apiCall(ready.url, auth(u), 'GET', '/users/me/subscriptions');
      assert.equal(subs.status, 200, subs.text);
      assert.ok(subs.body.subscriptions.length > 0, `${u.email} has no channels`);
      for (const s of subs.body.subscriptions) {
        const sent = await apiCall(ready.url, auth(u), 'POST', '/messages', { type: 'stream', to: String(s.stream_id), topic: 'ci', content: `hi from ${u.email}` });
        assert.equal(sent.status, 200, `${u.email} → ${s.name}: ${sent.text}`);
      }
    }
    const guest = ready.users.find((u: any) => u.role === 600);
    const narrow = encodeURIComponent('[{"operator":"channel","operand":"staff"}]');
    const staff = await apiCall(ready.url, auth(guest), 'GET', `/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`);
    // The guest cannot read the private staff channel (an error, or no messages).
    assert.ok(staff.status !== 200 || staff.body.messages.length === 0, staff.text);
    const history = await apiCall(ready.url, auth(ready.users[3]), 'GET', '/messages?anchor=oldest&num_before=0&num_after=100');
    assert.equal(history.status, 200, history.text);
    assert.ok(history.body.messages.some((m: any) => m.type === 'private'), 'a direct message is seeded');
  });
});

describe('parley zuliprc', () => {
  it('prints [api] email, key and site for a demo user of a data dir', async () => {
    const dir = tmp.make();
    const dataDir = path.join(dir, 'data');
    const readyFile = path.join(dir, 'ready.json');
    const server = spawn(BINARY, ['serve', '--demo', '--data-dir', dataDir, '--port', '0', '--ready-file', readyFile], {
      env: childEnv({ PARLEY_CACHE_DIR: cacheDir }),
      stdio: 'ignore',
    });
    try {
      const deadline = Date.now() + 15_000;
      while (!fs.existsSync(readyFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const opts = { cli: [BINARY], env: { PARLEY_CACHE_DIR: cacheDir } };
      const r = await runCli(['zuliprc', '--data-dir', dataDir, '--email', 'bob@example.com', '--site', 'http://chat.example.com/'], opts);
      assert.deepEqual(r, {
        code: 0,
        signal: null,
        stdout: '[api]\nemail=bob@example.com\nkey=demoBobKey0000000000000000000005\nsite=http://chat.example.com\n',
        stderr: '',
      });
      const missing = await runCli(['zuliprc', '--data-dir', dataDir, '--email', 'nobody@example.com'], opts);
      assert.deepEqual([missing.code, missing.stderr], [1, 'parley: no active user nobody@example.com\n']);
    } finally {
      const exited = new Promise((r) => server.once('close', r));
      server.kill('SIGTERM');
      await exited;
    }
  });
});

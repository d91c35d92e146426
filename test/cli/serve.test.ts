// `parley serve` as a real process: the one listening line, answering requests, first-time setup on an
// empty data dir, and a prompt clean exit on SIGTERM/SIGINT.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { apiCall, initDataDir, makeTempDirs, startServe } from '../helpers/cli';

const tmp = makeTempDirs();
after(() => tmp.cleanup());

/** The whole GET /users/me body of a freshly initialised owner (date_joined checked separately). */
function ownerMe(email: string, userId: number, fullName: string, dateJoined: string, maxMessageId = -1) {
  const hash = crypto.createHash('md5').update(email.toLowerCase()).digest('hex');
  return {
    result: 'success',
    msg: '',
    avatar_url: `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=1`,
    avatar_version: 1,
    email,
    delivery_email: email,
    full_name: fullName,
    is_admin: true,
    is_owner: true,
    is_guest: false,
    is_bot: false,
    is_active: true,
    is_imported_stub: false,
    role: 100,
    timezone: '',
    date_joined: dateJoined,
    max_message_id: maxMessageId,
    user_id: userId,
    profile_data: {},
  };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('parley serve', () => {
  it('prints exactly one listening line on stdout, answers GET /users/me, and exits 0 promptly on SIGTERM', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir, { email: 'owner@example.com' });
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    try {
      const port = Number(new URL(server.url).port);
      assert.ok(port > 0);
      const me = await apiCall(server.url, { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.match(me.body.date_joined, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
      assert.deepEqual(me.body, ownerMe('owner@example.com', creds.user_id, 'owner', me.body.date_joined));

      const bad = await apiCall(server.url, { email: creds.email, apiKey: 'x'.repeat(32) }, 'GET', '/users/me');
      assert.equal(bad.status, 401);
      assert.equal(bad.body.code, 'INVALID_API_KEY');

      const exit = await server.stop('SIGTERM');
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
      assert.ok(exit.ms < 2000, `took ${exit.ms} ms to exit`);
      assert.equal(server.stdout(), `listening on ${server.url}\n`);
      // The request log, on by default: one text line per request, with the user when authenticated
      // (and then no address: reading it costs a system call) and the address otherwise.
      const lines = server.stderr().split('\n');
      assert.equal(lines.length, 3, server.stderr());
      assert.match(lines[0], new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z info - user=${creds.user_id} GET /api/v1/users/me 200 [\\d.]+ms id=[0-9a-f]{8}-1$`));
      assert.match(lines[1], /^\S+Z info 127\.0\.0\.1 user=- GET \/api\/v1\/users\/me 401 [\d.]+ms id=[0-9a-f]{8}-2$/);
      assert.equal(lines[2], '');
      assert.equal(await refused(port), true, 'the port is closed after exit');
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('exits 0 on SIGINT too', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    // One answered request first: main.ts installs its signal handlers just after printing the
    // listening line, so a signal sent the instant the line arrives could still find none.
    assert.equal((await apiCall(server.url, { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me')).status, 200);
    const exit = await server.stop('SIGINT');
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    assert.ok(exit.ms < 2000, `took ${exit.ms} ms to exit`);
  });

  it('keeps serving on SIGHUP without TLS when not on a terminal (systemctl reload), and says there is nothing to reload', async () => {
    // Finding: the unit had no ExecReload, so the README's `systemctl reload parley` (certbot's deploy
    // hook) failed and a renewed certificate was never loaded; adding it needs SIGHUP not to end a
    // service without TLS (systemd counts a SIGHUP death as clean: Restart=on-failure would not restart).
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const server = await startServe(['--data-dir', dataDir, '--port', '0', '--log-level', 'warn']);
    try {
      const auth = { email: creds.email, apiKey: creds.api_key };
      assert.equal((await apiCall(server.url, auth, 'GET', '/users/me')).status, 200);
      const mark = server.stderr().length;
      server.child.kill('SIGHUP');
      for (let i = 0; i < 200 && !server.stderr().slice(mark).includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(server.stderr().slice(mark), 'parley: SIGHUP: no TLS certificate to reload; still serving\n');
      assert.equal((await apiCall(server.url, auth, 'GET', '/users/me')).status, 200);
      const exit = await server.stop('SIGTERM');
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('finishes a request in flight when SIGTERM arrives, then exits 0', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    try {
      const port = Number(new URL(server.url).port);
      const body = new URLSearchParams({ email: 'late@example.com', password: 'secret123', full_name: 'Late Comer' }).toString();
      const auth = Buffer.from(`${creds.email}:${creds.api_key}`).toString('base64');
      const sock = net.connect(port, '127.0.0.1');
      let response = '';
      sock.setEncoding('utf8').on('data', (d: string) => (response += d));
      const closed = new Promise((resolve) => sock.on('close', resolve));
      await new Promise((resolve) => sock.once('connect', resolve));
      // Headers and half the body, then SIGTERM, then the rest: the server must still answer it.
      sock.write(
        `POST /api/v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopping = server.stop('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(server.child.exitCode, null, 'still running while a request is in flight');
      sock.end(body.slice(10));
      await closed;
      assert.match(response, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)), { result: 'success', msg: '', user_id: 2 });
      const exit = await stopping;
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('keeps serving when the reader of its stderr goes away (EPIPE on the request log), and still exits 0 on SIGTERM', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const server = await startServe(['--data-dir', dataDir, '--port', '0']);
    try {
      const me = () => apiCall(server.url, { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal((await me()).status, 200);
      server.child.stderr!.destroy();
      // The log flushes every 50 ms: requests spread over several flushes, each one a write to the closed pipe.
      for (let i = 0; i < 5; i++) {
        assert.equal((await me()).status, 200);
        await new Promise((resolve) => setTimeout(resolve, 80));
      }
      assert.equal(server.child.exitCode, null, 'still running');
      const exit = await server.stop('SIGTERM');
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('takes the data dir, host and port from PARLEY_* environment variables', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const server = await startServe([], { env: { PARLEY_DATA_DIR: dataDir, PARLEY_HOST: '127.0.0.1', PARLEY_PORT: '0' } });
    try {
      const me = await apiCall(server.url, { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
    } finally {
      await server.stop();
    }
  });

  it('runs first-time setup on an empty data dir and prints the owner credentials once, on stderr', async () => {
    const dataDir = path.join(tmp.make(), 'fresh');
    const first = await startServe(['--data-dir', dataDir, '--port', '0', '--log-level', 'warn']);
    let creds: { email: string; apiKey: string };
    try {
      const m = /^parley: created a new organization in (.+)\nparley: owner login: (\S+) \/ password ([A-Za-z0-9]{16}) \/ API key ([A-Za-z0-9]{32})\nparley: open (\S+) in a browser and log in as the owner\n$/.exec(
        first.stderr(),
      );
      assert.ok(m, `stderr: ${JSON.stringify(first.stderr())}`);
      assert.equal(m[1], dataDir);
      assert.equal(m[2], 'owner@parley.example.com');
      assert.equal(m[5], `${first.url}/`);
      creds = { email: m[2], apiKey: m[4] };
      const me = await apiCall(first.url, creds, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      // The starter channel's greeting is the one message.
      assert.deepEqual(me.body, ownerMe('owner@parley.example.com', 1, 'Owner', me.body.date_joined, 1));
      const subs = await apiCall(first.url, creds, 'GET', '/users/me/subscriptions');
      assert.deepEqual(subs.body.subscriptions.map((s: { name: string }) => s.name), ['general']);
      const defaults = await apiCall(first.url, creds, 'GET', '/default_streams');
      assert.deepEqual(defaults.body.default_streams.map((s: { name: string }) => s.name), ['general']);
      const greeting = await apiCall(first.url, creds, 'GET', '/messages/1');
      assert.equal(greeting.body.message.sender_full_name, 'Welcome Bot');
      assert.equal(greeting.body.message.subject, 'welcome');
      assert.match(greeting.body.message.content, /^<p><strong>Welcome to Parley!<\/strong> <span aria-label="wave" class="emoji emoji-1f44b"/);
      // The printed password logs in too.
      const login = await apiCall(first.url, null, 'POST', '/fetch_api_key', { username: m[2], password: m[3] });
      assert.equal(login.status, 200, login.text);
      assert.equal(login.body.api_key, m[4]);
      assert.equal(first.stdout(), `listening on ${first.url}\n`);
    } finally {
      assert.equal((await first.stop()).code, 0);
    }

    const second = await startServe(['--data-dir', dataDir, '--port', '0', '--log-level', 'warn']);
    try {
      assert.equal((await apiCall(second.url, creds, 'GET', '/users/me')).status, 200);
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
    assert.equal(second.stderr(), '', 'no credentials on the second start');
    assert.equal(second.stdout(), `listening on ${second.url}\n`);
  });
});

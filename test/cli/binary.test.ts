// The single executable (dist/parley, written by `npm run build`) copied alone into an empty directory,
// with no node_modules anywhere above it: it must init, serve and answer GET /users/me, and load its
// lazily loaded chunks (src/lazy.ts) from its own assets: Markdown with KaTeX, re2js, libsodium,
// nodemailer and yauzl.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BINARY, apiCall, makeTempDirs, runCli, startServe } from '../helpers/cli';
import { startPushService } from '../helpers/push-service';
import { PARLEY_VERSION } from '../../src/version';
import { SQLITE_ASSET, UWS_ASSET } from '../../src/native';
import { decryptForDevice } from '../../src/push/crypto';
import { makeExportZip } from '../helpers/zip';
import { slackExport } from '../import/slack-fixture';

const tmp = makeTempDirs('parley-bin-');
after(() => tmp.cleanup());

/** Directories from `dir` up to the root that hold a node_modules. */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'node_modules'))) found.push(d);
    if (path.dirname(d) === d) return found;
  }
}

/** dist/parley copied alone into a fresh temp dir (checked to have no node_modules above it). */
function copyBinary(): { dir: string; exe: string; cacheDir: string } {
  // Missing binary is a failure, not a skip: `npm test` builds it first.
  assert.ok(fs.existsSync(BINARY), `${BINARY} is missing: run npm run build`);
  const dir = tmp.make();
  assert.deepEqual(nodeModulesAbove(dir), [], 'the temp dir must have no node_modules above it');
  const exe = path.join(dir, 'parley');
  fs.copyFileSync(BINARY, exe);
  fs.chmodSync(exe, 0o755);
  return { dir, exe, cacheDir: path.join(dir, 'cache') };
}

/** A minimal SMTP server on 127.0.0.1:0 that records the DATA of every message. */
async function startSmtp(): Promise<{ url: string; messages: string[]; close(): void }> {
  const messages: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    let buf = '';
    let data: string | null = null;
    sock.write('220 test ESMTP\r\n');
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (data !== null) {
          if (line === '.') {
            messages.push(data);
            data = null;
            sock.write('250 queued\r\n');
          } else data += line + '\n';
          continue;
        }
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'DATA') {
          data = '';
          sock.write('354 go\r\n');
        } else if (cmd === 'QUIT') sock.end('221 bye\r\n');
        else sock.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    messages,
    close() {
      for (const sock of sockets) sock.destroy();
      server.close();
    },
  };
}

async function until<T>(what: string, get: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('dist/parley (single executable)', () => {
  it('runs alone from an empty directory: --version, init, serve, GET /users/me, SIGTERM', async () => {
    const { dir, exe, cacheDir } = copyBinary();
    const opts = { cli: [exe], cwd: dir, env: { PARLEY_CACHE_DIR: cacheDir } };

    assert.deepEqual(await runCli(['--version'], opts), { code: 0, signal: null, stdout: `parley ${PARLEY_VERSION}\n`, stderr: '' });

    // A relative --data-dir resolves against the working directory.
    const init = await runCli(['init', '--data-dir', 'd', '--realm-name', 'X', '--email', 'a@b.co', '--password', 'secret123'], opts);
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stderr, '');
    assert.match(init.stdout, /^\{"realm_id":1,"user_id":1,"email":"a@b\.co","api_key":"[A-Za-z0-9]{32}"\}\n$/);
    const creds = JSON.parse(init.stdout);
    assert.ok(fs.existsSync(path.join(dir, 'd', 'parley.db')));

    const server = await startServe(['--data-dir', 'd', '--port', '0', '--log-level', 'warn'], opts);
    try {
      const me = await apiCall(server.url, { email: 'a@b.co', apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.result, 'success');
      assert.equal(me.body.email, 'a@b.co');
      assert.equal(me.body.user_id, 1);
      assert.equal(me.body.role, 100);
    } finally {
      const exit = await server.stop();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    }
    assert.equal(server.stdout(), `listening on ${server.url}\n`);
    assert.equal(server.stderr(), '');

    // Both addons were extracted once, into content-addressed directories of the cache dir.
    const extracted = fs
      .readdirSync(cacheDir)
      .flatMap((hash) => fs.readdirSync(path.join(cacheDir, hash)).map((f) => `${/^[0-9a-f]{16}$/.test(hash) ? 'HASH' : hash}/${f}`))
      .sort();
    assert.deepEqual(extracted, [`HASH/${SQLITE_ASSET}`, `HASH/${UWS_ASSET}`].sort());
  });

  it('loads its lazy chunks from its own assets: Markdown with KaTeX, linkifiers, push encryption, SMTP email', async () => {
    const { dir, exe, cacheDir } = copyBinary();
    const push = await startPushService();
    const smtp = await startSmtp();
    const opts = { cli: [exe], cwd: dir, env: { PARLEY_CACHE_DIR: cacheDir, PARLEY_PUSH_URL: push.url, PARLEY_SMTP_URL: smtp.url } };
    try {
      const init = await runCli(['init', '--data-dir', 'd', '--realm-name', 'X', '--email', 'a@b.co', '--password', 'secret123'], opts);
      assert.equal(init.code, 0, init.stderr);
      const auth = { email: 'a@b.co', apiKey: JSON.parse(init.stdout).api_key as string };
      const server = await startServe(['--data-dir', 'd', '--port', '0', '--log-level', 'warn'], opts);
      try {
        // markdown-it and KaTeX.
        const sent = await apiCall(server.url, auth, 'POST', '/messages', { type: 'direct', to: '[1]', content: 'Math: $$x^2$$ and **bold**' });
        assert.equal(sent.status, 200, sent.text);
        const msg = await apiCall(server.url, auth, 'GET', `/messages/${sent.body.id}`);
        assert.equal(msg.status, 200, msg.text);
        const html: string = msg.body.message.content;
        assert.match(html, /^<p>Math: <span class="katex"><span class="katex-mathml"><math xmlns="http:\/\/www\.w3\.org\/1998\/Math\/MathML">/);
        assert.match(html, /<annotation encoding="application\/x-tex">x\^2<\/annotation>/);
        assert.match(html, / and <strong>bold<\/strong><\/p>$/);

        // re2js: a linkifier (RE2, linear time) in a message.
        const filter = await apiCall(server.url, auth, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://t.example/{id}' });
        assert.equal(filter.status, 200, filter.text);
        const linked = await apiCall(server.url, auth, 'POST', '/messages', { type: 'direct', to: '[1]', content: 'see #42' });
        assert.equal(linked.status, 200, linked.text);
        const linkedMsg = await apiCall(server.url, auth, 'GET', `/messages/${linked.body.id}`);
        assert.equal(linkedMsg.body.message.content, '<p>see <a href="https://t.example/42">#42</a></p>');

        // libsodium: an E2EE test notification the device can open.
        const device = await apiCall(server.url, auth, 'POST', '/register_client_device');
        assert.equal(device.status, 200, device.text);
        const pushKey = Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]);
        const registered = await apiCall(server.url, auth, 'POST', '/mobile_push/register', {
          device_id: String(device.body.device_id),
          push_key: pushKey.toString('base64'),
          push_key_id: '7',
          token_kind: 'fcm',
          token_id: crypto.createHash('sha256').update('token').digest().subarray(0, 8).toString('base64'),
          bouncer_public_key: Buffer.from('bouncer-public-key').toString('base64'),
          encrypted_push_registration: Buffer.from('sealed').toString('base64'),
        });
        assert.equal(registered.status, 200, registered.text);
        assert.equal((await apiCall(server.url, auth, 'POST', '/mobile_push/test_notification')).status, 200);
        const notify = await push.waitFor((r) => r.path === '/api/v1/remotes/push/e2ee/notify', 10_000);
        const payload = JSON.parse(await decryptForDevice(pushKey, notify.body.push_requests[0].payload.encrypted_data));
        assert.equal(payload.user_id, 1);

        // nodemailer: an invitation goes out through SMTP.
        const invited = await apiCall(server.url, auth, 'POST', '/invites', { invitee_emails: 'new@b.co', stream_ids: '[]' });
        assert.equal(invited.status, 200, invited.text);
        const mail = await until('the invitation email', () => smtp.messages[0]);
        assert.match(mail, /^To: new@b\.co$/m);
        assert.match(mail, /invited you to join X/);
        await until('the delivery log line', () => (server.stderr().includes(' sent: ') ? true : undefined));
      } finally {
        const exit = await server.stop();
        assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
      }
      assert.equal(server.stderr(), 'parley: email to new@b.co sent: a invited you to join X\n');
      assert.ok(!fs.existsSync(path.join(dir, 'd', 'outbox')), 'no email went to the outbox');
    } finally {
      smtp.close();
      await push.close();
    }
  });

  it('imports a Slack export with its yauzl chunk', async () => {
    const { dir, exe, cacheDir } = copyBinary();
    fs.writeFileSync(path.join(dir, 'slack.zip'), makeExportZip(slackExport()));
    const r = await runCli(['import', '--from', 'slack', '--data-dir', 'd', 'slack.zip'], { cli: [exe], cwd: dir, env: { PARLEY_CACHE_DIR: cacheDir }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.split('\n')[0]).imported, { users: 8, channels: 4, direct_conversations: 2, messages: 20, reactions: 5, uploads: 1 });
  });

  it('installs itself as a service with its embedded unit, and takes cache_dir from a configuration file', async () => {
    const { dir, exe } = copyBinary();
    // No packaging/ next to the copy: the unit must come from inside the executable.
    const root = tmp.make();
    const installed = await runCli(['install-service', '--root', root, '--no-start'], { cli: [exe], cwd: dir });
    assert.equal(installed.code, 0, installed.stderr);
    const shipped = fs.readFileSync(path.resolve(__dirname, '..', '..', 'packaging', 'parley.service'), 'utf8');
    assert.equal(
      fs.readFileSync(path.join(root, 'etc/systemd/system/parley.service'), 'utf8'),
      shipped.replace('ExecStart=/usr/local/bin/parley serve', `ExecStart=${exe} serve`),
    );

    // cache_dir (and data_dir) from the file: the addons are extracted where the file says.
    fs.writeFileSync(path.join(dir, 'parley.toml'), 'data_dir = "d"\ncache_dir = "addons"\nport = 0\n');
    const server = await startServe(['--config', 'parley.toml'], { cli: [exe], cwd: dir });
    const exit = await server.stop();
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    assert.ok(fs.existsSync(path.join(dir, 'd', 'parley.db')));
    const extracted = fs.readdirSync(path.join(dir, 'addons')).flatMap((hash) => fs.readdirSync(path.join(dir, 'addons', hash))).sort();
    assert.deepEqual(extracted, [SQLITE_ASSET, UWS_ASSET].sort());
  });
});

// HTTPS without a reverse proxy: a real server with a self-signed certificate made here, fetched with
// node:https trusting it; the certificate reload (new connections get the new pair, open ones and a
// parked long-poll keep theirs, a broken pair changes nothing and says why); the checks that stop a
// start; https URLs and Secure cookies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { csrfCookie } from '../../src/api/web';
import { checkTlsPair, TlsError } from '../../src/http/tls';
import { startTestServer, type TestServer } from '../helpers/server';
import { apiOverHttps, httpsRequest, makeCertPair, type CertPair } from '../helpers/tls';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-tls-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let a: CertPair;
let b: CertPair;
let enc: CertPair;
before(() => {
  a = makeCertPair(dir, 'a');
  b = makeCertPair(dir, 'b');
  enc = makeCertPair(dir, 'enc', { passphrase: 'open sesame' });
});

/** Copies a pair to DIR/NAME.crt|.key: the paths the server is given, overwritten by "renewals". */
function install(pair: CertPair, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  fs.copyFileSync(pair.cert, cert);
  fs.copyFileSync(pair.key, key);
  return { cert, key };
}

function tlsServer(files: { cert: string; key: string }, extra: { passphrase?: string } = {}): Promise<TestServer> {
  return startTestServer({
    configure: (c) => {
      c.tlsCert = files.cert;
      c.tlsKey = files.key;
      c.tlsKeyPassphrase = extra.passphrase ?? null;
    },
  });
}

function reloadError(t: TestServer): string {
  try {
    t.server.reloadTls();
  } catch (err) {
    assert.ok(err instanceof TlsError, String(err));
    return err.message;
  }
  assert.fail('reloadTls did not throw');
}

describe('HTTPS with --tls-cert and --tls-key', () => {
  let t: TestServer;
  let files: { cert: string; key: string };
  before(async () => {
    files = install(a, 'served');
    t = await tlsServer(files);
  });
  after(() => t.close());

  it('serves the API over HTTPS with the certificate, and its URLs are https', async () => {
    assert.equal(t.server.url, `https://127.0.0.1:${t.server.port}`);
    assert.equal(t.app.publicUrl, t.server.url);
    const res = await httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [a.pem] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.fingerprint256, a.fingerprint256);
    // The same body a plain HTTP server gives, but for its own address.
    const plain = await startTestServer();
    try {
      const expected = (await plain.api(null, 'GET', '/server_settings')).body;
      expected.realm_url = expected.realm_uri = t.url;
      if ('realm_icon' in expected) expected.realm_icon = expected.realm_icon.replace(plain.url, t.url);
      assert.deepEqual(res.body, expected);
    } finally {
      await plain.close();
    }
    assert.deepEqual(
      { ...t.server.tls, fingerprint256: t.server.tls?.fingerprint256 },
      { cert: files.cert, key: files.key, passphrase: null, fingerprint256: a.fingerprint256, filesSha256: t.server.tls?.filesSha256, validFrom: t.server.tls?.validFrom, validTo: t.server.tls?.validTo },
    );
  });

  it('refuses a client that does not trust the certificate (it is not some default one)', async () => {
    await assert.rejects(httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [b.pem] }), /self-signed certificate/);
  });

  it('reloads a renewed pair for new connections; open connections and a parked long-poll keep going', async () => {
    const owner = t.users.owner;
    const { hamlet, othello } = t.users;
    const kept = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const polling = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await apiOverHttps(t.url, [a.pem], owner, 'GET', '/users/me', {}, kept);
      assert.equal(before.status, 200);
      assert.equal(before.fingerprint256, a.fingerprint256);
      const reg = await apiOverHttps(t.url, [a.pem], hamlet, 'POST', '/register', { event_types: ['typing'], fetch_event_types: [] }, polling);
      assert.equal(reg.status, 200, reg.text);
      const poll = apiOverHttps(t.url, [a.pem], hamlet, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: -1 }, polling);
      await new Promise((r) => setTimeout(r, 100)); // the poll is parked on the server

      install(b, 'served');
      const pair = t.server.reloadTls();
      assert.equal(pair.fingerprint256, b.fingerprint256);
      assert.equal(t.server.tls?.fingerprint256, b.fingerprint256);

      // A new connection sees the new certificate (and a client trusting only the old one is refused).
      const fresh = await apiOverHttps(t.url, [b.pem], othello, 'POST', '/typing', { op: 'start', to: [hamlet.id] });
      assert.deepEqual({ status: fresh.status, body: fresh.body, fp: fresh.fingerprint256 }, { status: 200, body: { result: 'success', msg: '' }, fp: b.fingerprint256 });
      await assert.rejects(httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [a.pem] }), /self-signed certificate/);

      // The long-poll parked before the reload is answered on its old connection.
      const events = await poll;
      assert.equal(events.fingerprint256, a.fingerprint256);
      const person = (u: { id: number; email: string }) => ({ user_id: u.id, email: u.email });
      assert.deepEqual(events.body, {
        result: 'success',
        msg: '',
        events: [{ type: 'typing', op: 'start', message_type: 'direct', sender: person(othello), recipients: [person(hamlet), person(othello)].sort((x, y) => x.user_id - y.user_id), id: 0 }],
        queue_id: reg.body.queue_id,
      });

      // A kept-alive connection made before the reload still works, with the old certificate.
      const again = await apiOverHttps(t.url, [a.pem], owner, 'GET', '/users/me', {}, kept);
      assert.deepEqual({ status: again.status, body: again.body, fp: again.fingerprint256 }, { status: 200, body: before.body, fp: a.fingerprint256 });
    } finally {
      kept.destroy();
      polling.destroy();
    }
  });

  it('a reload with unchanged files keeps the app it has (each new app stays in memory until shutdown)', async () => {
    // Finding: every SIGHUP built a new HTTPS app and kept the old one until shutdown (~30 KB each,
    // measured 1500 reloads: +66 MB), so a reload from cron or a config tool every hour grew the
    // server by hundreds of MB a year on a Pi. Unchanged files now change nothing.
    install(b, 'served');
    const served = t.server.reloadTls();
    const retired = t.server.retiredApps;
    for (let i = 0; i < 5; i++) assert.equal(t.server.reloadTls(), served);
    assert.equal(t.server.retiredApps, retired);
    const res = await httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [b.pem] });
    assert.deepEqual({ status: res.status, fp: res.fingerprint256 }, { status: 200, fp: b.fingerprint256 });
    // A renewal still makes a new app.
    install(a, 'served');
    assert.equal(t.server.reloadTls().fingerprint256, a.fingerprint256);
    assert.equal(t.server.retiredApps, retired + 1);
  });

  it('a broken renewal keeps the current pair and says why', async () => {
    install(b, 'served'); // the pair being served, whatever the earlier tests did
    t.server.reloadTls();
    fs.writeFileSync(files.cert, 'half a certificate');
    assert.equal(reloadError(t), `the TLS certificate ${files.cert} is not a PEM certificate`);
    fs.copyFileSync(a.cert, files.cert); // a renewed certificate, the old key
    assert.equal(reloadError(t), `the TLS key ${files.key} does not match the certificate ${files.cert}`);
    fs.rmSync(files.key);
    assert.equal(reloadError(t), `cannot read the TLS key ${files.key}: no such file`);
    fs.writeFileSync(files.key, '');
    assert.equal(reloadError(t), `the TLS key ${files.key} is not a PEM private key`);
    assert.equal(t.server.tls?.fingerprint256, b.fingerprint256);
    const res = await httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [b.pem] });
    assert.equal(res.status, 200);
    assert.equal(res.fingerprint256, b.fingerprint256);
    // Fixed files are picked up by the next reload.
    install(a, 'served');
    assert.equal(t.server.reloadTls().fingerprint256, a.fingerprint256);
    assert.equal((await httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [a.pem] })).fingerprint256, a.fingerprint256);
  });

  it('gives the session and csrftoken cookies Secure', async () => {
    const login = await httpsRequest(`${t.url}/login`, {
      ca: [a.pem, b.pem],
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: t.users.hamlet.email, password: t.users.hamlet.password }).toString(),
    });
    assert.equal(login.status, 303, login.text);
    const session = String(login.headers['set-cookie']);
    assert.match(session, /^parley_session=[\w-]+; HttpOnly; SameSite=Lax; Path=\/; Max-Age=1209600; Secure$/);
    // The web app's page sets it (its bundle is not built for these tests: the cookie maker directly).
    assert.match(csrfCookie(t.app, session.split(';')[0].split('=')[1]), /^csrftoken=[\w-]+; SameSite=Lax; Path=\/; Secure$/);
    const logout = await httpsRequest(`${t.url}/logout`, { ca: [a.pem, b.pem], method: 'POST', headers: { cookie: session.split(';')[0] } });
    assert.equal(String(logout.headers['set-cookie']), 'parley_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; Secure');
  });
});

describe('TLS settings', () => {
  it('serves an encrypted key with its passphrase', async () => {
    const t = await tlsServer(enc, { passphrase: 'open sesame' });
    try {
      const res = await httpsRequest(`${t.url}/api/v1/server_settings`, { ca: [enc.pem] });
      assert.equal(res.status, 200);
      assert.equal(res.fingerprint256, enc.fingerprint256);
    } finally {
      await t.close();
    }
  });

  it('refuses what cannot be served, naming the file', () => {
    const check = (files: { cert: string; key: string; passphrase?: string }) => {
      try {
        checkTlsPair(files);
      } catch (err) {
        assert.ok(err instanceof TlsError);
        return err.message;
      }
      return 'ok';
    };
    const missing = path.join(dir, 'nope.crt');
    assert.equal(check({ cert: missing, key: a.key }), `cannot read the TLS certificate ${missing}: no such file`);
    assert.equal(check({ cert: a.cert, key: dir }), `cannot read the TLS key ${dir}: it is a directory`);
    assert.equal(check({ cert: a.key, key: a.key }), `the TLS certificate ${a.key} is not a PEM certificate`);
    const der = path.join(dir, 'a.der');
    fs.writeFileSync(der, new crypto.X509Certificate(a.pem).raw);
    assert.equal(check({ cert: der, key: a.key }), `the TLS certificate ${der} is not a PEM certificate`);
    assert.equal(check({ cert: a.cert, key: a.cert }), `the TLS key ${a.cert} is not a PEM private key`);
    assert.equal(check({ cert: a.cert, key: b.key }), `the TLS key ${b.key} does not match the certificate ${a.cert}`);
    // Finding: a chain in the wrong order (intermediate first) was reported as a key that does not
    // match, sending the operator after the wrong file.
    const reversed = path.join(dir, 'reversed-chain.pem');
    fs.writeFileSync(reversed, Buffer.concat([b.pem, a.pem]));
    assert.equal(
      check({ cert: reversed, key: a.key }),
      `the TLS certificate file ${reversed} is in the wrong order: the certificate for the key ${a.key} is number 2 of 2; it must come first, then the chain (as in certbot's fullchain.pem)`,
    );
    assert.equal(check({ cert: enc.cert, key: enc.key }), `the TLS key ${enc.key} is encrypted: set PARLEY_TLS_KEY_PASSPHRASE`);
    assert.equal(check({ cert: enc.cert, key: enc.key, passphrase: 'wrong' }), `the TLS key ${enc.key} cannot be decrypted with PARLEY_TLS_KEY_PASSPHRASE`);
    assert.equal(check({ cert: enc.cert, key: enc.key, passphrase: 'open sesame' }), 'ok');
    assert.equal(check({ cert: a.cert, key: a.key, passphrase: 'ignored for a plain key' }), 'ok');
  });

  it('a server without TLS has no certificate to reload', async () => {
    const t = await startTestServer();
    try {
      assert.equal(t.server.tls, null);
      assert.equal(t.server.url.startsWith('http://'), true);
      assert.equal(reloadError(t), 'the server does not serve TLS');
    } finally {
      await t.close();
    }
  });

  it('an https external URL gives Secure cookies behind a TLS-terminating proxy', async () => {
    const t = await startTestServer();
    t.app.publicUrl = 'https://chat.example.com';
    try {
      const login = await fetch(`${t.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: t.users.hamlet.email, password: t.users.hamlet.password }).toString(),
      });
      assert.equal(login.status, 303);
      assert.match(login.headers.get('set-cookie') ?? '', /; Secure$/);
    } finally {
      await t.close();
    }
  });
});

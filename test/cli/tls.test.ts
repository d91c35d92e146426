// `parley serve --tls-cert --tls-key` as a real process: HTTPS with a self-signed certificate made
// here, a real SIGHUP after a renewal (new connections get the new certificate) and after a broken
// one (the old certificate stays, stderr says why), and the start-up refusals.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { initDataDir, makeTempDirs, runCli, startServe, type ServeProcess } from '../helpers/cli';
import { apiOverHttps, httpsRequest, makeCertPair, makeExpiredCert, type CertPair } from '../helpers/tls';

const tmp = makeTempDirs('parley-cli-tls-');
after(() => tmp.cleanup());

let certs: string;
let a: CertPair;
let b: CertPair;
before(() => {
  certs = tmp.make();
  a = makeCertPair(certs, 'a');
  b = makeCertPair(certs, 'b');
});

/** Waits until stderr has grown by a line after `from` characters, and returns that line. */
async function nextStderrLine(server: ServeProcess, from: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const tail = server.stderr().slice(from);
    if (tail.includes('\n')) return tail;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`no stderr line after SIGHUP; stderr: ${server.stderr()}`);
}

describe('parley serve with TLS', () => {
  it('serves HTTPS, reloads a renewed certificate on SIGHUP, and keeps the old one when the new one is broken', async () => {
    const dataDir = tmp.make();
    const creds = await initDataDir(dataDir);
    const cert = path.join(certs, 'live.crt');
    const key = path.join(certs, 'live.key');
    fs.copyFileSync(a.cert, cert);
    fs.copyFileSync(a.key, key);
    const server = await startServe(['--data-dir', dataDir, '--port', '0', '--tls-cert', cert, '--tls-key', key, '--log-level', 'warn']);
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const settings = await httpsRequest(`${server.url}/api/v1/server_settings`, { ca: [a.pem] });
      assert.equal(settings.status, 200, settings.text);
      assert.equal(settings.fingerprint256, a.fingerprint256);
      assert.equal(settings.body.realm_url, server.url);
      const me = await apiOverHttps(server.url, [a.pem], { email: creds.email, apiKey: creds.api_key }, 'GET', '/users/me');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.user_id, creds.user_id);

      // A renewal, then a real SIGHUP.
      fs.copyFileSync(b.cert, cert);
      fs.copyFileSync(b.key, key);
      let mark = server.stderr().length;
      server.child.kill('SIGHUP');
      const validTo = new crypto.X509Certificate(b.pem).validTo;
      assert.equal(await nextStderrLine(server, mark), `parley: TLS certificate reloaded from ${cert} (SHA-256 ${b.fingerprint256}, valid until ${validTo})\n`);
      const renewed = await httpsRequest(`${server.url}/api/v1/server_settings`, { ca: [b.pem] });
      assert.deepEqual({ status: renewed.status, body: renewed.body, fp: renewed.fingerprint256 }, { status: 200, body: settings.body, fp: b.fingerprint256 });

      // A broken renewal: still serving b, and stderr says why.
      fs.writeFileSync(cert, '-----BEGIN CERTIFICATE-----\ntruncated\n');
      mark = server.stderr().length;
      server.child.kill('SIGHUP');
      assert.equal(
        await nextStderrLine(server, mark),
        `parley: TLS reload failed, still serving the previous certificate: the TLS certificate ${cert} is not a PEM certificate\n`,
      );
      const still = await httpsRequest(`${server.url}/api/v1/server_settings`, { ca: [b.pem] });
      assert.deepEqual({ status: still.status, fp: still.fingerprint256 }, { status: 200, fp: b.fingerprint256 });

      const exit = await server.stop('SIGTERM');
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
      assert.equal(server.stdout(), `listening on ${server.url}\n`);
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('takes the pair from PARLEY_TLS_CERT and PARLEY_TLS_KEY, and prints the https address on a first start', async () => {
    const dataDir = tmp.make();
    const server = await startServe(['--data-dir', dataDir, '--port', '0', '--log-level', 'warn'], { env: { PARLEY_TLS_CERT: a.cert, PARLEY_TLS_KEY: a.key } });
    try {
      assert.match(server.url, /^https:\/\//);
      const res = await httpsRequest(`${server.url}/api/v1/server_settings`, { ca: [a.pem] });
      assert.equal(res.fingerprint256, a.fingerprint256);
      assert.match(server.stderr(), new RegExp(`parley: open ${server.url.replace(/[.]/g, '\\.')}/ in a browser and log in as the owner\n$`));
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('serves an expired certificate but says so at the start and on each SIGHUP', async () => {
    // Finding: an expired certificate was served without a word; every client then refused the
    // connection and the log showed nothing wrong. Refusing to start would leave the box unreachable
    // until a renewal (and browsers let a person proceed), so it is served with a warning.
    const dir = tmp.make();
    const expired = makeExpiredCert(dir, 'old', a.key);
    const validTo = new crypto.X509Certificate(expired.pem).validTo;
    const warning = `parley: warning: the TLS certificate ${expired.cert} expired on ${validTo}; clients will refuse it until it is renewed\n`;
    const server = await startServe(['--data-dir', ':memory:', '--port', '0', '--tls-cert', expired.cert, '--tls-key', a.key]);
    try {
      const res = await httpsRequest(`${server.url}/api/v1/server_settings`, { ca: [expired.pem] }).catch((err: Error) => err.message);
      assert.equal(res, 'certificate has expired');
      assert.ok(server.stderr().includes(warning), server.stderr());
      const mark = server.stderr().length;
      server.child.kill('SIGHUP');
      for (let i = 0; i < 200 && !server.stderr().slice(mark).includes(warning); i++) await new Promise((r) => setTimeout(r, 50));
      // The same files: nothing is rebuilt, and the warning is repeated.
      assert.equal(server.stderr().slice(mark), `parley: TLS certificate unchanged in ${expired.cert} (SHA-256 ${expired.fingerprint256}); nothing reloaded\n${warning}`);
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('refuses to start, naming the file, before creating anything', async () => {
    const missing = path.join(certs, 'missing.crt');
    const big = path.join(certs, 'big.crt');
    fs.writeFileSync(big, Buffer.concat([a.pem, Buffer.alloc(2 * 1024 * 1024 - a.pem.length, 'A')]));
    const fifo = path.join(certs, 'fifo.crt');
    if (!fs.existsSync(fifo)) execFileSync('mkfifo', [fifo]);
    const cases: [string[], Record<string, string>, string][] = [
      [['--tls-cert', missing, '--tls-key', a.key], {}, `parley: cannot read the TLS certificate ${missing}: no such file\n`],
      [['--tls-cert', a.cert, '--tls-key', certs], {}, `parley: cannot read the TLS key ${certs}: it is a directory\n`],
      [[], { PARLEY_TLS_CERT: a.cert, PARLEY_TLS_KEY: b.key }, `parley: the TLS key ${b.key} does not match the certificate ${a.cert}\n`],
      [['--tls-cert', a.key, '--tls-key', a.key], {}, `parley: the TLS certificate ${a.key} is not a PEM certificate\n`],
      // Finding: the files were read whole with no bound: a FIFO blocked the start (and, on SIGHUP, the
      // running server) forever, and /dev/zero was read until memory ran out.
      [['--tls-cert', big, '--tls-key', a.key], {}, `parley: the TLS certificate ${big} is too large (2097152 bytes, at most 1048576)\n`],
      [['--tls-cert', fifo, '--tls-key', a.key], {}, `parley: cannot read the TLS certificate ${fifo}: not a regular file\n`],
      [['--tls-cert', a.cert, '--tls-key', '/dev/zero'], {}, 'parley: the TLS key /dev/zero is too large (more than 1048576 bytes)\n'],
    ];
    for (const [args, env, stderr] of cases) {
      const dataDir = tmp.make();
      const r = await runCli(['serve', '--data-dir', dataDir, '--port', '0', ...args], { env });
      assert.deepEqual(r, { code: 1, signal: null, stdout: '', stderr }, args.join(' '));
      assert.deepEqual(fs.readdirSync(dataDir), [], 'no database was created');
    }
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { formatEml, outboxDir, sendEmail } from '../../src/lib/email';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

describe('sendEmail without SMTP', () => {
  it('writes one .eml per message with an 8bit UTF-8 text part', () => {
    const file = sendEmail(t.app, { to: 'zoë@example.com', subject: 'Grüße', text: 'Hallo Zoë,\nopen https://chat.example.com/accounts/confirm_new_email/abc?x=1&y=2\n' });
    assert.ok(file && file.startsWith(outboxDir(t.app) + path.sep) && file.endsWith('.eml'));
    assert.equal(outboxDir(t.app), path.join(t.dataDir, 'outbox'));
    const eml = fs.readFileSync(file, 'utf8');
    const [head, body] = eml.split('\r\n\r\n');
    assert.match(head, /^From: Parley <noreply@127\.0\.0\.1>$/m);
    assert.match(head, /^To: =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/m);
    assert.match(head, /^Subject: =\?UTF-8\?B\?R3LDvMOfZQ==\?=$/m);
    assert.match(head, /^Content-Type: text\/plain; charset=UTF-8$/m);
    assert.match(head, /^Content-Transfer-Encoding: 8bit$/m);
    assert.match(head, /^MIME-Version: 1\.0$/m);
    assert.equal(body, 'Hallo Zoë,\r\nopen https://chat.example.com/accounts/confirm_new_email/abc?x=1&y=2\r\n');
  });

  it('keeps header injection out of the headers', () => {
    const eml = formatEml('a@b.c', { to: 'x@y.z\r\nBcc: evil@example.com', subject: 's', text: 't' }, new Date(0), '<1@b.c>');
    assert.doesNotMatch(eml, /^Bcc:/m);
  });
});

describe('sendEmail with smtp_url set', () => {
  it('delivers through SMTP instead of the outbox', async () => {
    // A minimal SMTP server that accepts one message.
    let data = '';
    const sockets = new Set<net.Socket>();
    let server!: net.Server;
    const received = new Promise<string>((resolve) => {
      server = net.createServer((sock) => {
        sockets.add(sock);
        let inData = false;
        let buf = '';
        sock.write('220 test ESMTP\r\n');
        sock.on('data', (chunk) => {
          buf += chunk.toString('utf8');
          let i: number;
          while ((i = buf.indexOf('\r\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (inData) {
              if (line === '.') {
                inData = false;
                sock.write('250 queued\r\n');
                resolve(data);
              } else data += line + '\n';
              continue;
            }
            const cmd = line.slice(0, 4).toUpperCase();
            if (cmd === 'EHLO' || cmd === 'HELO') sock.write('250 test\r\n');
            else if (cmd === 'DATA') {
              inData = true;
              sock.write('354 go\r\n');
            } else if (cmd === 'QUIT') {
              sock.end('221 bye\r\n');
            } else sock.write('250 ok\r\n');
          }
        });
      });
      server.listen(0, '127.0.0.1', () => {
        t.app.config.smtpUrl = `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      });
    });
    await new Promise((r) => setTimeout(r, 50));
    const before = fs.existsSync(outboxDir(t.app)) ? fs.readdirSync(outboxDir(t.app)).length : 0;
    try {
      assert.equal(sendEmail(t.app, { to: 'someone@example.com', subject: 'Hello', text: 'Link: https://example.com/x\n' }), null);
      const message = await received;
      assert.match(message, /^To: someone@example\.com$/m);
      assert.match(message, /^Subject: Hello$/m);
      assert.match(message, /https:\/\/example\.com\/x/);
    } finally {
      t.app.config.smtpUrl = null;
      for (const sock of sockets) sock.destroy();
      server.close();
    }
    assert.equal(fs.existsSync(outboxDir(t.app)) ? fs.readdirSync(outboxDir(t.app)).length : 0, before);
  });
});

// Regression: after a multipart upload large enough to pause the socket, the next request on the same
// keep-alive connection must be answered (the pause used to outlive the upload).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { basicAuth, startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

function send(agent: http.Agent, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: t.server.port, method, path, agent, headers, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

describe('keep-alive after an upload', () => {
  it('answers the next request on the same connection after a 200 KB multipart upload', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const auth = basicAuth(t.users.hamlet);
    const boundary = 'keepaliveboundary';
    const file = Buffer.alloc(200_000, 0x61);
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    for (let i = 0; i < 3; i++) {
      const up = await send(agent, 'POST', '/api/v1/user_uploads', {
        authorization: auth,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
      }, body);
      assert.equal(up.status, 200, up.text);
      const me = await send(agent, 'GET', '/api/v1/users/me', { authorization: auth });
      assert.equal(me.status, 200);
    }
    agent.destroy();
  });
});

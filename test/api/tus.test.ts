import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { sweepExpiredTusUploads } from '../../src/actions/uploads';

const MIB = 1024 * 1024;
let t: TestServer;
before(async () => {
  t = await startTestServer({ configure: (c) => (c.maxFileUploadSizeMib = 4) });
});
after(() => t.close());

const b64 = (s: string) => Buffer.from(s).toString('base64');
const TUS = { 'tus-resumable': '1.0.0' };

function tus(user: TestUser | null, method: string, url: string, headers: Record<string, string> = {}, body?: Buffer) {
  const h: Record<string, string> = { ...TUS, ...headers };
  if (user) h.authorization = basicAuth(user);
  return t.raw(method, url, { headers: h, body });
}

async function create(user: TestUser, length: number, name = 'big file.bin', type = 'application/octet-stream') {
  const res = await tus(user, 'POST', '/api/v1/tus', {
    'upload-length': String(length),
    'upload-metadata': `filename ${b64(name)},filetype ${b64(type)}`,
  });
  assert.equal(res.status, 201, res.text);
  const location = res.headers.get('location') as string;
  assert.match(location, /^\/api\/v1\/tus\/[0-9a-f]{32}$/);
  return location;
}

const patch = (user: TestUser, url: string, offset: number, data: Buffer, extra: Record<string, string> = {}) =>
  tus(user, 'PATCH', url, { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...extra }, data);

async function head(user: TestUser, url: string) {
  return tus(user, 'HEAD', url);
}

describe('OPTIONS /api/v1/tus', () => {
  it('advertises version, extensions and the size limit', async () => {
    const res = await t.raw('OPTIONS', '/api/v1/tus');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('tus-version'), '1.0.0');
    assert.equal(res.headers.get('tus-resumable'), '1.0.0');
    assert.equal(res.headers.get('tus-extension'), 'creation,creation-with-upload,termination,expiration');
    assert.equal(res.headers.get('tus-max-size'), String(4 * MIB));
  });
});

describe('tus uploads', () => {
  it('creates, reports the offset, appends in pieces, and the completing PATCH answers the upload result', async () => {
    const data = crypto.randomBytes(300_000);
    const loc = await create(t.users.hamlet, data.length, 'résumé [final].bin');
    let h = await head(t.users.hamlet, loc);
    assert.equal(h.status, 200);
    assert.equal(h.headers.get('upload-offset'), '0');
    assert.equal(h.headers.get('upload-length'), String(data.length));
    assert.equal(h.headers.get('cache-control'), 'no-store');
    assert.ok(Date.parse(h.headers.get('upload-expires') as string) > Date.now());
    const first = await patch(t.users.hamlet, loc, 0, data.subarray(0, 100_000));
    assert.equal(first.status, 204, first.text);
    assert.equal(first.headers.get('upload-offset'), '100000');
    assert.equal(first.headers.get('tus-resumable'), '1.0.0');
    h = await head(t.users.hamlet, loc);
    assert.equal(h.headers.get('upload-offset'), '100000');
    const last = await patch(t.users.hamlet, loc, 100_000, data.subarray(100_000));
    assert.equal(last.status, 200, last.text);
    assert.equal(last.headers.get('upload-offset'), String(data.length));
    assert.deepEqual(Object.keys(last.body).sort(), ['filename', 'msg', 'result', 'uri', 'url']);
    assert.equal(last.body.filename, 'résumé-final.bin');
    assert.equal(last.body.url, last.body.uri);
    assert.match(last.body.url, /^\/user_uploads\/\d+\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/r%C3%A9sum%C3%A9-final\.bin$/);
    const back = await fetch(t.url + last.body.url, { headers: { authorization: basicAuth(t.users.hamlet) } });
    assert.ok(Buffer.from(await back.arrayBuffer()).equals(data));
    // The upload is finished: its tus resource is gone.
    assert.equal((await head(t.users.hamlet, loc)).status, 404);
    assert.deepEqual(fs.readdirSync(path.join(t.dataDir, 'uploads', 'tus')), []);
  });

  it('resumes after the connection is cut in the middle of a PATCH', async () => {
    const data = crypto.randomBytes(2 * MIB);
    const loc = await create(t.users.hamlet, data.length);
    const sent = 700_000;
    // A PATCH announcing the whole file, cut after `sent` bytes.
    await new Promise<void>((resolve, reject) => {
      const sock = net.connect(t.server.port, '127.0.0.1', () => {
        sock.write(
          `PATCH ${loc} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basicAuth(t.users.hamlet)}\r\n` +
            `Tus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\n` +
            `Content-Length: ${data.length}\r\n\r\n`,
        );
        sock.write(data.subarray(0, sent), () => setTimeout(() => {
          sock.destroy();
          resolve();
        }, 100));
      });
      sock.on('error', reject);
    });
    let offset = 0;
    for (let i = 0; i < 100; i++) {
      const h = await head(t.users.hamlet, loc);
      offset = Number(h.headers.get('upload-offset'));
      if (offset > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(offset > 0 && offset <= sent, `offset ${offset}`);
    // A PATCH from the wrong offset is refused; from the server's offset it completes.
    assert.equal((await patch(t.users.hamlet, loc, 0, data.subarray(0, 10))).status, 409);
    const rest = await patch(t.users.hamlet, loc, offset, data.subarray(offset));
    assert.equal(rest.status, 200, rest.text);
    const back = await fetch(t.url + rest.body.url, { headers: { authorization: basicAuth(t.users.hamlet) } });
    const got = Buffer.from(await back.arrayBuffer());
    assert.equal(crypto.createHash('sha256').update(got).digest('hex'), crypto.createHash('sha256').update(data).digest('hex'));
  });

  it('refuses a wrong offset (409), a wrong content type (415), a missing Tus-Resumable (412), bytes past the length', async () => {
    const loc = await create(t.users.hamlet, 10);
    assert.equal((await patch(t.users.hamlet, loc, 5, Buffer.from('abc'))).status, 409);
    const ct = await tus(t.users.hamlet, 'PATCH', loc, { 'content-type': 'application/octet-stream', 'upload-offset': '0' }, Buffer.from('abc'));
    assert.equal(ct.status, 415);
    const noVersion = await t.raw('PATCH', loc, {
      headers: { authorization: basicAuth(t.users.hamlet), 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      body: Buffer.from('abc'),
    });
    assert.equal(noVersion.status, 412);
    assert.equal(noVersion.headers.get('tus-version'), '1.0.0');
    const tooMuch = await patch(t.users.hamlet, loc, 0, Buffer.from('0123456789abc'));
    assert.equal(tooMuch.status, 413);
    assert.equal((await head(t.users.hamlet, loc)).headers.get('upload-offset'), '10');
  });

  it("refuses an Upload-Length over the limit (413) and hides other users' uploads (404)", async () => {
    const big = await tus(t.users.hamlet, 'POST', '/api/v1/tus', { 'upload-length': String(4 * MIB + 1), 'upload-metadata': `filename ${b64('x')}` });
    assert.equal(big.status, 413);
    assert.equal(big.body.msg, "File is larger than this server's configured maximum upload size (4 MiB).");
    const noLength = await tus(t.users.hamlet, 'POST', '/api/v1/tus', {});
    assert.equal(noLength.status, 400);
    const loc = await create(t.users.hamlet, 10);
    assert.equal((await head(t.users.othello, loc)).status, 404);
    assert.equal((await patch(t.users.othello, loc, 0, Buffer.from('x'))).status, 404);
    assert.equal((await tus(t.users.othello, 'DELETE', loc)).status, 404);
    assert.equal((await tus(null, 'HEAD', loc)).status, 401);
  });

  it('terminates an upload (DELETE) and removes its bytes', async () => {
    const loc = await create(t.users.hamlet, 100);
    await patch(t.users.hamlet, loc, 0, Buffer.alloc(40));
    const file = path.join(t.dataDir, 'uploads', 'tus', loc.split('/').pop() as string);
    assert.equal(fs.statSync(file).size, 40);
    const del = await tus(t.users.hamlet, 'DELETE', loc);
    assert.equal(del.status, 204);
    assert.equal((await head(t.users.hamlet, loc)).status, 404);
    await new Promise((r) => setTimeout(r, 30));
    assert.ok(!fs.existsSync(file));
  });

  it('expires abandoned uploads: the sweeper removes rows and partial files', async () => {
    const loc = await create(t.users.hamlet, 100);
    await patch(t.users.hamlet, loc, 0, Buffer.alloc(10));
    const id = loc.split('/').pop() as string;
    t.app.db.prepare('UPDATE tus_upload SET expires = ? WHERE id = ?').run(Math.floor(Date.now() / 1000) - 1, id);
    assert.equal((await head(t.users.hamlet, loc)).status, 404);
    assert.equal((await patch(t.users.hamlet, loc, 10, Buffer.alloc(10))).status, 410);
    assert.equal(sweepExpiredTusUploads(t.app), 1);
    t.app.batch.commit();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal((t.app.db.prepare('SELECT COUNT(*) AS n FROM tus_upload WHERE id = ?').get(id) as { n: number }).n, 0);
    assert.ok(!fs.existsSync(path.join(t.dataDir, 'uploads', 'tus', id)));
  });

  it('accepts data in the creation request, an empty file, and the session cookie', async () => {
    const res = await tus(
      t.users.hamlet,
      'POST',
      '/api/v1/tus',
      { 'upload-length': '11', 'upload-metadata': `filename ${b64('hi.txt')}`, 'content-type': 'application/offset+octet-stream' },
      Buffer.from('hello'),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('upload-offset'), '5');
    const done = await patch(t.users.hamlet, res.headers.get('location') as string, 5, Buffer.from(' world'));
    assert.equal(done.status, 200);
    assert.equal(done.body.filename, 'hi.txt');

    const empty = await tus(t.users.hamlet, 'POST', '/api/v1/tus', { 'upload-length': '0', 'upload-metadata': `filename ${b64('nothing.txt')}` });
    assert.equal(empty.status, 201);
    assert.equal(empty.body.filename, 'nothing.txt');

    const token = crypto.randomBytes(24).toString('hex');
    const now = Math.floor(Date.now() / 1000);
    t.app.db
      .prepare('INSERT INTO session (token_hash, user_id, created, expires) VALUES (?, ?, ?, ?)')
      .run(crypto.createHash('sha256').update(token).digest('hex'), t.users.othello.id, now, now + 3600);
    const cookie = { cookie: `parley_session=${token}` };
    const viaCookie = await tus(null, 'POST', '/api/v1/tus', { ...cookie, 'upload-length': '3', 'upload-metadata': `filename ${b64('c.txt')}` });
    assert.equal(viaCookie.status, 201, viaCookie.text);
    const fin = await tus(null, 'PATCH', viaCookie.headers.get('location') as string, {
      ...cookie,
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    }, Buffer.from('abc'));
    assert.equal(fin.status, 200);
    const a = t.app.db.prepare('SELECT owner_id FROM attachment WHERE file_name = ?').get('c.txt') as { owner_id: number };
    assert.equal(a.owner_id, t.users.othello.id);
  });
});

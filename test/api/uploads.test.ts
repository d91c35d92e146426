import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart, type Part } from '../helpers/multipart';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { sanitizeName } from '../../src/uploads/store';

const MIB = 1024 * 1024;
let t: TestServer;
let general: number;
let secret: number;

before(async () => {
  t = await startTestServer({ configure: (c) => (c.maxFileUploadSizeMib = 1) });
  general = await createChannel(t, t.users.hamlet, 'general', [t.users.hamlet, t.users.othello]);
  secret = await createChannel(t, t.users.hamlet, 'secret', [t.users.hamlet], { invite_only: true });
});
after(() => t.close());


async function upload(user: TestUser, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  return t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
}

/** The multipart temporary files are removed just after the reply: wait for that. */
async function tmpFilesLeft(): Promise<string[]> {
  const dir = path.join(t.dataDir, 'uploads', 'tmp');
  for (let i = 0; i < 50; i++) {
    if (fs.readdirSync(dir).length === 0) return [];
    await new Promise((r) => setTimeout(r, 10));
  }
  return fs.readdirSync(dir);
}

async function uploadOne(user: TestUser, filename: string, data: Buffer | string = 'hello') {
  const res = await upload(user, [{ field: 'file', filename, data }]);
  assert.equal(res.status, 200, res.text);
  return res.body as { url: string; uri: string; filename: string };
}

const get = (user: TestUser | null, url: string, headers: Record<string, string> = {}) =>
  t.raw('GET', url, { headers: user ? { authorization: basicAuth(user), ...headers } : headers });

describe('POST /user_uploads', () => {
  it('stores one file and answers url, uri (same) and filename; the uploader reads it back', async () => {
    const res = await upload(t.users.hamlet, [{ field: 'file', filename: 'notes.txt', type: 'text/plain', data: 'some notes' }]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['filename', 'msg', 'result', 'uri', 'url']);
    assert.equal(res.body.result, 'success');
    assert.equal(res.body.filename, 'notes.txt');
    assert.equal(res.body.uri, res.body.url);
    const realmId = t.app.realmId();
    assert.match(res.body.url, new RegExp(`^/user_uploads/${realmId}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/notes\\.txt$`));
    const file = path.join(t.dataDir, 'uploads', res.body.url.slice('/user_uploads/'.length));
    assert.equal(fs.readFileSync(file, 'utf8'), 'some notes');
    const back = await get(t.users.hamlet, res.body.url);
    assert.equal(back.status, 200);
    assert.equal(back.text, 'some notes');
    assert.equal(back.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(back.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(back.headers.get('content-disposition'), 'inline; filename="notes.txt"');
    // No temporary file is left behind.
    assert.deepEqual(await tmpFilesLeft(), []);
  });

  it('accepts an empty file', async () => {
    const r = await uploadOne(t.users.hamlet, 'empty.bin', '');
    const back = await get(t.users.hamlet, r.url);
    assert.equal(back.status, 200);
    assert.equal(back.text, '');
    assert.equal(back.headers.get('content-length'), '0');
  });

  it('accepts a file of exactly max_file_upload_size_mib and refuses one byte more', async () => {
    const exact = crypto.randomBytes(MIB);
    const r = await uploadOne(t.users.hamlet, 'exact.bin', exact);
    const back = await fetch(t.url + r.url, { headers: { authorization: basicAuth(t.users.hamlet) } });
    assert.equal(back.status, 200);
    assert.ok(Buffer.from(await back.arrayBuffer()).equals(exact));
    const over = await upload(t.users.hamlet, [{ field: 'file', filename: 'over.bin', data: Buffer.alloc(MIB + 1) }]);
    assert.equal(over.status, 400, over.text);
    assert.equal(over.body.code, 'BAD_REQUEST');
    assert.match(over.body.msg, /larger than .*1 MiB/);
    assert.deepEqual(await tmpFilesLeft(), []);
  });

  it('refuses a request without a file, and one with two files', async () => {
    const none = await upload(t.users.hamlet, [{ field: 'note', data: 'just a field' }]);
    assert.equal(none.status, 400);
    assert.deepEqual(none.body, err('You must specify a file to upload'));
    const two = await upload(t.users.hamlet, [
      { field: 'a', filename: 'a.txt', data: 'a' },
      { field: 'b', filename: 'b.txt', data: 'b' },
    ]);
    assert.equal(two.status, 400);
    assert.deepEqual(two.body, err('You may only upload one file at a time'));
    assert.deepEqual(await tmpFilesLeft(), []);
  });

  it('sanitises file names like Zulip (brackets, slashes, .., Unicode, control characters)', async () => {
    const cases: [string, string][] = [
      ['my [draft] (v2).txt', 'my-draft-v2.txt'],
      ['..', 'uploaded-file'],
      ['[]', 'uploaded-file'],
      ['ｆｕｌｌ　ｗｉｄｔｈ.txt', 'full-width.txt'],
      ['café ünï code.pdf', 'café-ünï-code.pdf'],
      ['a\x01b\x7f c\tz.txt', 'ab-c-z.txt'],
      ['so -- many   spaces.md', 'so-many-spaces.md'],
      ['<script>alert(1)</script>.html', 'scriptalert1script.html'],
      ['x.tar.gz', 'x.tar.gz'],
    ];
    for (const [given, want] of cases) assert.equal(sanitizeName(given), want, given);
    // Over the wire (busboy keeps only the last path segment; what is left is sanitised).
    const wire: [string, string][] = [
      ['my [draft] (v2).txt', 'my-draft-v2.txt'],
      ['../../../etc/passwd', 'passwd'],
      ['..\\\\..\\\\boot.ini', 'boot.ini'],
      ['..', 'uploaded-file'],
      ['café ünï code.pdf', 'café-ünï-code.pdf'],
      ['tab\there .txt', 'tab-here-.txt'],
    ];
    for (const [given, want] of wire) {
      const r = await uploadOne(t.users.hamlet, given, 'x');
      assert.equal(r.filename, want, given);
      assert.ok(r.url.endsWith('/' + encodeURIComponent(want)), r.url);
      const back = await get(t.users.hamlet, r.url);
      assert.equal(back.status, 200, `${given}: ${back.text}`);
      assert.equal(back.text, 'x');
    }
    // Everything stays inside the store.
    const store = path.join(t.dataDir, 'uploads');
    const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
    for (const f of walk(store)) assert.ok(f.startsWith(store + path.sep));
    assert.ok(!fs.existsSync(path.join(t.dataDir, 'passwd')));
  });

  it('enforces the organization upload quota (REALM_UPLOAD_QUOTA)', async () => {
    const used = (await t.api(t.users.hamlet, 'GET', '/attachments')).body.upload_space_used as number;
    const quota = Math.floor(used / MIB) + 1;
    t.app.db.prepare('UPDATE realm SET upload_quota_mib = ?').run(quota);
    try {
      const room = quota * MIB - used;
      await uploadOne(t.users.hamlet, 'fits.bin', Buffer.alloc(Math.max(0, room - 10)));
      const res = await upload(t.users.othello, [{ field: 'file', filename: 'too-much.bin', data: Buffer.alloc(100) }]);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err("Upload would exceed your organization's upload quota.", 'REALM_UPLOAD_QUOTA'));
    } finally {
      t.app.db.prepare('UPDATE realm SET upload_quota_mib = NULL').run();
    }
  });

  it('needs credentials', async () => {
    const { body, contentType } = multipart([{ field: 'file', filename: 'a.txt', data: 'a' }]);
    const res = await t.raw('POST', '/api/v1/user_uploads', { headers: { 'content-type': contentType }, body });
    assert.equal(res.status, 401);
  });
});

describe('GET /user_uploads/{realm_id}/{path}', () => {
  it('is readable by the uploader only until a message links it; then by its recipients; deleting the message revokes it', async () => {
    const u = t.users;
    const r = await uploadOne(u.hamlet, 'plan.txt', 'the plan');
    assert.equal((await get(u.othello, r.url)).status, 403);
    assert.equal((await get(u.othello, r.url)).text, '<p>You are not authorized to view this file.</p>');
    const id = await sendDirect(t, u.hamlet, [u.othello], `see [plan.txt](${r.url})`);
    const ok = await get(u.othello, r.url);
    assert.equal(ok.status, 200);
    assert.equal(ok.text, 'the plan');
    // Not a recipient of the direct message.
    assert.equal((await get(u.admin, r.url)).status, 403);
    assert.equal((await get(u.guest, r.url)).status, 403);
    const del = await t.api(u.hamlet, 'DELETE', `/messages/${id}`);
    assert.equal(del.status, 200, del.text);
    assert.equal((await get(u.othello, r.url)).status, 403);
    assert.equal((await get(u.hamlet, r.url)).status, 200);
  });

  it('a file linked in a public channel is readable by every member, not by guests outside it', async () => {
    const u = t.users;
    const r = await uploadOne(u.hamlet, 'public.txt', 'for all');
    await sendToChannel(t, u.hamlet, general, 'files', `[public.txt](${r.url})`);
    assert.equal((await get(u.othello, r.url)).status, 200); // subscriber
    assert.equal((await get(u.moderator, r.url)).status, 200); // not subscribed, public history
    assert.equal((await get(u.guest, r.url)).status, 403);
  });

  it('a file linked in a private channel is readable by its subscribers only', async () => {
    const u = t.users;
    const r = await uploadOne(u.hamlet, 'private.txt', 'hush');
    await sendToChannel(t, u.hamlet, secret, 'files', `[private.txt](${r.url})`);
    assert.equal((await get(u.othello, r.url)).status, 403);
    assert.equal((await get(u.admin, r.url)).status, 403);
  });

  it("a link to someone else's upload grants nothing", async () => {
    const u = t.users;
    const r = await uploadOne(u.hamlet, 'mine.txt', 'mine');
    await sendDirect(t, u.othello, [u.admin], `stolen [link](${r.url})`);
    assert.equal((await get(u.admin, r.url)).status, 403);
  });

  it('accepts the session cookie; refuses no credentials and a bad cookie', async () => {
    const r = await uploadOne(t.users.hamlet, 'cookie.txt', 'via cookie');
    const token = crypto.randomBytes(24).toString('hex');
    const hash = crypto.createHash('sha256').update(token).digest('hex');
    const now = Math.floor(Date.now() / 1000);
    t.app.db.prepare('INSERT INTO session (token_hash, user_id, created, expires) VALUES (?, ?, ?, ?)').run(hash, t.users.hamlet.id, now, now + 3600);
    const ok = await get(null, r.url, { cookie: `parley_session=${token}` });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, 'via cookie');
    assert.equal((await get(null, r.url)).status, 401);
    assert.equal((await get(null, r.url, { cookie: 'parley_session=nope' })).status, 401);
  });

  it('serves anything a browser would execute as an attachment, safe media inline', async () => {
    const cases: [string, string, string][] = [
      ['page.html', 'text/html', 'attachment'],
      ['image.svg', 'image/svg+xml', 'attachment'],
      ['feed.xml', 'text/xml', 'attachment'],
      ['code.js', 'text/javascript', 'attachment'],
      ['noext', 'application/octet-stream', 'attachment'],
      ['odd.constructor', 'application/octet-stream', 'attachment'],
      ['photo.png', 'image/png', 'inline'],
      ['paper.pdf', 'application/pdf', 'inline'],
    ];
    for (const [name, type, disposition] of cases) {
      // The type the client claims is ignored.
      const r = (await upload(t.users.hamlet, [{ field: 'f', filename: name, type: 'image/png', data: '<script>alert(1)</script>' }])).body;
      const res = await get(t.users.hamlet, r.url);
      assert.equal(res.headers.get('content-type'), type, name);
      assert.equal(res.headers.get('content-disposition'), `${disposition}; filename="${name}"`, name);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    }
    const r = await uploadOne(t.users.hamlet, 'café.png', 'x');
    const res = await get(t.users.hamlet, r.url);
    assert.equal(res.headers.get('content-disposition'), "inline; filename*=utf-8''caf%C3%A9.png");
    const dl = await get(t.users.hamlet, r.url.replace('/user_uploads/', '/user_uploads/download/'));
    assert.equal(dl.headers.get('content-disposition'), "attachment; filename*=utf-8''caf%C3%A9.png");
  });

  it('no path escapes the store', async () => {
    fs.writeFileSync(path.join(t.dataDir, 'uploads', 'outside.txt'), 'secret');
    const realmId = t.app.realmId();
    for (const p of [
      `/user_uploads/${realmId}/%2e%2e/%2e%2e/parley.db`,
      `/user_uploads/${realmId}/..%2f..%2fparley.db`,
      `/user_uploads/${realmId}/ab/%2e%2e/outside.txt`,
      `/user_uploads/${realmId}/../outside.txt`,
      `/user_uploads/${realmId}/ab/cdefghijklmnopqrstuvwxyz/..%2F..%2F..%2Fparley.db`,
    ]) {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(t.url + '/', { method: 'GET', path: p, headers: { authorization: basicAuth(t.users.hamlet) } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.ok(res.status === 404 || res.status === 400, `${p}: ${res.status}`);
      assert.ok(!res.body.includes('secret') && !res.body.includes('SQLite'), p);
    }
  });

  it('answers 404 for a missing file and for another realm id', async () => {
    const r = await uploadOne(t.users.hamlet, 'here.txt', 'x');
    const missing = r.url.replace(/\/[^/]+$/, '/nothere.txt');
    assert.equal((await get(t.users.hamlet, missing)).status, 404);
    assert.equal((await get(t.users.hamlet, r.url.replace(/^\/user_uploads\/\d+/, '/user_uploads/999'))).status, 404);
  });
});

describe('GET /api/v1/user_uploads/{realm_id}/{path} (temporary URL)', () => {
  it('hands out a link that works without credentials, for the same people', async () => {
    const r = await uploadOne(t.users.hamlet, 'temp file.txt', 'temporary');
    const res = await t.api(t.users.hamlet, 'GET', r.url.replace('/user_uploads', '/user_uploads'));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'result', 'url']);
    assert.match(res.body.url, /^\/user_uploads\/temporary\/[A-Za-z0-9_.-]+\/temp-file\.txt$/);
    const anon = await t.raw('GET', res.body.url);
    assert.equal(anon.status, 200);
    assert.equal(anon.text, 'temporary');
    const forged = res.body.url.replace(/temporary\/(.)/, (_m: string, c: string) => `temporary/${c === 'A' ? 'B' : 'A'}`);
    assert.deepEqual((await t.raw('GET', forged)).body, err('Invalid token'));
    assert.deepEqual((await t.raw('GET', res.body.url.replace(/[^/]+$/, 'other.txt'))).body, err('Invalid filename'));
    assert.deepEqual((await t.api(t.users.othello, 'GET', r.url)).body, { ...err('You are not authorized to view this file.') });
    assert.equal((await t.api(t.users.othello, 'GET', r.url)).status, 403);
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', r.url.replace(/[^/]+$/, 'gone.txt'))).body, err('File not found.'));
  });
});

describe('uploads referenced by edited messages', () => {
  it('a content edit claims the uploads it links and releases the others; the edit answers with the detached ones', async () => {
    const u = t.users;
    const first = await uploadOne(u.hamlet, 'first.txt', 'one');
    const second = await uploadOne(u.hamlet, 'second.txt', 'two');
    const res0 = await t.api(u.hamlet, 'POST', '/register', { event_types: ['attachment'], fetch_event_types: [] });
    const queue = res0.body.queue_id as string;
    const id = await sendDirect(t, u.hamlet, [u.othello], `[first.txt](${first.url})`);
    assert.equal((await get(u.othello, second.url)).status, 403);
    const edit = await t.api(u.hamlet, 'PATCH', `/messages/${id}`, { content: `now [second.txt](${second.url})` });
    assert.equal(edit.status, 200, edit.text);
    const attachments = (await t.api(u.hamlet, 'GET', '/attachments')).body.attachments as { id: number; path_id: string; name: string }[];
    const firstRow = attachments.find((a) => first.url.endsWith(a.path_id))!;
    const secondRow = attachments.find((a) => second.url.endsWith(a.path_id))!;
    assert.deepEqual(edit.body, {
      ...SUCCESS,
      detached_uploads: [{ id: firstRow.id, name: 'first.txt', path_id: firstRow.path_id, size: 3, create_time: (firstRow as unknown as { create_time: number }).create_time, messages: [] }],
    });
    assert.equal((await get(u.othello, second.url)).status, 200);
    assert.equal((await get(u.othello, first.url)).status, 403);
    // The owner heard each claim (Zulip's notify_attachment_update), not the release.
    const events = await t.api(u.hamlet, 'GET', '/events', { queue_id: queue, last_event_id: -1, dont_block: true });
    const date = (t.app.db.prepare('SELECT date_sent FROM message WHERE id = ?').get(id) as { date_sent: number }).date_sent * 1000;
    assert.deepEqual(
      events.body.events.filter((e: { type: string }) => e.type === 'attachment').map((e: { op: string; attachment: { id: number; messages: unknown[] } }) => [e.op, e.attachment.id, e.attachment.messages]),
      [
        ['update', firstRow.id, [{ id, date_sent: date }]],
        ['update', secondRow.id, [{ id, date_sent: date }]],
      ],
    );
  });
});

describe('GET /attachments, DELETE /attachments/{id}', () => {
  it("lists the user's uploads with the messages linking them; deleting removes file and access", async () => {
    const u = t.users;
    const r = await uploadOne(u.othello, 'listed.txt', 'listed');
    const mid = await sendDirect(t, u.othello, [u.hamlet], `[listed.txt](${r.url})`);
    const res = await t.api(u.othello, 'GET', '/attachments');
    assert.equal(res.status, 200);
    const a = res.body.attachments.find((x: { path_id: string }) => r.url.endsWith(x.path_id));
    const date = t.app.db.prepare('SELECT date_sent FROM message WHERE id = ?').get(mid) as { date_sent: number };
    assert.deepEqual(a, {
      id: a.id,
      name: 'listed.txt',
      path_id: r.url.slice('/user_uploads/'.length),
      size: 6,
      create_time: a.create_time,
      messages: [{ id: mid, date_sent: date.date_sent * 1000 }],
    });
    assert.equal(typeof res.body.upload_space_used, 'number');
    assert.ok(res.body.attachments.every((x: { path_id: string }) => !x.path_id.includes('plan.txt')));
    assert.deepEqual((await t.api(u.hamlet, 'DELETE', `/attachments/${a.id}`)).body, err('Invalid attachment'));
    assert.deepEqual((await t.api(u.othello, 'DELETE', `/attachments/${a.id}`)).body, SUCCESS);
    assert.equal((await get(u.othello, r.url)).status, 404);
    assert.equal((await get(u.hamlet, r.url)).status, 404);
    await new Promise((res) => setTimeout(res, 50));
    assert.ok(!fs.existsSync(path.join(t.dataDir, 'uploads', r.url.slice('/user_uploads/'.length))));
    assert.deepEqual((await t.api(u.othello, 'DELETE', `/attachments/${a.id}`)).body, err('Invalid attachment'));
  });
});

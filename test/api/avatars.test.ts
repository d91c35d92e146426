// Uploaded avatars: POST/DELETE /users/me/avatar, the image files, GET /avatar/{email_or_id}.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart, type Part } from '../helpers/multipart';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS, systemGroups } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
const png = (data = PNG): Part => ({ field: 'file', filename: 'me.png', type: 'image/png', data });

async function upload(user: TestUser, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  return t.raw('POST', '/api/v1/users/me/avatar', { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
}
const row = (id: number) => t.app.db.prepare('SELECT realm_id, avatar_source, avatar_version, avatar_file FROM user WHERE id = ?').get(id) as {
  realm_id: number;
  avatar_source: string;
  avatar_version: number;
  avatar_file: string | null;
};
const gravatar = (email: string, version: number, medium = false) =>
  `https://secure.gravatar.com/avatar/${crypto.createHash('md5').update(email.toLowerCase()).digest('hex')}?d=identicon${medium ? '&s=500' : ''}&version=${version}`;
const get = (path: string, user?: TestUser) => fetch(t.url + path, { redirect: 'manual', headers: user ? { authorization: basicAuth(user) } : {} });

describe('POST /users/me/avatar', () => {
  let url: string;
  it('stores the image, answers its URL, and sends realm_user update with the new version', async () => {
    const q = await registerQueue(t, t.users.othello, ['realm_user']);
    const before = row(t.users.hamlet.id);
    const res = await upload(t.users.hamlet, [png()]);
    const after = row(t.users.hamlet.id);
    assert.equal(after.avatar_source, 'U');
    assert.equal(after.avatar_version, before.avatar_version + 1);
    assert.match(after.avatar_file as string, /^[A-Za-z0-9_-]{32}$/);
    url = `/user_avatars/${after.realm_id}/${after.avatar_file}.png?version=${after.avatar_version}`;
    const medium = `/user_avatars/${after.realm_id}/${after.avatar_file}-medium.png?version=${after.avatar_version}`;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ...SUCCESS, avatar_url: url });
    assert.deepEqual(await queuedEvents(t, t.users.othello, q), [
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: t.users.hamlet.id, avatar_source: 'U', avatar_url: url, avatar_url_medium: medium, avatar_version: after.avatar_version },
      },
    ]);
    const me = await t.api(t.users.hamlet, 'GET', '/users/me');
    assert.equal(me.body.avatar_url, url);
    // client_gravatar cannot compute an uploaded avatar: the URL is sent.
    const other = await t.api(t.users.othello, 'GET', `/users/${t.users.hamlet.id}`, { client_gravatar: true });
    assert.equal(other.body.user.avatar_url, url);
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['realm_user'] });
    assert.equal(reg.body.avatar_url_medium, medium);
    assert.equal(reg.body.avatar_source, 'U');
  });

  it('serves the file without credentials, with its type, nosniff and a long cache', async () => {
    for (const path of [url, url.replace('.png?', '-medium.png?')]) {
      const img = await get(path);
      assert.equal(img.status, 200);
      assert.equal(img.headers.get('content-type'), 'image/png');
      assert.equal(img.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(img.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.deepEqual(Buffer.from(await img.arrayBuffer()), PNG);
    }
    const realmId = row(t.users.hamlet.id).realm_id;
    for (const path of [`/user_avatars/${realmId}/${'A'.repeat(32)}.png`, `/user_avatars/${realmId}/..%2f..%2fx.png`, `/user_avatars/${realmId}/abc.txt`, `/user_avatars/${realmId + 1}/${row(t.users.hamlet.id).avatar_file}.png`]) {
      assert.equal((await get(path)).status, 404, path);
    }
  });

  it('replaces an earlier upload (a JPEG now), removing the old file', async () => {
    const res = await upload(t.users.hamlet, [{ field: 'f', filename: 'x.bin', type: 'application/octet-stream', data: JPEG }]);
    const now = row(t.users.hamlet.id);
    assert.deepEqual(res.body, { ...SUCCESS, avatar_url: `/user_avatars/${now.realm_id}/${now.avatar_file}.png?version=${now.avatar_version}` });
    const img = await get(res.body.avatar_url);
    assert.equal(img.headers.get('content-type'), 'image/jpeg');
    // The old file goes after the commit (asynchronously): wait for it, however long that takes.
    while ((await get(url)).status !== 404) await new Promise((r) => setTimeout(r, 10));
  });

  it('refuses a wrong number of files, a file over 5 MiB and what is not an image, changing nothing', async () => {
    const before = row(t.users.othello.id);
    const cases: [Part[], unknown][] = [
      [[], err('You must upload exactly one avatar.')],
      [[png(), png()], err('You must upload exactly one avatar.')],
      [[png(Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]))], err('Uploaded file is larger than the allowed limit of 5 MiB')],
      [[{ field: 'f', filename: 'a.png', type: 'image/png', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') }], err('Invalid image format', 'BAD_IMAGE')],
      [[{ field: 'f', filename: 'a.png', type: 'image/png', data: Buffer.alloc(0) }], err('Invalid image format', 'BAD_IMAGE')],
    ];
    for (const [parts, expected] of cases) {
      const res = await upload(t.users.othello, parts);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, expected);
    }
    assert.deepEqual(row(t.users.othello.id), before);
    const anon = await t.raw('POST', '/api/v1/users/me/avatar', { headers: { 'content-type': multipart([png()]).contentType }, body: multipart([png()]).body });
    assert.equal(anon.status, 401);
  });

  it('lets a guest and a bot set their own avatar; a bot’s owner hears realm_bot update', async () => {
    const q = await registerQueue(t, t.users.hamlet, ['realm_bot']);
    assert.equal((await upload(t.users.guest, [png()])).status, 200);
    const res = await upload(t.users.bot, [png()]);
    assert.equal(res.status, 200);
    const events = await queuedEvents(t, t.users.hamlet, q);
    assert.deepEqual(events, [{ type: 'realm_bot', op: 'update', bot: { user_id: t.users.bot.id, avatar_url: res.body.avatar_url } }]);
  });
});

describe('DELETE /users/me/avatar', () => {
  it('goes back to Gravatar with a new version and sends realm_user update', async () => {
    const q = await registerQueue(t, t.users.othello, ['realm_user']);
    const res = await t.api(t.users.hamlet, 'DELETE', '/users/me/avatar');
    const now = row(t.users.hamlet.id);
    assert.deepEqual(now.avatar_source, 'G');
    assert.equal(now.avatar_file, null);
    assert.deepEqual(res.body, { ...SUCCESS, avatar_url: gravatar(t.users.hamlet.email, now.avatar_version) });
    assert.deepEqual(await queuedEvents(t, t.users.othello, q), [
      {
        type: 'realm_user',
        op: 'update',
        person: {
          user_id: t.users.hamlet.id,
          avatar_source: 'G',
          avatar_url: gravatar(t.users.hamlet.email, now.avatar_version),
          avatar_url_medium: gravatar(t.users.hamlet.email, now.avatar_version, true),
          avatar_version: now.avatar_version,
        },
      },
    ]);
  });
});

describe('GET /avatar/{email_or_id}', () => {
  it('redirects to the avatar by id or email, medium too', async () => {
    await upload(t.users.othello, [png()]);
    const o = row(t.users.othello.id);
    const uploaded = `/user_avatars/${o.realm_id}/${o.avatar_file}.png?version=${o.avatar_version}`;
    const h = row(t.users.hamlet.id);
    const cases: [string, string][] = [
      [`/avatar/${t.users.othello.id}`, uploaded],
      [`/avatar/${encodeURIComponent(t.users.othello.email)}`, uploaded],
      [`/avatar/${t.users.othello.id}/medium`, uploaded.replace('.png?', '-medium.png?')],
      [`/avatar/${t.users.hamlet.id}`, gravatar(t.users.hamlet.email, h.avatar_version)],
      [`/avatar/${t.users.hamlet.id}/medium`, gravatar(t.users.hamlet.email, h.avatar_version, true)],
      // zulip-compat: nobody by that name: the Gravatar image of the text, version 1.
      ['/avatar/nobody@example.com', gravatar('nobody@example.com', 1)],
      ['/avatar/999999', gravatar('999999', 1)],
    ];
    for (const [path, location] of cases) {
      const res = await get(path, t.users.hamlet);
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.get('location'), location, path);
    }
    assert.equal((await get(`/avatar/${t.users.othello.id}`)).status, 401);
  });

  it('redirects to the unknown-user image for a user the caller may not see', async () => {
    const groups = systemGroups(t);
    t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:members']);
    try {
      for (const path of [`/avatar/${t.users.othello.id}`, `/avatar/${t.users.othello.id}/medium`]) {
        const res = await get(path, t.users.guest);
        assert.equal(res.status, 302);
        assert.equal(res.headers.get('location'), '/static/images/unknown-user-avatar.png');
      }
    } finally {
      t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:everyone']);
    }
  });
});

describe('bots with an avatar file', () => {
  async function multipartCall(user: TestUser, method: string, path: string, parts: Part[]) {
    const { body, contentType } = multipart(parts);
    return t.raw(method, path, { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
  }
  const field = (name: string, value: string): Part => ({ field: name, data: Buffer.from(value) });
  const botCount = () => (t.app.db.prepare('SELECT count(*) AS n FROM user WHERE bot_type IS NOT NULL').get() as { n: number }).n;

  it('POST /bots stores the uploaded avatar with the new bot', async () => {
    const res = await multipartCall(t.users.hamlet, 'POST', '/api/v1/bots', [field('full_name', 'Pictured Bot'), field('short_name', 'pictured'), png()]);
    assert.equal(res.status, 200, res.text);
    const bot = row(res.body.user_id);
    assert.equal(bot.avatar_source, 'U');
    assert.equal(res.body.avatar_url, `/user_avatars/${bot.realm_id}/${bot.avatar_file}.png?version=${bot.avatar_version}`);
    assert.equal((await get(res.body.avatar_url)).status, 200);
  });

  it('POST /bots refuses two files or a file that is not an image, creating no bot', async () => {
    const before = botCount();
    const two = await multipartCall(t.users.hamlet, 'POST', '/api/v1/bots', [field('full_name', 'Two Bot'), field('short_name', 'two'), png(), png()]);
    assert.deepEqual([two.status, two.body], [400, err('You may only upload one file at a time')]);
    const text = await multipartCall(t.users.hamlet, 'POST', '/api/v1/bots', [
      field('full_name', 'Text Bot'),
      field('short_name', 'text'),
      { field: 'f', filename: 'a.png', type: 'image/png', data: Buffer.from('not an image') },
    ]);
    assert.deepEqual([text.status, text.body], [400, err('Invalid image format', 'BAD_IMAGE')]);
    assert.equal(botCount(), before);
  });

  it('PATCH /bots/{id} changes the avatar for whoever may administer the bot, with the events', async () => {
    const q = await registerQueue(t, t.users.hamlet, ['realm_bot']);
    const res = await multipartCall(t.users.hamlet, 'PATCH', `/api/v1/bots/${t.users.bot.id}`, [png()]);
    assert.equal(res.status, 200, res.text);
    const bot = row(t.users.bot.id);
    const url = `/user_avatars/${bot.realm_id}/${bot.avatar_file}.png?version=${bot.avatar_version}`;
    assert.equal(res.body.avatar_url, url);
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, q), [{ type: 'realm_bot', op: 'update', bot: { user_id: t.users.bot.id, avatar_url: url } }]);
    const other = await multipartCall(t.users.othello, 'PATCH', `/api/v1/bots/${t.users.bot.id}`, [png()]);
    assert.deepEqual([other.status, other.body], [400, err('Insufficient permission')]);
    const two = await multipartCall(t.users.hamlet, 'PATCH', `/api/v1/bots/${t.users.bot.id}`, [png(), png()]);
    assert.deepEqual([two.status, two.body], [400, err('You may only upload one file at a time')]);
    assert.deepEqual(row(t.users.bot.id), bot);
  });
});

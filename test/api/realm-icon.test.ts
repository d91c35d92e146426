// The organization icon: the built-in default, POST/DELETE /realm/icon, the image files, the events.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart, type Part } from '../helpers/multipart';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const GIF = Buffer.from('474946383961010001000000002c00000000010001000002', 'hex');
const file = (data = PNG): Part => ({ field: 'file', filename: 'icon.png', type: 'image/png', data });

async function upload(user: TestUser, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  return t.raw('POST', '/api/v1/realm/icon', { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
}
const realm = () => t.app.db.prepare('SELECT id, icon_source, icon_version FROM realm').get() as { id: number; icon_source: string; icon_version: number };
const get = (p: string, user?: TestUser) => fetch(t.url.replace(/\/$/, '') + p.replace(t.app.publicUrl, ''), { redirect: 'manual', headers: user ? { authorization: basicAuth(user) } : {} });
const DEFAULT = () => `${t.app.publicUrl}/static/images/default-realm-icon.png?version=0`;

describe('the default icon', () => {
  it('is in /register and server_settings, and answers with the built-in PNG without credentials', async () => {
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] });
    assert.equal(reg.body.realm_icon_url, DEFAULT());
    assert.equal(reg.body.realm_icon_source, 'G');
    assert.equal(reg.body.max_icon_file_size_mib, 5);
    assert.equal(reg.body.max_avatar_file_size_mib, 5);
    const settings = await t.raw('GET', '/api/v1/server_settings');
    assert.equal(settings.body.realm_icon, DEFAULT());
    const img = await get(DEFAULT());
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/png');
    assert.equal(img.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(img.headers.get('cache-control'), 'public, max-age=86400');
    assert.deepEqual(Buffer.from(await img.arrayBuffer()), fs.readFileSync(path.join(__dirname, '..', '..', 'assets', 'images', 'default-realm-icon.png')));
    // So do the default logo, the :zulip: emoji and the avatar of a user one may not see.
    for (const url of [reg.body.realm_logo_url, reg.body.realm_night_logo_url, '/static/generated/emoji/images/emoji/unicode/zulip.png']) {
      const res = await get(url);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers.get('content-type'), 'image/png', url);
    }
    assert.equal((await get('/static/images/logo/other.svg')).status, 404);
    const unknown = await get('/static/images/unknown-user-avatar.png');
    assert.equal(unknown.status, 200);
    assert.equal(unknown.headers.get('content-type'), 'image/png');
    assert.equal((await get('/static/images/nothing.png')).status, 404);
    assert.equal((await get('/static/images/..%2f..%2fpackage.json')).status, 404);
  });
});

describe('POST /realm/icon', () => {
  it('stores an administrator’s upload, answers icon_url and sends realm update_dict to everyone', async () => {
    const q = await registerQueue(t, t.users.guest, ['realm']);
    const before = realm();
    const res = await upload(t.users.admin, [file(GIF)]);
    const now = realm();
    const url = `/user_avatars/${now.id}/realm/icon.png?version=${before.icon_version + 1}`;
    assert.deepEqual(now, { id: before.id, icon_source: 'U', icon_version: before.icon_version + 1 });
    assert.deepEqual(res.body, { ...SUCCESS, icon_url: url });
    assert.deepEqual(await queuedEvents(t, t.users.guest, q), [{ type: 'realm', op: 'update_dict', property: 'icon', data: { icon_source: 'U', icon_url: url } }]);
    const reg = await t.api(t.users.guest, 'POST', '/register', { fetch_event_types: ['realm'] });
    assert.equal(reg.body.realm_icon_url, url);
    assert.equal(reg.body.realm_icon_source, 'U');
    assert.equal((await t.raw('GET', '/api/v1/server_settings')).body.realm_icon, `${t.app.publicUrl}${url}`);
    const img = await get(url);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/gif');
    assert.equal(img.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(Buffer.from(await img.arrayBuffer()), GIF);
    assert.equal((await get(`/user_avatars/${now.id}/realm/logo.png`)).status, 404);
    assert.equal((await get(`/user_avatars/${now.id + 7}/realm/icon.png`)).status, 404);
  });

  it('is for administrators only, takes exactly one image under 5 MiB, and changes nothing otherwise', async () => {
    const before = realm();
    const cases: [TestUser, Part[], number, unknown][] = [
      [t.users.hamlet, [file()], 400, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')],
      [t.users.guest, [file()], 400, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL')],
      [t.users.admin, [], 400, err('You must upload exactly one icon.')],
      [t.users.admin, [file(), file()], 400, err('You must upload exactly one icon.')],
      [t.users.admin, [file(Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]))], 400, err('Uploaded file is larger than the allowed limit of 5 MiB')],
      [t.users.admin, [file(Buffer.from('<html><script>alert(1)</script>'))], 400, err('Invalid image format', 'BAD_IMAGE')],
    ];
    for (const [user, parts, status, expected] of cases) {
      const res = await upload(user, parts);
      assert.deepEqual([res.status, res.body], [status, expected]);
    }
    assert.deepEqual(realm(), before);
  });
});

describe('DELETE /realm/icon', () => {
  it('goes back to the default icon with a new version and tells everyone', async () => {
    const refused = await t.api(t.users.hamlet, 'DELETE', '/realm/icon');
    assert.deepEqual(refused.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    const q = await registerQueue(t, t.users.hamlet, ['realm']);
    const before = realm();
    const res = await t.api(t.users.owner, 'DELETE', '/realm/icon');
    assert.deepEqual(res.body, { ...SUCCESS, icon_url: DEFAULT() });
    assert.deepEqual(realm(), { id: before.id, icon_source: 'G', icon_version: before.icon_version + 1 });
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, q), [{ type: 'realm', op: 'update_dict', property: 'icon', data: { icon_source: 'G', icon_url: DEFAULT() } }]);
  });
});

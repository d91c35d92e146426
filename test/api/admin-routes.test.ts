// Routes Zulip guards with @require_realm_admin refuse a non-administrator before reading any
// parameter: a member sending nonsense hears about the permission, not the nonsense.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const ADMIN_ONLY: [string, string][] = [
  ['POST', '/streams/1/delete_topic'],
  ['POST', '/default_streams'],
  ['DELETE', '/default_streams'],
  ['POST', '/channel_folders/create'],
  ['PATCH', '/channel_folders'],
  ['PATCH', '/channel_folders/1'],
  ['POST', '/realm/filters'],
  ['PATCH', '/realm/filters/1'],
  ['DELETE', '/realm/filters/1'],
  ['PATCH', '/realm/linkifiers'],
  ['POST', '/realm/playgrounds'],
  ['DELETE', '/realm/playgrounds/1'],
  ['POST', '/realm/profile_fields'],
  ['PATCH', '/realm/profile_fields'],
  ['PATCH', '/realm/profile_fields/1'],
  ['DELETE', '/realm/profile_fields/1'],
  ['PATCH', '/realm/user_settings_defaults'],
];

describe('administrator-only routes', () => {
  for (const [method, path] of ADMIN_ONLY) {
    it(`${method} ${path}: a member with bad parameters gets "Must be an organization administrator"`, async () => {
      const res = await t.api(t.users.hamlet, method, path, { stream_id: 'x', name: [1], topic_name: {}, nonsense: 1 });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.body, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
    });
  }

  it('an administrator gets past the check to the parameters', async () => {
    const res = await t.api(t.users.admin, 'POST', '/default_streams', { stream_id: 'x' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'stream_id is not valid JSON', code: 'BAD_REQUEST' });
  });
});

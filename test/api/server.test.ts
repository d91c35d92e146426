import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../../src/version';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

describe('GET /server_settings', () => {
  it('answers without credentials, naming Parley and its feature level', async () => {
    const res = await t.api(null, 'GET', '/server_settings');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      authentication_methods: {
        password: true,
        dev: false,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_VERSION,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_url: t.url,
      realm_uri: t.url,
      realm_name: 'Test Org',
      realm_icon: `${t.url}/static/images/default-realm-icon.png?version=0`,
      realm_description: '',
      realm_web_public_access_enabled: false,
    });
  });
});

describe('POST /fetch_api_key', () => {
  it('returns the API key for the right password', async () => {
    const u = t.users.hamlet;
    const res = await t.api(null, 'POST', '/fetch_api_key', { username: u.email, password: u.password });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', api_key: u.apiKey, email: u.email, user_id: u.id });
  });

  it('refuses a wrong password and an unknown user alike with 401 AUTHENTICATION_FAILED', async () => {
    for (const [username, password] of [
      [t.users.hamlet.email, 'wrong-password'],
      ['nobody@example.com', 'whatever'],
    ]) {
      const res = await t.api(null, 'POST', '/fetch_api_key', { username, password });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' });
    }
  });

  it('requires both parameters', async () => {
    const res = await t.api(null, 'POST', '/fetch_api_key', { username: t.users.hamlet.email });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      result: 'error',
      msg: "Missing 'password' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'password',
    });
  });
});

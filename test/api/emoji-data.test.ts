// server_emoji_data_url: Zulip's emoji_api.json, served without credentials (the mobile app has no
// standard emoji until it loads).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import emojiData from '../../src/lib/emoji-data.json';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

describe('GET server_emoji_data_url', () => {
  it('answers {code_to_names} without credentials, versioned and cached for good', async () => {
    const reg = await t.api(t.users.guest, 'POST', '/register', { fetch_event_types: ['realm'] });
    const url: string = reg.body.server_emoji_data_url;
    assert.match(url, new RegExp(`^${t.app.publicUrl}/static/generated/emoji/emoji_api\\.[0-9a-f]{12}\\.json$`));
    const res = await fetch(t.url.replace(/\/$/, '') + url.slice(t.app.publicUrl.length), { headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const body = await res.json();
    assert.deepEqual(body, { code_to_names: emojiData.code_to_names });
    assert.deepEqual(body.code_to_names['1f44d'], emojiData.code_to_names['1f44d']);
    assert.equal(body.code_to_names['1f44d'][0], '+1');
  });

  it('gzips for clients that accept it, and answers at Zulip’s unversioned name too', async () => {
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] });
    const path = reg.body.server_emoji_data_url.slice(t.app.publicUrl.length);
    const gz = await fetch(t.url.replace(/\/$/, '') + path, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.equal(gz.headers.get('vary'), 'Accept-Encoding');
    assert.deepEqual(await gz.json(), { code_to_names: emojiData.code_to_names });
    const plain = await fetch(`${t.url.replace(/\/$/, '')}/static/generated/emoji/emoji_api.json`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=86400');
    assert.deepEqual(await plain.json(), { code_to_names: emojiData.code_to_names });
    for (const p of ['/static/generated/emoji/emoji_api.0000.json', '/static/generated/emoji/other.json']) {
      assert.equal((await fetch(t.url.replace(/\/$/, '') + p)).status, 404, p);
    }
  });
});

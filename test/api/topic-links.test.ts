import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

describe('topic_links', () => {
  it('applies the organization linkifiers to topics of fetched messages', async () => {
    const add = await t.api(t.users.admin, 'POST', '/realm/filters', {
      pattern: '#(?P<id>[0-9]+)',
      url_template: 'https://tracker.example.com/issues/{id}',
    });
    assert.equal(add.status, 200, add.text);
    await t.api(t.users.owner, 'POST', '/channels/create', { name: 'links', subscribers: [t.users.hamlet.id] });
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'links', topic: 'bug #42', content: 'see topic' });
    assert.equal(sent.status, 200, sent.text);
    const plain = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'links', topic: 'no links here', content: 'x' });
    const res = await t.api(t.users.hamlet, 'GET', `/messages/${sent.body.id}`);
    assert.deepEqual(res.body.message.topic_links, [{ url: 'https://tracker.example.com/issues/42', text: '#42' }]);
    const other = await t.api(t.users.hamlet, 'GET', `/messages/${plain.body.id}`);
    assert.deepEqual(other.body.message.topic_links, []);
  });
});

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

describe('topic_links after the linkifiers change', () => {
  const links = async (id: number) => (await t.api(t.users.hamlet, 'GET', `/messages/${id}`)).body.message.topic_links;
  const fetched = async (id: number) =>
    (await t.api(t.users.hamlet, 'GET', '/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] })).body.messages[0].topic_links;

  it('links bare URLs with no linkifier at all, as Zulip does', async () => {
    const ids = (await t.api(t.users.admin, 'GET', '/realm/linkifiers')).body.linkifiers.map((l: { id: number }) => l.id);
    for (const id of ids) assert.equal((await t.api(t.users.admin, 'DELETE', `/realm/filters/${id}`)).status, 200);
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'links', topic: 'see example.com/a and #5', content: 'x' });
    assert.deepEqual(await links(sent.body.id), [{ url: 'https://example.com/a', text: 'example.com/a' }]);
  });

  it('follows linkifiers added, changed, reordered and removed, in single and batch fetches', async () => {
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'links', topic: 'T-7 and #8', content: 'x' });
    const id: number = sent.body.id;
    assert.deepEqual(await links(id), []);
    const ticket = (await t.api(t.users.admin, 'POST', '/realm/filters', { pattern: 'T-(?P<n>[0-9]+)', url_template: 'https://t.example/{n}' })).body.id;
    const key = (await t.api(t.users.admin, 'POST', '/realm/filters', { pattern: '(?P<key>[A-Z]+-[0-9]+)', url_template: 'https://k.example/{key}' })).body.id;
    const ticketLink = { url: 'https://t.example/7', text: 'T-7' };
    assert.deepEqual(await links(id), [ticketLink]);
    assert.deepEqual(await fetched(id), [ticketLink]);
    // Overlapping matches go to the linkifier that comes first.
    assert.equal((await t.api(t.users.admin, 'PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [key, ticket] })).status, 200);
    assert.deepEqual(await links(id), [{ url: 'https://k.example/T-7', text: 'T-7' }]);
    assert.equal((await t.api(t.users.admin, 'PATCH', `/realm/filters/${key}`, { pattern: '#(?P<key>[0-9]+)', url_template: 'https://k.example/{key}' })).status, 200);
    assert.deepEqual(await fetched(id), [ticketLink, { url: 'https://k.example/8', text: '#8' }]);
    assert.equal((await t.api(t.users.admin, 'DELETE', `/realm/filters/${ticket}`)).status, 200);
    assert.deepEqual(await links(id), [{ url: 'https://k.example/8', text: '#8' }]);
    assert.equal((await t.api(t.users.admin, 'DELETE', `/realm/filters/${key}`)).status, 200);
    assert.deepEqual(await fetched(id), []);
  });

  it('gives an edited topic its links, in the update event and afterwards', async () => {
    const add = await t.api(t.users.admin, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' });
    const sent = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'links', topic: 'plain', content: 'x' });
    const q = (await t.api(t.users.hamlet, 'POST', '/register', { event_types: ['update_message'], fetch_event_types: [] })).body.queue_id;
    assert.equal((await t.api(t.users.hamlet, 'PATCH', `/messages/${sent.body.id}`, { topic: 'now #99' })).status, 200);
    const expected = [{ url: 'https://tracker.example.com/issues/99', text: '#99' }];
    const events = (await t.api(t.users.hamlet, 'GET', '/events', { queue_id: q, last_event_id: -1, dont_block: true })).body.events;
    assert.deepEqual(
      events.filter((e: { type: string }) => e.type === 'update_message').map((e: { topic_links: unknown }) => e.topic_links),
      [expected],
    );
    assert.deepEqual(await links(sent.body.id), expected);
    await t.api(t.users.admin, 'DELETE', `/realm/filters/${add.body.id}`);
  });
});

describe('topic_links in every message object and topic edit, as Zulip sends them', () => {
  const tracker = (n: number) => ({ url: `https://tracker.example.com/issues/${n}`, text: `#${n}` });
  let filterId: number;
  let channel: number;
  before(async () => {
    const add = await t.api(t.users.admin, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' });
    assert.equal(add.status, 200, add.text);
    filterId = add.body.id;
    const created = await t.api(t.users.owner, 'POST', '/channels/create', { name: 'links everywhere', subscribers: [t.users.hamlet.id, t.users.othello.id] });
    assert.equal(created.status, 200, created.text);
    channel = created.body.id;
  });
  after(async () => {
    await t.api(t.users.admin, 'DELETE', `/realm/filters/${filterId}`);
  });

  async function queue(types: string[], capabilities: Record<string, boolean> = {}) {
    const res = await t.api(t.users.othello, 'POST', '/register', { event_types: types, fetch_event_types: [], client_capabilities: { notification_settings_null: false, ...capabilities } });
    assert.equal(res.status, 200, res.text);
    return res.body.queue_id as string;
  }
  async function events(q: string) {
    const res = await t.api(t.users.othello, 'GET', '/events', { queue_id: q, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200, res.text);
    return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat');
  }
  const send = async (params: Record<string, unknown>) => {
    const res = await t.api(t.users.hamlet, 'POST', '/messages', params);
    assert.equal(res.status, 200, res.text);
    return res.body.id as number;
  };

  it('message events, batch fetches and searches carry them; direct messages and the general chat have none', async () => {
    const q = await queue(['message']);
    const qOld = await queue(['message'], { empty_topic_name: false });
    const linked = await send({ type: 'channel', to: channel, topic: 'fix #12 and #13', content: 'findme' });
    const general = await send({ type: 'channel', to: channel, topic: '', content: 'findme' });
    const direct = await send({ type: 'direct', to: [t.users.othello.id], content: 'findme' });
    const expected: Record<number, unknown> = { [linked]: [tracker(12), tracker(13)], [general]: [], [direct]: [] };
    for (const queueId of [q, qOld]) {
      const got = (await events(queueId)).filter((e: { type: string }) => e.type === 'message');
      assert.deepEqual(Object.fromEntries(got.map((e: { message: { id: number; topic_links: unknown } }) => [e.message.id, e.message.topic_links])), expected);
    }
    const fetched = await t.api(t.users.othello, 'GET', '/messages', { anchor: linked, num_before: 0, num_after: 10, narrow: [{ operator: 'search', operand: 'findme' }] });
    assert.equal(fetched.status, 200, fetched.text);
    assert.deepEqual(Object.fromEntries(fetched.body.messages.map((m: { id: number; topic_links: unknown }) => [m.id, m.topic_links])), expected);
    for (const id of [linked, general, direct]) {
      assert.deepEqual((await t.api(t.users.othello, 'GET', `/messages/${id}`)).body.message.topic_links, expected[id]);
    }
  });

  it('update_message has topic_links exactly when the topic changes: not for content edits or channel-only moves', async () => {
    const other = await t.api(t.users.owner, 'POST', '/channels/create', { name: 'links elsewhere', subscribers: [t.users.hamlet.id, t.users.othello.id] });
    assert.equal(other.status, 200, other.text);
    const a = await send({ type: 'channel', to: channel, topic: 'ticket #20', content: 'one' });
    const b = await send({ type: 'channel', to: channel, topic: 'ticket #20', content: 'two' });
    const q = await queue(['update_message']);
    const edit = async (params: Record<string, unknown>) => {
      const res = await t.api(t.users.hamlet, 'PATCH', `/messages/${a}`, params);
      assert.equal(res.status, 200, res.text);
    };
    await edit({ content: 'one, edited' });
    await edit({ stream_id: other.body.id, propagate_mode: 'change_all' });
    await edit({ topic: 'ticket #21', propagate_mode: 'change_all' });
    await edit({ topic: '✔ ticket #21', propagate_mode: 'change_all' });
    const got = (await events(q)).filter((e: { type: string; message_id?: number }) => e.type === 'update_message' && e.message_id === a);
    assert.deepEqual(
      got.map((e: Record<string, unknown>) => [e.subject ?? null, e.topic_links ?? null]),
      [
        [null, null],
        [null, null],
        ['ticket #21', [tracker(21)]],
        ['✔ ticket #21', [tracker(21)]],
      ],
    );
    for (const id of [a, b]) assert.deepEqual((await t.api(t.users.othello, 'GET', `/messages/${id}`)).body.message.topic_links, [tracker(21)]);
  });
});

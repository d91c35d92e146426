// The zulip-js npm client against a real Parley, as a bot or integration would use it. zulip-js sends
// every POST as multipart/form-data and PATCH/DELETE parameters in the query string; both must work.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import zulipInit from 'zulip-js';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let client: any; // hamlet, logged in with a password
let othello: any;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const ok = (res: any) => {
  assert.equal(res.result, 'success', JSON.stringify(res));
  return res;
};

describe('zulip-js scenario', () => {
  let streamId: number;
  let channelMessage: number;
  let directMessage: number;

  it('fetches the API key with a password (zulipInit with username and password)', async () => {
    client = await zulipInit({ realm: t.url, username: t.users.hamlet.email, password: t.users.hamlet.password });
    assert.equal(client.config.apiKey, t.users.hamlet.apiKey);
    othello = await zulipInit({ realm: t.url, username: t.users.othello.email, apiKey: t.users.othello.apiKey });
  });

  it('reads the server settings and users.me', async () => {
    const settings = ok(await client.server.settings());
    assert.equal(typeof settings.zulip_feature_level, 'number');
    assert.equal(settings.realm_url, t.url);
    const me = ok(await client.users.me.getProfile());
    assert.equal(me.user_id, t.users.hamlet.id);
    assert.equal(me.email, t.users.hamlet.email);
    assert.equal(me.full_name, 'King Hamlet');
  });

  it('creates a channel by subscribing (multipart POST with a JSON list), and subscribes another user', async () => {
    const res = ok(await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'zulip-js' }]) }));
    assert.deepEqual(res.subscribed, { [t.users.hamlet.id]: ['zulip-js'] });
    const added = ok(
      await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'zulip-js' }]), principals: [t.users.othello.id] }),
    );
    assert.deepEqual(added.subscribed, { [t.users.othello.id]: ['zulip-js'] });
    const id = ok(await client.streams.getStreamId('zulip-js'));
    streamId = id.stream_id;
    const subs = ok(await client.streams.subscriptions.retrieve());
    assert.ok(subs.subscriptions.some((s: any) => s.stream_id === streamId && s.name === 'zulip-js'));
    const streams = ok(await client.streams.retrieve());
    assert.ok(streams.streams.some((s: any) => s.stream_id === streamId));
  });

  it('registers a queue and receives a sent channel message as an event', async () => {
    // apply_markdown: Zulip's default for /register is false (raw Markdown in message events). zulip-js
    // hands values to form-data as they are, which takes strings only: booleans go as 'true'.
    const queue = ok(await othello.queues.register({ event_types: ['message'], apply_markdown: 'true' }));
    const raw = ok(await othello.queues.register({ event_types: ['message'] }));
    assert.equal(typeof queue.queue_id, 'string');
    const sent = ok(await client.messages.send({ to: 'zulip-js', type: 'stream', topic: 'greetings', content: 'Hello from **zulip-js**' }));
    channelMessage = sent.id;
    const events = ok(await othello.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id }));
    const messageEvents = events.events.filter((e: any) => e.type === 'message');
    assert.equal(messageEvents.length, 1, JSON.stringify(events));
    assert.equal(messageEvents[0].message.id, channelMessage);
    assert.equal(messageEvents[0].message.content, '<p>Hello from <strong>zulip-js</strong></p>');
    const rawEvents = ok(await othello.events.retrieve({ queue_id: raw.queue_id, last_event_id: raw.last_event_id }));
    assert.equal(rawEvents.events.find((e: any) => e.type === 'message').message.content, 'Hello from **zulip-js**');
    ok(await othello.queues.deregister({ queue_id: queue.queue_id }));
    ok(await othello.queues.deregister({ queue_id: raw.queue_id }));
  });

  it('sends a direct message (a JSON list of ids)', async () => {
    const sent = ok(await client.messages.send({ to: [t.users.othello.id], type: 'direct', content: 'psst' }));
    directMessage = sent.id;
  });

  it('retrieves messages with narrows', async () => {
    const inChannel = ok(
      await client.messages.retrieve({
        anchor: 'newest',
        num_before: 10,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: 'zulip-js' },
          { operator: 'topic', operand: 'greetings' },
        ],
      }),
    );
    assert.deepEqual(inChannel.messages.map((m: any) => m.id), [channelMessage]);
    const direct = ok(
      await othello.messages.retrieve({ anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'dm', operand: t.users.hamlet.email }] }),
    );
    assert.deepEqual(direct.messages.map((m: any) => m.id), [directMessage]);
    const one = ok(await client.messages.getById({ message_id: channelMessage }));
    assert.equal(one.message.id, channelMessage);
  });

  it('reacts and removes the reaction (DELETE parameters in the query string)', async () => {
    ok(await othello.reactions.add({ message_id: channelMessage, emoji_name: 'octopus' }));
    let m = ok(await client.messages.getById({ message_id: channelMessage })).message;
    assert.deepEqual(
      m.reactions.map((r: any) => [r.emoji_name, r.user_id]),
      [['octopus', t.users.othello.id]],
    );
    ok(await othello.reactions.remove({ message_id: channelMessage, emoji_name: 'octopus' }));
    m = ok(await client.messages.getById({ message_id: channelMessage })).message;
    assert.deepEqual(m.reactions, []);
  });

  it('marks messages read (messages.flags.add)', async () => {
    const res = ok(await othello.messages.flags.add({ flag: 'read', messages: [channelMessage, directMessage] }));
    assert.deepEqual([...res.messages].sort((a: number, b: number) => a - b), [channelMessage, directMessage]);
    const m = ok(await othello.messages.getById({ message_id: directMessage })).message;
    assert.ok(m.flags.includes('read'));
    ok(await othello.messages.flags.remove({ flag: 'read', messages: [directMessage] }));
  });

  it('edits a message (PATCH parameters in the query string)', async () => {
    ok(await client.messages.update({ message_id: channelMessage, content: 'Hello, edited' }));
    const m = ok(await client.messages.getById({ message_id: channelMessage })).message;
    assert.equal(m.content, '<p>Hello, edited</p>');
    // Without the Notification Bot's "moved here" notice, the topic's newest message stays this one.
    ok(await client.messages.update({ message_id: channelMessage, topic: 'renamed', send_notification_to_new_thread: false }));
    const moved = ok(await client.messages.getById({ message_id: channelMessage })).message;
    assert.equal(moved.subject, 'renamed');
  });

  it('lists the channel topics', async () => {
    const res = ok(await client.streams.topics.retrieve({ stream_id: streamId }));
    assert.deepEqual(res.topics.map((x: any) => [x.name, x.max_id]), [['renamed', channelMessage]]);
  });

  it('sends typing notifications (POST /typing)', async (ctx) => {
    const route = t.server.router.match('POST', '/api/v1/typing');
    if (route.kind !== 'found') {
      ctx.skip('POST /typing is not served yet');
      return;
    }
    // zulip-js JSON-encodes `to` only for several recipients: one id goes as a bare number.
    ok(await client.typing.send({ to: [t.users.othello.id], op: 'start' }));
    ok(await client.typing.send({ to: [t.users.othello.id, t.users.admin.id], op: 'stop' }));
    // typing.send needs `to`; channel typing (stream_id + topic) goes through callEndpoint.
    ok(await client.callEndpoint('/typing', 'POST', { type: 'stream', stream_id: String(streamId), topic: 'greetings', op: 'start' }));
  });

  it('deletes a message (DELETE)', async () => {
    const notYours = await othello.messages.deleteById({ message_id: directMessage });
    assert.equal(notYours.result, 'error');
    const res = await client.messages.deleteById({ message_id: channelMessage });
    // Members may delete their own messages only within the realm's limit (no limit by default).
    ok(res);
    const gone = await client.messages.getById({ message_id: channelMessage });
    assert.equal(gone.result, 'error');
    assert.equal(gone.code, 'BAD_REQUEST');
  });
});

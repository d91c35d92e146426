// POST /register's unread_msgs, whole: the conversations in the order of their oldest unread
// message, a topic as its oldest unread message spells it (topics are grouped case-insensitively),
// mentions, one-to-one, self and group direct messages, muted topics left out of the count, and
// nothing from a channel the user has left (Zulip's get_raw_unread_data / aggregate_unread_data).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

async function ok(user: TestUser, method: string, path: string, params: Record<string, unknown> = {}) {
  const res = await t.api(user, method, path, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function newChannel(name: string, owner: TestUser, principals: TestUser[]): Promise<number> {
  await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: principals.map((u) => u.id) });
  return (await ok(owner, 'GET', '/get_stream_id', { stream: name })).stream_id;
}

describe('unread_msgs', () => {
  it('groups unread messages by conversation, oldest first, with their mentions and counts', async () => {
    const { owner, hamlet, othello, admin } = t.users;
    const a = await newChannel('unread a', owner, [hamlet, othello]);
    const b = await newChannel('unread b', owner, [hamlet, othello]);
    const gone = await newChannel('unread left', owner, [hamlet, othello]);
    await ok(hamlet, 'POST', '/mark_all_as_read');
    const toChannel = async (stream: number, topic: string, content = 'hi') =>
      (await ok(othello, 'POST', '/messages', { type: 'stream', to: stream, topic, content })).id as number;
    const direct = async (to: number[], from = othello) => (await ok(from, 'POST', '/messages', { type: 'direct', to: JSON.stringify(to), content: 'hi' })).id as number;

    const m1 = await toChannel(a, 'Lunch Plans');
    const m2 = await toChannel(b, 'deploy');
    const m3 = await toChannel(a, 'lunch plans', '@**King Hamlet** are you in?');
    const m4 = await direct([hamlet.id]);
    const m5 = await toChannel(b, 'muted one');
    const m6 = await direct([hamlet.id, admin.id]);
    const m7 = await toChannel(gone, 'away');
    const m8 = await direct([hamlet.id]);
    // Hamlet's own messages are read; a self message sent by someone else cannot be, so none here.
    await direct([hamlet.id], hamlet);
    await ok(hamlet, 'POST', '/user_topics', { stream_id: b, topic: 'muted one', visibility_policy: 1 });

    let reg = await ok(hamlet, 'POST', '/register', { event_types: ['message', 'update_message_flags'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    assert.deepStrictEqual(reg.unread_msgs, {
      count: 7,
      pms: [{ other_user_id: othello.id, sender_id: othello.id, unread_message_ids: [m4, m8] }],
      streams: [
        { stream_id: a, topic: 'Lunch Plans', unread_message_ids: [m1, m3] },
        { stream_id: b, topic: 'deploy', unread_message_ids: [m2] },
        { stream_id: b, topic: 'muted one', unread_message_ids: [m5] },
        { stream_id: gone, topic: 'away', unread_message_ids: [m7] },
      ],
      huddles: [{ user_ids_string: [hamlet.id, othello.id, admin.id].sort((x, y) => x - y).join(','), unread_message_ids: [m6] }],
      mentions: [m3],
      old_unreads_missing: false,
    });

    // A channel left: its unread messages are no longer listed (nor counted).
    await ok(hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: JSON.stringify(['unread left']) });
    reg = await ok(hamlet, 'POST', '/register', { event_types: ['message', 'update_message_flags'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    assert.deepStrictEqual(reg.unread_msgs, {
      count: 6,
      pms: [{ other_user_id: othello.id, sender_id: othello.id, unread_message_ids: [m4, m8] }],
      streams: [
        { stream_id: a, topic: 'Lunch Plans', unread_message_ids: [m1, m3] },
        { stream_id: b, topic: 'deploy', unread_message_ids: [m2] },
        { stream_id: b, topic: 'muted one', unread_message_ids: [m5] },
      ],
      huddles: [{ user_ids_string: [hamlet.id, othello.id, admin.id].sort((x, y) => x - y).join(','), unread_message_ids: [m6] }],
      mentions: [m3],
      old_unreads_missing: false,
    });
  });
});

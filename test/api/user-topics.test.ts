import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendToChannel, SUCCESS } from '../helpers/chat';

let now = 1_700_000_000;
let t: TestServer;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => now * 1000 } });
});
after(() => t.close());

type Ev = Record<string, any>;

/** A registered queue that hands out the events that arrived since the last look. */
class Q {
  private last = -1;
  constructor(
    readonly user: TestUser,
    readonly id: string,
    readonly state: Record<string, any>,
  ) {}
  static async open(user: TestUser, params: Record<string, unknown> = {}): Promise<Q> {
    const res = await t.api(user, 'POST', '/register', params);
    assert.equal(res.status, 200, res.text);
    return new Q(user, res.body.queue_id, res.body);
  }
  async next(): Promise<Ev[]> {
    const res = await t.api(this.user, 'GET', '/events', { queue_id: this.id, last_event_id: this.last, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events as Ev[];
    if (events.length) this.last = events[events.length - 1].id;
    return events.filter((e) => e.type !== 'heartbeat').map(({ id: _id, ...e }) => e);
  }
}

const userTopic = (user: TestUser, stream_id: number, topic: string, visibility_policy: number) =>
  t.api(user, 'POST', '/user_topics', { stream_id, topic, visibility_policy });

async function narrowIds(user: TestUser, narrow: unknown[]): Promise<number[]> {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow });
  assert.equal(res.status, 200, res.text);
  return res.body.messages.map((m: { id: number }) => m.id);
}

describe('POST /user_topics', () => {
  let chan: number;
  before(async () => {
    chan = await createChannel(t, t.users.hamlet, 'topics pub', [t.users.hamlet, t.users.othello]);
  });

  it('sets, changes and removes a policy; user_topic events (and muted_topics for legacy queues)', async () => {
    const { othello } = t.users;
    const modern = await Q.open(othello, { event_types: ['user_topic', 'muted_topics'] });
    const legacy = await Q.open(othello, { event_types: ['muted_topics'] });
    now = 1_700_000_100;
    let res = await userTopic(othello, chan, 'Lunch', 1);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, SUCCESS);
    const ev = (policy: number, at: number, topic = 'Lunch') => ({ type: 'user_topic', stream_id: chan, topic_name: topic, last_updated: at, visibility_policy: policy });
    assert.deepEqual(await modern.next(), [ev(1, 1_700_000_100)]);
    assert.deepEqual(await legacy.next(), [{ type: 'muted_topics', muted_topics: [['topics pub', 'Lunch', 1_700_000_100]] }]);
    // The same policy again changes nothing and sends nothing.
    res = await userTopic(othello, chan, 'lunch', 1);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await modern.next(), []);
    now = 1_700_000_200;
    res = await userTopic(othello, chan, 'lunch', 3);
    assert.deepEqual(await modern.next(), [ev(3, 1_700_000_200, 'lunch')]);
    assert.deepEqual(await legacy.next(), [{ type: 'muted_topics', muted_topics: [] }]);
    // Register state agrees (the stored name is the first spelling).
    const state = await Q.open(othello, { fetch_event_types: ['user_topic'] });
    assert.deepEqual(state.state.user_topics, [{ stream_id: chan, topic_name: 'Lunch', last_updated: 1_700_000_200, visibility_policy: 3 }]);
    now = 1_700_000_300;
    res = await userTopic(othello, chan, 'LUNCH', 0);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await modern.next(), [ev(0, 1_700_000_300, 'LUNCH')]);
    // Removing what is not there: success, no event.
    res = await userTopic(othello, chan, 'LUNCH', 0);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await modern.next(), []);
  });

  it('the empty topic by its display name; clients without empty_topic_name see that name in events', async () => {
    const { othello } = t.users;
    const old = await Q.open(othello, { event_types: ['user_topic'] });
    const modern = await Q.open(othello, { event_types: ['user_topic'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    now = 1_700_000_400;
    assert.deepEqual((await userTopic(othello, chan, 'general chat', 3)).body, SUCCESS);
    assert.deepEqual(await modern.next(), [{ type: 'user_topic', stream_id: chan, topic_name: '', last_updated: 1_700_000_400, visibility_policy: 3 }]);
    assert.deepEqual(await old.next(), [{ type: 'user_topic', stream_id: chan, topic_name: 'general chat', last_updated: 1_700_000_400, visibility_policy: 3 }]);
    const row = t.app.db.prepare('SELECT topic_name FROM user_topic WHERE user_id = ? AND stream_id = ?').get(othello.id, chan) as { topic_name: string };
    assert.equal(row.topic_name, '');
    assert.deepEqual((await userTopic(othello, chan, '', 0)).body, SUCCESS);
  });

  it('errors: policy out of range, topic too long, inaccessible channel; removal needs only an existing channel', async () => {
    const { othello, hamlet } = t.users;
    let res = await userTopic(othello, chan, 'x', 4);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid visibility_policy'));
    res = await userTopic(othello, chan, 'x'.repeat(61), 1);
    assert.deepEqual(res.body, err('topic is too long (limit: 60 characters)'));
    res = await t.api(othello, 'POST', '/user_topics', { stream_id: chan, topic: 'x' });
    assert.deepEqual(res.body, err("Missing 'visibility_policy' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'visibility_policy' }));
    const priv = await createChannel(t, hamlet, 'topics private', [hamlet], { invite_only: true });
    res = await userTopic(othello, priv, 'x', 1);
    assert.deepEqual(res.body, err('Invalid channel ID'));
    res = await userTopic(othello, 99999, 'x', 1);
    assert.deepEqual(res.body, err('Invalid channel ID'));
    res = await userTopic(othello, 99999, 'x', 0);
    assert.deepEqual(res.body, err('Invalid channel ID'));
    // Lost access since muting: removing still works.
    res = await userTopic(othello, priv, 'x', 0);
    assert.deepEqual(res.body, SUCCESS);
  });
});

describe('PATCH /users/me/subscriptions/muted_topics', () => {
  it('mutes by channel name or id and unmutes; user_topic and muted_topics events', async () => {
    const { hamlet } = t.users;
    const chan = await createChannel(t, hamlet, 'legacy mute', [hamlet]);
    const q = await Q.open(hamlet, { event_types: ['user_topic', 'muted_topics'] });
    const legacy = await Q.open(hamlet, { event_types: ['muted_topics'] });
    now = 1_700_000_500;
    let res = await t.api(hamlet, 'PATCH', '/users/me/subscriptions/muted_topics', { stream: 'legacy mute', topic: 'noise', op: 'add' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await q.next(), [{ type: 'user_topic', stream_id: chan, topic_name: 'noise', last_updated: 1_700_000_500, visibility_policy: 1 }]);
    assert.deepEqual(await legacy.next(), [{ type: 'muted_topics', muted_topics: [['legacy mute', 'noise', 1_700_000_500]] }]);
    now = 1_700_000_550;
    res = await t.api(hamlet, 'PATCH', '/users/me/subscriptions/muted_topics', { stream_id: chan, topic: 'noise', op: 'remove' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await q.next(), [{ type: 'user_topic', stream_id: chan, topic_name: 'noise', last_updated: 1_700_000_550, visibility_policy: 0 }]);
    assert.deepEqual(await legacy.next(), [{ type: 'muted_topics', muted_topics: [] }]);
  });

  it('errors: channel argument missing or doubled, bad op, unknown channel', async () => {
    const { hamlet } = t.users;
    const chan = await createChannel(t, hamlet, 'legacy errors', [hamlet]);
    const patch = (params: Record<string, unknown>) => t.api(hamlet, 'PATCH', '/users/me/subscriptions/muted_topics', params);
    let res = await patch({ topic: 'x', op: 'add' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("Missing 'stream_id' argument"));
    res = await patch({ stream_id: chan, stream: 'legacy errors', topic: 'x', op: 'add' });
    assert.deepEqual(res.body, err('Unsupported parameter combination: stream_id, stream', 'BAD_REQUEST', { parameters: 'stream_id, stream' }));
    res = await patch({ stream_id: chan, topic: 'x', op: 'toggle' });
    assert.deepEqual(res.body, err('Invalid op'));
    res = await patch({ stream: 'nowhere', topic: 'x', op: 'add' });
    assert.deepEqual(res.body, err("Invalid channel name 'nowhere'"));
    res = await patch({ stream: 'nowhere', topic: 'x', op: 'remove' });
    assert.deepEqual(res.body, err('Topic is not muted'));
  });
});

describe('muting in narrows and unread counts', () => {
  it('is:muted, in:home, is:followed and unread_msgs.count follow topic policies', async () => {
    const { hamlet, moderator } = t.users;
    const loud = await createChannel(t, hamlet, 'mute loud', [hamlet, moderator]);
    const quiet = await createChannel(t, hamlet, 'mute quiet', [hamlet, moderator]);
    const m = {
      loudPlain: await sendToChannel(t, hamlet, loud, 'plain', '1'),
      loudMuted: await sendToChannel(t, hamlet, loud, 'muted', '2'),
      loudFollowed: await sendToChannel(t, hamlet, loud, 'followed', '3'),
      quietPlain: await sendToChannel(t, hamlet, quiet, 'plain', '4'),
      quietUnmuted: await sendToChannel(t, hamlet, quiet, 'unmuted', '5'),
      quietFollowed: await sendToChannel(t, hamlet, quiet, 'followed', '6'),
    };
    const res = await t.api(moderator, 'POST', '/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }],
    });
    assert.equal(res.status, 200, res.text);
    for (const [s, topic, policy] of [
      [loud, 'muted', 1],
      [loud, 'followed', 3],
      [quiet, 'unmuted', 2],
      [quiet, 'followed', 3],
    ] as const) {
      assert.deepEqual((await userTopic(moderator, s, topic, policy)).body, SUCCESS);
    }
    const inChannels = (extra: unknown[]) => narrowIds(moderator, extra);
    const mine = (ids: number[]) => ids.filter((id) => Object.values(m).includes(id));
    assert.deepEqual(mine(await inChannels([{ operator: 'is', operand: 'muted' }])), [m.loudMuted, m.quietPlain]);
    assert.deepEqual(mine(await inChannels([{ operator: 'is', operand: 'muted', negated: true }])), [m.loudPlain, m.loudFollowed, m.quietUnmuted, m.quietFollowed]);
    assert.deepEqual(mine(await inChannels([{ operator: 'in', operand: 'home' }])), [m.loudPlain, m.loudFollowed, m.quietUnmuted, m.quietFollowed]);
    assert.deepEqual(mine(await inChannels([{ operator: 'is', operand: 'followed' }])), [m.loudFollowed, m.quietFollowed]);
    // Unread count: the four unmuted messages (moderator has no other unread messages).
    await t.api(moderator, 'POST', '/messages/flags', {
      messages: (t.app.db.prepare('SELECT message_id FROM usermessage WHERE user_id = ? AND (flags & 1) = 0').all(moderator.id) as { message_id: number }[])
        .map((r) => r.message_id)
        .filter((id) => !Object.values(m).includes(id)),
      op: 'add',
      flag: 'read',
    });
    const reg = await Q.open(moderator, { fetch_event_types: ['message', 'update_message_flags'] });
    assert.equal(reg.state.unread_msgs.count, 4);
    assert.equal(reg.state.unread_msgs.streams.length, 6);
  });
});

describe('PATCH /users/me/subscriptions', () => {
  it('adds (creating channels) and deletes in one request; events as POST and DELETE send them', async () => {
    const { othello } = t.users;
    const existing = await createChannel(t, t.users.hamlet, 'bulk keep', [t.users.hamlet, othello]);
    const gone = await createChannel(t, t.users.hamlet, 'bulk leave', [t.users.hamlet, othello]);
    const q = await Q.open(othello, { event_types: ['subscription'] });
    const res = await t.api(othello, 'PATCH', '/users/me/subscriptions', {
      add: [{ name: 'bulk keep' }, { name: 'bulk brand new', color: '#e79ab5', description: 'fresh' }],
      delete: ['bulk leave', 'topics private'],
    });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, err('Channel(s) (topics private) do not exist'));
    // Nothing of the failed request stayed.
    assert.equal(t.app.db.prepare("SELECT 1 FROM stream WHERE name = 'bulk brand new'").get(), undefined);
    assert.deepEqual(await q.next(), []);
    const ok = await t.api(othello, 'PATCH', '/users/me/subscriptions', {
      add: [{ name: 'bulk keep' }, { name: 'bulk brand new', color: '#e79ab5', description: 'fresh' }],
      delete: ['bulk leave', 'topics pub'],
    });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, {
      ...SUCCESS,
      subscribed: { [othello.id]: ['bulk brand new'] },
      already_subscribed: { [othello.id]: ['bulk keep'] },
      removed: ['bulk leave', 'topics pub'],
      not_removed: [],
      new_subscription_messages_sent: true,
    });
    const events = await q.next();
    const idOf = (name: string) => (t.app.db.prepare('SELECT id FROM stream WHERE name = ?').get(name) as { id: number }).id;
    assert.deepEqual(
      events.map((e) => [e.op, e.subscriptions.map((s: Ev) => s.stream_id)]),
      [
        ['add', [idOf('bulk brand new')]],
        ['remove', [gone]],
        ['remove', [idOf('topics pub')]],
      ],
    );
    const sub = events[0].subscriptions[0];
    assert.equal(sub.color, '#e79ab5');
    assert.equal(sub.description, 'fresh');
    assert.notEqual(existing, gone);
  });

  it('delete only and add only; not subscribed goes to not_removed', async () => {
    const { othello } = t.users;
    let res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { delete: ['bulk leave'] });
    assert.deepEqual(res.body, { ...SUCCESS, subscribed: {}, already_subscribed: {}, removed: [], not_removed: ['bulk leave'], new_subscription_messages_sent: true });
    res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { add: [{ name: 'bulk leave' }] });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [othello.id]: ['bulk leave'] },
      already_subscribed: {},
      removed: [],
      not_removed: [],
      new_subscription_messages_sent: true,
    });
  });

  it('errors: nothing to do, malformed lists, unknown keys, private channel', async () => {
    const { othello } = t.users;
    let res = await t.api(othello, 'PATCH', '/users/me/subscriptions', {});
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Nothing to do. Specify at least one of "add" or "delete".'));
    res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { add: [], delete: [] });
    assert.deepEqual(res.body, err('Nothing to do. Specify at least one of "add" or "delete".'));
    res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { delete: 'bulk leave' });
    assert.equal(res.status, 400);
    res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { add: [{ name: 'x', colour: 'red' }] });
    assert.equal(res.status, 400);
    res = await t.api(othello, 'PATCH', '/users/me/subscriptions', { add: [{ name: 'topics private' }] });
    assert.deepEqual(res.body, err('Unable to access channel (topics private).'));
  });
});

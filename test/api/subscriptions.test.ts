import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

async function subscription(user: TestUser, streamId: number) {
  const res = await t.api(user, 'GET', '/users/me/subscriptions');
  assert.equal(res.status, 200, res.text);
  return res.body.subscriptions.find((s: { stream_id: number }) => s.stream_id === streamId);
}

async function members(streamId: number) {
  const res = await t.api(t.users.owner, 'GET', `/streams/${streamId}/members`);
  assert.equal(res.status, 200, res.text);
  return res.body.subscribers as number[];
}

describe('GET /users/me/subscriptions', () => {
  it('lists the channel with the user properties, subscribers on request', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'sub-list', [u.hamlet, u.othello]);
    const sub = await subscription(u.hamlet, id);
    const { color, ...rest } = sub;
    assert.match(color, /^#[0-9a-f]{6}$/);
    assert.equal(rest.name, 'sub-list');
    assert.equal(rest.subscriber_count, 2);
    assert.deepEqual(
      {
        is_muted: rest.is_muted,
        in_home_view: rest.in_home_view,
        pin_to_top: rest.pin_to_top,
        desktop_notifications: rest.desktop_notifications,
        audible_notifications: rest.audible_notifications,
        push_notifications: rest.push_notifications,
        email_notifications: rest.email_notifications,
        wildcard_mentions_notify: rest.wildcard_mentions_notify,
      },
      {
        is_muted: false,
        in_home_view: true,
        pin_to_top: false,
        desktop_notifications: null,
        audible_notifications: null,
        push_notifications: null,
        email_notifications: null,
        wildcard_mentions_notify: null,
      },
    );
    assert.equal('subscribers' in sub, false);
    const withSubs = await t.api(u.hamlet, 'GET', '/users/me/subscriptions', { include_subscribers: true });
    assert.deepEqual(withSubs.body.subscriptions.find((s: { stream_id: number }) => s.stream_id === id).subscribers, [u.hamlet.id, u.othello.id]);
  });
});

describe('POST /users/me/subscriptions', () => {
  it('creates missing channels on the way and reports subscribed / already_subscribed', async () => {
    const u = t.users;
    let res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'made-by-subscribing', description: 'hi' }] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [u.hamlet.id]: ['made-by-subscribing'] },
      already_subscribed: {},
      new_subscription_messages_sent: true,
    });
    const id = (await t.api(u.hamlet, 'GET', '/get_stream_id', { stream: 'made-by-subscribing' })).body.stream_id;
    assert.equal((await t.api(u.hamlet, 'GET', `/streams/${id}`)).body.stream.description, 'hi');
    res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'made-by-subscribing' }] });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: {},
      already_subscribed: { [u.hamlet.id]: ['made-by-subscribing'] },
      new_subscription_messages_sent: true,
    });
  });

  it('subscribes others through principals (ids or emails)', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'principals', []);
    const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', {
      subscriptions: [{ name: 'principals' }],
      principals: [u.othello.id, u.moderator.id],
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: { [u.othello.id]: ['principals'], [u.moderator.id]: ['principals'] },
      already_subscribed: {},
      new_subscription_messages_sent: true,
    });
    const byEmail = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'principals' }], principals: [u.bot.email] });
    assert.deepEqual(byEmail.body.subscribed, { [u.bot.id]: ['principals'] });
    assert.deepEqual(await members(id), [u.moderator.id, u.othello.id, u.bot.id].sort((a, b) => a - b));
    const unknown = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'principals' }], principals: ['nobody@example.com'] });
    assert.deepEqual(unknown.body, err('No such user'));
  });

  it('refuses private channels the user cannot access; reports them when authorization_errors_fatal is false', async () => {
    const u = t.users;
    await createChannel(t, u.hamlet, 'locked', [u.hamlet], { invite_only: true });
    let res = await t.api(u.othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'locked' }] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Unable to access channel (locked).'));
    res = await t.api(u.othello, 'POST', '/users/me/subscriptions', {
      subscriptions: [{ name: 'locked' }, { name: 'sub-list' }],
      authorization_errors_fatal: false,
    });
    assert.deepEqual(res.body, {
      ...SUCCESS,
      subscribed: {},
      already_subscribed: { [u.othello.id]: ['sub-list'] },
      unauthorized: ['locked'],
      new_subscription_messages_sent: true,
    });
  });

  it('refuses guests outright (Zulip\'s require_non_guest_user), even for a channel they may read', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'guest-readable', [u.hamlet, u.guest]);
    for (const name of ['sub-list', 'guest-new', 'guest-readable']) {
      const res = await t.api(u.guest, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }] });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Not allowed for guest users'));
    }
    assert.deepEqual(await members(id), [u.hamlet.id, u.guest.id]);
  });

  it('validates colours, naming the item', async () => {
    const res = await t.api(t.users.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'sub-list', color: '#abcdef' }, { name: 'x', color: 'red' }] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid subscriptions[1]: Value error, add.color is not a valid hex color code'));
    const ok = await t.api(t.users.othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'coloured', color: '#a1B2c3' }] });
    assert.equal(ok.status, 200, ok.text);
  });

  it('tells a user who could not see the channel of it first (stream create), then of the subscription', async () => {
    const u = t.users;
    const secret = await createChannel(t, u.owner, 'reveal-private', [u.owner], { invite_only: true });
    const open = await createChannel(t, u.owner, 'reveal-public', [u.owner]);
    const queues = new Map<TestUser, string>();
    for (const user of [u.hamlet, u.admin, u.guest, u.othello]) queues.set(user, await registerQueue(t, user, ['stream', 'subscription']));
    const res = await t.api(u.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'reveal-private' }], principals: [u.hamlet.id, u.admin.id] });
    assert.equal(res.status, 200, res.text);
    const guestRes = await t.api(u.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'reveal-public' }], principals: [u.guest.id] });
    assert.equal(guestRes.status, 200, guestRes.text);
    const stream = async (id: number) => (await t.api(u.owner, 'GET', `/streams/${id}`)).body.stream;
    const sub = async (user: TestUser, id: number) => {
      const list = (await t.api(user, 'GET', '/users/me/subscriptions', { include_subscribers: true })).body.subscriptions;
      return list.find((s: { stream_id: number }) => s.stream_id === id);
    };
    // Hamlet could not see the private channel: created first. Iago (an administrator) could.
    assert.deepEqual(await queuedEvents(t, u.hamlet, queues.get(u.hamlet) as string), [
      { type: 'stream', op: 'create', streams: [await stream(secret)] },
      { type: 'subscription', op: 'add', subscriptions: [await sub(u.hamlet, secret)] },
      { type: 'subscription', op: 'peer_add', stream_ids: [open], user_ids: [u.guest.id] },
    ]);
    assert.deepEqual(await queuedEvents(t, u.admin, queues.get(u.admin) as string), [
      { type: 'subscription', op: 'add', subscriptions: [await sub(u.admin, secret)] },
      { type: 'subscription', op: 'peer_add', stream_ids: [open], user_ids: [u.guest.id] },
    ]);
    // A guest does not see public channels until subscribed.
    assert.deepEqual(await queuedEvents(t, u.guest, queues.get(u.guest) as string), [
      { type: 'stream', op: 'create', streams: [await stream(open)] },
      { type: 'subscription', op: 'add', subscriptions: [await sub(u.guest, open)] },
    ]);
    // Othello sees the public channel gain a subscriber, and nothing of the private one.
    assert.deepEqual(await queuedEvents(t, u.othello, queues.get(u.othello) as string), [
      { type: 'subscription', op: 'peer_add', stream_ids: [open], user_ids: [u.guest.id] },
    ]);
  });

  it('principals=[] means the caller', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'empty-principals', []);
    const res = await t.api(u.othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'empty-principals' }], principals: [] });
    assert.deepEqual(res.body, { ...SUCCESS, subscribed: { [u.othello.id]: ['empty-principals'] }, already_subscribed: {}, new_subscription_messages_sent: true });
    assert.deepEqual(await members(id), [u.othello.id]);
  });

  it('validates channel names', async () => {
    const res = await t.api(t.users.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: '' }] });
    assert.deepEqual(res.body, err("Channel name can't be empty."));
  });
});

describe('DELETE /users/me/subscriptions', () => {
  it('reports removed and not_removed', async () => {
    const u = t.users;
    await createChannel(t, u.hamlet, 'leave-me', [u.hamlet]);
    await createChannel(t, u.hamlet, 'never-joined', []);
    const res = await t.api(u.hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: ['leave-me', 'never-joined'] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['leave-me'], not_removed: ['never-joined'] });
  });

  it('principals=[] means the caller', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'leave-empty-principals', [u.hamlet, u.othello]);
    const res = await t.api(u.othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['leave-empty-principals'], principals: [] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['leave-empty-principals'], not_removed: [] });
    assert.deepEqual(await members(id), [u.hamlet.id]);
  });

  it('hides a private channel from those who leave it without other access (stream delete after the remove)', async () => {
    const u = t.users;
    const id = await createChannel(t, u.owner, 'hide-on-leave', [u.owner, u.hamlet, u.admin], { invite_only: true });
    const hamletQueue = await registerQueue(t, u.hamlet, ['stream', 'subscription']);
    const adminQueue = await registerQueue(t, u.admin, ['stream', 'subscription']);
    for (const user of [u.hamlet, u.admin]) {
      const res = await t.api(user, 'DELETE', '/users/me/subscriptions', { subscriptions: ['hide-on-leave'] });
      assert.deepEqual(res.body, { ...SUCCESS, removed: ['hide-on-leave'], not_removed: [] });
    }
    assert.deepEqual(await queuedEvents(t, u.hamlet, hamletQueue), [
      { type: 'subscription', op: 'remove', subscriptions: [{ name: 'hide-on-leave', stream_id: id }] },
      { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] },
    ]);
    // An administrator still sees every channel: the remove, and Hamlet's departure before it.
    assert.deepEqual(await queuedEvents(t, u.admin, adminQueue), [
      { type: 'subscription', op: 'peer_remove', stream_ids: [id], user_ids: [u.hamlet.id] },
      { type: 'subscription', op: 'remove', subscriptions: [{ name: 'hide-on-leave', stream_id: id }] },
    ]);
    const reg = (await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['subscription'] })).body;
    assert.equal([...reg.subscriptions, ...reg.unsubscribed, ...reg.never_subscribed].some((s: { stream_id: number }) => s.stream_id === id), false);
  });

  it('names unknown channels with Zulip\'s text', async () => {
    const res = await t.api(t.users.hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: ['nowhere', 'nope'] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Channel(s) (nowhere, nope) do not exist'));
  });

  it('removing others needs permission', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'kick', [u.othello, u.hamlet]);
    let res = await t.api(u.moderator, 'DELETE', '/users/me/subscriptions', { subscriptions: ['kick'], principals: [u.othello.id] });
    assert.deepEqual(res.body, err('Insufficient permission'));
    res = await t.api(u.admin, 'DELETE', '/users/me/subscriptions', { subscriptions: ['kick'], principals: [u.othello.id] });
    assert.deepEqual(res.body, { ...SUCCESS, removed: ['kick'], not_removed: [] });
    assert.deepEqual(await members(id), [u.hamlet.id]);
  });
});

describe('POST /users/me/subscriptions/properties', () => {
  it('sets every property', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'props', [u.hamlet]);
    const data = [
      { stream_id: id, property: 'color', value: '#abcdef' },
      { stream_id: id, property: 'pin_to_top', value: true },
      { stream_id: id, property: 'desktop_notifications', value: true },
      { stream_id: id, property: 'audible_notifications', value: false },
      { stream_id: id, property: 'push_notifications', value: true },
      { stream_id: id, property: 'email_notifications', value: false },
      { stream_id: id, property: 'wildcard_mentions_notify', value: true },
      { stream_id: id, property: 'is_muted', value: true },
    ];
    const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: data });
    assert.deepEqual(res.body, SUCCESS);
    const sub = await subscription(u.hamlet, id);
    assert.deepEqual(
      [sub.color, sub.pin_to_top, sub.desktop_notifications, sub.audible_notifications, sub.push_notifications, sub.email_notifications, sub.wildcard_mentions_notify, sub.is_muted, sub.in_home_view],
      ['#abcdef', true, true, false, true, false, true, true, false],
    );
  });

  it('reads in_home_view as the inverse of is_muted', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'home-view', [u.hamlet]);
    await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: id, property: 'in_home_view', value: false }] });
    let sub = await subscription(u.hamlet, id);
    assert.deepEqual([sub.is_muted, sub.in_home_view], [true, false]);
    await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: id, property: 'in_home_view', value: true }] });
    sub = await subscription(u.hamlet, id);
    assert.deepEqual([sub.is_muted, sub.in_home_view], [false, true]);
  });

  it('refuses bad colors, unknown properties, non-booleans, inaccessible and unsubscribed channels', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'props-errors', [u.hamlet]);
    const other = await createChannel(t, u.othello, 'props-other', [u.othello]);
    const priv = await createChannel(t, u.othello, 'props-private', [u.othello], { invite_only: true });
    const cases: [unknown[], string][] = [
      [[{ stream_id: id, property: 'color', value: 'red' }], 'Invalid subscription_data[0]: Value error, color is not a valid hex color code'],
      [
        [
          { stream_id: id, property: 'pin_to_top', value: true },
          { stream_id: id, property: 'color', value: '#12345g' },
        ],
        'Invalid subscription_data[1]: Value error, color is not a valid hex color code',
      ],
      [[{ stream_id: id, property: 'loud', value: true }], 'Unknown subscription property: loud'],
      [[{ stream_id: id, property: 'is_muted', value: 'yes' }], 'is_muted is not a boolean'],
      [[{ stream_id: other, property: 'is_muted', value: true }], `Not subscribed to channel ID ${other}`],
      [[{ stream_id: priv, property: 'is_muted', value: true }], 'Invalid channel ID'],
      [[{ stream_id: 99999, property: 'is_muted', value: true }], 'Invalid channel ID'],
      [[{ stream_id: id, property: 'is_muted' }], 'subscription_data[0]["value"] field is missing: Field required'],
      [['x'], 'subscription_data[0] is not a dict'],
    ];
    for (const [data, msg] of cases) {
      const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: data });
      assert.equal(res.status, 400, msg);
      assert.deepEqual(res.body, err(msg));
    }
  });

  it('validates the whole list first: a bad property anywhere applies nothing', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'atomic', [u.hamlet]);
    const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: id, property: 'pin_to_top', value: true },
        { stream_id: id, property: 'color', value: '#111111' },
        { stream_id: id, property: 'nonsense', value: true },
      ],
    });
    assert.deepEqual(res.body, err('Unknown subscription property: nonsense'));
    const sub = await subscription(u.hamlet, id);
    assert.equal(sub.pin_to_top, false);
    assert.notEqual(sub.color, '#111111');
  });

  it('then applies the changes one by one: an access error on a later element keeps the earlier ones and their events', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'partial', [u.hamlet]);
    const other = await createChannel(t, u.othello, 'partial-other', [u.othello]);
    const q = await registerQueue(t, u.hamlet, ['subscription']);
    for (const [bad, msg] of [
      [other, `Not subscribed to channel ID ${other}`],
      [99999, 'Invalid channel ID'],
    ] as const) {
      const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', {
        subscription_data: [
          { stream_id: id, property: 'pin_to_top', value: bad === other },
          { stream_id: bad, property: 'is_muted', value: true },
          { stream_id: id, property: 'color', value: '#222222' },
        ],
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err(msg));
    }
    const sub = await subscription(u.hamlet, id);
    assert.equal(sub.pin_to_top, false);
    assert.notEqual(sub.color, '#222222');
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), [
      { type: 'subscription', op: 'update', stream_id: id, property: 'pin_to_top', value: true },
      { type: 'subscription', op: 'update', stream_id: id, property: 'pin_to_top', value: false },
    ]);
  });

  it('applies in order: a later change to the same property wins', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'in-order', [u.hamlet]);
    await t.api(u.hamlet, 'POST', '/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: id, property: 'is_muted', value: true },
        { stream_id: id, property: 'in_home_view', value: true },
      ],
    });
    assert.equal((await subscription(u.hamlet, id)).is_muted, false);
  });
});

describe('subscription list bounds', () => {
  // Zulip has no bound; 10,000 channel names in one request blocked the process for seconds.
  it('takes at most 100 channels to join or leave and 1000 property changes per request', async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `bulk ${i}`);
    assert.deepEqual(
      (await t.api(t.users.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: names(101).map((name) => ({ name })) })).body,
      err('subscriptions is too long (limit: 100 items)'),
    );
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: names(101) })).body, err('subscriptions is too long (limit: 100 items)'));
    const joined = await t.api(t.users.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: names(100).map((name) => ({ name })) });
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.subscribed[t.users.hamlet.id].length, 100);
    const left = await t.api(t.users.hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: names(100) });
    assert.deepEqual(left.body, { ...SUCCESS, removed: names(100), not_removed: [] });
    const change = { stream_id: 1, property: 'color', value: '#ffffff' };
    assert.deepEqual(
      (await t.api(t.users.hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: Array(1001).fill(change) })).body,
      err('subscription_data is too long (limit: 1000 items)'),
    );
  });

  it('looks each principal up once: 10,000 copies of one are one user', async () => {
    // Each copy was looked up (and compared with the users found so far): ~200 ms a request.
    const u = t.users;
    const ids = Array(10_000).fill(u.othello.id);
    const emails = Array(10_000).fill(u.othello.email);
    // (Its time: bench/security-bounds.ts, F.)
    for (const principals of [ids, emails, ids]) {
      const res = await t.api(u.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bulk principals' }], principals });
      assert.equal(res.status, 200, res.text);
    }
    const left = await t.api(u.hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: ['bulk principals'], principals: emails });
    assert.deepEqual(left.body, { ...SUCCESS, removed: ['bulk principals'], not_removed: [] });
  });
});

describe('POST and PATCH /users/me/subscriptions/{stream_id}', () => {
  it('changes one property (booleans JSON-encoded, color raw)', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'single', [u.hamlet]);
    let res = await t.api(u.hamlet, 'POST', `/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: true });
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.hamlet, 'PATCH', `/users/me/subscriptions/${id}`, { property: 'color', value: '#00ff00' });
    assert.deepEqual(res.body, SUCCESS);
    const sub = await subscription(u.hamlet, id);
    assert.deepEqual([sub.pin_to_top, sub.color], [true, '#00ff00']);
    res = await t.api(u.hamlet, 'PATCH', `/users/me/subscriptions/${id}`, { property: 'color', value: 'green' });
    assert.deepEqual(res.body, err('Invalid subscription_data[0]: Value error, color is not a valid hex color code'));
    res = await t.api(u.hamlet, 'PATCH', `/users/me/subscriptions/${id}`, { property: 'loud', value: true });
    assert.deepEqual(res.body, err('Unknown subscription property: loud'));
  });
});

describe('GET /streams/{stream_id}/members', () => {
  it('lists subscribers of a visible channel; private channels only to those who may see them', async () => {
    const u = t.users;
    const priv = await createChannel(t, u.hamlet, 'members-private', [u.hamlet, u.othello], { invite_only: true });
    let res = await t.api(u.othello, 'GET', `/streams/${priv}/members`);
    assert.deepEqual(res.body, { ...SUCCESS, subscribers: [u.hamlet.id, u.othello.id] });
    res = await t.api(u.moderator, 'GET', `/streams/${priv}/members`);
    assert.deepEqual(res.body, err('Invalid channel ID'));
    res = await t.api(u.guest, 'GET', `/streams/${priv}/members`);
    assert.deepEqual(res.body, err('Invalid channel ID'));
    res = await t.api(u.admin, 'GET', `/streams/${priv}/members`);
    assert.equal(res.status, 200);
  });
});

describe('GET /users/{user_id}/subscriptions/{stream_id}', () => {
  it('answers is_subscribed; an unknown user is "No such user", before the channel is looked at', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'status-check', [u.othello]);
    let res = await t.api(u.hamlet, 'GET', `/users/${u.othello.id}/subscriptions/${id}`);
    assert.deepEqual(res.body, { ...SUCCESS, is_subscribed: true });
    res = await t.api(u.hamlet, 'GET', `/users/${u.moderator.id}/subscriptions/${id}`);
    assert.deepEqual(res.body, { ...SUCCESS, is_subscribed: false });
    for (const streamId of [id, 99999]) {
      res = await t.api(u.hamlet, 'GET', `/users/99999/subscriptions/${streamId}`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('No such user'));
    }
    res = await t.api(u.hamlet, 'GET', `/users/${u.othello.id}/subscriptions/99999`);
    assert.deepEqual(res.body, err('Invalid channel ID'));
  });
});

// Zulip's verify_action for the web client's store, against a real server: register as the app does
// (REGISTER_PARAMS), build the store and load message lists into it, act through the API, apply the
// events the queue got, then register again and compare snapshot(applied) with snapshot(fresh), and the
// store's cached messages and lists with a fresh GET /messages. Every action the web app shows is
// checked from the actor's side and from an observer's, each with its lists loaded whole and as short
// windows at either end. VERIFY_DEBUG=1 prints what each queue got.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { notificationBot } from '../../src/actions/system-bots';
import { addFetched, applyEvent, REGISTER_PARAMS, stateFromRegister, type State } from '../../web/src/state/store';
import { snapshot } from '../../web/src/state/snapshot';
import { HOME, narrowKey, narrowTerms, type Narrow } from '../../web/src/state/narrow';
import type { Message, RegisterResponse, ServerEvent } from '../../web/src/state/wire';

let t: TestServer;
let general: number;
let design: number;
before(async () => {
  t = await startTestServer();
  const { owner, hamlet, othello, admin } = t.users;
  general = await createChannel(t, owner, 'general', [owner, hamlet, othello, admin]);
  design = await createChannel(t, owner, 'design', [owner, hamlet, othello]);
  // Some history: read and unread messages in both channels and a DM, so lists start non-empty.
  await sendToChannel(t, owner, general, 'welcome', 'Welcome, everyone.');
  await sendToChannel(t, othello, design, 'mockups', 'First mockups are up.');
  await sendDirect(t, othello, [hamlet], 'Hello Hamlet.');
  // Notification Bot exists from the start (it is created on first use, with events of its own).
  t.app.batch.write(() => notificationBot(t.app, t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').pluck().get(owner.id) as number));
  t.app.batch.commit();
});
after(() => t.close());

// --- the harness -------------------------------------------------------------------------------------------

/** One registration of one user: the store as the app keeps it. */
interface Session {
  user: TestUser;
  window: Window;
  state: State;
}

async function register(user: TestUser): Promise<RegisterResponse> {
  const res = await t.api(user, 'POST', '/register', { ...REGISTER_PARAMS });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/**
 * How much of each narrow a session loads: all of it (one page reaches both ends here), or a short
 * window at the newest or the oldest end, so that lists that do not reach an end are checked too.
 */
type Window = 'all' | 'newest' | 'oldest';
const WINDOWS: Window[] = ['all', 'newest', 'oldest'];

/**
 * A page of a narrow's messages as the app asks for them. allow_empty_topic_name: the app registers with
 * the empty_topic_name capability, so /register and events name the empty topic "", and its fetches must
 * too (without it GET /messages and the topic list say "general chat").
 */
async function fetchNarrow(user: TestUser, n: Narrow, window: Window = 'all'): Promise<{ messages: Message[]; found_oldest: boolean; found_newest: boolean }> {
  const res = await t.api(user, 'GET', '/messages', {
    anchor: window === 'newest' ? 'newest' : 'oldest',
    num_before: window === 'newest' ? 2 : 0,
    num_after: window === 'all' ? 1000 : window === 'oldest' ? 1 : 0,
    narrow: narrowTerms(n),
    apply_markdown: true,
    client_gravatar: false,
    allow_empty_topic_name: true,
  });
  assert.equal(res.status, 200, res.text);
  if (window === 'all') assert.equal(res.body.found_newest, true);
  return res.body;
}

async function fetchTopics(user: TestUser, streamId: number): Promise<Map<string, { name: string; maxId: number }>> {
  const res = await t.api(user, 'GET', `/users/me/${streamId}/topics`, { allow_empty_topic_name: true });
  assert.equal(res.status, 200, res.text);
  return new Map((res.body.topics as { name: string; max_id: number }[]).map((x) => [x.name.toLowerCase(), { name: x.name, maxId: x.max_id }]));
}

/** The narrows every session loads: the feed, both channels, a topic, a DM, starred and mentions. */
function narrowsFor(user: TestUser): Narrow[] {
  const other = user.id === t.users.hamlet.id ? t.users.othello : t.users.hamlet;
  return [
    HOME,
    { kind: 'channel', streamId: general },
    { kind: 'channel', streamId: general, topic: 'lunch' },
    { kind: 'channel', streamId: design },
    { kind: 'dm', userIds: [other.id] },
    { kind: 'dm', userIds: [t.users.hamlet.id, t.users.othello.id, t.users.owner.id].filter((id) => id !== user.id) },
    { kind: 'starred' },
    { kind: 'mentioned' },
  ];
}

/** Registers `user` and loads their message lists and the channels' topics, as the app does on showing them. */
async function open(user: TestUser, window: Window): Promise<Session> {
  const state = stateFromRegister(await register(user));
  for (const n of narrowsFor(user)) addFetched(state, narrowKey(n), n, await fetchNarrow(user, n, window), 'initial');
  for (const id of state.subs.keys()) state.topics.set(id, await fetchTopics(user, id));
  return { user, window, state };
}

const who = (s: Session) => `${s.user.fullName} (${s.window})`;

/** An event's name for comparing what a queue got: "type" or "type/op" (plus the flag for flags). */
function eventName(e: ServerEvent): string {
  let name = e.op ? `${e.type}/${e.op}` : e.type;
  if (e.type === 'update_message_flags') name += `/${e.flag as string}`;
  if (e.type === 'subscription' && e.op === 'update') name += `/${e.property as string}`;
  if (e.type === 'stream' && e.op === 'update') name += `/${e.property as string}`;
  return name;
}

/**
 * Reads the session's queue without blocking until it has `expected` (event names, any order; heartbeats
 * aside) and nothing more comes, applying each event to the store; asserts what arrived.
 */
async function sync(s: Session, expected: string[]): Promise<ServerEvent[]> {
  const got: ServerEvent[] = [];
  let quiet = 0;
  for (let round = 0; round < 200; round++) {
    const res = await t.api(s.user, 'GET', '/events', { queue_id: s.state.queueId, last_event_id: s.state.lastEventId, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events as ServerEvent[];
    for (const e of events) applyEvent(s.state, e, Date.now());
    const real = events.filter((e) => e.type !== 'heartbeat');
    got.push(...real);
    if (real.length) quiet = 0;
    else if (got.length >= expected.length && ++quiet >= 3) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  if (process.env.VERIFY_DEBUG) console.log(who(s), JSON.stringify(got));
  assert.deepEqual(got.map(eventName).sort(), [...expected].sort(), `${who(s)}'s events: ${JSON.stringify(got)}`);
  return got;
}

/** The parts of a message the store keeps current, in a comparable form. */
function shown(m: Message) {
  return {
    id: m.id,
    type: m.type,
    sender_id: m.sender_id,
    sender_full_name: m.sender_full_name,
    sender_email: m.sender_email,
    avatar_url: m.avatar_url,
    stream_id: m.stream_id,
    display_recipient: m.display_recipient,
    subject: m.subject,
    content: m.content,
    is_me_message: m.is_me_message,
    last_edit_timestamp: m.last_edit_timestamp,
    last_moved_timestamp: m.last_moved_timestamp,
    flags: [...m.flags].sort(),
    reactions: [...m.reactions]
      .map((r) => ({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: r.user_id }))
      .sort((a, b) => a.user_id - b.user_id || (a.emoji_code < b.emoji_code ? -1 : a.emoji_code > b.emoji_code ? 1 : 0)),
  };
}

/**
 * The comparison: the store's /register part against a fresh registration, every list that is not
 * stale against a fresh fetch of its narrow, every cached message against the server's copy (a message
 * the user can no longer read must have left the cache), and the loaded topic lists.
 */
async function verify(s: Session): Promise<void> {
  const fresh = stateFromRegister(await register(s.user));
  await t.api(s.user, 'DELETE', '/events', { queue_id: fresh.queueId });
  assert.deepEqual(snapshot(s.state), snapshot(fresh), `${who(s)}'s store differs from a fresh /register`);
  const server = new Map<number, Message>();
  for (const [key, list] of s.state.lists) {
    const page = await fetchNarrow(s.user, list.narrow);
    for (const m of page.messages) server.set(m.id, m);
    if (list.stale) continue; // the app fetches it again when it is shown
    // The server's messages within the run the list holds (to its ends where it reaches them).
    const first = list.foundOldest ? -Infinity : (list.ids[0] ?? Infinity);
    const last = list.foundNewest ? Infinity : (list.ids[list.ids.length - 1] ?? -Infinity);
    const expected = page.messages.map((m) => m.id).filter((id) => id >= first && id <= last);
    assert.deepEqual(list.ids, expected, `${who(s)}'s list ${key}`);
  }
  for (const [id, cached] of s.state.messages) {
    let m = server.get(id);
    if (!m) {
      const res = await t.api(s.user, 'GET', '/messages', {
        anchor: id,
        num_before: 0,
        num_after: 0,
        narrow: [{ operator: 'id', operand: id }],
        apply_markdown: true,
        client_gravatar: false,
        allow_empty_topic_name: true,
      });
      assert.equal(res.status, 200, res.text);
      m = res.body.messages[0];
    }
    assert.ok(m, `${who(s)} cannot read message ${id} any more but the store keeps it`);
    assert.deepEqual(shown(cached), shown(m), `${who(s)}'s message ${id}`);
  }
  for (const [streamId, topics] of s.state.topics) {
    if (!s.state.subs.has(streamId)) continue;
    assert.deepEqual(topics, await fetchTopics(s.user, streamId), `${who(s)}'s topics of channel ${streamId}`);
  }
}

/** Opens sessions for `users`, runs `act`, syncs each with its expected events, and verifies each. */
async function verifyAction(
  users: Record<string, TestUser>,
  act: () => Promise<void>,
  expected: Record<string, string[]>,
): Promise<Record<string, Session>> {
  const sessions: Record<string, Session> = {};
  for (const [name, user] of Object.entries(users)) for (const w of WINDOWS) sessions[w === 'all' ? name : `${name}:${w}`] = await open(user, w);
  await act();
  for (const [name, s] of Object.entries(sessions)) await sync(s, expected[name.split(':')[0]] ?? []);
  for (const s of Object.values(sessions)) await verify(s);
  return sessions;
}

/** What the sender of a topic's first message gets: Zulip follows topics one starts (the legacy muted_topics event too). */
const FOLLOWED = ['muted_topics', 'user_topic'];

const ok = (res: { status: number; text: string }) => assert.equal(res.status, 200, res.text);

// --- the actions -----------------------------------------------------------------------------------------

describe('sending', () => {
  it('a channel message reaches the sender, a subscriber and the lists they show', async () => {
    const { hamlet, othello } = t.users;
    await verifyAction({ hamlet, othello }, async () => void (await sendToChannel(t, hamlet, general, 'lunch', 'Lunch at noon?')), {
      hamlet: ['message', ...FOLLOWED],
      othello: ['message'],
    });
  });

  it('a message mentioning someone counts as their unread mention', async () => {
    const { hamlet, othello } = t.users;
    await verifyAction({ hamlet, othello }, async () => void (await sendToChannel(t, hamlet, design, 'review', 'Please look, @**Othello**.')), {
      hamlet: ['message', ...FOLLOWED],
      othello: ['message', ...FOLLOWED], // automatically_follow_topics_where_mentioned
    });
  });

  it('a message to the empty topic ("general chat")', async () => {
    const { hamlet, othello } = t.users;
    await verifyAction({ hamlet, othello }, async () => void (await sendToChannel(t, othello, general, '', 'No topic needed.')), {
      hamlet: ['message'],
      othello: ['message', ...FOLLOWED],
    });
  });

  it('messages in a muted channel and a muted topic: unread, but not in the feed', async () => {
    const { hamlet, othello, owner } = t.users;
    const quiet = await createChannel(t, owner, 'quiet', [owner, hamlet, othello]);
    ok(await t.api(hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: quiet, property: 'is_muted', value: true }] }));
    ok(await t.api(hamlet, 'POST', '/user_topics', { stream_id: general, topic: 'noise', visibility_policy: 1 }));
    await verifyAction({ hamlet, othello }, async () => void (await sendToChannel(t, owner, quiet, 'chatter', 'Nobody listens here.')), {
      hamlet: ['message'],
      othello: ['message'],
    });
    await verifyAction({ hamlet, othello }, async () => void (await sendToChannel(t, othello, general, 'noise', 'Loud news.')), {
      hamlet: ['message'],
      othello: ['message', ...FOLLOWED],
    });
  });

  it('a direct message', async () => {
    const { hamlet, othello } = t.users;
    await verifyAction({ hamlet, othello }, async () => void (await sendDirect(t, othello, [hamlet], 'Are you there?')), {
      hamlet: ['message'],
      othello: ['message'],
    });
  });

  it('a group direct message', async () => {
    const { hamlet, othello, owner } = t.users;
    await verifyAction({ hamlet, othello, owner }, async () => void (await sendDirect(t, owner, [hamlet, othello], 'All three of us.')), {
      hamlet: ['message'],
      othello: ['message'],
      owner: ['message'],
    });
  });
});

describe('editing', () => {
  it('content: the new rendering, the edit time, and a mention added by the edit', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await sendToChannel(t, hamlet, general, 'lunch', 'Lunch at one?');
    await verifyAction(
      { hamlet, othello, owner },
      async () => ok(await t.api(hamlet, 'PATCH', `/messages/${id}`, { content: 'Lunch at one, @**Othello**?' })),
      // Zulip follows topics for mentions when sending, not when editing.
      { hamlet: ['update_message'], othello: ['update_message'], owner: ['update_message'] },
    );
  });

  it('moving a message to another topic', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, othello, general, 'lunch', 'Pizza, anyone?');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'PATCH', `/messages/${id}`, { topic: 'food', propagate_mode: 'change_one' })), {
      // Notification Bot's "moved here" notice in the new topic (send_notification_to_new_thread).
      hamlet: ['update_message', 'message'],
      othello: ['update_message', 'message'],
    });
  });

  it('moving a whole topic to another channel', async () => {
    const { hamlet, othello, owner, admin } = t.users;
    const first = await sendToChannel(t, othello, general, 'travel', 'Trains or planes?');
    await sendToChannel(t, hamlet, general, 'travel', 'Trains, @**Iago**?');
    await verifyAction(
      { hamlet, othello, owner, admin },
      async () => ok(await t.api(owner, 'PATCH', `/messages/${first}`, { stream_id: design, propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false })),
      {
        hamlet: ['update_message'],
        // Othello started the topic and Iago was mentioned in it: their follows move with the topic.
        othello: ['update_message', 'user_topic', 'user_topic', 'muted_topics'],
        owner: ['update_message'],
        // Iago is not subscribed to #design but may read it (public): he keeps the messages.
        admin: ['update_message', 'user_topic', 'user_topic', 'muted_topics'],
      },
    );
  });

  it('moving a topic to a private channel, away from readers who cannot follow', async () => {
    const { hamlet, othello, owner, admin } = t.users;
    const staff = await createChannel(t, owner, 'staff', [owner, hamlet], { invite_only: true });
    const first = await sendToChannel(t, owner, general, 'payroll', 'Payroll questions, @**Othello**?');
    await sendToChannel(t, admin, general, 'payroll', 'Ask me.');
    await verifyAction(
      { hamlet, othello, owner, admin },
      async () => ok(await t.api(owner, 'PATCH', `/messages/${first}`, { stream_id: staff, propagate_mode: 'change_all', send_notification_to_old_thread: true, send_notification_to_new_thread: true })),
      {
        // Notification Bot's notices in the old and the new place.
        hamlet: ['update_message', 'message', 'message'],
        owner: ['update_message', 'message', 'message', 'user_topic', 'user_topic', 'muted_topics'],
        // Othello (an unread mention) and Iago lose the messages; their follows of the topic go.
        othello: ['delete_message', 'message', 'user_topic', 'muted_topics'],
        admin: ['delete_message', 'message'],
      },
    );
  });

  it('moving a message into a topic one muted, and out of it', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, othello, general, 'lunch', 'Shh.');
    ok(await t.api(hamlet, 'POST', '/user_topics', { stream_id: general, topic: 'hush', visibility_policy: 1 }));
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'PATCH', `/messages/${id}`, { topic: 'hush', propagate_mode: 'change_one', send_notification_to_new_thread: false })), {
      hamlet: ['update_message'],
      othello: ['update_message'],
    });
    // Moving its only message moves the whole topic: Hamlet's mute goes with it, and merges into
    // #general > lunch as the more visible policy (none), so it is gone.
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'PATCH', `/messages/${id}`, { topic: 'lunch', propagate_mode: 'change_one', send_notification_to_new_thread: false })), {
      hamlet: ['update_message', 'user_topic', 'muted_topics'],
      othello: ['update_message'],
    });
  });

  it('resolving a topic is not a move', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, othello, design, 'bug 12', 'The login button is grey.');
    await verifyAction(
      { hamlet, othello },
      async () => ok(await t.api(othello, 'PATCH', `/messages/${id}`, { topic: '✔ bug 12', propagate_mode: 'change_all' })),
      // Notification Bot's "marked this topic as resolved" notice; Othello's follow goes with the topic.
      { hamlet: ['update_message', 'message'], othello: ['update_message', 'message', 'user_topic', 'user_topic', 'muted_topics'] },
    );
  });

  it('editing a direct message, and removing a mention', async () => {
    const { hamlet, othello, owner } = t.users;
    const dm = await sendDirect(t, othello, [hamlet], 'See you at 5.');
    const mention = await sendToChannel(t, othello, general, 'lunch', '@**King Hamlet** is buying.');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'PATCH', `/messages/${dm}`, { content: 'See you at 6.' })), {
      hamlet: ['update_message'],
      othello: ['update_message'],
    });
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(othello, 'PATCH', `/messages/${mention}`, { content: 'Nobody is buying.' })), {
      hamlet: ['update_message'],
      othello: ['update_message'],
      owner: ['update_message'],
    });
  });

  it('deleting a message', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await sendToChannel(t, hamlet, general, 'lunch', 'Oops, wrong topic.');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(owner, 'DELETE', `/messages/${id}`)), {
      hamlet: ['delete_message'],
      othello: ['delete_message'],
    });
  });

  it('deleting an unread mention someone starred, and a direct message', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await sendToChannel(t, othello, general, 'lunch', '@**King Hamlet**, read this.');
    ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' }));
    const dm = await sendDirect(t, othello, [hamlet, owner], 'A group secret.');
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(owner, 'DELETE', `/messages/${id}`)), {
      hamlet: ['delete_message'],
      othello: ['delete_message'],
      owner: ['delete_message'],
    });
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(owner, 'DELETE', `/messages/${dm}`)), {
      hamlet: ['delete_message'],
      othello: ['delete_message'],
      owner: ['delete_message'],
    });
  });
});

describe('reactions', () => {
  it('adding and removing a reaction', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, hamlet, general, 'lunch', 'Tacos today.');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'POST', `/messages/${id}/reactions`, { emoji_name: 'tada' })), {
      hamlet: ['reaction/add'],
      othello: ['reaction/add'],
    });
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(othello, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'tada' })), {
      hamlet: ['reaction/remove'],
      othello: ['reaction/remove'],
    });
  });
});

describe('flags', () => {
  it('marking read and unread', async () => {
    const { hamlet, othello } = t.users;
    const a = await sendToChannel(t, othello, general, 'lunch', 'Sushi?');
    const b = await sendDirect(t, othello, [hamlet], 'Did you see?');
    await verifyAction({ hamlet }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [a, b], op: 'add', flag: 'read' })), {
      hamlet: ['update_message_flags/add/read'],
    });
    await verifyAction({ hamlet }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [a, b], op: 'remove', flag: 'read' })), {
      hamlet: ['update_message_flags/remove/read'],
    });
  });

  it('marking a mention, a group DM and a message to oneself unread', async () => {
    const { hamlet, othello, owner } = t.users;
    const ids = [
      await sendToChannel(t, othello, design, 'mockups', '@**King Hamlet**, thoughts?'),
      await sendDirect(t, owner, [hamlet, othello], 'Group news.'),
      await sendDirect(t, hamlet, [hamlet], 'Note to self.'),
    ];
    ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: ids, op: 'add', flag: 'read' }));
    await verifyAction({ hamlet }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: ids, op: 'remove', flag: 'read' })), {
      hamlet: ['update_message_flags/remove/read'],
    });
    await verifyAction({ hamlet }, async () => ok(await t.api(hamlet, 'POST', '/mark_all_as_read')), {
      hamlet: ['update_message_flags/add/read'],
    });
  });

  it('marking read from another device reaches every registration', async () => {
    const { hamlet, othello } = t.users;
    const a = await sendToChannel(t, othello, design, 'mockups', 'Version two.');
    const b = await sendDirect(t, othello, [hamlet], 'Ping.');
    const sessions = await verifyAction({ phone: hamlet, laptop: hamlet }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [a, b], op: 'add', flag: 'read' })), {
      phone: ['update_message_flags/add/read'],
      laptop: ['update_message_flags/add/read'],
    });
    assert.notEqual(sessions.phone.state.queueId, sessions.laptop.state.queueId);
  });

  it('starring and unstarring', async () => {
    const { hamlet, othello } = t.users;
    const id = await sendToChannel(t, othello, general, 'lunch', 'Remember: Friday.');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' })), {
      hamlet: ['update_message_flags/add/starred'],
    });
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'POST', '/messages/flags', { messages: [id], op: 'remove', flag: 'starred' })), {
      hamlet: ['update_message_flags/remove/starred'],
    });
  });
});

describe('channels', () => {
  it('subscribing and unsubscribing', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await createChannel(t, owner, 'random', [owner]);
    await sendToChannel(t, owner, id, 'hi', 'Anyone here?');
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'random' }] })), {
      hamlet: ['subscription/add'],
      othello: ['subscription/peer_add'],
    });
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: ['random'] })), {
      hamlet: ['subscription/remove'],
      othello: ['subscription/peer_remove'],
    });
  });

  it('being added to a private channel by its owner, and leaving it', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await createChannel(t, owner, 'secret', [owner], { invite_only: true });
    await sendToChannel(t, owner, id, 'plans', 'Top secret plans.');
    await verifyAction(
      { hamlet, othello, owner },
      async () => ok(await t.api(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [hamlet.id] })),
      // Hamlet could not see the channel: it is created for him first. Notification Bot tells him in a DM.
      { hamlet: ['stream/create', 'subscription/add', 'message'], owner: ['subscription/peer_add'] },
    );
    await sendToChannel(t, owner, id, 'plans', 'More plans, @**King Hamlet**.');
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(hamlet, 'DELETE', '/users/me/subscriptions', { subscriptions: ['secret'] })), {
      // Leaving hides the private channel from him again.
      hamlet: ['subscription/remove', 'stream/delete'],
      owner: ['subscription/peer_remove'],
    });
  });

  it('renaming a channel', async () => {
    const { hamlet, othello, owner } = t.users;
    const id = await createChannel(t, owner, 'ideas', [owner, hamlet]);
    await sendToChannel(t, owner, id, 'first', 'An idea.');
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(owner, 'PATCH', `/streams/${id}`, { new_name: 'proposals' })), {
      hamlet: ['stream/update/name'],
      othello: ['stream/update/name'],
      owner: ['stream/update/name'],
    });
  });

  it("changing a channel's description", async () => {
    const { hamlet, othello, owner } = t.users;
    await verifyAction({ hamlet, othello, owner }, async () => ok(await t.api(owner, 'PATCH', `/streams/${design}`, { description: 'Where **designs** are discussed.' })), {
      hamlet: ['stream/update/description'],
      othello: ['stream/update/description'],
      owner: ['stream/update/description'],
    });
  });

  it('muting and unmuting a channel', async () => {
    const { hamlet, othello } = t.users;
    await sendToChannel(t, othello, design, 'colours', 'Blue or green?');
    const mute = (value: boolean) => async () =>
      ok(await t.api(hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'is_muted', value }] }));
    await verifyAction({ hamlet, othello }, mute(true), { hamlet: ['subscription/update/in_home_view', 'subscription/update/is_muted'] });
    await verifyAction({ hamlet, othello }, mute(false), { hamlet: ['subscription/update/in_home_view', 'subscription/update/is_muted'] });
  });
});

describe('users and settings', () => {
  it("changing a user's full name", async () => {
    const { hamlet, othello, owner } = t.users;
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(owner, 'PATCH', `/users/${othello.id}`, { full_name: 'Othello, the Moor' })), {
      hamlet: ['realm_user/update'],
      othello: ['realm_user/update'],
    });
    // And one's own, in the settings.
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'PATCH', '/settings', { full_name: 'Prince Hamlet' })), {
      hamlet: ['realm_user/update'],
      othello: ['realm_user/update'],
    });
  });

  it('muting and following a topic', async () => {
    const { hamlet, othello } = t.users;
    await sendToChannel(t, othello, general, 'gossip', 'Did you hear?');
    const policy = (visibility_policy: number) => async () => ok(await t.api(hamlet, 'POST', '/user_topics', { stream_id: general, topic: 'gossip', visibility_policy }));
    await verifyAction({ hamlet, othello }, policy(1), { hamlet: [...FOLLOWED] });
    await verifyAction({ hamlet, othello }, policy(3), { hamlet: [...FOLLOWED] });
    await verifyAction({ hamlet, othello }, policy(0), { hamlet: [...FOLLOWED] });
  });

  it('changing enter_sends', async () => {
    const { hamlet, othello } = t.users;
    await verifyAction({ hamlet, othello }, async () => ok(await t.api(hamlet, 'PATCH', '/settings', { enter_sends: true })), {
      hamlet: ['user_settings/update'],
    });
  });
});

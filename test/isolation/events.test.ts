// Isolation of event queues: a queue never receives another user's private data. One queue per viewer
// (plus an all_public_streams queue and a queue narrowed to a private channel, both held by an
// administrator who is not subscribed), then a table of actions; after each action every queue is
// drained and must hold events about the action exactly when its user may know about it, and nothing
// at all otherwise (every action here is private to someone).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { BOT_TYPE, ROLE } from '../../src/lib/roles';

type Ev = Record<string, any>;
type QName = 'hamlet' | 'othello' | 'admin' | 'adminAll' | 'adminNarrow' | 'guest' | 'bot' | 'otherBot' | 'moderator';
const QNAMES: QName[] = ['hamlet', 'othello', 'admin', 'adminAll', 'adminNarrow', 'guest', 'bot', 'otherBot', 'moderator'];

let t: TestServer;
let otherBot: TestUser;
const ch: Record<string, number> = {};
const m: Record<string, number> = {};
const queues = {} as Record<QName, Q>;

/** A registered queue that hands out the events that arrived since the last look. */
class Q {
  private last = -1;
  constructor(
    readonly user: TestUser,
    readonly id: string,
  ) {}
  static async open(user: TestUser, params: Record<string, unknown> = {}): Promise<Q> {
    const res = await t.api(user, 'POST', '/register', {
      fetch_event_types: [],
      client_capabilities: { notification_settings_null: true, stream_typing_notifications: true, user_settings_object: true, bulk_message_deletion: true },
      ...params,
    });
    assert.equal(res.status, 200, res.text);
    return new Q(user, res.body.queue_id);
  }
  async next(): Promise<Ev[]> {
    const res = await t.api(this.user, 'GET', '/events', { queue_id: this.id, last_event_id: this.last, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const events = res.body.events as Ev[];
    if (events.length) this.last = events[events.length - 1].id;
    return events.filter((e) => e.type !== 'heartbeat');
  }
}

const ok = async (p: Promise<{ status: number; text: string; body: any }>) => {
  const res = await p;
  assert.equal(res.status, 200, res.text);
  return res.body;
};

before(async () => {
  t = await startTestServer();
  const u = t.users;
  const bot2 = doCreateUser(t.app, {
    realmId: t.app.realmId(), email: 'othello-bot@example.com', password: null, fullName: "Othello's Bot", role: ROLE.MEMBER,
    botType: BOT_TYPE.GENERIC, botOwnerId: u.othello.id, acting: null,
  });
  otherBot = { id: bot2.userId, email: 'othello-bot@example.com', apiKey: bot2.apiKey, password: '', fullName: "Othello's Bot" };
  t.app.batch.commit();
  // Sending here must not also follow topics (user_topic events of the sender's own): not what these rows test.
  for (const user of [u.hamlet, u.othello]) {
    const res = await t.api(user, 'PATCH', '/settings', { automatically_follow_topics_policy: 4, automatically_follow_topics_where_mentioned: false });
    assert.equal(res.status, 200, res.text);
  }
  ch.secret = await createChannel(t, u.hamlet, 'secret', [u.hamlet, u.othello], { invite_only: true });
  ch.open = await createChannel(t, u.hamlet, 'open', [u.hamlet]);
  m.secret = await sendToChannel(t, u.hamlet, ch.secret, 'plans', 'old secret');
  m.dm = await sendDirect(t, u.hamlet, [u.othello], 'old dm');
  const list: [QName, TestUser, Record<string, unknown>][] = [
    ['hamlet', u.hamlet, {}],
    ['othello', u.othello, {}],
    ['admin', u.admin, {}],
    ['adminAll', u.admin, { all_public_streams: true }],
    ['adminNarrow', u.admin, { narrow: [['channel', 'secret']] }],
    ['guest', u.guest, {}],
    ['bot', u.bot, {}],
    ['otherBot', otherBot, {}],
    ['moderator', u.moderator, {}],
  ];
  for (const [name, user, params] of list) queues[name] = await Q.open(user, params);
});
after(() => t.close());

interface Row {
  what: string;
  /** Performs the action; returns a marker that must not appear in the events of the other queues. */
  act: () => Promise<string | null>;
  /** The queues that hear about it. */
  visible: QName[];
  /** Every event a visible queue gets must be about the action. */
  about: (e: Ev) => boolean;
}

const u = () => t.users;
const ROWS: Row[] = [
  {
    what: 'a message to a private channel',
    act: async () => {
      m.secret2 = await sendToChannel(t, u().hamlet, ch.secret, 'plans', 'CONFIDENTIAL-1');
      return 'CONFIDENTIAL-1';
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'message' && e.message.id === m.secret2,
  },
  {
    what: 'a direct message between two others',
    act: async () => {
      m.dm2 = await sendDirect(t, u().hamlet, [u().othello], 'CONFIDENTIAL-2');
      return 'CONFIDENTIAL-2';
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'message' && e.message.id === m.dm2,
  },
  {
    what: "a direct message to hamlet's bot",
    act: async () => {
      m.botDm = await sendDirect(t, u().hamlet, [u().bot], 'CONFIDENTIAL-3');
      return 'CONFIDENTIAL-3';
    },
    visible: ['hamlet', 'bot'],
    about: (e) => e.type === 'message' && e.message.id === m.botDm,
  },
  {
    what: 'a message to a public channel (control: all_public_streams sees it)',
    act: async () => {
      m.open = await sendToChannel(t, u().hamlet, ch.open, 'news', 'public news');
      return null;
    },
    visible: ['hamlet', 'adminAll'],
    about: (e) => e.type === 'message' && e.message.id === m.open,
  },
  {
    what: "hamlet's flags (starring a direct message)",
    act: async () => {
      await ok(t.api(u().hamlet, 'POST', '/messages/flags', { messages: [m.dm], op: 'add', flag: 'starred' }));
      return null;
    },
    visible: ['hamlet'],
    about: (e) => e.type === 'update_message_flags' && e.flag === 'starred' && e.messages.includes(m.dm),
  },
  {
    what: "othello's read flags",
    act: async () => {
      await ok(t.api(u().othello, 'POST', '/messages/flags', { messages: [m.secret], op: 'add', flag: 'read' }));
      return null;
    },
    visible: ['othello'],
    about: (e) => e.type === 'update_message_flags' && e.flag === 'read',
  },
  {
    what: "hamlet's personal settings",
    act: async () => {
      await ok(t.api(u().hamlet, 'PATCH', '/settings', { twenty_four_hour_time: true }));
      return null;
    },
    visible: ['hamlet'],
    about: (e) => e.type === 'user_settings' && e.property === 'twenty_four_hour_time',
  },
  {
    what: "hamlet's drafts",
    act: async () => {
      await ok(t.api(u().hamlet, 'POST', '/drafts', { drafts: [{ type: 'private', to: [u().othello.id], topic: '', content: 'CONFIDENTIAL-4' }] }));
      return 'CONFIDENTIAL-4';
    },
    visible: ['hamlet'],
    about: (e) => e.type === 'drafts',
  },
  {
    what: "hamlet's scheduled messages",
    act: async () => {
      const at = Math.floor(Date.now() / 1000) + 3600;
      await ok(t.api(u().hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [u().othello.id], content: 'CONFIDENTIAL-5', scheduled_delivery_timestamp: at }));
      return 'CONFIDENTIAL-5';
    },
    visible: ['hamlet'],
    about: (e) => e.type === 'scheduled_messages',
  },
  {
    what: 'typing in a direct message between two others (its participants, the typist included, as in Zulip)',
    act: async () => {
      await ok(t.api(u().hamlet, 'POST', '/typing', { op: 'start', to: [u().othello.id] }));
      return null;
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'typing' && e.sender.user_id === u().hamlet.id,
  },
  {
    what: 'typing in a private channel',
    act: async () => {
      await ok(t.api(u().hamlet, 'POST', '/typing', { op: 'start', type: 'channel', stream_id: ch.secret, topic: 'CONFIDENTIAL-6' }));
      return 'CONFIDENTIAL-6';
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'typing' && e.stream_id === ch.secret,
  },
  {
    what: 'a reaction to a direct message between two others',
    act: async () => {
      await ok(t.api(u().othello, 'POST', `/messages/${m.dm}/reactions`, { emoji_name: 'octopus' }));
      return null;
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'reaction' && e.message_id === m.dm,
  },
  {
    what: 'editing a direct message between two others',
    act: async () => {
      await ok(t.api(u().hamlet, 'PATCH', `/messages/${m.dm}`, { content: 'CONFIDENTIAL-7' }));
      return 'CONFIDENTIAL-7';
    },
    visible: ['hamlet', 'othello'],
    about: (e) => (e.type === 'update_message' && e.message_id === m.dm) || (e.type === 'update_message_flags'),
  },
  {
    what: 'editing a private-channel message',
    act: async () => {
      await ok(t.api(u().hamlet, 'PATCH', `/messages/${m.secret}`, { content: 'CONFIDENTIAL-8' }));
      return 'CONFIDENTIAL-8';
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'update_message' && e.message_id === m.secret,
  },
  {
    what: 'deleting a private-channel message',
    act: async () => {
      await ok(t.api(u().hamlet, 'DELETE', `/messages/${m.secret2}`));
      return null;
    },
    visible: ['hamlet', 'othello'],
    about: (e) => e.type === 'delete_message' && e.message_ids.includes(m.secret2),
  },
  {
    what: "hamlet's subscription properties in a private channel",
    act: async () => {
      await ok(t.api(u().hamlet, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ch.secret, property: 'color', value: '#123456' }] }));
      return '#123456';
    },
    visible: ['hamlet'],
    about: (e) => e.type === 'subscription' && e.op === 'update',
  },
  {
    what: "changing a private channel's description: its subscribers and the organization administrators (Zulip's can_access_stream_metadata)",
    act: async () => {
      await ok(t.api(u().hamlet, 'PATCH', `/streams/${ch.secret}`, { description: 'CONFIDENTIAL-9' }));
      return 'CONFIDENTIAL-9';
    },
    visible: ['hamlet', 'othello', 'admin', 'adminAll', 'adminNarrow'],
    about: (e) => e.type === 'stream' && e.op === 'update' && e.stream_id === ch.secret,
  },
];

describe('GET /events: a queue never receives another user\'s private data', () => {
  for (const row of ROWS) {
    it(`${row.what}: only ${row.visible.join(', ')}`, async () => {
      const marker = await row.act();
      for (const q of QNAMES) {
        const events = await queues[q].next();
        if (row.visible.includes(q)) {
          assert.ok(events.length > 0, `${q} should hear about ${row.what}`);
          for (const e of events) assert.ok(row.about(e), `${q} got an unrelated event: ${JSON.stringify(e)}`);
        } else {
          assert.deepEqual(events, [], `${q} must not hear about ${row.what}`);
        }
        if (marker && !row.visible.includes(q)) assert.ok(!JSON.stringify(events).includes(marker));
      }
    });
  }

  it("a queue belongs to its user: another user's queue id answers BAD_EVENT_QUEUE_ID, as a missing one does", async () => {
    for (const [user, q] of [[t.users.admin, queues.hamlet], [t.users.bot, queues.hamlet], [otherBot, queues.bot], [t.users.hamlet, queues.bot]] as const) {
      for (const [method, params] of [['GET', { queue_id: q.id, last_event_id: -1, dont_block: true }], ['DELETE', { queue_id: q.id }]] as const) {
        const res = await t.api(user, method, '/events', params);
        assert.equal(res.status, 400, res.text);
        assert.deepEqual(res.body, { result: 'error', msg: `Bad event queue ID: ${q.id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: q.id });
      }
    }
    // The owner's queue is still there.
    assert.deepEqual(await queues.hamlet.next(), []);
  });

  it('a guest may not follow all public channels', async () => {
    const res = await t.api(t.users.guest, 'POST', '/register', { all_public_streams: true });
    assert.deepEqual(res.body, { result: 'error', msg: 'User not authorized for this query', code: 'BAD_REQUEST' });
  });

  it("a guest's queue with a narrow receives no message from a public channel it may not read, whatever the narrow", async () => {
    // A queue with a narrow observes every public channel, as in Zulip, where only all_public_streams
    // was checked: a guest registering any narrow got all their messages live (GET /messages: none).
    const town = await createChannel(t, t.users.admin, 'observed town', [t.users.admin]);
    const narrows = [[['channel', 'observed town']], [['topic', 'observed']], [['sender', t.users.admin.email]], [['is', 'unread']]];
    const guestQueues = await Promise.all(narrows.map((narrow) => Q.open(t.users.guest, { event_types: ['message'], narrow })));
    // A member's narrowed queue still follows a public channel it is not in, as Zulip's does.
    const member = await Q.open(t.users.othello, { event_types: ['message'], narrow: [['channel', 'observed town']] });
    // And a member made a guest stops following at once.
    const made = doCreateUser(t.app, {
      realmId: t.app.realmId(), email: 'demoted@example.com', password: 'correct-horse-battery', fullName: 'Demoted', role: ROLE.MEMBER,
      botType: null, botOwnerId: null, acting: null,
    });
    t.app.batch.commit();
    const demoted: TestUser = { id: made.userId, email: 'demoted@example.com', apiKey: made.apiKey, password: '', fullName: 'Demoted' };
    const demotedQueue = await Q.open(demoted, { event_types: ['message'], narrow: [['topic', 'observed']] });
    await ok(t.api(t.users.owner, 'PATCH', `/users/${demoted.id}`, { role: ROLE.GUEST }));
    const id = await sendToChannel(t, t.users.admin, town, 'observed', 'town news for members only');
    for (const q of [...guestQueues, demotedQueue]) assert.deepEqual(await q.next(), []);
    assert.deepEqual((await member.next()).map((e) => e.message?.id), [id]);
    for (const name of QNAMES) await queues[name].next(); // drain
  });

  it('a deactivated user can no longer poll the queue it registered', async () => {
    const made = doCreateUser(t.app, {
      realmId: t.app.realmId(), email: 'emilia@example.com', password: 'correct-horse-battery', fullName: 'Emilia', role: ROLE.MEMBER,
      botType: null, botOwnerId: null, acting: null,
    });
    t.app.batch.commit();
    const gone: TestUser = { id: made.userId, email: 'emilia@example.com', apiKey: made.apiKey, password: '', fullName: 'Emilia' };
    const q = await Q.open(gone);
    await ok(t.api(t.users.admin, 'DELETE', `/users/${gone.id}`));
    await sendDirect(t, t.users.hamlet, [t.users.othello], 'after deactivation');
    const res = await t.api(gone, 'GET', '/events', { queue_id: q.id, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
    for (const name of QNAMES) await queues[name].next(); // drain
  });
});

// Who can read what, through every read path: GET /messages (with and without a channel narrow),
// GET /messages/{id}, matches_narrow, flags/narrow, search and topics. The rules are Zulip's:
// users read the messages they received; public-channel history is open to members (not guests);
// private channels with shared history are open to their current subscribers; protected history
// only to those who received the message; organization administrators get no exception.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type SeedName, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, ids, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
const ch: Record<string, number> = {};
const m: Record<string, number> = {};
const ALL: SeedName[] = ['owner', 'admin', 'moderator', 'hamlet', 'othello', 'guest', 'bot'];

async function subscribe(user: TestUser, name: string) {
  // Without Notification Bot's "subscribed you" messages: the matrix counts only the messages sent here.
  const res = await t.api(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: [user.id], send_new_subscription_messages: false });
  assert.equal(res.status, 200, res.text);
}

before(async () => {
  t = await startTestServer();
  const u = t.users;
  // Everyone subscribed later than the first message of each channel, except hamlet who sends.
  ch.pub = await createChannel(t, u.hamlet, 'square', [u.hamlet]);
  ch.shared = await createChannel(t, u.hamlet, 'shared', [u.hamlet], { invite_only: true, history_public_to_subscribers: true });
  ch.protected = await createChannel(t, u.hamlet, 'protected', [u.hamlet], { invite_only: true, history_public_to_subscribers: false });
  ch.guestPub = await createChannel(t, u.hamlet, 'guest-square', [u.hamlet]);
  m.pub = await sendToChannel(t, u.hamlet, ch.pub, 'walls', 'public needle');
  m.shared = await sendToChannel(t, u.hamlet, ch.shared, 'walls', 'shared needle');
  m.protected = await sendToChannel(t, u.hamlet, ch.protected, 'walls', 'protected needle');
  m.guestPub = await sendToChannel(t, u.hamlet, ch.guestPub, 'walls', 'guest needle');
  m.dm = await sendDirect(t, u.hamlet, [u.othello], 'direct needle');
  await subscribe(u.othello, 'shared');
  await subscribe(u.othello, 'protected');
  await subscribe(u.guest, 'shared');
  await subscribe(u.guest, 'guest-square');
  m.protectedLater = await sendToChannel(t, u.hamlet, ch.protected, 'later', 'protected needle again');
});
after(() => t.close());

/**
 * The messages each user may read. hamlet sent everything; othello and guest were subscribed after the
 * first messages; owner, admin, moderator and the bot are subscribed to nothing.
 */
function readable(name: SeedName): string[] {
  switch (name) {
    case 'hamlet':
      return ['pub', 'shared', 'protected', 'guestPub', 'dm', 'protectedLater'];
    case 'othello':
      return ['pub', 'shared', 'guestPub', 'dm', 'protectedLater'];
    case 'guest':
      return ['shared', 'guestPub'];
    default:
      return ['pub', 'guestPub'];
  }
}

/** The messages the user received (has a row for): what search, matches_narrow and unnarrowed feeds use. */
function received(name: SeedName): string[] {
  switch (name) {
    case 'hamlet':
      return ['pub', 'shared', 'protected', 'guestPub', 'dm', 'protectedLater'];
    case 'othello':
      return ['dm', 'protectedLater'];
    default:
      return [];
  }
}

const byId = (keys: string[]) => keys.map((k) => m[k]).sort((a, b) => a - b);
const everything = () => Object.keys(m);
const feed = async (user: TestUser, narrow: unknown[] = []) => {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow });
  assert.equal(res.status, 200, res.text);
  return ids(res.body);
};

describe('visibility matrix', () => {
  for (const name of ALL) {
    it(`GET /messages/{id} for ${name}`, async () => {
      for (const key of everything()) {
        const res = await t.api(t.users[name], 'GET', `/messages/${m[key]}`);
        if (readable(name).includes(key)) assert.equal(res.status, 200, `${name} should read ${key}`);
        else assert.deepEqual(res.body, err('Invalid message(s)'), `${name} must not read ${key}`);
      }
    });

    it(`GET /messages without a narrow shows only received messages, for ${name}`, async () => {
      assert.deepEqual(await feed(t.users[name]), byId(received(name)));
    });

    it(`GET /messages with a channel narrow adds readable history, for ${name}`, async () => {
      for (const [chKey, msgKeys] of [
        ['pub', ['pub']],
        ['shared', ['shared']],
        ['protected', ['protected', 'protectedLater']],
        ['guestPub', ['guestPub']],
      ] as [string, string[]][]) {
        const visible = msgKeys.filter((k) => readable(name).includes(k));
        assert.deepEqual(await feed(t.users[name], [{ operator: 'channel', operand: ch[chKey] }]), byId(visible), `${name} in ${chKey}`);
      }
    });

    it(`GET /messages with message_ids, for ${name}`, async () => {
      // Without a channel narrow, only what the user received (Zulip's ok_to_include_history); in a
      // channel whose history they can read, that history too.
      const res = await t.api(t.users[name], 'GET', '/messages', { message_ids: byId(everything()) });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(ids(res.body), byId(received(name)));
      for (const chKey of ['pub', 'shared', 'protected']) {
        const inChannel = await t.api(t.users[name], 'GET', '/messages', { message_ids: byId(everything()), narrow: [{ operator: 'channel', operand: ch[chKey] }] });
        assert.equal(inChannel.status, 200, inChannel.text);
        const expected = byId(readable(name).filter((k) => k === chKey || (chKey === 'protected' && k === 'protectedLater')));
        assert.deepEqual(ids(inChannel.body), expected, `${name} in ${chKey}`);
      }
    });

    it(`search, for ${name}`, async () => {
      assert.deepEqual(await feed(t.users[name], [{ operator: 'search', operand: 'needle' }]), byId(received(name)));
      for (const chKey of ['pub', 'shared', 'protected']) {
        const got = await feed(t.users[name], [
          { operator: 'channel', operand: ch[chKey] },
          { operator: 'search', operand: 'needle' },
        ]);
        const expected = byId(readable(name).filter((k) => k === chKey || (chKey === 'protected' && k === 'protectedLater')));
        assert.deepEqual(got, expected, `${name} searching ${chKey}`);
      }
    });

    it(`GET /messages/matches_narrow, for ${name}`, async () => {
      const res = await t.api(t.users[name], 'GET', '/messages/matches_narrow', {
        msg_ids: byId(everything()),
        narrow: [{ operator: 'search', operand: 'needle' }],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body.messages).map(Number).sort((a, b) => a - b), byId(received(name)));
    });

    it(`POST /messages/flags/narrow touches only readable messages, for ${name}`, async () => {
      for (const chKey of ['pub', 'shared', 'protected']) {
        const res = await t.api(t.users[name], 'POST', '/messages/flags/narrow', {
          anchor: 'oldest',
          num_before: 0,
          num_after: 100,
          narrow: [{ operator: 'channel', operand: ch[chKey] }],
          op: 'add',
          flag: 'collapsed',
        });
        assert.equal(res.status, 200, res.text);
        const expected = byId(readable(name).filter((k) => k === chKey || (chKey === 'protected' && k === 'protectedLater')));
        assert.equal(res.body.processed_count, expected.length, `${name} flagging ${chKey}`);
        assert.equal(res.body.first_processed_id, expected[0] ?? null);
      }
    });

    it(`GET /users/me/{stream_id}/topics, for ${name}`, async () => {
      for (const chKey of ['pub', 'shared', 'protected']) {
        const res = await t.api(t.users[name], 'GET', `/users/me/${ch[chKey]}/topics`);
        const visible = readable(name).filter((k) => k === chKey || (chKey === 'protected' && k === 'protectedLater'));
        const canSeeChannel =
          chKey === 'pub' ? name !== 'guest' : chKey === 'shared' ? ['hamlet', 'othello', 'guest'].includes(name) : ['hamlet', 'othello'].includes(name);
        if (!canSeeChannel) {
          assert.deepEqual(res.body, err('Invalid channel ID'), `${name} topics of ${chKey}`);
          continue;
        }
        assert.equal(res.status, 200, res.text);
        const expectedTopics = visible
          .map((k) => ({ max_id: m[k], name: k === 'protectedLater' ? 'later' : 'walls' }))
          .sort((a, b) => b.max_id - a.max_id);
        assert.deepEqual(res.body, { ...SUCCESS, topics: expectedTopics }, `${name} topics of ${chKey}`);
      }
    });
  }
});

describe('other paths', () => {
  it('reactions and flags need read access', async () => {
    let res = await t.api(t.users.admin, 'POST', `/messages/${m.protected}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(t.users.othello, 'POST', '/messages/flags', { messages: [m.protected], op: 'add', flag: 'starred' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
    res = await t.api(t.users.guest, 'POST', '/messages/flags', { messages: [m.pub], op: 'add', flag: 'starred' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });

  it("a 'with' operand the user cannot read is refused unless the rest names a conversation", async () => {
    let res = await t.api(t.users.admin, 'GET', '/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'with', operand: m.protected }],
    });
    assert.deepEqual(res.body, err("Invalid narrow operator: Invalid 'with' operator", 'BAD_NARROW'));
    res = await t.api(t.users.admin, 'GET', '/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: 'channel', operand: ch.pub },
        { operator: 'topic', operand: 'walls' },
        { operator: 'with', operand: m.protected },
      ],
    });
    assert.deepEqual(ids(res.body), [m.pub]);
  });

  it('editing or moving needs read access; moving out of a protected channel is not a way in', async () => {
    const res = await t.api(t.users.admin, 'PATCH', `/messages/${m.protected}`, { topic: 'stolen' });
    assert.deepEqual(res.body, err('Invalid message(s)'));
  });

  it('delete_topic: administrators cannot delete in channels whose content they cannot read', async () => {
    const u = t.users;
    let res = await t.api(u.admin, 'POST', `/streams/${ch.protected}/delete_topic`, { topic_name: 'walls' });
    assert.deepEqual(res.body, err('Invalid channel ID'));
    // Subscribed later to a protected-history channel: only what they received goes.
    const pc = await createChannel(t, u.hamlet, 'protected-delete', [u.hamlet], { invite_only: true, history_public_to_subscribers: false });
    const before = await sendToChannel(t, u.hamlet, pc, 'topic', 'old');
    await subscribe(u.admin, 'protected-delete');
    const afterwards = await sendToChannel(t, u.hamlet, pc, 'topic', 'new');
    res = await t.api(u.admin, 'POST', `/streams/${pc}/delete_topic`, { topic_name: 'topic' });
    assert.deepEqual(res.body, { ...SUCCESS, complete: true });
    assert.equal((await t.api(u.hamlet, 'GET', `/messages/${before}`)).status, 200);
    assert.deepEqual((await t.api(u.hamlet, 'GET', `/messages/${afterwards}`)).body, err('Invalid message(s)'));
  });

  it('an unsubscribed user keeps the messages they received', async () => {
    const u = t.users;
    const ch2 = await createChannel(t, u.hamlet, 'leaving', [u.hamlet, u.othello], { invite_only: true });
    const id = await sendToChannel(t, u.hamlet, ch2, 'bye', 'before leaving');
    await t.api(u.othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['leaving'] });
    assert.equal((await t.api(u.othello, 'GET', `/messages/${id}`)).status, 200);
    const later = await sendToChannel(t, u.hamlet, ch2, 'bye', 'after leaving');
    assert.deepEqual((await t.api(u.othello, 'GET', `/messages/${later}`)).body, err('Invalid message(s)'));
  });
});

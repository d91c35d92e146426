import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { ROLE } from '../../src/lib/roles';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const typing = (user: TestUser, params: Record<string, unknown>) => t.api(user, 'POST', '/typing', params);

/** A queue for `user` (no initial state); capabilities as given. */
async function queueFor(user: TestUser, capabilities: Record<string, boolean> = {}): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], event_types: ['typing'], client_capabilities: { notification_settings_null: false, ...capabilities } });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

/** Everything queued so far (without waiting), ids stripped. */
async function drain(user: TestUser, queueId: string): Promise<Record<string, unknown>[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat').map(({ id: _id, ...e }: Record<string, unknown>) => e);
}

const setReceives = (user: TestUser, on: boolean) => t.app.db.prepare('UPDATE user SET receives_typing_notifications = ? WHERE id = ?').run(on ? 1 : 0, user.id);
const ref = (u: TestUser) => ({ user_id: u.id, email: u.email });

describe('POST /typing', () => {
  it('direct: start and stop reach every participant (sender included, as Zulip) who receives typing notifications', async () => {
    const { hamlet, othello, admin, guest } = t.users;
    setReceives(admin, false);
    try {
      const [qh, qo, qa, qg] = await Promise.all([queueFor(hamlet), queueFor(othello), queueFor(admin), queueFor(guest)]);
      assert.deepEqual(await typing(hamlet, { op: 'start', to: [othello.id, admin.id] }).then((r) => r.body), SUCCESS);
      assert.deepEqual(await typing(hamlet, { type: 'direct', op: 'stop', to: [othello.id, admin.id] }).then((r) => r.body), SUCCESS);
      const recipients = [ref(othello), ref(admin), ref(hamlet)];
      const expected = ['start', 'stop'].map((op) => ({ type: 'typing', op, message_type: 'direct', sender: ref(hamlet), recipients }));
      assert.deepEqual(await drain(othello, qo), expected);
      assert.deepEqual(await drain(hamlet, qh), expected);
      assert.deepEqual(await drain(admin, qa), [], 'turned typing notifications off');
      assert.deepEqual(await drain(guest, qg), [], 'not a participant');
    } finally {
      setReceives(admin, true);
    }
  });

  it('direct: takes at most 1000 recipients (Parley\'s bound: each is looked up and notified)', async () => {
    assert.deepEqual((await typing(t.users.hamlet, { op: 'start', to: Array(1001).fill(t.users.othello.id) })).body, err('to is too long (limit: 1000 items)'));
    assert.deepEqual((await typing(t.users.hamlet, { op: 'start', to: Array(1000).fill(t.users.othello.id) })).body, SUCCESS);
  });

  it('channel: only subscribers with the capability and the setting get it, with stream_id and topic', async () => {
    const { hamlet, othello, moderator, guest, admin } = t.users;
    const sid = await createChannel(t, hamlet, 'typing room', [hamlet, othello, moderator, admin]);
    setReceives(moderator, false);
    try {
      const cap = { stream_typing_notifications: true };
      const [qo, qm, qg, qaOld] = await Promise.all([queueFor(othello, cap), queueFor(moderator, cap), queueFor(guest, cap), queueFor(admin)]);
      assert.deepEqual(await typing(hamlet, { type: 'channel', op: 'start', stream_id: sid, topic: 'plans' }).then((r) => r.body), SUCCESS);
      assert.deepEqual(await typing(hamlet, { type: 'stream', op: 'stop', stream_id: sid, topic: 'plans' }).then((r) => r.body), SUCCESS);
      assert.deepEqual(await drain(othello, qo), [
        { type: 'typing', op: 'start', message_type: 'stream', sender: ref(hamlet), stream_id: sid, topic: 'plans' },
        { type: 'typing', op: 'stop', message_type: 'stream', sender: ref(hamlet), stream_id: sid, topic: 'plans' },
      ]);
      assert.deepEqual(await drain(moderator, qm), [], 'typing notifications off');
      assert.deepEqual(await drain(guest, qg), [], 'not subscribed');
      assert.deepEqual(await drain(admin, qaOld), [], 'client without stream_typing_notifications');
    } finally {
      setReceives(moderator, true);
    }
  });

  it("channel: none at all in a channel of more than 100 subscribers (Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS)", async () => {
    const { hamlet, othello } = t.users;
    const sid = await createChannel(t, hamlet, 'crowded room', [hamlet, othello]);
    // 98 more members: 100 subscribers, still notified; one more and typing goes quiet.
    const realmId = t.app.realmId();
    const addMember = (i: number) => {
      const { userId } = doCreateUser(t.app, { realmId, email: `crowd${i}@example.com`, password: null, fullName: `Crowd ${i}`, role: ROLE.MEMBER, acting: null });
      t.app.batch.write(() => t.app.db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (?, ?)').run(userId, sid));
    };
    for (let i = 0; i < 98; i++) addMember(i);
    t.app.batch.commit();
    const cap = { stream_typing_notifications: true };
    const q = await queueFor(othello, cap);
    assert.deepEqual(await typing(hamlet, { type: 'channel', op: 'start', stream_id: sid, topic: 'busy' }).then((r) => r.body), SUCCESS);
    assert.deepEqual(await drain(othello, q), [{ type: 'typing', op: 'start', message_type: 'stream', sender: ref(hamlet), stream_id: sid, topic: 'busy' }]);
    addMember(98);
    t.app.batch.commit();
    const q2 = await queueFor(othello, cap);
    assert.deepEqual(await typing(hamlet, { type: 'channel', op: 'start', stream_id: sid, topic: 'busy' }).then((r) => r.body), SUCCESS);
    assert.deepEqual(await drain(othello, q2), []);
  });

  it('channel: the empty topic reads as the display name for clients without empty_topic_name', async () => {
    const { hamlet, othello } = t.users;
    const sid = await createChannel(t, hamlet, 'typing general', [hamlet, othello]);
    const q = await queueFor(othello, { stream_typing_notifications: true });
    const qNew = await queueFor(othello, { stream_typing_notifications: true, empty_topic_name: true });
    assert.equal((await typing(hamlet, { type: 'channel', op: 'start', stream_id: sid, topic: '' })).status, 200);
    assert.equal((await drain(othello, q))[0].topic, 'general chat');
    assert.equal((await drain(othello, qNew))[0].topic, '');
  });

  it('refuses bad input with Zulip errors', async () => {
    const { hamlet, othello } = t.users;
    const cases: [Record<string, unknown>, ReturnType<typeof err>][] = [
      [{ to: [othello.id] }, err("Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' })],
      [{ op: 'begin', to: [othello.id] }, err('Invalid op')],
      [{ op: 'start', type: 'private', to: [othello.id] }, err('Invalid type')],
      [{ op: 'start' }, err("Missing 'to' argument")],
      [{ op: 'start', to: [] }, err("Empty 'to' list")],
      [{ op: 'start', to: othello.id }, err('to is not a list')],
      [{ op: 'start', to: [othello.id, 'x'] }, err('to[1] is not an integer')],
      [{ op: 'start', to: [9999999] }, err('Invalid user ID 9999999')],
      [{ op: 'start', type: 'channel', topic: 'x' }, err("Missing 'stream_id' argument")],
      [{ op: 'start', type: 'stream', stream_id: 1 }, err('Missing topic')],
      [{ op: 'start', type: 'stream', stream_id: 999999, topic: 'x' }, err('Invalid channel ID')],
    ];
    for (const [params, body] of cases) {
      const res = await typing(hamlet, params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, body, JSON.stringify(params));
    }
  });

  it('refuses a private channel the user cannot see, as a missing one', async () => {
    const { hamlet, othello } = t.users;
    const sid = await createChannel(t, hamlet, 'typing secret', [hamlet], { invite_only: true });
    assert.deepEqual((await typing(othello, { type: 'channel', op: 'start', stream_id: sid, topic: 'x' })).body, err('Invalid channel ID'));
  });

  it('refuses when the sender turned off sending typing notifications', async () => {
    const { hamlet, othello } = t.users;
    const sid = await createChannel(t, hamlet, 'typing quiet', [hamlet, othello]);
    t.app.db.prepare('UPDATE user SET send_private_typing_notifications = 0, send_stream_typing_notifications = 0 WHERE id = ?').run(hamlet.id);
    try {
      assert.deepEqual((await typing(hamlet, { op: 'start', to: [othello.id] })).body, err('User has disabled typing notifications for direct messages'));
      assert.deepEqual(
        (await typing(hamlet, { type: 'channel', op: 'start', stream_id: sid, topic: 'x' })).body,
        err('User has disabled typing notifications for channel messages'),
      );
    } finally {
      t.app.db.prepare('UPDATE user SET send_private_typing_notifications = 1, send_stream_typing_notifications = 1 WHERE id = ?').run(hamlet.id);
    }
  });
});

describe('POST /messages/{message_id}/typing', () => {
  const editTyping = (user: TestUser, id: number, params: Record<string, unknown>) => t.api(user, 'POST', `/messages/${id}/typing`, params);
  /** A queue for typing_edit_message events, without any client capability. */
  async function editQueue(user: TestUser): Promise<string> {
    const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], event_types: ['typing_edit_message'] });
    assert.equal(res.status, 200, res.text);
    return res.body.queue_id;
  }
  const send = async (user: TestUser, params: Record<string, unknown>) => {
    const res = await t.api(user, 'POST', '/messages', params);
    assert.equal(res.status, 200, res.text);
    return res.body.id as number;
  };

  it("channel: start and stop reach the channel's subscribers who receive typing notifications, the editor included", async () => {
    const { hamlet, othello, moderator, admin } = t.users;
    const sid = await createChannel(t, hamlet, 'edit room', [hamlet, othello, moderator]);
    const id = await send(hamlet, { type: 'channel', to: sid, topic: 'draft', content: 'first' });
    setReceives(moderator, false);
    try {
      const [qh, qo, qm, qa] = await Promise.all([editQueue(hamlet), editQueue(othello), editQueue(moderator), editQueue(admin)]);
      assert.deepEqual((await editTyping(hamlet, id, { op: 'start' })).body, SUCCESS);
      assert.deepEqual((await editTyping(hamlet, id, { op: 'stop' })).body, SUCCESS);
      const expected = ['start', 'stop'].map((op) => ({
        type: 'typing_edit_message',
        op,
        sender_id: hamlet.id,
        message_id: id,
        recipient: { type: 'channel', channel_id: sid, topic: 'draft' },
      }));
      assert.deepEqual(await drain(othello, qo), expected);
      assert.deepEqual(await drain(hamlet, qh), expected);
      assert.deepEqual(await drain(moderator, qm), [], 'turned typing notifications off');
      assert.deepEqual(await drain(admin, qa), [], 'not subscribed');
    } finally {
      setReceives(moderator, true);
    }
  });

  it('direct: the participants who are active and receive typing notifications, listed in recipient.user_ids', async () => {
    const { hamlet, othello, admin, moderator } = t.users;
    const oneToOne = await send(hamlet, { type: 'direct', to: [othello.id], content: 'to you' });
    const group = await send(hamlet, { type: 'direct', to: [othello.id, admin.id, moderator.id], content: 'to all' });
    setReceives(admin, false);
    try {
      const [qh, qo, qa, qm] = await Promise.all([editQueue(hamlet), editQueue(othello), editQueue(admin), editQueue(moderator)]);
      assert.deepEqual((await editTyping(hamlet, oneToOne, { op: 'start' })).body, SUCCESS);
      assert.deepEqual((await editTyping(hamlet, group, { op: 'stop' })).body, SUCCESS);
      const first = { type: 'typing_edit_message', op: 'start', sender_id: hamlet.id, message_id: oneToOne, recipient: { type: 'direct', user_ids: [hamlet.id, othello.id] } };
      const others = [othello.id, moderator.id].sort((a, b) => a - b);
      const second = { type: 'typing_edit_message', op: 'stop', sender_id: hamlet.id, message_id: group, recipient: { type: 'direct', user_ids: [hamlet.id, ...others] } };
      assert.deepEqual(await drain(hamlet, qh), [first, second]);
      assert.deepEqual(await drain(othello, qo), [first, second]);
      assert.deepEqual(await drain(moderator, qm), [second]);
      assert.deepEqual(await drain(admin, qa), []);
    } finally {
      setReceives(admin, true);
    }
  });

  it('a note to self, a guest in its channel and a bot editing their own messages', async () => {
    const { hamlet, guest, bot } = t.users;
    const self = await send(hamlet, { type: 'direct', to: [hamlet.id], content: 'note' });
    const qh = await editQueue(hamlet);
    assert.deepEqual((await editTyping(hamlet, self, { op: 'start' })).body, SUCCESS);
    assert.deepEqual(await drain(hamlet, qh), [{ type: 'typing_edit_message', op: 'start', sender_id: hamlet.id, message_id: self, recipient: { type: 'direct', user_ids: [hamlet.id] } }]);
    const sid = await createChannel(t, hamlet, 'edit guests', [hamlet, guest, bot]);
    for (const user of [guest, bot]) {
      const id = await send(user, { type: 'channel', to: sid, topic: 't', content: 'mine' });
      const q = await editQueue(hamlet);
      assert.deepEqual((await editTyping(user, id, { op: 'start' })).body, SUCCESS);
      assert.deepEqual(await drain(hamlet, q), [
        { type: 'typing_edit_message', op: 'start', sender_id: user.id, message_id: id, recipient: { type: 'channel', channel_id: sid, topic: 't' } },
      ]);
    }
  });

  it("refuses what Zulip refuses: another's message, one out of reach, an archived channel's, editing off or too late, bad input", async () => {
    const { hamlet, othello, owner, guest } = t.users;
    const sid = await createChannel(t, hamlet, 'edit refusals', [hamlet, othello]);
    const mine = await send(hamlet, { type: 'channel', to: sid, topic: 't', content: 'mine' });
    const theirs = await send(othello, { type: 'channel', to: sid, topic: 't', content: 'theirs' });
    const secret = await createChannel(t, othello, 'edit secret', [othello], { invite_only: true });
    const hidden = await send(othello, { type: 'channel', to: secret, topic: 't', content: 'hidden' });
    const archived = await createChannel(t, hamlet, 'edit archived', [hamlet]);
    const old = await send(hamlet, { type: 'channel', to: archived, topic: 't', content: 'old' });
    assert.equal((await t.api(owner, 'DELETE', `/streams/${archived}`)).status, 200);
    const q = await editQueue(othello);
    const cases: [TestUser, number, Record<string, unknown>, number, unknown][] = [
      [hamlet, theirs, { op: 'start' }, 400, err("You don't have permission to edit this message")],
      [hamlet, hidden, { op: 'start' }, 400, err('Invalid message(s)')],
      [hamlet, 99999999, { op: 'start' }, 400, err('Invalid message(s)')],
      [hamlet, old, { op: 'start' }, 400, err('Invalid message(s)')],
      [guest, mine, { op: 'start' }, 400, err('Invalid message(s)')],
      [hamlet, mine, {}, 400, err("Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' })],
      [hamlet, mine, { op: 'begin' }, 400, err('Invalid op')],
    ];
    for (const [user, id, params, status, body] of cases) {
      const res = await editTyping(user, id, params);
      assert.deepEqual({ status: res.status, body: res.body }, { status, body }, `${id} ${JSON.stringify(params)}`);
    }
    // A message id that is not a number is not this route.
    assert.equal((await t.api(hamlet, 'POST', '/messages/abc/typing', { op: 'start' })).status, 404);
    // The organization's editing rules, without the edit's grace period.
    try {
      t.app.db.prepare('UPDATE realm SET message_content_edit_limit_seconds = 60').run();
      t.app.db.prepare('UPDATE message SET date_sent = date_sent - 61 WHERE id = ?').run(mine);
      assert.deepEqual((await editTyping(hamlet, mine, { op: 'start' })).body, err('The time limit for editing this message has passed'));
      t.app.db.prepare('UPDATE realm SET allow_message_editing = 0').run();
      assert.deepEqual((await editTyping(hamlet, mine, { op: 'start' })).body, err('Your organization has turned off message editing'));
    } finally {
      t.app.db.prepare('UPDATE realm SET message_content_edit_limit_seconds = NULL, allow_message_editing = 1').run();
    }
    t.app.db.prepare('UPDATE user SET send_private_typing_notifications = 0, send_stream_typing_notifications = 0 WHERE id = ?').run(hamlet.id);
    try {
      const dm = await send(hamlet, { type: 'direct', to: [othello.id], content: 'dm' });
      assert.deepEqual((await editTyping(hamlet, mine, { op: 'start' })).body, err('User has disabled typing notifications for channel messages'));
      assert.deepEqual((await editTyping(hamlet, dm, { op: 'start' })).body, err('User has disabled typing notifications for direct messages'));
    } finally {
      t.app.db.prepare('UPDATE user SET send_private_typing_notifications = 1, send_stream_typing_notifications = 1 WHERE id = ?').run(hamlet.id);
    }
    // None of them told anyone anything.
    assert.deepEqual(await drain(othello, q), []);
  });

  it('a deactivated user cannot', async () => {
    const { owner, othello } = t.users;
    const created = await t.api(owner, 'POST', '/users', { email: 'edit-leaver@example.com', password: 'xyzzy-secret-99', full_name: 'Leaver' });
    assert.equal(created.status, 200, created.text);
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'edit-leaver@example.com', password: 'xyzzy-secret-99' });
    const leaver: TestUser = { id: created.body.user_id, email: 'edit-leaver@example.com', apiKey: key.body.api_key, password: 'xyzzy-secret-99', fullName: 'Leaver' };
    const id = await send(leaver, { type: 'direct', to: [othello.id], content: 'bye' });
    assert.equal((await t.api(owner, 'DELETE', `/users/${leaver.id}`)).status, 200);
    const res = await editTyping(leaver, id, { op: 'start' });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
  });

  it(`channel: none in a channel of more than ${100} subscribers`, async () => {
    const { hamlet, othello } = t.users;
    const sid = await createChannel(t, hamlet, 'crowded edits', [hamlet, othello]);
    const id = await send(hamlet, { type: 'channel', to: sid, topic: 't', content: 'crowded' });
    const realmId = t.app.realmId();
    for (let i = 0; i < 99; i++) {
      const { userId } = doCreateUser(t.app, { realmId, email: `edit-crowd${i}@example.com`, password: null, fullName: `Edit crowd ${i}`, role: ROLE.MEMBER, acting: null });
      t.app.batch.write(() => t.app.db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (?, ?)').run(userId, sid));
    }
    t.app.batch.commit();
    const q = await editQueue(othello);
    assert.deepEqual((await editTyping(hamlet, id, { op: 'start' })).body, SUCCESS);
    assert.deepEqual(await drain(othello, q), []);
  });
});

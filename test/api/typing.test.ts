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

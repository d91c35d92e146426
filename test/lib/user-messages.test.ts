// Implied message rows (schema.sql, usermessage_cursor; src/lib/user-messages.ts): a channel message
// writes only the per-user rows that differ from a subscriber's plain unread row, and the others are
// written when the user's rows are read. What users see must be exactly what they would see had every
// row been written at send time: through subscription gaps, deactivation, moves between channels,
// flags, reactions, unread state, uploads and events.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, ids, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { multipart } from '../helpers/multipart';
import { basicAuth } from '../helpers/server';
import { ALL_USER_MESSAGES_SQL } from '../../src/lib/user-messages';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** The per-user rows written so far for these messages, as "user:message:flags". */
function writtenRows(messageIds: number[]): string[] {
  return (
    t.app.db
      .prepare(`SELECT user_id, message_id, flags FROM usermessage WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, user_id`)
      .all(JSON.stringify(messageIds)) as { user_id: number; message_id: number; flags: number }[]
  ).map((r) => `${r.user_id}:${r.message_id}:${r.flags}`);
}

const logicalRows = () => JSON.stringify(t.app.db.prepare(ALL_USER_MESSAGES_SQL).all());

async function feed(user: TestUser, narrow: unknown[] = []): Promise<{ id: number; flags: string[] }[]> {
  const res = await t.api(user, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow });
  assert.equal(res.status, 200, res.text);
  return res.body.messages.map((m: { id: number; flags: string[] }) => ({ id: m.id, flags: m.flags }));
}

async function flagsOf(user: TestUser, id: number): Promise<string[]> {
  const res = await t.api(user, 'GET', `/messages/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.message.flags;
}

async function unsubscribe(user: TestUser, name: string) {
  const res = await t.api(t.users.owner, 'DELETE', '/users/me/subscriptions', { subscriptions: [name], principals: [user.id] });
  assert.equal(res.status, 200, res.text);
}

async function subscribe(user: TestUser, name: string) {
  const res = await t.api(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: [user.id], send_new_subscription_messages: false });
  assert.equal(res.status, 200, res.text);
}

describe('implied message rows', () => {
  it('a send writes only the rows that differ; a reader gets theirs written when reading, and nothing they see changes', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-basics', [u.hamlet, u.othello, u.moderator]);
    const m1 = await sendToChannel(t, u.hamlet, c, 'one', 'plain');
    const m2 = await sendToChannel(t, u.hamlet, c, 'one', 'hello @**Othello**');
    // The sender's row (read) and the mention; the moderator's and othello's plain rows are implied.
    assert.deepEqual(writtenRows([m1, m2]), [`${u.hamlet.id}:${m1}:1`, `${u.hamlet.id}:${m2}:1`, `${u.othello.id}:${m2}:8`]);
    const logical = logicalRows();
    assert.deepEqual(await feed(u.moderator, [{ operator: 'channel', operand: c }]), [
      { id: m1, flags: [] },
      { id: m2, flags: [] },
    ]);
    // Reading wrote the moderator's rows, and only theirs; the logical rows are the same.
    assert.ok(u.moderator.id < u.hamlet.id && u.hamlet.id < u.othello.id);
    assert.deepEqual(writtenRows([m1, m2]), [
      `${u.moderator.id}:${m1}:0`,
      `${u.hamlet.id}:${m1}:1`,
      `${u.moderator.id}:${m2}:0`,
      `${u.hamlet.id}:${m2}:1`,
      `${u.othello.id}:${m2}:8`,
    ]);
    assert.equal(logicalRows(), logical);
    assert.deepEqual(await flagsOf(u.othello, m1), []);
    assert.deepEqual(await flagsOf(u.othello, m2), ['mentioned']);
    assert.deepEqual(await flagsOf(u.hamlet, m2), ['read']);
  });

  it('messages sent while a user was unsubscribed are not theirs; before and after are', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-gap', [u.hamlet, u.othello], { invite_only: true, history_public_to_subscribers: false });
    const before1 = await sendToChannel(t, u.hamlet, c, 'gap', 'before 1');
    const before2 = await sendToChannel(t, u.hamlet, c, 'gap', 'before 2');
    await unsubscribe(u.othello, 'implied-gap');
    const during = await sendToChannel(t, u.hamlet, c, 'gap', 'during');
    await subscribe(u.othello, 'implied-gap');
    const afterwards = await sendToChannel(t, u.hamlet, c, 'gap', 'after');
    assert.deepEqual(await feed(u.othello, [{ operator: 'channel', operand: c }]), [
      { id: before1, flags: [] },
      { id: before2, flags: [] },
      { id: afterwards, flags: [] },
    ]);
    const res = await t.api(u.othello, 'GET', `/messages/${during}`);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid message(s)'));
    // The channel's full history is the sender's.
    assert.deepEqual(
      (await feed(u.hamlet, [{ operator: 'channel', operand: c }])).map((m) => m.id),
      [before1, before2, during, afterwards],
    );
  });

  it('in a public channel, a message from the gap is history: read and historical', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-public-gap', [u.hamlet, u.othello]);
    await unsubscribe(u.othello, 'implied-public-gap');
    const during = await sendToChannel(t, u.hamlet, c, 'gap', 'during');
    await subscribe(u.othello, 'implied-public-gap');
    const afterwards = await sendToChannel(t, u.hamlet, c, 'gap', 'after');
    assert.deepEqual(await feed(u.othello, [{ operator: 'channel', operand: c }]), [
      { id: during, flags: ['read', 'historical'] },
      { id: afterwards, flags: [] },
    ]);
    // Not in the user's own messages (no channel narrow: only what they received).
    const mine = (await feed(u.othello)).map((m) => m.id);
    assert.ok(mine.includes(afterwards) && !mine.includes(during));
  });

  it('a deactivated user receives nothing until reactivated', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-deactivated', [u.hamlet, u.othello], { invite_only: true, history_public_to_subscribers: false });
    const first = await sendToChannel(t, u.hamlet, c, 'away', 'first');
    let res = await t.api(u.admin, 'DELETE', `/users/${u.othello.id}`);
    assert.deepEqual(res.body, SUCCESS);
    const whileAway = await sendToChannel(t, u.hamlet, c, 'away', 'while away');
    res = await t.api(u.admin, 'POST', `/users/${u.othello.id}/reactivate`);
    assert.deepEqual(res.body, SUCCESS);
    const back = await sendToChannel(t, u.hamlet, c, 'away', 'back');
    assert.deepEqual(
      (await feed(u.othello, [{ operator: 'channel', operand: c }])).map((m) => m.id),
      [first, back],
    );
    assert.ok(whileAway > first);
  });

  it('moving messages to a public channel (as Zulip): the old channel’s other subscribers lose their rows, the new one’s read it as history', async () => {
    const u = t.users;
    const from = await createChannel(t, u.hamlet, 'implied-move-from', [u.hamlet, u.othello]);
    const to = await createChannel(t, u.hamlet, 'implied-move-to', [u.hamlet, u.moderator]);
    const a = await sendToChannel(t, u.hamlet, from, 'moving', 'a');
    const b = await sendToChannel(t, u.hamlet, from, 'moving', 'b');
    // Neither othello nor the moderator has read anything: their rows are implied.
    const qo = await registerQueue(t, u.othello, ['message', 'update_message', 'delete_message']);
    const res = await t.api(u.hamlet, 'PATCH', `/messages/${a}`, { stream_id: to, propagate_mode: 'change_all', send_notification_to_new_thread: false });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await feed(u.moderator, [{ operator: 'channel', operand: to }]), [
      { id: a, flags: ['read', 'historical'] },
      { id: b, flags: ['read', 'historical'] },
    ]);
    // othello is not subscribed to the (public) target: no unread messages there, only history.
    assert.deepEqual(await flagsOf(u.othello, a), ['read', 'historical']);
    assert.deepEqual(writtenRows([a, b]), [`${u.hamlet.id}:${a}:1`, `${u.hamlet.id}:${b}:1`]);
    // He still hears the move (he can read the channel), not a deletion.
    const events = await queuedEvents(t, u.othello, qo);
    assert.deepEqual(events.map((e: { type: string; flags: string[] }) => [e.type, e.flags]), [['update_message', ['read']]]);
  });

  it('moving messages to a private channel with protected history: its new subscribers gain read rows, the others lose them and hear a deletion', async () => {
    const u = t.users;
    const from = await createChannel(t, u.hamlet, 'implied-move-from-2', [u.hamlet, u.othello]);
    const to = await createChannel(t, u.hamlet, 'implied-move-to-2', [u.hamlet, u.moderator], { invite_only: true, history_public_to_subscribers: false });
    const a = await sendToChannel(t, u.hamlet, from, 'moving', 'a');
    const qo = await registerQueue(t, u.othello, ['message', 'update_message', 'delete_message']);
    const res = await t.api(u.hamlet, 'PATCH', `/messages/${a}`, { stream_id: to, propagate_mode: 'change_all', send_notification_to_new_thread: false });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await feed(u.moderator, [{ operator: 'channel', operand: to }]), [{ id: a, flags: ['read'] }]);
    const gone = await t.api(u.othello, 'GET', `/messages/${a}`);
    assert.equal(gone.status, 400);
    assert.deepEqual(gone.body, err('Invalid message(s)'));
    const events = await queuedEvents(t, u.othello, qo);
    assert.deepEqual(events, [{ type: 'delete_message', message_id: a, message_type: 'stream', stream_id: from, topic: 'moving' }]);
  });

  it('message ids are never used twice, even after the newest message is deleted', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-ids', [u.hamlet, u.othello]);
    const first = await sendToChannel(t, u.hamlet, c, 'ids', 'first');
    const newest = await sendToChannel(t, u.hamlet, c, 'ids', 'newest');
    // othello reads, so his rows are written up to `newest`.
    assert.equal((await feed(u.othello, [{ operator: 'channel', operand: c }])).length, 2);
    const res = await t.api(u.admin, 'DELETE', `/messages/${newest}`);
    assert.deepEqual(res.body, SUCCESS);
    const next = await sendToChannel(t, u.hamlet, c, 'ids', 'next');
    assert.ok(next > newest, `${next} > ${newest}`);
    assert.deepEqual(await feed(u.othello, [{ operator: 'channel', operand: c }]), [
      { id: first, flags: [] },
      { id: next, flags: [] },
    ]);
  });

  it('flags and reactions on an implied row keep it a received message (not historical)', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-flags', [u.hamlet, u.othello]);
    const m = await sendToChannel(t, u.hamlet, c, 'flags', 'star me');
    const n = await sendToChannel(t, u.hamlet, c, 'flags', 'react to me');
    let res = await t.api(u.othello, 'POST', '/messages/flags', { messages: [m], op: 'add', flag: 'starred' });
    assert.deepEqual(res.body, { ...SUCCESS, messages: [m] });
    res = await t.api(u.othello, 'POST', `/messages/${n}/reactions`, { emoji_name: 'smile' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await flagsOf(u.othello, m), ['starred']);
    assert.deepEqual(await flagsOf(u.othello, n), []);
  });

  it('unread state, mark_stream_as_read and its event cover implied rows', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-unread', [u.hamlet, u.moderator]);
    const sent = [await sendToChannel(t, u.hamlet, c, 'u', 'one'), await sendToChannel(t, u.hamlet, c, 'u', 'two')];
    let res = await t.api(u.moderator, 'POST', '/register', { event_types: ['message'], fetch_event_types: ['message', 'update_message_flags'] });
    assert.equal(res.status, 200, res.text);
    const unread = res.body.unread_msgs.streams.find((s: { stream_id: number }) => s.stream_id === c);
    assert.deepEqual(unread, { stream_id: c, topic: 'u', unread_message_ids: sent });
    const queue = await registerQueue(t, u.moderator, ['update_message_flags']);
    res = await t.api(u.moderator, 'POST', '/mark_stream_as_read', { stream_id: c });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u.moderator, queue), [
      { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: sent, all: false },
    ]);
    res = await t.api(u.moderator, 'POST', '/register', { event_types: ['message'], fetch_event_types: ['message', 'update_message_flags'] });
    assert.equal(res.body.unread_msgs.streams.find((s: { stream_id: number }) => s.stream_id === c), undefined);
  });

  it("unread_msgs leaves out channels the user has left (their rows stay, as Zulip's), and counts them again on return", async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-left', [u.hamlet, u.moderator]);
    const m = await sendToChannel(t, u.hamlet, c, 'left', 'unread when leaving');
    const unreadIn = async () => {
      const res = await t.api(u.moderator, 'POST', '/register', { event_types: ['message'], fetch_event_types: ['message', 'update_message_flags'] });
      assert.equal(res.status, 200, res.text);
      return res.body.unread_msgs.streams.find((s: { stream_id: number }) => s.stream_id === c)?.unread_message_ids;
    };
    await unsubscribe(u.moderator, 'implied-left');
    assert.equal(await unreadIn(), undefined);
    // The row was written (unread) when he left: it is his, as in Zulip.
    assert.deepEqual(writtenRows([m]), [`${u.moderator.id}:${m}:0`, `${u.hamlet.id}:${m}:1`].sort());
    await subscribe(u.moderator, 'implied-left');
    assert.deepEqual(await unreadIn(), [m]);
  });

  it('an upload linked in a protected channel is readable through an implied row', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-upload', [u.hamlet, u.othello], { invite_only: true, history_public_to_subscribers: false });
    const { body, contentType } = multipart([{ field: 'file', filename: 'note.txt', type: 'text/plain', data: 'implied' }]);
    const up = await t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basicAuth(u.hamlet), 'content-type': contentType }, body });
    assert.equal(up.status, 200, up.text);
    const m = await sendToChannel(t, u.hamlet, c, 'files', `[note](${up.body.url})`);
    assert.deepEqual(writtenRows([m]), [`${u.hamlet.id}:${m}:1`]);
    const got = await t.raw('GET', up.body.url, { headers: { authorization: basicAuth(u.othello) } });
    assert.equal(got.status, 200);
    assert.equal(got.text, 'implied');
    const refused = await t.raw('GET', up.body.url, { headers: { authorization: basicAuth(u.moderator) } });
    assert.notEqual(refused.status, 200);
  });

  it('events for an edit reach the implied recipients with their flags', async () => {
    const u = t.users;
    const c = await createChannel(t, u.hamlet, 'implied-edit', [u.hamlet, u.othello]);
    const m = await sendToChannel(t, u.hamlet, c, 'edit', 'before');
    const queue = await registerQueue(t, u.othello, ['update_message']);
    const res = await t.api(u.hamlet, 'PATCH', `/messages/${m}`, { content: 'after' });
    assert.equal(res.status, 200, res.text);
    const [event] = await queuedEvents(t, u.othello, queue);
    assert.equal(event.type, 'update_message');
    assert.deepEqual(event.flags, []);
    assert.equal(event.content, 'after');
    assert.deepEqual(event.message_ids, [m]);
  });
});

import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS } from '../helpers/chat';
import { armScheduledDelivery, runDueScheduledMessages } from '../../src/actions/scheduled-messages';

// A movable clock: delivery is driven by advancing it and calling runDueScheduledMessages.
let offsetMs = 0;
const clock = { nowMs: () => Date.now() + offsetMs };
const now = () => Math.floor(clock.nowMs() / 1000);

let t: TestServer;
let channel: number;
before(async () => {
  t = await startTestServer({ clock });
  channel = await createChannel(t, t.users.hamlet, 'later', [t.users.hamlet, t.users.othello]);
});
after(() => t.close());
// Each test starts with no pending messages, so deliveries of one test never leak into the next.
beforeEach(() => {
  t.app.db.prepare('DELETE FROM scheduled_message').run();
});

const schedule = (user: TestUser, params: Record<string, unknown>) => t.api(user, 'POST', '/scheduled_messages', params);
const edit = (user: TestUser, id: number, params: Record<string, unknown>) => t.api(user, 'PATCH', `/scheduled_messages/${id}`, params);
const list = async (user: TestUser) => {
  const res = await t.api(user, 'GET', '/scheduled_messages');
  assert.equal(res.status, 200, res.text);
  return res.body.scheduled_messages as Record<string, unknown>[];
};

async function queueFor(user: TestUser, eventTypes = ['scheduled_messages', 'message']): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], event_types: eventTypes });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

async function drain(user: TestUser, queueId: string): Promise<Record<string, any>[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat').map(({ id: _id, ...e }: Record<string, unknown>) => e);
}

async function scheduleOk(user: TestUser, params: Record<string, unknown>): Promise<number> {
  const res = await schedule(user, { scheduled_delivery_timestamp: now() + 3600, ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.scheduled_message_id as number;
}

describe('POST /scheduled_messages', () => {
  it('stores a channel and a direct message; GET lists the full records, soonest first; add events go to the sender only', async () => {
    const { hamlet, othello } = t.users;
    const [qh, qo] = [await queueFor(hamlet), await queueFor(othello)];
    const at = now() + 7200;
    const res = await schedule(hamlet, { type: 'channel', to: channel, topic: 'plans', content: '**soon**', scheduled_delivery_timestamp: at });
    assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'result', 'scheduled_message_id']);
    const c = res.body.scheduled_message_id;
    const d = await scheduleOk(hamlet, { type: 'direct', to: [othello.id, othello.id], content: 'hi', scheduled_delivery_timestamp: at - 60 });
    const channelRecord = {
      scheduled_message_id: c,
      type: 'stream',
      to: channel,
      topic: 'plans',
      content: '**soon**',
      rendered_content: '<p><strong>soon</strong></p>',
      scheduled_delivery_timestamp: at,
      failed: false,
    };
    const directRecord = {
      scheduled_message_id: d,
      type: 'private',
      to: [othello.id],
      content: 'hi',
      rendered_content: '<p>hi</p>',
      scheduled_delivery_timestamp: at - 60,
      failed: false,
    };
    assert.deepEqual(await list(hamlet), [directRecord, channelRecord]);
    assert.deepEqual(await list(othello), []);
    assert.deepEqual(await drain(hamlet, qh), [
      { type: 'scheduled_messages', op: 'add', scheduled_messages: [channelRecord] },
      { type: 'scheduled_messages', op: 'add', scheduled_messages: [directRecord] },
    ]);
    assert.deepEqual(await drain(othello, qo), []);
    // The register state says the same.
    const reg = await t.api(hamlet, 'POST', '/register', { fetch_event_types: ['scheduled_messages'] });
    assert.deepEqual(reg.body.scheduled_messages, [directRecord, channelRecord]);
  });

  it('a note to self lists the sender as its recipient', async () => {
    const { hamlet } = t.users;
    const id = await scheduleOk(hamlet, { type: 'private', to: [hamlet.id], content: 'remember' });
    assert.deepEqual((await list(hamlet)).map((m) => [m.scheduled_message_id, m.to]), [[id, [hamlet.id]]]);
  });

  it('bounds content and topic like sent messages', async () => {
    const { hamlet } = t.users;
    await scheduleOk(hamlet, { type: 'stream', to: channel, topic: 't'.repeat(70), content: 'x'.repeat(10_050) });
    const [m] = await list(hamlet);
    assert.equal(m.topic, 't'.repeat(57) + '...');
    assert.equal(m.content, 'x'.repeat(10_000 - '\n[message truncated]'.length) + '\n[message truncated]');
  });

  it('refuses bad requests with Zulip errors', async () => {
    const { hamlet, othello } = t.users;
    const base = { type: 'direct', to: [othello.id], content: 'x', scheduled_delivery_timestamp: now() + 100 };
    const cases: [Record<string, unknown>, number, ReturnType<typeof err>][] = [
      [{ ...base, scheduled_delivery_timestamp: now() - 1 }, 400, err('Scheduled delivery time must be in the future.')],
      [{ ...base, to: [othello.id, 99999] }, 400, err('Invalid user ID 99999')],
      [{ ...base, type: 'channel', to: 99999 }, 400, err("Channel with ID '99999' does not exist", 'STREAM_DOES_NOT_EXIST', { stream_id: 99999 })],
      [{ ...base, content: '  ' }, 400, err('Message must not be empty')],
      [{ ...base, type: 'dm' }, 400, err('Invalid type')],
      [{ ...base, scheduled_delivery_timestamp: undefined }, 400, err("Missing 'scheduled_delivery_timestamp' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'scheduled_delivery_timestamp' })],
    ];
    for (const [params, status, body] of cases) {
      const res = await schedule(hamlet, params);
      assert.equal(res.status, status, JSON.stringify(params));
      assert.deepEqual(res.body, body, JSON.stringify(params));
    }
    assert.deepEqual(await list(hamlet), []);
  });

  it('refuses a private channel the sender is not in', async () => {
    const { hamlet, othello } = t.users;
    const secret = await createChannel(t, hamlet, 'later secret', [hamlet], { invite_only: true });
    const res = await schedule(othello, { type: 'stream', to: secret, topic: 'x', content: 'x', scheduled_delivery_timestamp: now() + 100 });
    assert.deepEqual(res.body, err("Not authorized to send to channel 'later secret'"));
  });
});

describe('PATCH /scheduled_messages/{scheduled_message_id}', () => {
  it('edits content, topic and time; sends an update event with the whole record', async () => {
    const { hamlet } = t.users;
    const id = await scheduleOk(hamlet, { type: 'channel', to: channel, topic: 'a', content: 'one' });
    const q = await queueFor(hamlet);
    const at = now() + 999;
    assert.deepEqual((await edit(hamlet, id, { content: 'two', topic: 'b', scheduled_delivery_timestamp: at })).body, SUCCESS);
    const record = { scheduled_message_id: id, type: 'stream', to: channel, topic: 'b', content: 'two', rendered_content: '<p>two</p>', scheduled_delivery_timestamp: at, failed: false };
    assert.deepEqual(await list(hamlet), [record]);
    assert.deepEqual(await drain(hamlet, q), [{ type: 'scheduled_messages', op: 'update', scheduled_message: record }]);
  });

  it('reads "(no topic)" and the empty-topic display name as the empty topic when the topic is not required', async () => {
    const { hamlet } = t.users;
    const id = await scheduleOk(hamlet, { type: 'channel', to: channel, topic: 'a', content: 'one' });
    for (const spelling of ['(no topic)', 'general chat', '']) {
      await edit(hamlet, id, { topic: 'a' });
      assert.deepEqual((await edit(hamlet, id, { topic: spelling })).body, SUCCESS);
      assert.equal((await list(hamlet))[0].topic, '', spelling);
    }
  });

  it('changes type: direct needs to; channel needs to and a real topic; a topic for a direct message is ignored', async () => {
    const { hamlet, othello } = t.users;
    const id = await scheduleOk(hamlet, { type: 'channel', to: channel, topic: 'a', content: 'one' });
    assert.deepEqual((await edit(hamlet, id, { type: 'direct' })).body, err('Recipient required when updating type of scheduled message.'));
    assert.deepEqual((await edit(hamlet, id, { type: 'direct', to: [othello.id], topic: 'ignored' })).body, SUCCESS);
    let [m] = await list(hamlet);
    assert.deepEqual([m.type, m.to, 'topic' in m], ['private', [othello.id], false]);
    assert.deepEqual((await edit(hamlet, id, { topic: 'still ignored' })).body, SUCCESS);
    assert.equal('topic' in (await list(hamlet))[0], false);
    const required = err('Topic required when updating scheduled message type to channel.');
    assert.deepEqual((await edit(hamlet, id, { type: 'channel', to: channel })).body, required);
    for (const topic of ['', '(no topic)', 'general chat', '  ']) {
      assert.deepEqual((await edit(hamlet, id, { type: 'stream', to: channel, topic })).body, required, JSON.stringify(topic));
    }
    assert.deepEqual((await edit(hamlet, id, { type: 'stream', to: channel, topic: 'back' })).body, SUCCESS);
    [m] = await list(hamlet);
    assert.deepEqual([m.type, m.to, m.topic], ['stream', channel, 'back']);
  });

  it('bounds content and topic like sent messages', async () => {
    const { hamlet } = t.users;
    const id = await scheduleOk(hamlet, { type: 'channel', to: channel, topic: 'a', content: 'one' });
    assert.deepEqual((await edit(hamlet, id, { topic: 'y'.repeat(61), content: 'z'.repeat(10_001) })).body, SUCCESS);
    const [m] = await list(hamlet);
    assert.equal(m.topic, 'y'.repeat(57) + '...');
    assert.equal((m.content as string).length, 10_000);
    assert.ok((m.content as string).endsWith('\n[message truncated]'));
  });

  it('refuses with Zulip errors: nothing to change, past time, unknown or foreign id (404), missing channel, invalid user', async () => {
    const { hamlet, othello } = t.users;
    const id = await scheduleOk(hamlet, { type: 'direct', to: [othello.id], content: 'one' });
    const notFound = err('Scheduled message does not exist');
    const cases: [TestUser, number, Record<string, unknown>, number, ReturnType<typeof err>][] = [
      [hamlet, id, {}, 400, err('Nothing to change')],
      [hamlet, id, { scheduled_delivery_timestamp: now() }, 400, err('Scheduled delivery time must be in the future.')],
      [hamlet, 99999, { content: 'x' }, 404, notFound],
      [othello, id, { content: 'x' }, 404, notFound],
      [hamlet, id, { type: 'channel', to: 99999, topic: 'x' }, 400, err("Channel with ID '99999' does not exist", 'STREAM_DOES_NOT_EXIST', { stream_id: 99999 })],
      [hamlet, id, { to: [othello.id, 99999] }, 400, err('Invalid user ID 99999')],
      [hamlet, id, { content: '' }, 400, err('Message must not be empty')],
    ];
    for (const [user, sid, params, status, body] of cases) {
      const res = await edit(user, sid, params);
      assert.equal(res.status, status, JSON.stringify(params));
      assert.deepEqual(res.body, body, JSON.stringify(params));
    }
    assert.equal((await list(hamlet))[0].content, 'one');
  });
});

describe('DELETE /scheduled_messages/{scheduled_message_id}', () => {
  it('cancels the message with a remove event; unknown and foreign ids are 404', async () => {
    const { hamlet, othello } = t.users;
    const id = await scheduleOk(hamlet, { type: 'direct', to: [othello.id], content: 'one' });
    const q = await queueFor(hamlet);
    assert.deepEqual((await t.api(othello, 'DELETE', `/scheduled_messages/${id}`)).body, err('Scheduled message does not exist'));
    assert.deepEqual((await t.api(hamlet, 'DELETE', `/scheduled_messages/${id}`)).body, SUCCESS);
    const again = await t.api(hamlet, 'DELETE', `/scheduled_messages/${id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, err('Scheduled message does not exist'));
    assert.deepEqual(await drain(hamlet, q), [{ type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }]);
    assert.deepEqual(await list(hamlet), []);
  });
});

describe('scheduled delivery', () => {
  it('sends each message at its time as its sender, then removes it from the list', async () => {
    const { hamlet, othello } = t.users;
    const early = await scheduleOk(hamlet, { type: 'direct', to: [othello.id], content: 'early', scheduled_delivery_timestamp: now() + 60 });
    const late = await scheduleOk(hamlet, { type: 'channel', to: channel, topic: 'plans', content: 'late', scheduled_delivery_timestamp: now() + 120 });
    const [qh, qo] = [await queueFor(hamlet), await queueFor(othello)];
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 0 });
    offsetMs += 61_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 1, failed: 0 });
    assert.deepEqual((await list(hamlet)).map((m) => m.scheduled_message_id), [late]);
    offsetMs += 60_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 1, failed: 0 });
    assert.deepEqual(await list(hamlet), []);
    const got = await drain(othello, qo);
    assert.deepEqual(
      got.map((e) => [e.type, e.message.content, e.message.sender_id, e.flags]),
      [
        ['message', 'early', hamlet.id, []],
        ['message', 'late', hamlet.id, []],
      ],
    );
    const mine = await drain(hamlet, qh);
    assert.deepEqual(
      mine.map((e) => (e.type === 'message' ? ['message', e.message.content, e.flags] : [e.type, e.op, e.scheduled_message_id])),
      [
        ['message', 'early', ['read']],
        ['scheduled_messages', 'remove', early],
        ['message', 'late', ['read']],
        ['scheduled_messages', 'remove', late],
      ],
    );
    // A delivered message can no longer be edited.
    assert.deepEqual((await edit(hamlet, early, { content: 'x' })).body, err('Scheduled message was already sent'));
  });

  it('the timer sends overdue messages once it runs (as after a restart), up to 10 minutes late', async () => {
    const { hamlet, othello } = t.users;
    await scheduleOk(hamlet, { type: 'direct', to: [othello.id], content: 'overdue', scheduled_delivery_timestamp: now() + 30 });
    offsetMs += 30_000 + 9 * 60_000;
    armScheduledDelivery(t.app);
    for (let i = 0; i < 100 && (await list(hamlet)).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(await list(hamlet), []);
    const last = t.app.db.prepare('SELECT content, sender_id FROM message ORDER BY id DESC LIMIT 1').get();
    assert.deepEqual(last, { content: 'overdue', sender_id: hamlet.id });
  });

  it('a message that cannot be sent turns failed, tells the sender, and goes out again once rescheduled', async () => {
    const { hamlet, othello, owner } = t.users;
    const doomed = await createChannel(t, hamlet, 'later doomed', [hamlet, othello]);
    const id = await scheduleOk(hamlet, { type: 'channel', to: doomed, topic: 't', content: 'to the void', scheduled_delivery_timestamp: now() + 10 });
    assert.equal((await t.api(owner, 'DELETE', `/streams/${doomed}`)).status, 200);
    const q = await queueFor(hamlet);
    offsetMs += 11_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 1 });
    const [m] = await list(hamlet);
    assert.equal(m.failed, true);
    const events = await drain(hamlet, q);
    assert.deepEqual(events[0], { type: 'scheduled_messages', op: 'update', scheduled_message: m });
    // No notification bot in Parley: the sender gets a note to self with Zulip's text.
    assert.equal(events[1].type, 'message');
    assert.equal(events[1].message.sender_id, hamlet.id);
    assert.deepEqual(events[1].message.display_recipient.map((r: { id: number }) => r.id), [hamlet.id]);
    assert.match(events[1].message.content, /was not sent because of the following error:/);
    // An archived channel is found and refused (Zulip's access_stream_for_send_message).
    assert.ok(events[1].message.content.includes("> Not authorized to send to channel 'later doomed'"), events[1].message.content);
    assert.deepEqual(events[1].flags, []);
    assert.equal(events.length, 2);
    const row = t.app.db.prepare('SELECT failure_message FROM scheduled_message WHERE id = ?').get(id) as { failure_message: string };
    assert.equal(row.failure_message, "Not authorized to send to channel 'later doomed'");
    // Not retried while failed.
    offsetMs += 60_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 0 });
    // Editing a failed message needs a new time; rescheduling clears failed.
    assert.deepEqual((await edit(hamlet, id, { content: 'x' })).body, err('Scheduled delivery time must be in the future.'));
    assert.deepEqual((await edit(hamlet, id, { type: 'stream', to: channel, topic: 'rescued', scheduled_delivery_timestamp: now() + 5 })).body, SUCCESS);
    assert.equal((await list(hamlet))[0].failed, false);
    offsetMs += 6_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 1, failed: 0 });
    assert.deepEqual(await list(hamlet), []);
  });

  it('fails when a direct recipient was deactivated', async () => {
    const { hamlet, owner } = t.users;
    const created = await t.api(owner, 'POST', '/users', { email: 'leaving@example.com', password: 'xyzzy-secret-99', full_name: 'Leaving' });
    assert.equal(created.status, 200, created.text);
    const leaving = created.body.user_id as number;
    const id = await scheduleOk(hamlet, { type: 'direct', to: [leaving], content: 'bye', scheduled_delivery_timestamp: now() + 10 });
    assert.equal((await t.api(owner, 'DELETE', `/users/${leaving}`)).status, 200);
    offsetMs += 11_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 1 });
    const row = t.app.db.prepare('SELECT failed, failure_message FROM scheduled_message WHERE id = ?').get(id);
    assert.deepEqual(row, { failed: 1, failure_message: "'leaving@example.com' is no longer using Zulip." });
  });
});

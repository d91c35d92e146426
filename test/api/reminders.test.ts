// Message reminders: POST/GET /reminders, DELETE /reminders/{id}, /register's `reminders`, the
// `reminders` events, and delivery by Notification Bot at the reminder's time (Zulip's
// zerver/tests/test_reminders.py, with the texts of zerver/lib/reminders.py).
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { runDueScheduledMessages } from '../../src/actions/scheduled-messages';
import { renderMessage } from '../../src/lib/render';

// A movable clock: delivery is driven by advancing it and calling runDueScheduledMessages.
let offsetMs = 0;
const clock = { nowMs: () => Date.now() + offsetMs };
const now = () => Math.floor(clock.nowMs() / 1000);

let t: TestServer;
let channel: number;
before(async () => {
  t = await startTestServer({ clock });
  channel = await createChannel(t, t.users.hamlet, 'Verona', [t.users.hamlet, t.users.othello]);
});
after(() => t.close());
beforeEach(() => {
  t.app.db.prepare('DELETE FROM scheduled_message').run();
});

const remind = (user: TestUser, params: Record<string, unknown>) => t.api(user, 'POST', '/reminders', params);
async function remindOk(user: TestUser, messageId: number, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await remind(user, { message_id: messageId, scheduled_delivery_timestamp: now() + 3600, ...extra });
  assert.equal(res.status, 200, res.text);
  return res.body.reminder_id as number;
}
async function list(user: TestUser): Promise<Record<string, unknown>[]> {
  const res = await t.api(user, 'GET', '/reminders');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'reminders', 'result']);
  return res.body.reminders;
}
const mention = (u: TestUser) => `@_**${u.fullName}|${u.id}**`;
const rendered = (user: TestUser, content: string) => renderMessage(t.app, 1, content, { id: user.id } as never).html;
function notificationBotId(): number {
  return (t.app.db.prepare("SELECT id FROM user WHERE email LIKE 'notification-bot@%'").get() as { id: number }).id;
}

function channelText(messageId: number, content: string, note = ''): string {
  const head = note ? `You requested a reminder for the following message. Note:\n > ${note}` : 'You requested a reminder for the following message.';
  return (
    `${head}\n\n${mention(t.users.hamlet)} [said](${t.url}/#narrow/channel/${channel}-Verona/topic/test/near/${messageId}) in [#Verona > test](#narrow/channel/${channel}-Verona/topic/test/with/${messageId}):\n` +
    '```quote\n' +
    content +
    '\n```'
  );
}

function directText(messageId: number, content: string, participants: number[], to: string, note = ''): string {
  const head = note ? `You requested a reminder for the following direct message. Note:\n > ${note}` : 'You requested a reminder for the following direct message.';
  const slug = [...participants].sort((a, b) => a - b).join(',') + (participants.length >= 3 ? '-group' : '');
  return `${head}\n\n${mention(t.users.hamlet)} [said](${t.url}/#narrow/dm/${slug}/near/${messageId}) to ${to}:\n` + '```quote\n' + content + '\n```';
}

describe('POST /reminders', () => {
  it('schedules a reminder for a channel message: the id, the record in GET and /register, an add event to the owner only', async () => {
    const { hamlet, othello } = t.users;
    const [qh, qo] = [await registerQueue(t, hamlet, ['reminders']), await registerQueue(t, othello, ['reminders'])];
    const messageId = await sendToChannel(t, othello, channel, 'test', 'Test message');
    const at = now() + 86400;
    const res = await remind(hamlet, { message_id: messageId, scheduled_delivery_timestamp: at });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...SUCCESS, reminder_id: res.body.reminder_id });
    const content = channelText(messageId, 'Test message').replace(mention(hamlet), mention(othello));
    const record = {
      reminder_id: res.body.reminder_id,
      to: [hamlet.id],
      type: 'private',
      content,
      rendered_content: rendered(hamlet, content),
      scheduled_delivery_timestamp: at,
      failed: false,
      reminder_target_message_id: messageId,
    };
    assert.deepEqual(await list(hamlet), [record]);
    assert.deepEqual(await list(othello), []);
    assert.deepEqual(await queuedEvents(t, hamlet, qh), [{ type: 'reminders', op: 'add', reminders: [record] }]);
    assert.deepEqual(await queuedEvents(t, othello, qo), []);
    const reg = await t.api(hamlet, 'POST', '/register', { fetch_event_types: ['reminders', 'scheduled_messages'] });
    assert.equal(reg.status, 200, reg.text);
    assert.deepEqual(reg.body.reminders, [record]);
    // A reminder is no scheduled message.
    assert.deepEqual(reg.body.scheduled_messages, []);
    assert.deepEqual((await t.api(hamlet, 'GET', '/scheduled_messages')).body, { ...SUCCESS, scheduled_messages: [] });
  });

  it("Zulip's texts: a channel message, a direct message, a group, one's own note to self, with notes", async () => {
    const { hamlet, othello, admin } = t.users;
    const inChannel = await sendToChannel(t, hamlet, channel, 'test', 'Test message');
    const direct = await sendDirect(t, hamlet, [othello], 'Direct words');
    const group = await sendDirect(t, hamlet, [othello, admin], 'Group words');
    const self = await sendDirect(t, hamlet, [hamlet], 'Self words');
    const a = await remindOk(hamlet, inChannel, { scheduled_delivery_timestamp: now() + 10 });
    const b = await remindOk(hamlet, direct, { scheduled_delivery_timestamp: now() + 20, note: '\n\nFollow up  \n' });
    const c = await remindOk(hamlet, group, { scheduled_delivery_timestamp: now() + 30 });
    const d = await remindOk(hamlet, self, { scheduled_delivery_timestamp: now() + 40 });
    const e = await remindOk(hamlet, inChannel, { scheduled_delivery_timestamp: now() + 50, note: '{123}' });
    // A blank note is no note.
    const f = await remindOk(hamlet, inChannel, { scheduled_delivery_timestamp: now() + 60, note: '   ' });
    const got = await list(hamlet);
    assert.deepEqual(
      got.map((r) => r.reminder_id),
      [a, b, c, d, e, f],
    );
    const mentionsOfGroup = [admin, othello].sort((x, y) => x.id - y.id).map(mention).join(' and ');
    assert.deepEqual(
      got.map((r) => r.content),
      [
        channelText(inChannel, 'Test message'),
        directText(direct, 'Direct words', [hamlet.id, othello.id], mention(othello), 'Follow up'),
        directText(group, 'Group words', [hamlet.id, othello.id, admin.id], mentionsOfGroup),
        `You requested a reminder for the following direct message.\n\nYou [sent](${t.url}/#narrow/dm/${hamlet.id}/near/${self}) a note to yourself:\n` + '```quote\nSelf words\n```',
        channelText(inChannel, 'Test message', '{123}'),
        channelText(inChannel, 'Test message'),
      ],
    );
    for (const r of got) assert.equal(r.rendered_content, rendered(hamlet, r.content as string));
    // The rendered note is a quote, the message a quote block; the organization's own link is made relative.
    assert.equal(
      got[1].rendered_content,
      '<p>You requested a reminder for the following direct message. Note:</p>\n<blockquote>\n<p>Follow up</p>\n</blockquote>\n' +
        `<p><span class="user-mention silent" data-user-id="${hamlet.id}">King Hamlet</span> <a href="#narrow/dm/${[hamlet.id, othello.id].sort((x, y) => x - y).join(',')}/near/${direct}">said</a> to ` +
        `<span class="user-mention silent" data-user-id="${othello.id}">Othello</span>:</p>\n<blockquote>\n<p>Direct words</p>\n</blockquote>`,
    );
  });

  it('polls and to-do lists are named, not quoted; a long message is truncated to fit', async () => {
    const { hamlet, othello } = t.users;
    const poll = await sendDirect(t, hamlet, [othello], '/poll What is your favorite color?');
    const todo = await sendToChannel(t, hamlet, channel, 'test', '/todo List of tasks');
    const long = await sendDirect(t, hamlet, [othello], 'x'.repeat(10000));
    const ownPoll = await sendDirect(t, hamlet, [hamlet], '/poll Test poll');
    const ownTodo = await sendDirect(t, hamlet, [hamlet], '/todo Test todo list');
    await remindOk(hamlet, poll, { scheduled_delivery_timestamp: now() + 10 });
    await remindOk(hamlet, todo, { scheduled_delivery_timestamp: now() + 20 });
    await remindOk(hamlet, long, { scheduled_delivery_timestamp: now() + 30 });
    await remindOk(hamlet, ownPoll, { scheduled_delivery_timestamp: now() + 40 });
    await remindOk(hamlet, ownTodo, { scheduled_delivery_timestamp: now() + 50 });
    const slug = [hamlet.id, othello.id].sort((x, y) => x - y).join(',');
    const [p, td, l, op, ot] = (await list(hamlet)).map((r) => r.content as string);
    const head = 'You requested a reminder for the following direct message.\n\n';
    assert.equal(op, `${head}You [sent](${t.url}/#narrow/dm/${hamlet.id}/near/${ownPoll}) yourself a poll.`);
    assert.equal(ot, `${head}You [sent](${t.url}/#narrow/dm/${hamlet.id}/near/${ownTodo}) yourself a todo list.`);
    assert.equal(p, `You requested a reminder for the following direct message.\n\n${mention(hamlet)} [sent](${t.url}/#narrow/dm/${slug}/near/${poll}) a poll to ${mention(othello)}.`);
    assert.equal(
      td,
      `You requested a reminder for the following message.\n\n${mention(hamlet)} [sent](${t.url}/#narrow/channel/${channel}-Verona/topic/test/near/${todo}) a todo list in [#Verona > test](#narrow/channel/${channel}-Verona/topic/test/with/${todo}).`,
    );
    const wrapper = directText(long, '\n[message truncated]', [hamlet.id, othello.id], mention(othello)).length;
    assert.equal(l, directText(long, 'x'.repeat(10000 - wrapper) + '\n[message truncated]', [hamlet.id, othello.id], mention(othello)));
    assert.equal(l.length, 10000);
  });

  it('names with Markdown characters are escaped in the link text', async () => {
    const { hamlet } = t.users;
    const odd = await createChannel(t, hamlet, 'a*b', [hamlet]);
    const id = await sendToChannel(t, hamlet, odd, 'x > y', 'odd');
    await remindOk(hamlet, id);
    const [r] = await list(hamlet);
    assert.ok(
      (r.content as string).includes(`in [#a&#42;b > x &gt; y](#narrow/channel/${odd}-a*b/topic/x.20.3E.20y/with/${id}):\n`),
      r.content as string,
    );
  });

  it("errors: a time not in the future, a message one cannot read, a note too long, Zulip's argument errors", async () => {
    const { hamlet, othello, guest, admin } = t.users;
    const mine = await sendToChannel(t, hamlet, channel, 'test', 'visible');
    const secret = await createChannel(t, admin, 'secret', [admin], { invite_only: true });
    const hidden = await sendToChannel(t, admin, secret, 'x', 'hidden');
    const private1 = await sendDirect(t, admin, [othello], 'not for hamlet');
    const cases: [TestUser, Record<string, unknown>, number, unknown][] = [
      [hamlet, { message_id: mine, scheduled_delivery_timestamp: now() - 86400 }, 400, err('Scheduled delivery time must be in the future.')],
      [hamlet, { message_id: mine, scheduled_delivery_timestamp: now() }, 400, err('Scheduled delivery time must be in the future.')],
      [hamlet, { message_id: 123456789, scheduled_delivery_timestamp: now() + 60 }, 400, err('Invalid message(s)')],
      [hamlet, { message_id: hidden, scheduled_delivery_timestamp: now() + 60 }, 400, err('Invalid message(s)')],
      [hamlet, { message_id: private1, scheduled_delivery_timestamp: now() + 60 }, 400, err('Invalid message(s)')],
      // A guest reads only the channels they are subscribed to.
      [guest, { message_id: mine, scheduled_delivery_timestamp: now() + 60 }, 400, err('Invalid message(s)')],
      [hamlet, { message_id: mine, scheduled_delivery_timestamp: now() + 60, note: 'n'.repeat(1001) }, 400, err('Maximum reminder note length: 1000 characters')],
      [hamlet, { message_id: mine, scheduled_delivery_timestamp: now() + 60, note: 'a\u0000b' }, 400, err('Message must not contain null bytes')],
      [hamlet, { scheduled_delivery_timestamp: now() + 60 }, 400, err("Missing 'message_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'message_id' })],
      [hamlet, { message_id: mine }, 400, err("Missing 'scheduled_delivery_timestamp' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'scheduled_delivery_timestamp' })],
    ];
    for (const [user, params, status, body] of cases) {
      const res = await remind(user, params);
      assert.deepEqual({ status: res.status, body: res.body }, { status, body }, JSON.stringify(params).slice(0, 200));
    }
    // Wrong types get the parameter layer's errors, never a 500.
    for (const params of [
      { message_id: 'abc', scheduled_delivery_timestamp: now() + 60 },
      { message_id: '[1]', scheduled_delivery_timestamp: now() + 60 },
      { message_id: mine, scheduled_delivery_timestamp: '"soon"' },
      { message_id: mine, scheduled_delivery_timestamp: 1e300 },
      { message_id: -1, scheduled_delivery_timestamp: now() + 60 },
    ]) {
      const res = await remind(hamlet, params);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.result, 'error');
    }
    // Nothing was stored by any of them.
    assert.deepEqual(await list(hamlet), []);
    assert.deepEqual(await list(guest), []);
    // A note of exactly the limit (trailing whitespace not counted) is fine.
    await remindOk(hamlet, mine, { note: 'n'.repeat(1000) + '   \n' });
    assert.equal((await list(hamlet)).length, 1);
  });

  it('a bot and a guest may set reminders on messages they can read; a deactivated user cannot', async () => {
    const { hamlet, guest, bot, owner, othello } = t.users;
    const open = await createChannel(t, hamlet, 'guests too', [hamlet, guest, bot]);
    const id = await sendToChannel(t, hamlet, open, 'test', 'for all');
    const g = await remindOk(guest, id);
    const b = await remindOk(bot, id);
    assert.deepEqual((await list(guest)).map((r) => r.reminder_id), [g]);
    assert.deepEqual((await list(bot)).map((r) => r.reminder_id), [b]);
    const leaving = await t.api(owner, 'POST', '/users', { email: 'gone@example.com', password: 'xyzzy-secret-99', full_name: 'Gone' });
    assert.equal(leaving.status, 200, leaving.text);
    const gone = { id: leaving.body.user_id, email: 'gone@example.com', apiKey: '', password: 'xyzzy-secret-99', fullName: 'Gone' };
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: gone.email, password: gone.password });
    gone.apiKey = key.body.api_key;
    const dm = await sendDirect(t, othello, [gone as TestUser], 'hi');
    assert.equal((await t.api(owner, 'DELETE', `/users/${gone.id}`)).status, 200);
    const res = await remind(gone as TestUser, { message_id: dm, scheduled_delivery_timestamp: now() + 60 });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
  });
});

describe('DELETE /reminders/{reminder_id}', () => {
  it("deletes the owner's reminder with a remove event; another user's, a scheduled message's or a missing id is 404", async () => {
    const { hamlet, othello } = t.users;
    const id = await remindOk(hamlet, await sendToChannel(t, hamlet, channel, 'test', 'x'));
    const later = await t.api(hamlet, 'POST', '/scheduled_messages', { type: 'direct', to: [othello.id], content: 'later', scheduled_delivery_timestamp: now() + 60 });
    assert.equal(later.status, 200, later.text);
    // One id space: the scheduled message got the next id.
    assert.equal(later.body.scheduled_message_id, id + 1);
    const q = await registerQueue(t, hamlet, ['reminders', 'scheduled_messages']);
    const notFound = { status: 404, body: err('Reminder does not exist') };
    for (const [user, path] of [
      [othello, `/reminders/${id}`],
      [hamlet, `/reminders/${later.body.scheduled_message_id}`],
      [hamlet, '/reminders/999999'],
    ] as const) {
      const res = await t.api(user, 'DELETE', path);
      assert.deepEqual({ status: res.status, body: res.body }, notFound, path);
    }
    // Nor is a reminder reachable as a scheduled message.
    for (const method of ['DELETE', 'PATCH']) {
      const res = await t.api(hamlet, method, `/scheduled_messages/${id}`, method === 'PATCH' ? { content: 'changed' } : {});
      assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: err('Scheduled message does not exist') });
    }
    assert.equal((await list(hamlet)).length, 1);
    assert.deepEqual((await t.api(hamlet, 'DELETE', `/reminders/${id}`)).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, hamlet, q), [{ type: 'reminders', op: 'remove', reminder_id: id }]);
    assert.deepEqual(await list(hamlet), []);
    const again = await t.api(hamlet, 'DELETE', `/reminders/${id}`);
    assert.deepEqual({ status: again.status, body: again.body }, notFound);
    // The scheduled message is untouched.
    assert.equal((await t.api(hamlet, 'GET', '/scheduled_messages')).body.scheduled_messages.length, 1);
  });

  it('ids that are not ids never reach a reminder, and never give a 500', async () => {
    for (const path of ['/reminders/-1', '/reminders/abc', '/reminders/1.5', '/reminders/99999999999999999999999']) {
      const res = await t.api(t.users.hamlet, 'DELETE', path);
      assert.ok(res.status === 400 || res.status === 404, `${path}: ${res.status} ${res.text}`);
      assert.equal(res.body.result, 'error', path);
    }
  });
});

describe('reminder delivery', () => {
  async function deliveredTo(user: TestUser, q: string) {
    return (await queuedEvents(t, user, q)).map((e) =>
      e.type === 'message' ? { type: 'message', sender_id: e.message.sender_id, to: e.message.display_recipient.map((r: { id: number }) => r.id), content: e.message.content, flags: e.flags } : e,
    );
  }

  it('Notification Bot sends the text at its time, built from the message as it is then; a remove event follows', async () => {
    const { hamlet, othello } = t.users;
    const messageId = await sendToChannel(t, hamlet, channel, 'test', 'first words');
    const id = await remindOk(hamlet, messageId, { scheduled_delivery_timestamp: now() + 60, note: 'check' });
    const edited = await t.api(hamlet, 'PATCH', `/messages/${messageId}`, { content: 'edited words' });
    assert.equal(edited.status, 200, edited.text);
    const [qh, qo] = [await registerQueue(t, hamlet, ['reminders', 'message']), await registerQueue(t, othello, ['reminders', 'message'])];
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 0 });
    offsetMs += 61_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 1, failed: 0 });
    const bot = notificationBotId();
    assert.deepEqual(await deliveredTo(hamlet, qh), [
      { type: 'message', sender_id: bot, to: [hamlet.id, bot].sort((a, b) => a - b), content: channelText(messageId, 'edited words', 'check'), flags: [] },
      { type: 'reminders', op: 'remove', reminder_id: id },
    ]);
    assert.deepEqual(await deliveredTo(othello, qo), []);
    assert.deepEqual(await list(hamlet), []);
    const row = t.app.db.prepare('SELECT delivered, failed, delivered_message_id FROM scheduled_message WHERE id = ?').get(id) as Record<string, number>;
    assert.equal(row.delivered, 1);
    assert.equal(row.failed, 0);
    const sent = t.app.db.prepare('SELECT sender_id, content FROM message WHERE id = ?').get(row.delivered_message_id);
    assert.deepEqual(sent, { sender_id: bot, content: channelText(messageId, 'edited words', 'check') });
    // Delivered once only.
    offsetMs += 60_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 0 });
  });

  it('a deleted message, or one the owner can no longer read, is recalled with the text stored when the reminder was set', async () => {
    const { hamlet, admin } = t.users;
    const doomed = await sendToChannel(t, hamlet, channel, 'test', 'soon deleted');
    const a = await remindOk(hamlet, doomed, { scheduled_delivery_timestamp: now() + 10 });
    // Hamlet reads a public channel's history without being subscribed, until it turns private.
    const closing = await createChannel(t, admin, 'closing later', [admin]);
    const kept = await sendToChannel(t, admin, closing, 'x', 'was visible');
    const b = await remindOk(hamlet, kept, { scheduled_delivery_timestamp: now() + 20 });
    const stored = Object.fromEntries((await list(hamlet)).map((r) => [r.reminder_id, r.content]));
    assert.equal((await t.api(admin, 'DELETE', `/messages/${doomed}`)).status, 200);
    const closed = await t.api(admin, 'PATCH', `/streams/${closing}`, { is_private: true });
    assert.equal(closed.status, 200, closed.text);
    assert.deepEqual((await t.api(hamlet, 'GET', `/messages/${kept}`)).body, err('Invalid message(s)'));
    // Editing after access was lost changes nothing for the reminder.
    assert.equal((await t.api(admin, 'PATCH', `/messages/${kept}`, { content: 'changed since' })).status, 200);
    const q = await registerQueue(t, hamlet, ['reminders', 'message']);
    offsetMs += 21_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 2, failed: 0 });
    const bot = notificationBotId();
    const to = [hamlet.id, bot].sort((x, y) => x - y);
    assert.deepEqual(await deliveredTo(hamlet, q), [
      { type: 'message', sender_id: bot, to, content: stored[a], flags: [] },
      { type: 'reminders', op: 'remove', reminder_id: a },
      { type: 'message', sender_id: bot, to, content: stored[b], flags: [] },
      { type: 'reminders', op: 'remove', reminder_id: b },
    ]);
  });

  it('an owner deactivated by then: the reminder fails, with no event and no notice', async () => {
    const { owner, othello } = t.users;
    const created = await t.api(owner, 'POST', '/users', { email: 'forgetful@example.com', password: 'xyzzy-secret-99', full_name: 'Forgetful' });
    assert.equal(created.status, 200, created.text);
    const userId = created.body.user_id as number;
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'forgetful@example.com', password: 'xyzzy-secret-99' });
    const forgetful: TestUser = { id: userId, email: 'forgetful@example.com', apiKey: key.body.api_key, password: 'xyzzy-secret-99', fullName: 'Forgetful' };
    const dm = await sendDirect(t, othello, [forgetful], 'remember me');
    const id = await remindOk(forgetful, dm, { scheduled_delivery_timestamp: now() + 10 });
    const messagesBefore = (t.app.db.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n;
    assert.equal((await t.api(owner, 'DELETE', `/users/${userId}`)).status, 200);
    offsetMs += 11_000;
    assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 1 });
    assert.deepEqual(t.app.db.prepare('SELECT delivered, failed, failure_message FROM scheduled_message WHERE id = ?').get(id), {
      delivered: 0,
      failed: 1,
      failure_message: 'Account is deactivated',
    });
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n, messagesBefore);
  });

  it('an organization deactivated by then: the reminder fails with its error, and nothing is sent', async () => {
    const { hamlet } = t.users;
    const id = await remindOk(hamlet, await sendToChannel(t, hamlet, channel, 'test', 'org'), { scheduled_delivery_timestamp: now() + 10 });
    const messagesBefore = (t.app.db.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n;
    t.app.db.prepare('UPDATE realm SET deactivated = 1').run();
    try {
      offsetMs += 11_000;
      assert.deepEqual(runDueScheduledMessages(t.app), { delivered: 0, failed: 1 });
    } finally {
      t.app.db.prepare('UPDATE realm SET deactivated = 0').run();
    }
    assert.deepEqual(t.app.db.prepare('SELECT delivered, failed, failure_message FROM scheduled_message WHERE id = ?').get(id), {
      delivered: 0,
      failed: 1,
      failure_message: 'This organization has been deactivated',
    });
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM message').get() as { n: number }).n, messagesBefore);
    // A failed reminder is still listed (failed: true) until deleted, as Zulip lists it.
    const [r] = await list(hamlet);
    assert.deepEqual([r.reminder_id, r.failed], [id, true]);
    assert.deepEqual((await t.api(hamlet, 'DELETE', `/reminders/${id}`)).body, SUCCESS);
  });
});

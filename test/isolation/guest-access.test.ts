// Guests limited by can_access_all_users_group (role:members) against the paths that used to let them
// reach users hidden from them: sending direct messages (now, later, or as typing notifications) to
// them, reactions that named the reacting user, and membership questions about them.
//
// Zulip's rules (zerver/lib/users.py): a guest outside the group can access itself, every bot, the
// subscribers of its channels and the people it shares a direct-message conversation with. It may
// not start a conversation with anyone else (check_sender_can_access_recipients); a conversation
// someone else starts with it makes that person accessible, and the guest hears of them as a
// realm_user add (get_recipients_for_user_creation_events).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, systemGroups, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

let t: TestServer;
let guestChannel: number;
const NO_ACCESS = err('You do not have permission to access some of the recipients.');

before(async () => {
  t = await startTestServer();
  const u = t.users;
  // The guest shares a channel with Othello only; the bot is accessible as every bot is.
  guestChannel = await createChannel(t, u.owner, 'guests welcome', [u.guest, u.othello]);
  t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(systemGroups(t)['role:members']);
});
after(() => t.close());

/** The user object a guest gets for `id` from GET /users/{id}, as a realm_user add event must carry it. */
async function userAsGuestSees(id: number): Promise<Record<string, unknown>> {
  const res = await t.api(t.users.guest, 'GET', `/users/${id}`, { client_gravatar: false, include_custom_profile_fields: true });
  assert.equal(res.status, 200, res.text);
  return res.body.user;
}

describe('direct messages from a guest to users it cannot access', () => {
  it('POST /messages refuses a conversation with an inaccessible user, alone or in a group, by id or email', async () => {
    const u = t.users;
    for (const to of [[u.admin.id], [u.othello.id, u.admin.id], [u.admin.email]]) {
      const res = await t.api(u.guest, 'POST', '/messages', { type: 'direct', to, content: 'let me in' });
      assert.deepEqual(res.body, NO_ACCESS, JSON.stringify(to));
    }
    // Nothing was sent, and the admin stays hidden.
    const profile = await t.api(u.guest, 'GET', `/users/${u.admin.id}`);
    assert.deepEqual(profile.body, err('Insufficient permission'));
    const list = await t.api(u.guest, 'GET', '/users', { user_ids: [u.admin.id] });
    assert.equal(list.body.members[0].full_name, 'Unknown user');
    const inbox = await t.api(u.admin, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'dm', operand: [u.guest.id] }] });
    assert.deepEqual(inbox.body.messages, []);
  });

  it('POST /messages still reaches accessible users and bots', async () => {
    const u = t.users;
    for (const to of [[u.othello.id], [u.bot.id], [u.guest.id]]) {
      const res = await t.api(u.guest, 'POST', '/messages', { type: 'direct', to, content: 'hello' });
      assert.equal(res.status, 200, `${JSON.stringify(to)}: ${res.text}`);
    }
  });

  it('POST /scheduled_messages refuses an inaccessible recipient and stores nothing', async () => {
    const u = t.users;
    const at = Math.floor(Date.now() / 1000) + 3600;
    const res = await t.api(u.guest, 'POST', '/scheduled_messages', { type: 'direct', to: [u.admin.id], content: 'later', scheduled_delivery_timestamp: at });
    assert.deepEqual(res.body, NO_ACCESS);
    const list = await t.api(u.guest, 'GET', '/scheduled_messages');
    assert.deepEqual(list.body, { ...SUCCESS, scheduled_messages: [] });
  });

  it('POST /typing refuses an inaccessible recipient, who hears nothing', async () => {
    const u = t.users;
    const queue = await registerQueue(t, u.admin, ['typing']);
    const res = await t.api(u.guest, 'POST', '/typing', { op: 'start', to: [u.admin.id] });
    assert.deepEqual(res.body, NO_ACCESS);
    assert.deepEqual(await queuedEvents(t, u.admin, queue), []);
    const ok = await t.api(u.guest, 'POST', '/typing', { op: 'start', to: [u.othello.id] });
    assert.deepEqual(ok.body, SUCCESS);
  });
});

describe('a direct message the guest receives', () => {
  it('makes its sender accessible, announced to the guest as a realm_user add before the message', async () => {
    const u = t.users;
    const queue = await registerQueue(t, u.guest, ['realm_user', 'message']);
    const id = await sendDirect(t, u.hamlet, [u.guest], 'hello from outside');
    const events = await queuedEvents(t, u.guest, queue);
    assert.deepEqual(
      events.map((e) => e.type),
      ['realm_user', 'message'],
    );
    assert.equal(events[1].message.id, id);
    // The person is the full record the guest may now read (not a placeholder).
    assert.deepEqual(events[0], { type: 'realm_user', op: 'add', person: await userAsGuestSees(u.hamlet.id) });
    assert.equal(events[0].person.full_name, 'King Hamlet');
    // And the guest may answer.
    const reply = await t.api(u.guest, 'POST', '/messages', { type: 'direct', to: [u.hamlet.id], content: 'hello back' });
    assert.equal(reply.status, 200, reply.text);
  });

  it('a group conversation makes every participant accessible to the guest', async () => {
    const u = t.users;
    const queue = await registerQueue(t, u.guest, ['realm_user']);
    await sendDirect(t, u.moderator, [u.guest, u.owner], 'a group');
    const events = await queuedEvents(t, u.guest, queue);
    const added = events.map((e) => e.person.user_id).sort((a: number, b: number) => a - b);
    assert.deepEqual(added, [u.owner.id, u.moderator.id].sort((a, b) => a - b));
    for (const e of events) assert.deepEqual(e, { type: 'realm_user', op: 'add', person: await userAsGuestSees(e.person.user_id) });
  });

  it('members hear nothing extra: they could access everyone already', async () => {
    const u = t.users;
    const queue = await registerQueue(t, u.othello, ['realm_user']);
    await sendDirect(t, u.admin, [u.othello], 'plain');
    assert.deepEqual(await queuedEvents(t, u.othello, queue), []);
  });
});

describe('reactions name the reacting user by id only', () => {
  it('GET /messages and reaction events carry user_id, not the legacy user object', async () => {
    const u = t.users;
    const id = await sendToChannel(t, u.othello, guestChannel, 'reactions', 'react here');
    const queue = await registerQueue(t, u.guest, ['reaction']);
    // The admin is not subscribed (a public channel) and stays hidden from the guest.
    const res = await t.api(u.admin, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus' });
    assert.deepEqual(res.body, SUCCESS);
    const reaction = { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' };
    assert.deepEqual(await queuedEvents(t, u.guest, queue), [{ type: 'reaction', op: 'add', user_id: u.admin.id, message_id: id, ...reaction }]);
    const fetched = await t.api(u.guest, 'GET', '/messages', { message_ids: [id] });
    assert.equal(fetched.status, 200, fetched.text);
    assert.deepEqual(fetched.body.messages[0].reactions, [{ ...reaction, user_id: u.admin.id }]);
    const one = await t.api(u.guest, 'GET', `/messages/${id}`);
    assert.deepEqual(one.body.message.reactions, [{ ...reaction, user_id: u.admin.id }]);
  });
});

describe('GET /users/{user_id}/subscriptions/{stream_id}', () => {
  it('refuses a guest asking about a user it cannot access, as GET /users/{id} does', async () => {
    const u = t.users;
    const hidden = await t.api(u.guest, 'GET', `/users/${u.admin.id}/subscriptions/${guestChannel}`);
    assert.deepEqual(hidden.body, err('Insufficient permission'));
    const visible = await t.api(u.guest, 'GET', `/users/${u.othello.id}/subscriptions/${guestChannel}`);
    assert.deepEqual(visible.body, { ...SUCCESS, is_subscribed: true });
    const member = await t.api(u.othello, 'GET', `/users/${u.admin.id}/subscriptions/${guestChannel}`);
    assert.deepEqual(member.body, { ...SUCCESS, is_subscribed: false });
  });
});

describe('changes to users the guest cannot access', () => {
  it('are announced to those who can access the user only (Zulip: get_user_ids_who_can_access_user)', async () => {
    const u = t.users;
    // Iago (admin) shares nothing with the guest; Othello shares its channel.
    const hidden = await t.api(u.guest, 'GET', `/users/${u.admin.id}`);
    assert.deepEqual(hidden.body, err('Insufficient permission'));
    const guestQueue = await registerQueue(t, u.guest, ['realm_user', 'user_status']);
    const memberQueue = await registerQueue(t, u.hamlet, ['realm_user', 'user_status']);
    for (const [user, change] of [
      [u.admin, { full_name: 'Iago the Hidden' }],
      [u.admin, { timezone: 'Europe/Rome' }],
      [u.admin, { presence_enabled: false }],
      [u.othello, { full_name: 'Othello the Seen' }],
    ] as const) {
      const res = await t.api(user, 'PATCH', '/settings', change);
      assert.equal(res.status, 200, res.text);
    }
    const renamed = await t.api(u.owner, 'PATCH', `/users/${u.admin.id}`, { full_name: 'Iago Again' });
    assert.equal(renamed.status, 200, renamed.text);
    const toGuest = await queuedEvents(t, u.guest, guestQueue);
    assert.deepEqual(toGuest, [{ type: 'realm_user', op: 'update', person: { user_id: u.othello.id, full_name: 'Othello the Seen' } }]);
    const toMember = await queuedEvents(t, u.hamlet, memberQueue);
    assert.deepEqual(
      toMember.map((e) => e.person?.user_id ?? e.user_id),
      [u.admin.id, u.admin.id, u.admin.id, u.othello.id, u.admin.id],
    );
  });
});

describe('messages from senders the guest cannot access', () => {
  it('name an "Unknown user" with the placeholder address and avatar, live and fetched (Zulip: can_access_sender)', async () => {
    const u = t.users;
    // The admin is not subscribed to the guest's channel (a public one) and shares nothing with the guest; it posts there.
    const name = (await t.api(u.othello, 'GET', `/users/${u.admin.id}`)).body.user.full_name;
    const queues = { guest: await registerQueue(t, u.guest, ['message']), othello: await registerQueue(t, u.othello, ['message']) };
    const id = await sendToChannel(t, u.admin, guestChannel, 'visitors', 'hello from afar');
    const hidden = { sender_full_name: 'Unknown user', sender_email: `user${u.admin.id}@${new URL(t.url).hostname}`, avatar_url: '/static/images/unknown-user-avatar.png' };
    const pick = (m: Record<string, unknown>) => ({ sender_full_name: m.sender_full_name, sender_email: m.sender_email, avatar_url: m.avatar_url });
    const [live] = await queuedEvents(t, u.guest, queues.guest);
    assert.deepEqual([live.message.id, pick(live.message)], [id, hidden]);
    const fetched = await t.api(u.guest, 'GET', '/messages', { message_ids: [id] });
    assert.deepEqual(pick(fetched.body.messages[0]), hidden);
    const one = await t.api(u.guest, 'GET', `/messages/${id}`);
    assert.deepEqual(pick(one.body.message), hidden);
    assert.ok(!JSON.stringify([live, fetched.body, one.body]).includes(name), 'the name is nowhere');
    // A member sees the sender.
    const [seen] = await queuedEvents(t, u.othello, queues.othello);
    assert.deepEqual([seen.message.sender_full_name, seen.message.sender_email], [name, u.admin.email]);
  });
});

describe('typing notifications a guest receives', () => {
  it('name the people it may not access by their placeholder address only, as their messages would', async () => {
    const u = t.users;
    const host = new URL(t.url).hostname;
    const register = async (user: typeof u.guest) => {
      const res = await t.api(user, 'POST', '/register', {
        event_types: ['typing'],
        fetch_event_types: [],
        client_capabilities: { notification_settings_null: true, stream_typing_notifications: true },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.queue_id as string;
    };
    // The admin shares nothing with the guest; typing in the guest's (public) channel reaches it.
    const [qGuest, qOthello] = [await register(u.guest), await register(u.othello)];
    assert.deepEqual((await t.api(u.admin, 'POST', '/typing', { type: 'channel', op: 'start', stream_id: guestChannel, topic: 'visitors' })).body, SUCCESS);
    const base = { type: 'typing', op: 'start', message_type: 'stream', stream_id: guestChannel, topic: 'visitors' };
    assert.deepEqual(await queuedEvents(t, u.guest, qGuest), [{ ...base, sender: { user_id: u.admin.id, email: `user${u.admin.id}@${host}` } }]);
    assert.deepEqual(await queuedEvents(t, u.othello, qOthello), [{ ...base, sender: { user_id: u.admin.id, email: u.admin.email } }]);

    // A member the guest has no conversation with starts typing to it and the admin: no message yet,
    // so neither becomes accessible; the guest sees itself as it is.
    const made = await t.api(u.owner, 'POST', '/users', { email: 'typist@example.com', password: 'typist-password', full_name: 'Typist' });
    assert.equal(made.status, 200, made.text);
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'typist@example.com', password: 'typist-password' });
    const typist = { id: made.body.user_id, email: 'typist@example.com', apiKey: key.body.api_key, password: '', fullName: 'Typist' };
    const qAdmin = await register(u.admin);
    assert.deepEqual((await t.api(typist, 'POST', '/typing', { op: 'start', to: [u.guest.id, u.admin.id] })).body, SUCCESS);
    const people = (hide: boolean) => ({
      type: 'typing',
      op: 'start',
      message_type: 'direct',
      sender: { user_id: typist.id, email: hide ? `user${typist.id}@${host}` : typist.email },
      recipients: [
        { user_id: u.guest.id, email: u.guest.email },
        { user_id: u.admin.id, email: hide ? `user${u.admin.id}@${host}` : u.admin.email },
        { user_id: typist.id, email: hide ? `user${typist.id}@${host}` : typist.email },
      ],
    });
    const direct = (events: any[]) => events.filter((e) => e.message_type === 'direct');
    assert.deepEqual(direct(await queuedEvents(t, u.guest, qGuest)), [people(true)]);
    assert.deepEqual(await queuedEvents(t, u.admin, qAdmin), [people(false)]);
    const profile = await t.api(u.guest, 'GET', `/users/${typist.id}`);
    assert.deepEqual(profile.body, err('Insufficient permission'));
  });
});

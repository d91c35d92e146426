import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';

let t: TestServer;
let channel: number;
before(async () => {
  t = await startTestServer();
  channel = await createChannel(t, t.users.owner, 'mutes', [t.users.hamlet, t.users.othello, t.users.moderator]);
});
after(() => t.close());

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);
const mute = (u: TestUser, id: number) => t.api(u, 'POST', `/users/me/muted_users/${id}`);
const unmute = (u: TestUser, id: number) => t.api(u, 'DELETE', `/users/me/muted_users/${id}`);
const flagsOf = async (u: TestUser, id: number) =>
  (await t.api(u, 'GET', '/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [] })).body.messages[0].flags;


describe('POST /users/me/muted_users/{muted_user_id}', () => {
  it('mutes, marks the muted user’s unread messages read, and sends both events', async () => {
    const unread = await sendToChannel(t, t.users.othello, channel, 'talk', 'before the mute');
    const q = await queue(t.users.hamlet, ['muted_users', 'update_message_flags']);
    const before = Math.floor(Date.now() / 1000);
    assert.deepEqual((await mute(t.users.hamlet, t.users.othello.id)).body, SUCCESS);
    const evs = await events(t.users.hamlet, q);
    assert.equal(evs.length, 2);
    assert.deepEqual(evs[0], { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [unread], all: false });
    assert.equal(evs[1].type, 'muted_users');
    assert.deepEqual(evs[1].muted_users.map((m: any) => m.id), [t.users.othello.id]);
    assert.ok(evs[1].muted_users[0].timestamp >= before - 1);
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['muted_users'] });
    assert.deepEqual(reg.body.muted_users, evs[1].muted_users);
    assert.deepEqual(await flagsOf(t.users.hamlet, unread), ['read']);
  });

  it('delivers new messages from muted senders already read', async () => {
    const q = await queue(t.users.hamlet, ['message']);
    const id = await sendToChannel(t, t.users.othello, channel, 'talk', 'after the mute');
    const dm = await sendDirect(t, t.users.othello, [t.users.hamlet], 'psst');
    const evs = await events(t.users.hamlet, q);
    assert.deepEqual(evs.map((e) => [e.message.id, e.flags]), [
      [id, ['read']],
      [dm, ['read']],
    ]);
    assert.deepEqual(await flagsOf(t.users.hamlet, id), ['read']);
    // Other recipients are not affected.
    assert.deepEqual(await flagsOf(t.users.moderator, id), []);
  });

  it('mutes bots and deactivated users too', async () => {
    assert.deepEqual((await mute(t.users.hamlet, t.users.bot.id)).body, SUCCESS);
  });

  it('refuses self, duplicates and unknown users', async () => {
    assert.deepEqual((await mute(t.users.hamlet, t.users.hamlet.id)).body, err('Cannot mute self'));
    assert.deepEqual((await mute(t.users.hamlet, t.users.othello.id)).body, err('User already muted'));
    assert.deepEqual((await mute(t.users.hamlet, 99999)).body, err('No such user'));
  });
});

describe('DELETE /users/me/muted_users/{muted_user_id}', () => {
  it('unmutes and sends the remaining list', async () => {
    const q = await queue(t.users.hamlet, ['muted_users']);
    assert.deepEqual((await unmute(t.users.hamlet, t.users.othello.id)).body, SUCCESS);
    const evs = await events(t.users.hamlet, q);
    assert.deepEqual(evs.map((e) => [e.type, e.muted_users.map((m: any) => m.id)]), [['muted_users', [t.users.bot.id]]]);
    const id = await sendToChannel(t, t.users.othello, channel, 'talk', 'unmuted again');
    assert.deepEqual(await flagsOf(t.users.hamlet, id), []);
  });

  it('refuses users who are not muted and unknown users', async () => {
    assert.deepEqual((await unmute(t.users.hamlet, t.users.othello.id)).body, err('User is not muted'));
    assert.deepEqual((await unmute(t.users.hamlet, 99999)).body, err('No such user'));
  });
});

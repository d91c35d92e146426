import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { createChannel, err, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);

describe('GET /users/{user_id}/channels', () => {
  it('lists the channels the user is subscribed to that the caller can see', async () => {
    const open = await createChannel(t, t.users.owner, 'open', [t.users.hamlet, t.users.othello]);
    const secret = await createChannel(t, t.users.owner, 'secret', [t.users.hamlet], { invite_only: true });
    const shared = await createChannel(t, t.users.owner, 'shared-secret', [t.users.hamlet, t.users.othello], { invite_only: true });
    const mine = (await t.api(t.users.hamlet, 'GET', `/users/${t.users.hamlet.id}/channels`)).body;
    assert.deepEqual(mine, { ...SUCCESS, subscribed_channel_ids: [open, secret, shared] });
    // Othello is not in "secret": it is not revealed to him.
    assert.deepEqual((await t.api(t.users.othello, 'GET', `/users/${t.users.hamlet.id}/channels`)).body, {
      ...SUCCESS,
      subscribed_channel_ids: [open, shared],
    });
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', `/users/${t.users.guest.id}/channels`)).body, { ...SUCCESS, subscribed_channel_ids: [] });
  });

  it('answers No such user for unknown users', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', '/users/99999/channels')).body, err('No such user'));
  });
});

describe('GET /bots/{bot_id}/api_key', () => {
  it('gives the owner and administrators the key', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'GET', `/bots/${t.users.bot.id}/api_key`)).body, { ...SUCCESS, api_key: t.users.bot.apiKey });
    assert.deepEqual((await t.api(t.users.admin, 'GET', `/bots/${t.users.bot.id}/api_key`)).body, { ...SUCCESS, api_key: t.users.bot.apiKey });
  });

  it('refuses others and non-bots', async () => {
    assert.deepEqual((await t.api(t.users.othello, 'GET', `/bots/${t.users.bot.id}/api_key`)).body, err('Insufficient permission'));
    assert.deepEqual((await t.api(t.users.admin, 'GET', `/bots/${t.users.hamlet.id}/api_key`)).body, err('No such bot'));
    assert.deepEqual((await t.api(t.users.admin, 'GET', '/bots/99999/api_key')).body, err('No such bot'));
  });

  it('refuses bots, their own key included, and guests', async () => {
    assert.deepEqual((await t.api(t.users.bot, 'GET', `/bots/${t.users.bot.id}/api_key`)).body, err('This endpoint does not accept bot requests.'));
    assert.deepEqual((await t.api(t.users.guest, 'GET', `/bots/${t.users.bot.id}/api_key`)).body, err('Not allowed for guest users'));
  });
});

describe('DELETE /users/me', () => {
  it('refuses the only organization owner', async () => {
    const res = await t.api(t.users.owner, 'DELETE', '/users/me');
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      ...err('Cannot deactivate the only organization owner.', 'CANNOT_DEACTIVATE_LAST_USER'),
      is_last_owner: true,
      entity: 'organization owner',
    });
  });

  it('deactivates the caller, announces it, and their key stops working', async () => {
    const q = await queue(t.users.hamlet, ['realm_user']);
    assert.deepEqual((await t.api(t.users.othello, 'DELETE', '/users/me')).body, SUCCESS);
    assert.deepEqual(await events(t.users.hamlet, q), [
      { type: 'realm_user', op: 'update', person: { user_id: t.users.othello.id, is_active: false } },
    ]);
    const after = await t.api(t.users.othello, 'GET', '/users/me');
    assert.equal(after.status, 401);
    // Deactivated users' subscriptions can still be listed.
    assert.equal((await t.api(t.users.hamlet, 'GET', `/users/${t.users.othello.id}/channels`)).status, 200);
  });

  it("deactivates the caller's bots with them", async () => {
    const created = await t.api(t.users.moderator, 'POST', '/bots', { full_name: 'Shiva Bot', short_name: 'shiva' });
    assert.equal(created.status, 200, created.text);
    const bot: TestUser = { id: created.body.user_id, email: 'shiva-bot@example.com', apiKey: created.body.api_key, password: '', fullName: 'Shiva Bot' };
    const q = await queue(t.users.hamlet, ['realm_user']);
    assert.deepEqual((await t.api(t.users.moderator, 'DELETE', '/users/me')).body, SUCCESS);
    assert.deepEqual(await events(t.users.hamlet, q), [
      { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
      { type: 'realm_user', op: 'update', person: { user_id: t.users.moderator.id, is_active: false } },
    ]);
    // The bot got a new key as it went (the person leaving knew the old one): the old one is no key
    // at all now, the new one a deactivated account's.
    const res = await t.api(bot, 'GET', '/users/me');
    assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: err('Invalid API key', 'INVALID_API_KEY') });
    bot.apiKey = (t.app.db.prepare('SELECT api_key FROM user WHERE id = ?').get(bot.id) as { api_key: string }).api_key;
    const renewed = await t.api(bot, 'GET', '/users/me');
    assert.deepEqual({ status: renewed.status, body: renewed.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
  });

  it('refuses the only user of the organization', async () => {
    for (const u of ['admin', 'moderator', 'hamlet', 'guest', 'bot'] as const) {
      t.app.db.prepare('UPDATE user SET is_active = 0 WHERE id = ?').run(t.users[u].id);
    }
    const res = await t.api(t.users.owner, 'DELETE', '/users/me');
    assert.deepEqual(res.body, {
      ...err('Cannot deactivate the only user.', 'CANNOT_DEACTIVATE_LAST_USER'),
      is_last_owner: false,
      entity: 'user',
    });
  });
});

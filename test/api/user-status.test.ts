import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS, systemGroups } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);
const setStatus = (u: TestUser, params: Record<string, unknown>) => t.api(u, 'POST', '/users/me/status', params);
const getStatus = (u: TestUser, id: number) => t.api(u, 'GET', `/users/${id}/status`);

describe('POST /users/me/status', () => {
  it('sets text and emoji, sends user_status to the organization, and GET returns it', async () => {
    const q = await queue(t.users.othello, ['user_status']);
    const res = await setStatus(t.users.hamlet, { status_text: '  on vacation ', emoji_name: 'car' });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await events(t.users.othello, q), [
      { type: 'user_status', user_id: t.users.hamlet.id, status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' },
    ]);
    assert.deepEqual((await getStatus(t.users.othello, t.users.hamlet.id)).body, {
      ...SUCCESS,
      status: { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' },
    });
    const reg = await t.api(t.users.othello, 'POST', '/register', { fetch_event_types: ['user_status'] });
    assert.deepEqual(reg.body.user_status[t.users.hamlet.id], {
      status_text: 'on vacation',
      emoji_name: 'car',
      emoji_code: '1f697',
      reaction_type: 'unicode_emoji',
    });
  });

  it('keeps the emoji when only the text changes, and clears the emoji with an empty name', async () => {
    const q = await queue(t.users.othello, ['user_status']);
    await setStatus(t.users.hamlet, { status_text: 'busy' });
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.hamlet.id)).body.status, {
      status_text: 'busy',
      emoji_name: 'car',
      emoji_code: '1f697',
      reaction_type: 'unicode_emoji',
    });
    await setStatus(t.users.hamlet, { emoji_name: '' });
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.hamlet.id)).body.status, { status_text: 'busy' });
    await setStatus(t.users.hamlet, { status_text: '' });
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.hamlet.id)).body, { ...SUCCESS, status: {} });
    assert.deepEqual(await events(t.users.othello, q), [
      { type: 'user_status', user_id: t.users.hamlet.id, status_text: 'busy' },
      { type: 'user_status', user_id: t.users.hamlet.id, emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' },
      { type: 'user_status', user_id: t.users.hamlet.id, status_text: '' },
    ]);
  });

  it('treats away as presence_enabled inverted', async () => {
    const q = await queue(t.users.othello, ['user_status']);
    const mine = await queue(t.users.moderator, ['user_settings', 'user_status']);
    assert.deepEqual((await setStatus(t.users.moderator, { away: true })).body, SUCCESS);
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.moderator.id)).body.status, { away: true });
    const me = await t.api(t.users.moderator, 'POST', '/register', { fetch_event_types: ['user_settings'] });
    assert.equal(me.body.user_settings.presence_enabled, false);
    assert.deepEqual(await events(t.users.othello, q), [
      { type: 'user_status', user_id: t.users.moderator.id, away: true },
      { type: 'user_status', user_id: t.users.moderator.id, away: true },
    ]);
    const own = await events(t.users.moderator, mine);
    assert.deepEqual(own[0], { type: 'user_settings', op: 'update', property: 'presence_enabled', value: false });
    await setStatus(t.users.moderator, { away: false });
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.moderator.id)).body.status, {});
  });

  it('accepts custom and :zulip: emoji and explicit codes', async () => {
    assert.deepEqual((await setStatus(t.users.othello, { emoji_name: 'zulip' })).body, SUCCESS);
    assert.deepEqual((await getStatus(t.users.othello, t.users.othello.id)).body.status, {
      emoji_name: 'zulip',
      emoji_code: 'zulip',
      reaction_type: 'zulip_extra_emoji',
    });
    assert.deepEqual((await setStatus(t.users.othello, { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' })).body, SUCCESS);
  });

  it('refuses bad requests with Zulip errors', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'Client did not pass any new values.'],
      [{ emoji_code: '1f697' }, 'Client did not pass any new values.'],
      [{ status_text: 'x', reaction_type: 'unicode_emoji' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.'],
      [{ emoji_name: 'no_such_emoji_here' }, "Emoji 'no_such_emoji_here' does not exist"],
      [{ emoji_name: 'car', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }, 'Invalid emoji name.'],
      [{ emoji_name: 'car', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }, 'Invalid emoji code.'],
      [{ emoji_name: 'car', emoji_code: '1f697', reaction_type: 'weird' }, 'Invalid emoji type.'],
      [{ emoji_name: 'nope', emoji_code: '999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
      [{ status_text: 'x'.repeat(61) }, 'status_text is too long (limit: 60 characters)'],
      [{ away: 'yes' }, 'away is not valid JSON'],
    ];
    for (const [params, msg] of cases) {
      const res = await setStatus(t.users.othello, params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, err(msg), JSON.stringify(params));
    }
    // 60 characters after stripping is fine.
    assert.deepEqual((await setStatus(t.users.othello, { status_text: ` ${'x'.repeat(60)} ` })).body, SUCCESS);
  });

  it('refuses bots', async () => {
    const res = await setStatus(t.users.bot, { status_text: 'beep' });
    assert.deepEqual(res.body, err('This endpoint does not accept bot requests.'));
  });
});

describe('GET /users/{user_id}/status', () => {
  it('answers No such user for missing users and bots', async () => {
    assert.deepEqual((await getStatus(t.users.hamlet, 99999)).body, err('No such user'));
    assert.deepEqual((await getStatus(t.users.hamlet, t.users.bot.id)).body, err('No such user'));
  });
});

describe('user status and limited user access', () => {
  it('hides statuses of users a guest cannot access, in register, GET and events', async () => {
    const groups = systemGroups(t);
    t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:members']);
    try {
      await setStatus(t.users.hamlet, { status_text: 'hidden from guests' });
      const reg = await t.api(t.users.guest, 'POST', '/register', { fetch_event_types: ['user_status'] });
      assert.equal(reg.body.user_status[t.users.hamlet.id], undefined);
      assert.deepEqual((await getStatus(t.users.guest, t.users.hamlet.id)).body, err('Insufficient permission'));
      const q = await queue(t.users.guest, ['user_status']);
      await setStatus(t.users.hamlet, { status_text: 'still hidden' });
      assert.deepEqual(await events(t.users.guest, q), []);
    } finally {
      t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(groups['role:everyone']);
    }
  });
});

describe('POST /users/{user_id}/status', () => {
  it('lets administrators set another user status', async () => {
    const q = await queue(t.users.othello, ['user_status']);
    const res = await t.api(t.users.admin, 'POST', `/users/${t.users.guest.id}/status`, { status_text: 'in a meeting', emoji_name: 'calendar' });
    assert.deepEqual(res.body, SUCCESS);
    const status = (await getStatus(t.users.admin, t.users.guest.id)).body.status;
    assert.equal(status.status_text, 'in a meeting');
    assert.equal(status.emoji_name, 'calendar');
    const evs = await events(t.users.othello, q);
    assert.equal(evs.length, 1);
    assert.deepEqual(evs[0], { type: 'user_status', user_id: t.users.guest.id, status_text: 'in a meeting', ...pick(status, ['emoji_name', 'emoji_code', 'reaction_type']) });
  });

  it('refuses non-administrators, bots as targets and away', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', `/users/${t.users.othello.id}/status`, { status_text: 'x' })).body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    assert.deepEqual((await t.api(t.users.admin, 'POST', `/users/${t.users.bot.id}/status`, { status_text: 'x' })).body, err('No such user'));
    const res = await t.api(t.users.admin, 'POST', `/users/${t.users.othello.id}/status`, { away: true });
    assert.deepEqual(res.body, err('Client did not pass any new values.'));
  });
});

function pick(o: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS } from '../helpers/chat';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const queue = (user: TestUser, types: string[]) => registerQueue(t, user, types);
const events = (user: TestUser, queueId: string) => queuedEvents(t, user, queueId);
const defaults = async (u: TestUser) =>
  (await t.api(u, 'POST', '/register', { fetch_event_types: ['realm_user_settings_defaults'] })).body.realm_user_settings_defaults;
const patch = (u: TestUser, params: Record<string, unknown>) => t.api(u, 'PATCH', '/realm/user_settings_defaults', params);

describe('PATCH /realm/user_settings_defaults', () => {
  it('changes defaults, sends one event per changed setting, and register shows them', async () => {
    const before = await defaults(t.users.hamlet);
    assert.equal(before.emojiset, 'google');
    assert.equal(before.enter_sends, false);
    const q = await queue(t.users.hamlet, ['realm_user_settings_defaults']);
    const res = await patch(t.users.admin, { emojiset: 'text', enter_sends: true, web_font_size_px: 20, twenty_four_hour_time: before.twenty_four_hour_time });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await events(t.users.hamlet, q), [
      // In the order of Zulip's parameter list, not the request's.
      { type: 'realm_user_settings_defaults', op: 'update', property: 'web_font_size_px', value: 20 },
      { type: 'realm_user_settings_defaults', op: 'update', property: 'emojiset', value: 'text' },
      { type: 'realm_user_settings_defaults', op: 'update', property: 'enter_sends', value: true },
    ]);
    const after = await defaults(t.users.hamlet);
    assert.deepEqual(after, { ...before, emojiset: 'text', enter_sends: true, web_font_size_px: 20 });
    // The organization's other settings in register are untouched by the stored defaults.
    const realm = (await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['realm'] })).body;
    assert.equal(realm.realm_user_settings_defaults, undefined);
  });

  it('gives new users the defaults', async () => {
    const res = await t.api(t.users.admin, 'POST', '/users', { email: 'newbie@example.com', password: 'a-strong-password-1', full_name: 'Newbie' });
    assert.equal(res.status, 200, res.text);
    const row = t.app.db.prepare('SELECT emojiset, web_font_size_px, enter_sends FROM user WHERE id = ?').get(res.body.user_id) as Record<string, unknown>;
    assert.deepEqual(row, { emojiset: 'text', web_font_size_px: 20, enter_sends: 1 });
  });

  it('reports unknown parameters as ignored', async () => {
    const res = await patch(t.users.admin, { default_language: 'de', timezone: 'UTC', bogus: 1, color_scheme: 2 });
    assert.deepEqual(res.body, { ...SUCCESS, ignored_parameters_unsupported: ['bogus', 'default_language', 'timezone'] });
  });

  it('refuses non-administrators and invalid values', async () => {
    assert.deepEqual((await patch(t.users.moderator, { emojiset: 'text' })).body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    const cases: [Record<string, unknown>, string][] = [
      [{ emojiset: 'comic' }, 'Invalid emojiset: Value error, Not in the list of possible values'],
      [{ color_scheme: 7 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
      [{ enter_sends: 'maybe' }, 'enter_sends is not valid JSON'],
      [{ notification_sound: 'boom' }, "Invalid notification sound 'boom'"],
      [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    ];
    for (const [params, msg] of cases) assert.deepEqual((await patch(t.users.admin, params)).body, err(msg), JSON.stringify(params));
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { notificationBot, welcomeBot } from '../../src/actions/system-bots';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const ok = { result: 'success', msg: '' };
const bad = (msg: string, extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code: 'BAD_REQUEST', ...extra });

async function queue(user: TestUser): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: ['realm_bot'] });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
const seen = new Map<string, number>();
async function events(user: TestUser, queueId: string): Promise<Record<string, unknown>[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: seen.get(queueId) ?? -1, dont_block: true });
  for (const e of res.body.events) seen.set(queueId, e.id);
  return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat').map(({ id: _id, ...e }: { id: number }) => e);
}

describe('POST /bots', () => {
  it('creates a bot owned by the caller and tells the owner and administrators', async () => {
    const h = t.users.hamlet;
    const [qOwner, qAdmin, qOther] = [await queue(h), await queue(t.users.admin), await queue(t.users.othello)];
    const res = await t.api(h, 'POST', '/bots', { full_name: 'Weather Bot', short_name: 'weather', default_all_public_streams: true });
    assert.equal(res.status, 200, res.text);
    const b = res.body;
    assert.match(b.api_key, /^[A-Za-z0-9]{32}$/);
    assert.deepEqual(b, {
      ...ok,
      user_id: b.user_id,
      api_key: b.api_key,
      avatar_url: b.avatar_url,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: true,
    });
    const me = await t.api({ email: 'weather-bot@example.com', apiKey: b.api_key } as TestUser, 'GET', '/users/me');
    assert.equal(me.body.bot_owner_id, h.id);
    assert.equal(me.body.bot_type, 1);
    const expected = {
      type: 'realm_bot',
      op: 'add',
      bot: {
        email: 'weather-bot@example.com',
        user_id: b.user_id,
        avatar_url: b.avatar_url,
        api_key: b.api_key,
        full_name: 'Weather Bot',
        is_active: true,
        bot_type: 1,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: true,
        owner_id: h.id,
        services: [],
      },
    };
    assert.deepEqual(await events(h, qOwner), [expected]);
    assert.deepEqual(await events(t.users.admin, qAdmin), [expected]);
    assert.deepEqual(await events(t.users.othello, qOther), []);
  });

  it('creates an outgoing webhook bot with its service', async () => {
    const res = await t.api(t.users.othello, 'POST', '/bots', {
      full_name: 'Hooky',
      short_name: 'hooky',
      bot_type: 3,
      payload_url: 'https://hooks.example.com/x',
      interface_type: 2,
    });
    assert.equal(res.body.result, 'success', res.text);
    const reg = await t.api(t.users.othello, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
    const bot = reg.body.realm_bots.find((x: { user_id: number }) => x.user_id === res.body.user_id);
    assert.equal(bot.services.length, 1);
    assert.equal(bot.services[0].base_url, 'https://hooks.example.com/x');
    assert.equal(bot.services[0].interface, 2);
  });

  it('reports bad input in Zulip wording', async () => {
    const h = t.users.hamlet;
    const post = (params: Record<string, unknown>) => t.api(h, 'POST', '/bots', { full_name: 'Some Bot', short_name: 'some', ...params });
    assert.deepEqual((await post({ short_name: '  ' })).body, bad('Bad name or username'));
    assert.deepEqual((await post({ full_name: 'Weather Bot', short_name: 'w2' })).body, bad('Name is already in use.'));
    assert.deepEqual((await post({ full_name: 'Other Name', short_name: 'weather' })).body, bad('Email is already in use.'));
    assert.deepEqual((await post({ bot_type: 9 })).body, bad('Invalid bot type'));
    assert.deepEqual((await post({ interface_type: 7 })).body, bad('Invalid interface type'));
    assert.deepEqual((await post({ bot_type: 4, service_name: 'converter' })).body, bad('Embedded bots are not enabled.'));
    assert.deepEqual((await post({ bot_type: 3, payload_url: 'nope' })).body, bad('Invalid payload_url: Value error, Not a URL'));
    assert.deepEqual((await post({ default_sending_stream: 'no such' })).body, bad("Invalid channel name 'no such'"));
    assert.deepEqual((await post({ full_name: 'x' })).body, bad('Name too short!'));
    assert.deepEqual((await t.api(h, 'POST', '/bots', { full_name: 'A Bot' })).body, {
      result: 'error',
      msg: "Missing 'short_name' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'short_name',
    });
  });

  it('follows can_create_bots_group and can_create_write_only_bots_group; refuses guests and bots', async () => {
    assert.deepEqual((await t.api(t.users.guest, 'POST', '/bots', { full_name: 'G Bot', short_name: 'g' })).body, bad('Not allowed for guest users'));
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/bots', { full_name: 'B Bot', short_name: 'b' })).body, bad('This endpoint does not accept bot requests.'));
    const adminsGroup = (t.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:administrators'").get() as { id: number }).id;
    const membersGroup = (t.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:members'").get() as { id: number }).id;
    t.app.db.prepare('UPDATE realm SET can_create_bots_group = ?').run(adminsGroup);
    try {
      assert.deepEqual((await t.api(t.users.othello, 'POST', '/bots', { full_name: 'O Bot', short_name: 'o' })).body, bad('Insufficient permission'));
      // Incoming webhooks only need can_create_write_only_bots_group.
      assert.equal((await t.api(t.users.othello, 'POST', '/bots', { full_name: 'In Bot', short_name: 'in', bot_type: 2 })).body.result, 'success');
      assert.equal((await t.api(t.users.admin, 'POST', '/bots', { full_name: 'Admin Bot', short_name: 'adm' })).body.result, 'success');
    } finally {
      t.app.db.prepare('UPDATE realm SET can_create_bots_group = ?').run(membersGroup);
    }
  });
});

describe('GET /bots', () => {
  it("lists the caller's active bots (every bot for administrators)", async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/bots');
    const names = res.body.bots.map((b: { username: string }) => b.username);
    assert.deepEqual(names, ['helper-bot@example.com', 'weather-bot@example.com']);
    const weather = res.body.bots[1];
    assert.deepEqual(Object.keys(weather).sort(), [
      'api_key', 'avatar_url', 'default_all_public_streams', 'default_events_register_stream', 'default_sending_stream', 'full_name', 'username',
    ]);
    const all = await t.api(t.users.admin, 'GET', '/bots');
    assert.ok(all.body.bots.length > names.length);
    assert.deepEqual((await t.api(t.users.othello, 'GET', '/bots')).body.bots.map((b: { username: string }) => b.username), ['hooky-bot@example.com', 'in-bot@example.com']);
  });
});

describe('PATCH /bots/{bot_id}', () => {
  it('changes name, owner and default streams, and returns the summary', async () => {
    const h = t.users.hamlet;
    const id = (await t.api(h, 'POST', '/bots', { full_name: 'Patchy', short_name: 'patchy' })).body.user_id;
    await t.api(t.users.owner, 'POST', '/channels/create', { name: 'bots-here', subscribers: [h.id] });
    const q = await queue(h);
    const res = await t.api(h, 'PATCH', `/bots/${id}`, { full_name: 'Patchy II', default_sending_stream: 'bots-here' });
    assert.deepEqual(res.body, {
      ...ok,
      full_name: 'Patchy II',
      avatar_url: res.body.avatar_url,
      service_interface: null,
      service_payload_url: null,
      config_data: null,
      default_sending_stream: 'bots-here',
      default_events_register_stream: null,
      default_all_public_streams: false,
      bot_owner: h.email,
    });
    assert.deepEqual(await events(h, q), [
      { type: 'realm_bot', op: 'update', bot: { user_id: id, full_name: 'Patchy II' } },
      { type: 'realm_bot', op: 'update', bot: { user_id: id, default_sending_stream: 'bots-here' } },
    ]);
    // Giving the bot away: the old owner loses it, the new one gains it.
    const qo = await queue(t.users.othello);
    assert.equal((await t.api(h, 'PATCH', `/bots/${id}`, { bot_owner_id: t.users.othello.id })).body.bot_owner, t.users.othello.email);
    assert.deepEqual(await events(h, q), [{ type: 'realm_bot', op: 'delete', bot: { user_id: id } }]);
    const got = await events(t.users.othello, qo);
    assert.equal(got.length, 1);
    assert.equal((got[0] as { op: string }).op, 'add');
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${id}`, { full_name: 'Mine' })).body, bad('Insufficient permission'));
  });

  it('refuses unknown bots, humans, bad owners and non-owners', async () => {
    const h = t.users.hamlet;
    const bot = t.users.bot.id;
    assert.deepEqual((await t.api(h, 'PATCH', '/bots/9999', { full_name: 'X Y' })).body, bad('No such bot'));
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${t.users.othello.id}`, { full_name: 'X Y' })).body, bad('No such bot'));
    assert.deepEqual((await t.api(t.users.othello, 'PATCH', `/bots/${bot}`, { full_name: 'X Y' })).body, bad('Insufficient permission'));
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${bot}`, { bot_owner_id: 9999 })).body, bad('Failed to change owner, no such user'));
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${bot}`, { bot_owner_id: bot })).body, bad("Failed to change owner, bots can't own other bots"));
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${bot}`, { full_name: 'Desdemona' })).body, bad('Name is already in use.'));
    assert.deepEqual((await t.api(h, 'PATCH', `/bots/${bot}`, { role: 200 })).body, {
      result: 'error',
      msg: 'Must be an organization administrator',
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    // Administrators may edit any bot.
    assert.equal((await t.api(t.users.admin, 'PATCH', `/bots/${bot}`, { full_name: 'Helper Bot 2' })).body.full_name, 'Helper Bot 2');
  });
});

describe('bots do not administer themselves', () => {
  it("refuses a bot's own key on PATCH, key regeneration and GET /bots; DELETE finds it no bot of its own", async () => {
    const bot = t.users.bot; // owned by Hamlet
    const notForBots = bad('This endpoint does not accept bot requests.');
    // Re-owning itself would reach the new owner's private channels.
    assert.deepEqual((await t.api(bot, 'PATCH', `/bots/${bot.id}`, { bot_owner_id: t.users.othello.id })).body, notForBots);
    assert.deepEqual((await t.api(bot, 'PATCH', `/bots/${bot.id}`, { full_name: 'Renamed Bot' })).body, notForBots);
    assert.deepEqual((await t.api(bot, 'POST', `/bots/${bot.id}/api_key/regenerate`)).body, notForBots);
    assert.deepEqual((await t.api(bot, 'GET', '/bots')).body, notForBots);
    // Zulip's can_admin_user: a bot is not its own owner.
    assert.deepEqual((await t.api(bot, 'DELETE', `/bots/${bot.id}`)).body, bad('Insufficient permission'));
    // Nothing changed: the same owner, the same working key, still active.
    const me = await t.api(bot, 'GET', '/users/me');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual([me.body.bot_owner_id, me.body.is_active], [t.users.hamlet.id, true]);
  });

  it('refuses guests on the bot administration endpoints', async () => {
    const guest = t.users.guest;
    const notForGuests = bad('Not allowed for guest users');
    assert.deepEqual((await t.api(guest, 'PATCH', `/bots/${t.users.bot.id}`, { full_name: 'X Y' })).body, notForGuests);
    assert.deepEqual((await t.api(guest, 'POST', `/bots/${t.users.bot.id}/api_key/regenerate`)).body, notForGuests);
    assert.deepEqual((await t.api(guest, 'GET', '/bots')).body, notForGuests);
  });
});

describe("a bot's key outlives no one who held it", () => {
  async function makeBot(owner: TestUser, shortName: string): Promise<TestUser> {
    const res = await t.api(owner, 'POST', '/bots', { full_name: `Key ${shortName}`, short_name: shortName });
    assert.equal(res.status, 200, res.text);
    return { id: res.body.user_id, email: `${shortName}-bot@example.com`, apiKey: res.body.api_key, password: '', fullName: `Key ${shortName}` };
  }

  it("changes when the bot changes owner: the previous owner's copy does not act with the new owner's access", async () => {
    const [h, o] = [t.users.hamlet, t.users.othello];
    const secret = await t.api(o, 'POST', '/channels/create', { name: 'othello-only', subscribers: [o.id], invite_only: true, description: 'plans' });
    assert.equal(secret.status, 200, secret.text);
    const bot = await makeBot(h, 'handed');
    const [qNew, qAdmin] = [await queue(o), await queue(t.users.admin)];
    assert.equal((await t.api(h, 'PATCH', `/bots/${bot.id}`, { bot_owner_id: o.id })).status, 200);
    // Hamlet kept the key he had: it no longer authenticates, so it cannot list Othello's private
    // channels (include_owner_subscribed) nor post there.
    assert.equal((await t.api(bot, 'GET', '/streams', { include_owner_subscribed: true })).status, 401);
    assert.equal((await t.api(bot, 'POST', '/messages', { type: 'channel', to: secret.body.id, topic: 'x', content: 'from hamlet' })).status, 401);
    // The new owner has the new key (realm_bot add, GET /bots), administrators hear it, and it works.
    const added = (await events(o, qNew)).find((e) => e.op === 'add') as { bot: { api_key: string } };
    const listed = (await t.api(o, 'GET', '/bots')).body.bots.find((b: { username: string }) => b.username === bot.email);
    assert.equal(listed.api_key, added.bot.api_key);
    assert.notEqual(added.bot.api_key, bot.apiKey);
    assert.deepEqual((await events(t.users.admin, qAdmin)).at(-1), { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: added.bot.api_key } });
    const posted = await t.api({ ...bot, apiKey: added.bot.api_key }, 'POST', '/messages', { type: 'channel', to: secret.body.id, topic: 'x', content: 'for othello' });
    assert.equal(posted.status, 200, posted.text);
  });

  it('changes when the bot is deactivated with its owner: reactivated by an administrator, the old key stays dead', async () => {
    const made = await t.api(t.users.owner, 'POST', '/users', { email: 'leaver@example.com', password: 'a-good-password', full_name: 'Leaver' });
    assert.equal(made.status, 200, made.text);
    const leaver: TestUser = { id: made.body.user_id, email: 'leaver@example.com', apiKey: '', password: 'a-good-password', fullName: 'Leaver' };
    leaver.apiKey = (await t.raw('POST', '/api/v1/fetch_api_key', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=leaver%40example.com&password=a-good-password' })).body.api_key;
    const bot = await makeBot(leaver, 'leftover');
    assert.equal((await t.api(bot, 'GET', '/users/me')).status, 200);
    assert.equal((await t.api(t.users.owner, 'DELETE', `/users/${leaver.id}`)).status, 200);
    assert.equal((await t.api(t.users.admin, 'POST', `/users/${bot.id}/reactivate`)).status, 200);
    // The person who left still has the key they used: it reads nothing the bot can.
    const old = await t.api(bot, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0 });
    assert.deepEqual([old.status, old.body.code], [401, 'INVALID_API_KEY']);
    const fresh = (await t.api(t.users.admin, 'GET', '/bots')).body.bots.find((b: { username: string }) => b.username === bot.email);
    assert.notEqual(fresh.api_key, bot.apiKey);
    assert.equal((await t.api({ ...bot, apiKey: fresh.api_key }, 'GET', '/users/me')).status, 200);
  });
});

describe('system bots (Notification Bot, Welcome Bot)', () => {
  it('are not in the bot lists, cannot be administered, and their keys authenticate nothing', async () => {
    const nb = notificationBot(t.app, t.app.realmId());
    const wb = welcomeBot(t.app, t.app.realmId());
    t.app.batch.commit();
    const admin = t.users.admin;
    const listed = (await t.api(admin, 'GET', '/bots')).body.bots.map((b: { username: string }) => b.username);
    assert.ok(listed.length > 0);
    assert.ok(!listed.includes(nb.email) && !listed.includes(wb.email), listed.join());
    const reg = await t.api(admin, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
    assert.ok(!reg.body.realm_bots.some((b: { user_id: number }) => b.user_id === nb.id || b.user_id === wb.id));

    const noSuchBot = bad('No such bot');
    for (const id of [nb.id, wb.id]) {
      assert.deepEqual((await t.api(admin, 'GET', `/bots/${id}/api_key`)).body, noSuchBot);
      assert.deepEqual((await t.api(admin, 'POST', `/bots/${id}/api_key/regenerate`)).body, noSuchBot);
      assert.deepEqual((await t.api(admin, 'PATCH', `/bots/${id}`, { bot_owner_id: admin.id })).body, noSuchBot);
      assert.deepEqual((await t.api(admin, 'DELETE', `/bots/${id}`)).body, noSuchBot);
      assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${id}`, { full_name: 'Not A Bot' })).body, bad('No such user'));
    }

    // Even with the key (read here from the database), nobody speaks as Notification Bot.
    const stolen = { email: nb.email, apiKey: nb.api_key } as TestUser;
    const res = await t.api(stolen, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'notice', content: 'Your password expired' });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' } });
    assert.equal((await t.api(stolen, 'GET', '/users/me')).status, 401);
  });

  it("leaves a member's bot named like a system bot an ordinary bot", async () => {
    const res = await t.api(t.users.othello, 'POST', '/bots', { full_name: 'Notifier', short_name: 'notification' });
    assert.equal(res.status, 200, res.text);
    const own = { email: 'notification-bot@example.com', apiKey: res.body.api_key } as TestUser;
    assert.equal((await t.api(own, 'GET', '/users/me')).status, 200);
    assert.ok((await t.api(t.users.othello, 'GET', '/bots')).body.bots.some((b: { username: string }) => b.username === own.email));
    assert.equal((await t.api(t.users.othello, 'GET', `/bots/${res.body.user_id}/api_key`)).body.api_key, res.body.api_key);
  });
});

describe('POST /bots/{bot_id}/api_key/regenerate and DELETE /bots/{bot_id}', () => {
  it('regenerates the key (the old one stops working) and deactivates', async () => {
    const h = t.users.hamlet;
    const created = (await t.api(h, 'POST', '/bots', { full_name: 'Keyed', short_name: 'keyed' })).body;
    const q = await queue(h);
    const res = await t.api(h, 'POST', `/bots/${created.user_id}/api_key/regenerate`);
    assert.deepEqual(res.body, { ...ok, api_key: res.body.api_key });
    assert.notEqual(res.body.api_key, created.api_key);
    assert.equal((await t.api({ email: 'keyed-bot@example.com', apiKey: created.api_key } as TestUser, 'GET', '/users/me')).status, 401);
    assert.equal((await t.api({ email: 'keyed-bot@example.com', apiKey: res.body.api_key } as TestUser, 'GET', '/users/me')).status, 200);
    assert.deepEqual((await t.api(t.users.othello, 'POST', `/bots/${created.user_id}/api_key/regenerate`)).body, bad('Insufficient permission'));
    assert.deepEqual((await t.api(h, 'DELETE', `/bots/${created.user_id}`)).body, ok);
    assert.deepEqual(await events(h, q), [
      { type: 'realm_bot', op: 'update', bot: { user_id: created.user_id, api_key: res.body.api_key } },
      { type: 'realm_bot', op: 'update', bot: { user_id: created.user_id, is_active: false } },
    ]);
    assert.equal((await t.api(h, 'GET', '/bots')).body.bots.some((b: { username: string }) => b.username === 'keyed-bot@example.com'), false);
    assert.deepEqual((await t.api(h, 'DELETE', '/bots/9999')).body, bad('No such bot'));
  });
});

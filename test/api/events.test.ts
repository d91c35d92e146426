import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../../src/version';

// The main server's clock runs `offsetMs` ahead of real time, so queue expiry needs no waiting.
let offsetMs = 0;
const clock = { nowMs: () => Date.now() + offsetMs };

let t: TestServer;
before(async () => {
  t = await startTestServer({ clock });
});
after(() => t.close());

const register = (user: TestUser, params: Record<string, unknown> = {}) => t.api(user, 'POST', '/register', params);
const poll = (user: TestUser, queueId: string, lastEventId: number, extra: Record<string, unknown> = {}) =>
  t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId, ...extra });

/** A queue registered for `user` without initial state (cheap). */
async function queueFor(user: TestUser, params: Record<string, unknown> = {}): Promise<string> {
  const res = await register(user, { fetch_event_types: [], ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

/** Resolves once the queue has a poll parked on it (so a test knows the GET is waiting). */
async function parked(server: TestServer, user: TestUser, queueId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (server.app.queues.access(user.id, queueId).parked) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail('the poll never parked');
}

const badQueue = (id: string) => ({ result: 'error', msg: `Bad event queue ID: ${id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: id });

describe('POST /register', () => {
  it('returns a queue, the version, and the initial state of every type for a fresh user', async () => {
    const u = t.users.hamlet;
    const res = await register(u);
    assert.equal(res.status, 200, res.text);
    const b = res.body;
    assert.equal(b.result, 'success');
    assert.equal(b.msg, '');
    assert.match(b.queue_id, /^[0-9a-f-]{36}$/);
    assert.equal(b.last_event_id, -1);
    assert.equal(b.zulip_feature_level, ZULIP_FEATURE_LEVEL);
    assert.equal(b.zulip_version, ZULIP_VERSION);
    assert.equal(b.zulip_merge_base, ZULIP_MERGE_BASE);
    for (const key of [
      'realm_users', 'realm_non_active_users', 'cross_realm_bots', 'realm_bots', 'realm_user_groups', 'user_settings', 'presences',
      'presence_last_update_id', 'server_timestamp', 'realm_linkifiers', 'realm_filters', 'scheduled_messages', 'user_status',
      'realm_emoji', 'drafts', 'max_message_id', 'muted_topics', 'user_topics', 'muted_users', 'alert_words', 'starred_messages',
      'custom_profile_fields', 'custom_profile_field_types', 'realm_default_streams', 'realm_domains', 'onboarding_steps',
      'realm_user_settings_defaults', 'server_supported_permission_settings', 'realm_authentication_methods',
    ]) {
      assert.ok(key in b, `missing ${key}`);
    }
    // Limits and realm settings.
    assert.equal(b.max_message_length, 10000);
    assert.equal(b.max_topic_length, 60);
    assert.equal(b.max_stream_name_length, 60);
    assert.equal(b.max_stream_description_length, 1024);
    assert.equal(b.max_file_upload_size_mib, t.app.config.maxFileUploadSizeMib);
    assert.equal(b.event_queue_longpoll_timeout_seconds, 90);
    assert.equal(b.realm_name, 'Test Org');
    assert.equal(b.realm_message_retention_days, -1);
    assert.equal(b.realm_url, t.url);
    assert.equal(b.realm_empty_topic_display_name, 'general chat');
    // Own identity.
    assert.equal(b.user_id, u.id);
    assert.equal(b.email, u.email);
    assert.equal(b.delivery_email, u.email);
    assert.equal(b.full_name, 'King Hamlet');
    assert.deepEqual([b.is_admin, b.is_owner, b.is_moderator, b.is_guest], [false, false, false, false]);
    assert.equal(b.can_create_public_streams, true);
    assert.equal(b.can_invite_others_to_realm, true);
    // Users: active ones without is_active; Gravatar avatars left to the client (client_gravatar defaults to true).
    const me = b.realm_users.find((x: { user_id: number }) => x.user_id === u.id);
    assert.equal(me.full_name, 'King Hamlet');
    assert.equal(me.avatar_url, null);
    assert.ok(!('is_active' in me));
    assert.deepEqual(me.profile_data, {});
    assert.equal(b.realm_users.length, 7);
    assert.deepEqual(b.realm_non_active_users, []);
    assert.deepEqual(b.cross_realm_bots, []);
    // Hamlet owns the seeded bot.
    assert.deepEqual(
      b.realm_bots.map((x: { user_id: number; owner_id: number; api_key: string }) => [x.user_id, x.owner_id, x.api_key]),
      [[t.users.bot.id, u.id, t.users.bot.apiKey]],
    );
    // Empty personal data, legacy presence (keyed by email) and the old zulip-terminal keys.
    for (const key of ['drafts', 'scheduled_messages', 'muted_topics', 'user_topics', 'muted_users', 'alert_words', 'starred_messages', 'custom_profile_fields']) {
      assert.deepEqual(b[key], [], key);
    }
    assert.deepEqual(b.presences, {});
    assert.deepEqual(b.user_status, {});
    assert.deepEqual(b.realm_emoji, {});
    assert.deepEqual(b.realm_linkifiers, []);
    assert.equal(b.max_message_id, -1);
    // Without user_settings_object the legacy top-level settings come too.
    assert.equal(b.user_settings.twenty_four_hour_time, false);
    assert.equal(b.user_settings.enter_sends, false);
    assert.equal(b.twenty_four_hour_time, false);
    assert.equal(b.enable_sounds, true);
    // System groups with their members.
    const admins = b.realm_user_groups.find((g: { name: string }) => g.name === 'role:administrators');
    assert.deepEqual(admins.members, [t.users.admin.id]);
    assert.equal(admins.is_system_group, true);
    assert.equal(b.realm_can_create_groups, b.realm_user_groups.find((g: { name: string }) => g.name === 'role:members').id);
  });

  it('fetches only the event types asked for', async () => {
    const res = await register(t.users.hamlet, { event_types: ['alert_words', 'heartbeat'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      queue_id: res.body.queue_id,
      idle_queue_timeout_secs: 600,
      zulip_version: ZULIP_VERSION,
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_merge_base: ZULIP_MERGE_BASE,
      alert_words: [],
      last_event_id: -1,
    });
  });

  it('prefers fetch_event_types for the state and ignores unknown types', async () => {
    const res = await register(t.users.hamlet, { event_types: ['realm_user'], fetch_event_types: ['message', 'no_such_type'] });
    assert.equal(res.status, 200);
    assert.equal(res.body.max_message_id, -1);
    assert.ok(!('realm_users' in res.body));
  });

  it('sends only user_settings to clients with user_settings_object', async () => {
    const res = await register(t.users.hamlet, {
      fetch_event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'],
      client_capabilities: { notification_settings_null: true, user_settings_object: true },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.user_settings.emojiset, 'google');
    assert.ok(!('emojiset' in res.body));
    assert.ok(!('enable_sounds' in res.body));
  });

  it('gives modern presences to slim_presence clients', async () => {
    const res = await register(t.users.hamlet, { fetch_event_types: ['presence'], slim_presence: true });
    assert.deepEqual(res.body.presences, {});
    assert.equal(res.body.presence_last_update_id, -1);
    assert.equal(typeof res.body.server_timestamp, 'number');
  });

  it('refuses narrow operators Zulip cannot filter events by', async () => {
    const res = await register(t.users.hamlet, { narrow: [['search', 'x']] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'Operator search not supported.', code: 'BAD_REQUEST' });
  });

  it('accepts the object form of narrow', async () => {
    const res = await register(t.users.hamlet, { fetch_event_types: [], narrow: [{ operator: 'is', operand: 'dm' }] });
    assert.equal(res.status, 200);
  });

  it('does not let a guest follow all public channels', async () => {
    const res = await register(t.users.guest, { all_public_streams: true });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: 'User not authorized for this query', code: 'BAD_REQUEST' });
  });

  it('requires notification_settings_null inside client_capabilities', async () => {
    const res = await register(t.users.hamlet, { client_capabilities: { bulk_message_deletion: true } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.equal(res.body.msg, 'client_capabilities["notification_settings_null"] field is missing: Field required');
  });

  it('reports unknown parameters as ignored', async () => {
    const res = await register(t.users.hamlet, { fetch_event_types: [], bogus: 1 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.ignored_parameters_unsupported, ['bogus']);
  });

  it('evicts the least recently used idle queue past 50 queues per user', async () => {
    const u = t.users.guest;
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await queueFor(u));
    await poll(u, ids[0], -1, { dont_block: true }); // ids[0] is now the most recently used
    const extra = await queueFor(u);
    assert.deepEqual((await poll(u, ids[1], -1, { dont_block: true })).body, badQueue(ids[1]));
    assert.equal((await poll(u, ids[0], -1, { dont_block: true })).status, 200);
    assert.equal((await poll(u, extra, -1, { dont_block: true })).status, 200);
    for (const id of [...ids, extra]) await t.api(u, 'DELETE', '/events', { queue_id: id });
  });

  it('bounds what a queue keeps for its lifetime: narrow operands and event types', async () => {
    // A queue holds these until it expires, 50 queues per user: 100 operands of 80,000 characters,
    // or 10,000 event types of 900, made each queue hold some 9 MB.
    const u = t.users.othello;
    const bad = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
    const topics = (operand: string) => Array.from({ length: 100 }, () => ['topic', operand]);
    for (const narrow of [topics('x'.repeat(50_000)), [{ operator: 'channel', operand: 'c'.repeat(1001) }]]) {
      const res = await register(u, { fetch_event_types: [], narrow });
      assert.deepEqual(res.body, bad('narrow[0].operand is too long (limit: 1000 characters)'));
    }
    const wide = await register(u, { fetch_event_types: [], event_types: Array.from({ length: 5_000 }, (_, i) => `${i}${'x'.repeat(900)}`) });
    assert.deepEqual(wide.body, bad('event_types is too long (limit: 1000 items)'));
    const long = await register(u, { fetch_event_types: [], event_types: ['message', 'y'.repeat(101)] });
    assert.deepEqual(long.body, bad('event_types[1] is too long (limit: 100 characters)'));
    // The same bounds when GET /events registers the queue.
    const viaPoll = await t.api(u, 'GET', '/events', { dont_block: true, narrow: JSON.stringify([['topic', 'z'.repeat(1001)]]) });
    assert.deepEqual(viaPoll.body, bad('narrow[0].operand is too long (limit: 1000 characters)'));
    // Ordinary narrows and event types are as before; an operand of 1000 characters is fine.
    const ok = await register(u, { fetch_event_types: [], narrow: topics('t'.repeat(1000)), event_types: ['message', 'realm_user'] });
    assert.equal(ok.status, 200, ok.text);
    await t.api(u, 'DELETE', '/events', { queue_id: ok.body.queue_id });
  });
});

describe('GET /events', () => {
  it('answers BAD_EVENT_QUEUE_ID for an unknown queue', async () => {
    const res = await poll(t.users.hamlet, 'no-such-queue', -1);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, badQueue('no-such-queue'));
  });

  it("answers BAD_EVENT_QUEUE_ID for another user's queue", async () => {
    const id = await queueFor(t.users.othello);
    const res = await poll(t.users.hamlet, id, -1, { dont_block: true });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, badQueue(id));
  });

  it('returns at once with dont_block, without queue_id', async () => {
    const id = await queueFor(t.users.hamlet);
    const res = await poll(t.users.hamlet, id, -1, { dont_block: true });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [] });
  });

  it('requires queue_id unless registering with dont_block', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/events', {});
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { result: 'error', msg: "Missing 'queue_id' argument", code: 'BAD_REQUEST' });
    const created = await t.api(t.users.hamlet, 'GET', '/events', { dont_block: true, event_types: ['realm_user'] });
    assert.equal(created.status, 200);
    assert.deepEqual(created.body, { result: 'success', msg: '', events: [], queue_id: created.body.queue_id });
    assert.equal((await poll(t.users.hamlet, created.body.queue_id, -1, { dont_block: true })).status, 200);
  });

  it('requires last_event_id with a queue_id', async () => {
    const id = await queueFor(t.users.hamlet);
    const res = await t.api(t.users.hamlet, 'GET', '/events', { queue_id: id });
    assert.deepEqual(res.body, { result: 'error', msg: "Missing 'last_event_id' argument", code: 'BAD_REQUEST' });
  });

  it('returns a parked poll as soon as an event arrives (PATCH /users: realm_user update)', async () => {
    const watcher = t.users.othello;
    const id = await queueFor(watcher);
    const pending = poll(watcher, id, -1);
    await parked(t, watcher, id);
    const patch = await t.api(t.users.admin, 'PATCH', `/users/${t.users.moderator.id}`, { full_name: 'Shiva Renamed' });
    assert.equal(patch.status, 200, patch.text);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      result: 'success',
      msg: '',
      events: [{ type: 'realm_user', op: 'update', person: { user_id: t.users.moderator.id, full_name: 'Shiva Renamed' }, id: 0 }],
      queue_id: id,
    });
  });

  it('delivers realm_user add to other users when an administrator creates a user', async () => {
    const id = await queueFor(t.users.hamlet, { event_types: ['realm_user'] });
    const pending = poll(t.users.hamlet, id, -1);
    await parked(t, t.users.hamlet, id);
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'newbie@example.com', password: 'long-enough-pw', full_name: 'New Bie' });
    assert.equal(created.status, 200, created.text);
    const res = await pending;
    assert.equal(res.body.events.length, 1);
    const [e] = res.body.events;
    assert.equal(e.type, 'realm_user');
    assert.equal(e.op, 'add');
    assert.equal(e.id, 0);
    assert.equal(e.person.user_id, created.body.user_id);
    assert.equal(e.person.email, 'newbie@example.com');
  });

  it("follows a created user's realm_user add with the system groups' add_members, as Zulip's do_create_user", async () => {
    const id = await queueFor(t.users.othello, { event_types: ['realm_user', 'user_group'] });
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'grouped@example.com', password: 'long-enough-pw', full_name: 'Grouped' });
    assert.equal(created.status, 200, created.text);
    const userId = created.body.user_id as number;
    const { events } = (await poll(t.users.othello, id, -1, { dont_block: true })).body;
    const groups = (await t.api(t.users.othello, 'GET', '/user_groups')).body.user_groups as { id: number; name: string }[];
    const groupId = (name: string) => (groups.find((g) => g.name === name) as { id: number }).id;
    assert.deepEqual(
      events.map((e: Record<string, unknown>) => (e.type === 'realm_user' ? `${e.op} ${(e.person as { user_id: number }).user_id}` : { ...e, id: undefined })),
      [
        `add ${userId}`,
        { type: 'user_group', op: 'add_members', group_id: groupId('role:members'), user_ids: [userId], id: undefined },
        { type: 'user_group', op: 'add_members', group_id: groupId('role:fullmembers'), user_ids: [userId], id: undefined },
      ],
    );
  });

  it('yields the same realm_users two ways: old state plus events, and a fresh register', async () => {
    const u = t.users.othello;
    const old = await register(u, { event_types: ['realm_user'] });
    await t.api(t.users.admin, 'PATCH', `/users/${t.users.guest.id}`, { full_name: 'Polonius Renamed' });
    await t.api(t.users.admin, 'POST', '/users', { email: 'twoways@example.com', password: 'long-enough-pw', full_name: 'Two Ways' });
    const { events } = (await poll(u, old.body.queue_id, -1, { dont_block: true })).body;
    assert.deepEqual(
      events.map((e: { type: string; op: string }) => `${e.type}/${e.op}`),
      ['realm_user/update', 'realm_user/add'],
    );
    // What a client does with them (Zulip's apply_event for realm_user).
    const users: Record<string, unknown>[] = old.body.realm_users;
    for (const e of events) {
      if (e.op === 'update') Object.assign(users.find((x) => x.user_id === e.person.user_id) as object, e.person);
      if (e.op === 'add') {
        const { is_active: _active, ...person } = e.person;
        if (String(person.avatar_url).includes('gravatar.com')) person.avatar_url = null;
        if (!person.is_bot) person.profile_data = {};
        users.push(person);
      }
    }
    const fresh = await register(u, { event_types: ['realm_user'] });
    assert.deepEqual(users, fresh.body.realm_users);
  });

  it('filters by event_types', async () => {
    const u = t.users.hamlet;
    const wantsUsers = await queueFor(u, { event_types: ['realm_user'] });
    const wantsOther = await queueFor(u, { event_types: ['alert_words'] });
    const all = await queueFor(u);
    await t.api(t.users.admin, 'PATCH', `/users/${t.users.moderator.id}`, { full_name: 'Shiva Again' });
    const expected = [{ type: 'realm_user', op: 'update', person: { user_id: t.users.moderator.id, full_name: 'Shiva Again' }, id: 0 }];
    assert.deepEqual((await poll(u, wantsUsers, -1, { dont_block: true })).body.events, expected);
    assert.deepEqual((await poll(u, all, -1, { dont_block: true })).body.events, expected);
    assert.deepEqual((await poll(u, wantsOther, -1, { dont_block: true })).body.events, []);
  });

  it('acknowledges with last_event_id and reports ids it cannot account for', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u, { event_types: ['realm_user'] });
    await t.api(t.users.admin, 'PATCH', `/users/${t.users.moderator.id}`, { full_name: 'Shiva One' });
    await t.api(t.users.admin, 'PATCH', `/users/${t.users.moderator.id}`, { full_name: 'Shiva Two' });
    const both = await poll(u, id, -1, { dont_block: true });
    assert.deepEqual(
      both.body.events.map((e: { id: number; person: { full_name: string } }) => [e.id, e.person.full_name]),
      [
        [0, 'Shiva One'],
        [1, 'Shiva Two'],
      ],
    );
    const rest = await poll(u, id, 0, { dont_block: true });
    assert.deepEqual(
      rest.body.events.map((e: { id: number }) => e.id),
      [1],
    );
    const stale = await poll(u, id, -1, { dont_block: true });
    assert.equal(stale.status, 400);
    assert.deepEqual(stale.body, { result: 'error', msg: 'An event newer than -1 has already been pruned!', code: 'BAD_REQUEST' });
    const ahead = await poll(u, id, 5, { dont_block: true });
    assert.deepEqual(ahead.body, { result: 'error', msg: 'Event 5 was not in this queue', code: 'BAD_REQUEST' });
    // Everything was acknowledged up to 1 by the previous call's pruning; 1 stays valid.
    assert.deepEqual((await poll(u, id, 1, { dont_block: true })).body.events, []);
  });

  it('ends the parked poll when a new poll arrives on the same queue', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u);
    const first = poll(u, id, -1);
    await parked(t, u, id);
    const second = await poll(u, id, -1, { dont_block: true });
    assert.deepEqual(second.body, { result: 'success', msg: '', events: [] });
    assert.deepEqual((await first).body, { result: 'success', msg: '', events: [], queue_id: id });
  });

  it('expires a queue idle for longer than its lifespan (10 minutes by default)', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u);
    offsetMs += 599_000;
    assert.equal((await poll(u, id, -1, { dont_block: true })).status, 200);
    offsetMs += 600_000;
    assert.deepEqual((await poll(u, id, -1, { dont_block: true })).body, badQueue(id));
  });

  it('honours queue_lifespan_secs and collects idle queues in the background sweep', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u, { queue_lifespan_secs: 30 });
    const before = t.app.queues.size;
    offsetMs += 31_000;
    assert.ok(t.app.queues.gc() >= 1);
    assert.ok(t.app.queues.size < before);
    assert.deepEqual((await poll(u, id, -1, { dont_block: true })).body, badQueue(id));
  });

  it('keeps a queue registered with idle_queue_timeout "mobile" for 12 hours of idleness', async () => {
    const u = t.users.hamlet;
    const res = await register(u, { fetch_event_types: [], idle_queue_timeout: 'mobile' });
    assert.equal(res.body.idle_queue_timeout_secs, 12 * 3600);
    const mobile = res.body.queue_id;
    const plain = await queueFor(u);
    // Past the default lifespan: the default queue is collected, the mobile one survives the sweep.
    offsetMs += 11 * 60_000;
    t.app.queues.gc();
    assert.deepEqual((await poll(u, plain, -1, { dont_block: true })).body, badQueue(plain));
    assert.deepEqual((await poll(u, mobile, -1, { dont_block: true })).body, { result: 'success', msg: '', events: [] });
    // Each poll restarts the idle time; 12 hours without one and the sweep collects it.
    offsetMs += 12 * 3600_000 - 1000;
    t.app.queues.gc();
    assert.equal((await poll(u, mobile, -1, { dont_block: true })).status, 200);
    offsetMs += 12 * 3600_000;
    assert.ok(t.app.queues.gc() >= 1);
    assert.deepEqual((await poll(u, mobile, -1, { dont_block: true })).body, badQueue(mobile));
  });

  it('takes idle_queue_timeout in seconds, capped at 7 days, over queue_lifespan_secs', async () => {
    const u = t.users.hamlet;
    const secs = async (params: Record<string, unknown>) => {
      const res = await register(u, { fetch_event_types: [], ...params });
      assert.equal(res.status, 200, res.text);
      await t.api(u, 'DELETE', '/events', { queue_id: res.body.queue_id });
      return res.body.idle_queue_timeout_secs;
    };
    assert.equal(await secs({}), 600);
    assert.equal(await secs({ idle_queue_timeout: 3600 }), 3600);
    assert.equal(await secs({ idle_queue_timeout: '"mobile"' }), 43200);
    assert.equal(await secs({ idle_queue_timeout: 0 }), 600);
    assert.equal(await secs({ idle_queue_timeout: 30 * 24 * 3600 }), 7 * 24 * 3600);
    assert.equal(await secs({ idle_queue_timeout: 90, queue_lifespan_secs: 30 }), 90);
    assert.equal(await secs({ queue_lifespan_secs: 30 }), 30);
    const id = await queueFor(u, { idle_queue_timeout: 60 });
    offsetMs += 61_000;
    t.app.queues.gc();
    assert.deepEqual((await poll(u, id, -1, { dont_block: true })).body, badQueue(id));
  });

  it('refuses an idle_queue_timeout that is neither seconds nor a known name', async () => {
    const u = t.users.hamlet;
    const before = t.app.queues.size;
    for (const bad of ['desktop', 'MOBILE', '', '[]', '{"mobile":1}']) {
      const res = await register(u, { fetch_event_types: [], idle_queue_timeout: bad });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: { result: 'error', msg: 'Invalid idle_queue_timeout', code: 'BAD_REQUEST' } }, bad);
    }
    for (const bad of ['-1', '1.5', 'true', '1e400']) {
      const res = await register(u, { fetch_event_types: [], idle_queue_timeout: bad });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.code, 'BAD_REQUEST', bad);
    }
    assert.equal(t.app.queues.size, before, 'no queue was made');
  });
});

describe('DELETE /events', () => {
  it('deletes the queue; later polls and deletes answer BAD_EVENT_QUEUE_ID', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u);
    const res = await t.api(u, 'DELETE', '/events', { queue_id: id });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: 'success', msg: '' });
    assert.deepEqual((await poll(u, id, -1, { dont_block: true })).body, badQueue(id));
    assert.deepEqual((await t.api(u, 'DELETE', '/events', { queue_id: id })).body, badQueue(id));
  });

  it("refuses another user's queue and requires queue_id", async () => {
    const id = await queueFor(t.users.othello);
    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', '/events', { queue_id: id })).body, badQueue(id));
    const missing = await t.api(t.users.hamlet, 'DELETE', '/events', {});
    assert.deepEqual(missing.body, { result: 'error', msg: "Missing 'queue_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'queue_id' });
  });

  it('answers a poll parked on the deleted queue', async () => {
    const u = t.users.hamlet;
    const id = await queueFor(u);
    const pending = poll(u, id, -1);
    await parked(t, u, id);
    await t.api(u, 'DELETE', '/events', { queue_id: id });
    assert.deepEqual((await pending).body, { result: 'success', msg: '', events: [], queue_id: id });
  });
});

describe('GET /events heartbeats and shutdown', () => {
  it('queues a heartbeat after the heartbeat interval when nothing happens', async () => {
    const hb = await startTestServer({ configure: (c) => (c.heartbeatSeconds = 1) });
    try {
      const u = hb.users.hamlet;
      const reg = await hb.api(u, 'POST', '/register', { fetch_event_types: [] });
      const started = Date.now();
      const res = await hb.api(u, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: -1 });
      const waited = Date.now() - started;
      assert.deepEqual(res.body, { result: 'success', msg: '', events: [{ type: 'heartbeat', id: 0 }], queue_id: reg.body.queue_id });
      assert.ok(waited >= 900 && waited < 3000, `waited ${waited} ms`);
      // The heartbeat is an ordinary event: acknowledging it empties the queue.
      const next = await hb.api(u, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: 0, dont_block: true });
      assert.deepEqual(next.body, { result: 'success', msg: '', events: [] });
    } finally {
      await hb.close();
    }
  });

  it('releases parked polls when the server shuts down', async () => {
    const s = await startTestServer();
    const u = s.users.hamlet;
    const reg = await s.api(u, 'POST', '/register', { fetch_event_types: [] });
    const pending = s.api(u, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: -1 });
    await parked(s, u, reg.body.queue_id);
    const started = Date.now();
    await s.close();
    const res = await pending;
    assert.ok(Date.now() - started < 2000);
    assert.deepEqual(res.body, { result: 'success', msg: '', events: [], queue_id: reg.body.queue_id });
  });
});

// PATCH /realm: each setting with Zulip's checks, permission, reply keys, realm event over the wire and
// the /register state that follows. Each test registers a fresh queue; realmEvents() shows all it holds.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, systemGroups } from '../helpers/chat';

/** Zulip's RequestVariableConversionError body. */
const badValue = (name: string, value: string | number) =>
  err(`Bad value for '${name}': ${value}`, 'REQUEST_VARIABLE_INVALID', { var_name: name, bad_value: value });

let t: TestServer;
let queue = '';
let groups: ReturnType<typeof systemGroups>;
before(async () => {
  t = await startTestServer();
  groups = systemGroups(t);
});
after(() => t.close());

/** Othello (a member) listens for realm events. */
beforeEach(async () => {
  const res = await t.api(t.users.othello, 'POST', '/register', { event_types: ['realm'], fetch_event_types: [] });
  assert.equal(res.status, 200, res.text);
  queue = res.body.queue_id;
});

async function realmEvents(): Promise<Record<string, unknown>[]> {
  const res = await t.api(t.users.othello, 'GET', '/events', { queue_id: queue, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id: _id, ...e }: any) => e);
}

async function state(keys: string[]): Promise<Record<string, unknown>> {
  const res = await t.api(t.users.othello, 'POST', '/register', { fetch_event_types: ['realm'] });
  assert.equal(res.status, 200, res.text);
  return Object.fromEntries(keys.map((k) => [k, res.body[k]]));
}

async function patch(user: TestUser, params: Record<string, unknown>, status = 200) {
  const res = await t.api(user, 'PATCH', '/realm', params);
  assert.equal(res.status, status, res.text);
  return res.body;
}

const ok = (extra: Record<string, unknown> = {}) => ({ result: 'success', msg: '', ...extra });
const update = (property: string, value: unknown) => ({ type: 'realm', op: 'update', property, value });
const updateDict = (data: Record<string, unknown>) => ({ type: 'realm', op: 'update_dict', property: 'default', data });

describe('PATCH /realm: who may', () => {
  it('administrators only; some settings owners only', async () => {
    const { hamlet, moderator, admin } = t.users;
    for (const u of [hamlet, moderator]) {
      assert.deepEqual(await patch(u, { name: 'X' }, 400), err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
    const owner = err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    assert.deepEqual(await patch(admin, { message_retention_days: 30 }, 400), owner);
    assert.deepEqual(await patch(admin, { waiting_period_threshold: 3 }, 400), owner);
    for (const s of ['can_invite_users_group', 'can_create_groups', 'can_manage_all_groups', 'create_multiuse_invite_group']) {
      assert.deepEqual(await patch(admin, { [s]: { new: groups['role:administrators'] } }, 400), owner, s);
    }
    // A refused request changes nothing, even its allowed parts.
    assert.deepEqual(await patch(admin, { name: 'Renamed', waiting_period_threshold: 3 }, 400), owner);
    assert.deepEqual(await realmEvents(), []);
    assert.deepEqual(await state(['realm_name']), { realm_name: 'Test Org' });
  });
});

describe('PATCH /realm: simple settings', () => {
  it('name and description: "updated" in the reply, the value in the event and the state', async () => {
    const { admin } = t.users;
    assert.deepEqual(await patch(admin, { name: 'Elsinore', description: 'A **castle**' }), ok({ description: 'updated', name: 'updated' }));
    assert.deepEqual(await realmEvents(), [update('description', 'A **castle**'), update('name', 'Elsinore')]);
    assert.deepEqual(await state(['realm_name', 'realm_description']), { realm_name: 'Elsinore', realm_description: 'A **castle**' });
    // Unchanged: nothing to say.
    assert.deepEqual(await patch(admin, { name: 'Elsinore' }), ok());
    assert.deepEqual(await patch(admin, { name: 'n'.repeat(41) }, 400), err('name is too long (limit: 40 characters)'));
    assert.deepEqual(await patch(admin, { description: 'd'.repeat(1001) }, 400), err('description is too long (limit: 1000 characters)'));
    assert.deepEqual(await realmEvents(), [update('description', 'A **castle**'), update('name', 'Elsinore')]);
  });

  it('default_language', async () => {
    const { admin } = t.users;
    assert.deepEqual(await patch(admin, { default_language: 'de' }), ok({ default_language: 'updated' }));
    assert.deepEqual(await realmEvents(), [update('default_language', 'de')]);
    assert.deepEqual(await state(['realm_default_language']), { realm_default_language: 'de' });
    assert.deepEqual(await patch(admin, { default_language: 'xx' }, 400), err("Invalid language 'xx'"));
    assert.deepEqual(await patch(admin, { default_language: 'constructor' }, 400), err("Invalid language 'constructor'"));
    await patch(admin, { default_language: 'en' });
  });

  it('allow_message_editing and message_content_edit_limit_seconds: update_dict events', async () => {
    const { admin } = t.users;
    assert.deepEqual(await patch(admin, { allow_message_editing: false }), ok({ allow_message_editing: false }));
    assert.deepEqual(await patch(admin, { message_content_edit_limit_seconds: 600 }), ok({ message_content_edit_limit_seconds: 600 }));
    assert.deepEqual(await patch(admin, { message_content_edit_limit_seconds: 'unlimited' }), ok({ message_content_edit_limit_seconds: null }));
    assert.deepEqual(await patch(admin, { message_content_edit_limit_seconds: 'unlimited' }), ok());
    assert.deepEqual(await realmEvents(), [
      updateDict({ allow_message_editing: false }),
      updateDict({ message_content_edit_limit_seconds: 600 }),
      updateDict({ message_content_edit_limit_seconds: null }),
    ]);
    assert.deepEqual(await state(['realm_allow_message_editing', 'realm_message_content_edit_limit_seconds']), {
      realm_allow_message_editing: false,
      realm_message_content_edit_limit_seconds: null,
    });
    for (const bad of [0, -5, 'soon']) {
      assert.deepEqual(
        await patch(admin, { message_content_edit_limit_seconds: bad }, 400),
        badValue('message_content_edit_limit_seconds', bad),
      );
    }
    await patch(admin, { allow_message_editing: true });
  });

  it('message_content_delete_limit_seconds: update events', async () => {
    const { admin } = t.users;
    assert.deepEqual(await patch(admin, { message_content_delete_limit_seconds: 3600 }), ok({ message_content_delete_limit_seconds: 3600 }));
    assert.deepEqual(await state(['realm_message_content_delete_limit_seconds']), { realm_message_content_delete_limit_seconds: 3600 });
    assert.deepEqual(await patch(admin, { message_content_delete_limit_seconds: 'unlimited' }), ok({ message_content_delete_limit_seconds: null }));
    assert.deepEqual(await realmEvents(), [update('message_content_delete_limit_seconds', 3600), update('message_content_delete_limit_seconds', null)]);
    assert.deepEqual(await patch(admin, { message_content_delete_limit_seconds: -1 }, 400), badValue('message_content_delete_limit_seconds', -1));
  });

  it('message_retention_days (owners): days, or "unlimited" shown as -1', async () => {
    const { owner } = t.users;
    assert.deepEqual(await patch(owner, { message_retention_days: 30 }), ok({ message_retention_days: 30 }));
    assert.deepEqual(await state(['realm_message_retention_days']), { realm_message_retention_days: 30 });
    assert.deepEqual(await patch(owner, { message_retention_days: 'unlimited' }), ok({ message_retention_days: -1 }));
    assert.deepEqual(await realmEvents(), [update('message_retention_days', 30), update('message_retention_days', -1)]);
    assert.deepEqual(await state(['realm_message_retention_days']), { realm_message_retention_days: -1 });
    assert.deepEqual(await patch(owner, { message_retention_days: 0 }, 400), badValue('message_retention_days', 0));
    assert.deepEqual(await patch(owner, { message_retention_days: 'never' }, 400), badValue('message_retention_days', 'never'));
  });

  it('mandatory_topics (topics_policy in Zulip 10 words), waiting_period_threshold (owners), send_channel_events_messages', async () => {
    const { owner } = t.users;
    assert.deepEqual(await patch(owner, { mandatory_topics: true, waiting_period_threshold: 4, send_channel_events_messages: true }), ok({
      mandatory_topics: true,
      send_channel_events_messages: true,
      waiting_period_threshold: 4,
    }));
    // mandatory_topics is announced as topics_policy is, with both spellings in one update_dict.
    assert.deepEqual(await realmEvents(), [
      update('send_channel_events_messages', true),
      updateDict({ topics_policy: 'disable_empty_topic', mandatory_topics: true }),
      update('waiting_period_threshold', 4),
    ]);
    assert.deepEqual(
      await state(['realm_mandatory_topics', 'realm_topics_policy', 'realm_waiting_period_threshold', 'realm_send_channel_events_messages']),
      {
        realm_mandatory_topics: true,
        realm_topics_policy: 'disable_empty_topic',
        realm_waiting_period_threshold: 4,
        realm_send_channel_events_messages: true,
      },
    );
    assert.deepEqual(await patch(owner, { mandatory_topics: true }), ok());
    assert.deepEqual(await patch(owner, { waiting_period_threshold: -1 }, 400), err('waiting_period_threshold is too small'));
    assert.deepEqual(await patch(owner, { mandatory_topics: '"yes"' }, 400), err('mandatory_topics is not a boolean'));
    await patch(owner, { mandatory_topics: false, waiting_period_threshold: 0, send_channel_events_messages: false });
  });
});

describe('PATCH /realm: sign-up and moving settings', () => {
  it('invite_required, emails_restricted_to_domains, disallow_disposable_email_addresses (owners); enable_spectator_access', async () => {
    const { admin, owner } = t.users;
    const ownerOnly = err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
    for (const s of ['invite_required', 'emails_restricted_to_domains', 'disallow_disposable_email_addresses']) {
      assert.deepEqual(await patch(admin, { [s]: false }, 400), ownerOnly, s);
    }
    assert.deepEqual(
      await patch(owner, { invite_required: false, emails_restricted_to_domains: true, disallow_disposable_email_addresses: false, enable_spectator_access: true }),
      ok({ disallow_disposable_email_addresses: false, emails_restricted_to_domains: true, enable_spectator_access: true, invite_required: false }),
    );
    assert.deepEqual(await realmEvents(), [
      update('disallow_disposable_email_addresses', false),
      update('emails_restricted_to_domains', true),
      update('enable_spectator_access', true),
      update('invite_required', false),
    ]);
    const keys = ['realm_invite_required', 'realm_emails_restricted_to_domains', 'realm_disallow_disposable_email_addresses', 'realm_enable_spectator_access'];
    assert.deepEqual(await state(keys), {
      realm_invite_required: false,
      realm_emails_restricted_to_domains: true,
      realm_disallow_disposable_email_addresses: false,
      realm_enable_spectator_access: true,
    });
    await patch(owner, { invite_required: true, emails_restricted_to_domains: false, disallow_disposable_email_addresses: true, enable_spectator_access: false });
  });

  it('move_messages_within_stream_limit_seconds and move_messages_between_streams_limit_seconds', async () => {
    const { admin } = t.users;
    assert.deepEqual(
      await patch(admin, { move_messages_within_stream_limit_seconds: 'unlimited', move_messages_between_streams_limit_seconds: 60 }),
      ok({ move_messages_within_stream_limit_seconds: null, move_messages_between_streams_limit_seconds: 60 }),
    );
    assert.deepEqual(await realmEvents(), [update('move_messages_within_stream_limit_seconds', null), update('move_messages_between_streams_limit_seconds', 60)]);
    assert.deepEqual(await state(['realm_move_messages_within_stream_limit_seconds', 'realm_move_messages_between_streams_limit_seconds']), {
      realm_move_messages_within_stream_limit_seconds: null,
      realm_move_messages_between_streams_limit_seconds: 60,
    });
    assert.deepEqual(await patch(admin, { move_messages_between_streams_limit_seconds: 0 }, 400), badValue('move_messages_between_streams_limit_seconds', 0));
    await patch(admin, { move_messages_within_stream_limit_seconds: 604800, move_messages_between_streams_limit_seconds: 604800 });
  });
});

describe('PATCH /realm: channel settings', () => {
  it('new_stream_announcements_stream_id, signup_announcements_stream_id, zulip_update_announcements_stream_id', async () => {
    const { admin, hamlet } = t.users;
    const hidden = await createChannel(t, hamlet, 'hamlet only', [hamlet], { invite_only: true });
    // The organization's first public channel takes the new-channel and Zulip-update roles.
    const first = await createChannel(t, admin, 'first', [admin]);
    const news = await createChannel(t, admin, 'announcements', [admin]);
    assert.deepEqual(await realmEvents(), [update('new_stream_announcements_stream_id', first), update('zulip_update_announcements_stream_id', first)]);
    assert.deepEqual(await patch(admin, { new_stream_announcements_stream_id: news, signup_announcements_stream_id: news, zulip_update_announcements_stream_id: -1 }), ok({
      new_stream_announcements_stream_id: news,
      signup_announcements_stream_id: news,
      zulip_update_announcements_stream_id: -1,
    }));
    assert.deepEqual((await realmEvents()).slice(2), [
      update('new_stream_announcements_stream_id', news),
      update('signup_announcements_stream_id', news),
      update('zulip_update_announcements_stream_id', -1),
    ]);
    const keys = ['realm_new_stream_announcements_stream_id', 'realm_signup_announcements_stream_id', 'realm_zulip_update_announcements_stream_id'];
    assert.deepEqual(await state(keys), {
      realm_new_stream_announcements_stream_id: news,
      realm_signup_announcements_stream_id: news,
      realm_zulip_update_announcements_stream_id: -1,
    });
    // The same channel again: nothing; -1 again: Zulip announces it anyway.
    assert.deepEqual(await patch(admin, { new_stream_announcements_stream_id: news }), ok());
    assert.deepEqual(await patch(admin, { zulip_update_announcements_stream_id: -1 }), ok({ zulip_update_announcements_stream_id: -1 }));
    // A private channel is fine (administrators see every channel's metadata); a missing or archived one is not.
    assert.deepEqual(await patch(admin, { signup_announcements_stream_id: hidden }), ok({ signup_announcements_stream_id: hidden }));
    const archived = await createChannel(t, admin, 'archived', [admin]);
    assert.equal((await t.api(admin, 'DELETE', `/streams/${archived}`)).status, 200);
    for (const id of [99999, archived]) {
      assert.deepEqual(await patch(admin, { signup_announcements_stream_id: id }, 400), err('Invalid channel ID'));
    }
    assert.deepEqual(await patch(admin, { signup_announcements_stream_id: '"x"' }, 400), err('signup_announcements_stream_id is not an integer'));
    assert.deepEqual(await patch(admin, { signup_announcements_stream_id: -1 }), ok({ signup_announcements_stream_id: -1 }));
    assert.deepEqual(await state(keys), {
      realm_new_stream_announcements_stream_id: news,
      realm_signup_announcements_stream_id: -1,
      realm_zulip_update_announcements_stream_id: -1,
    });
  });
});

describe('PATCH /realm: group settings', () => {
  it('a system group by id ({new}), with update_dict events and the state', async () => {
    const { admin } = t.users;
    const admins = groups['role:administrators'];
    assert.deepEqual(await patch(admin, { can_create_public_channel_group: { new: admins } }), ok({ can_create_public_channel_group: admins }));
    assert.deepEqual(await patch(admin, { can_create_public_channel_group: { new: admins, old: admins } }), ok());
    assert.deepEqual(await realmEvents(), [updateDict({ can_create_public_channel_group: admins })]);
    assert.deepEqual(await state(['realm_can_create_public_channel_group']), { realm_can_create_public_channel_group: admins });
    // The creation permission now applies.
    const res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'by a member', subscribers: [] });
    assert.deepEqual(res.body, err('Insufficient permission'));
    assert.deepEqual(
      await patch(admin, { can_create_public_channel_group: { new: groups['role:members'], old: groups['role:moderators'] } }, 400),
      err("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH'),
    );
    assert.deepEqual(await patch(admin, { can_create_public_channel_group: { new: groups['role:members'], old: admins } }), ok({
      can_create_public_channel_group: groups['role:members'],
    }));
  });

  it('an anonymous group of members and subgroups', async () => {
    const { admin, hamlet } = t.users;
    const value = { direct_members: [hamlet.id], direct_subgroups: [groups['role:moderators']] };
    assert.deepEqual(await patch(admin, { can_move_messages_between_channels_group: { new: value } }), ok({ can_move_messages_between_channels_group: value }));
    assert.deepEqual(await realmEvents(), [updateDict({ can_move_messages_between_channels_group: value })]);
    assert.deepEqual(await state(['realm_can_move_messages_between_channels_group']), { realm_can_move_messages_between_channels_group: value });
    // Compared as sets: the same members in another order is no change.
    assert.deepEqual(
      await patch(admin, { can_move_messages_between_channels_group: { new: { direct_members: [hamlet.id], direct_subgroups: [groups['role:moderators']] }, old: value } }),
      ok(),
    );
    // One subgroup and no members is that group.
    assert.deepEqual(
      await patch(admin, { can_move_messages_between_channels_group: { new: { direct_members: [], direct_subgroups: [groups['role:members']] } } }),
      ok({ can_move_messages_between_channels_group: groups['role:members'] }),
    );
  });

  it("each setting's rules: system groups only, nobody, everyone, the allowed system groups", async () => {
    const { admin, owner, hamlet } = t.users;
    assert.deepEqual(
      await patch(admin, { can_access_all_users_group: { new: { direct_members: [hamlet.id], direct_subgroups: [] } } }, 400),
      err("'can_access_all_users_group' must be a system user group."),
    );
    assert.deepEqual(
      await patch(admin, { can_create_web_public_channel_group: { new: groups['role:members'] } }, 400),
      err("'can_create_web_public_channel_group' setting cannot be set to 'role:members' group."),
    );
    assert.deepEqual(
      await patch(owner, { can_manage_all_groups: { new: groups['role:nobody'] } }, 400),
      err("'can_manage_all_groups' setting cannot be set to 'role:nobody' group."),
    );
    assert.deepEqual(
      await patch(admin, { can_add_subscribers_group: { new: groups['role:everyone'] } }, 400),
      err("'can_add_subscribers_group' setting cannot be set to 'role:everyone' group."),
    );
    assert.deepEqual(
      await patch(admin, { can_delete_own_message_group: { new: groups['role:internet'] } }, 400),
      err("'can_delete_own_message_group' setting cannot be set to 'role:internet' group."),
    );
    assert.deepEqual(await patch(admin, { can_delete_own_message_group: { new: 99999 } }, 400), err('Invalid user group ID: 99999'));
    assert.deepEqual(await patch(admin, { can_resolve_topics_group: '"x"' }, 400), err('can_resolve_topics_group is not a valid group setting value'));
    assert.deepEqual(await realmEvents(), []);
    // Owners change the owner-only ones.
    assert.deepEqual(await patch(owner, { can_invite_users_group: { new: groups['role:administrators'] } }), ok({ can_invite_users_group: groups['role:administrators'] }));
    assert.deepEqual(await realmEvents(), [updateDict({ can_invite_users_group: groups['role:administrators'] })]);
  });
  it("several at once apply in Zulip's REALM_PERMISSION_GROUP_SETTINGS order; can_manage_billing_group is not changeable here", async () => {
    const { owner } = t.users;
    const mods = groups['role:moderators'];
    const res = await t.api(owner, 'PATCH', '/realm', {
      direct_message_initiator_group: { new: groups['role:members'] },
      can_add_subscribers_group: { new: mods },
      create_multiuse_invite_group: { new: mods },
      can_manage_billing_group: { new: mods },
    });
    assert.deepEqual(res.body, {
      ...ok({ create_multiuse_invite_group: mods, can_add_subscribers_group: mods, direct_message_initiator_group: groups['role:members'] }),
      ignored_parameters_unsupported: ['can_manage_billing_group'],
    });
    assert.deepEqual(await realmEvents(), [
      updateDict({ create_multiuse_invite_group: mods }),
      updateDict({ can_add_subscribers_group: mods }),
      updateDict({ direct_message_initiator_group: groups['role:members'] }),
    ]);
    const reg = await t.api(owner, 'POST', '/register', { fetch_event_types: ['realm'] });
    assert.equal(reg.body.realm_can_manage_billing_group, groups['role:administrators']);
    assert.deepEqual(reg.body.server_supported_permission_settings.realm.can_manage_billing_group, {
      require_system_group: false,
      allow_internet_group: false,
      allow_nobody_group: false,
      allow_everyone_group: false,
      default_group_name: 'role:administrators',
      default_for_system_groups: null,
      allowed_system_groups: [],
    });
    // Back to the defaults for the tests that follow.
    const back = { new: groups['role:everyone'] };
    assert.equal((await t.api(owner, 'PATCH', '/realm', { direct_message_initiator_group: back, can_add_subscribers_group: { new: groups['role:members'] }, create_multiuse_invite_group: { new: groups['role:administrators'] } })).status, 200);
  });
});

describe('PATCH /realm: topics, edit history and organization preferences', () => {
  it('topics_policy: the default for "inherit" channels; one update_dict with mandatory_topics; always in the reply', async () => {
    const { admin, hamlet, moderator } = t.users;
    const inherit = await createChannel(t, admin, 'inherits topics', [hamlet]);
    // zulip-compat: the reply always carries topics_policy, as its stored integer (3: disable_empty_topic).
    assert.deepEqual(await patch(admin, { topics_policy: 'disable_empty_topic' }), ok({ topics_policy: 3 }));
    assert.deepEqual(await patch(admin, { topics_policy: 'disable_empty_topic' }), ok({ topics_policy: 3 }));
    assert.deepEqual(await realmEvents(), [updateDict({ topics_policy: 'disable_empty_topic', mandatory_topics: true })]);
    assert.deepEqual(await state(['realm_topics_policy', 'realm_mandatory_topics']), { realm_topics_policy: 'disable_empty_topic', realm_mandatory_topics: true });
    let res = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: inherit, topic: '', content: 'x' });
    assert.deepEqual(res.body, err('Sending messages to the general chat is not allowed in this channel.'));
    // A channel with its own policy keeps it.
    const open = await createChannel(t, moderator, 'own topics policy', [hamlet], { topics_policy: 'allow_empty_topic' });
    res = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: open, topic: '', content: 'x' });
    assert.equal(res.status, 200, res.text);
    for (const bad of ['empty_topic_only', 'inherit', '"allow_empty_topic"']) {
      assert.deepEqual(await patch(admin, { topics_policy: bad }, 400), err('Invalid topics_policy'));
    }
    assert.deepEqual(await patch(hamlet, { topics_policy: 'allow_empty_topic' }, 400), err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    // The older spelling turns it back; topics_policy wins when both are given.
    assert.deepEqual(await patch(admin, { mandatory_topics: false }), ok({ mandatory_topics: false }));
    assert.deepEqual(await patch(admin, { mandatory_topics: false, topics_policy: 'allow_empty_topic' }), ok({ topics_policy: 2 }));
    assert.deepEqual(await realmEvents(), [
      updateDict({ topics_policy: 'disable_empty_topic', mandatory_topics: true }),
      updateDict({ topics_policy: 'allow_empty_topic', mandatory_topics: false }),
    ]);
    res = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: inherit, topic: '', content: 'x' });
    assert.equal(res.status, 200, res.text);
  });

  it('message_edit_history_visibility_policy: the policy in the event, allow_edit_history follows', async () => {
    const { admin, hamlet } = t.users;
    const channel = await createChannel(t, admin, 'history', [hamlet]);
    const res = await t.api(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 't', content: 'x' });
    const history = () => t.api(hamlet, 'GET', `/messages/${res.body.id}/history`);
    assert.deepEqual(await patch(admin, { message_edit_history_visibility_policy: 'none' }), ok({ message_edit_history_visibility_policy: 3 }));
    assert.deepEqual((await history()).body, err('Message edit history is disabled in this organization'));
    assert.deepEqual(await patch(admin, { message_edit_history_visibility_policy: 'moves' }), ok({ message_edit_history_visibility_policy: 2 }));
    assert.deepEqual(await patch(admin, { message_edit_history_visibility_policy: 'moves' }), ok({ message_edit_history_visibility_policy: 2 }));
    assert.equal((await history()).status, 200);
    assert.deepEqual(await realmEvents(), [update('message_edit_history_visibility_policy', 'none'), update('message_edit_history_visibility_policy', 'moves')]);
    assert.deepEqual(await state(['realm_message_edit_history_visibility_policy', 'realm_allow_edit_history']), {
      realm_message_edit_history_visibility_policy: 'moves',
      realm_allow_edit_history: true,
    });
    assert.deepEqual(await patch(admin, { message_edit_history_visibility_policy: 'some' }, 400), err('Invalid message_edit_history_visibility_policy'));
    assert.deepEqual(await patch(admin, { message_edit_history_visibility_policy: 'all' }), ok({ message_edit_history_visibility_policy: 1 }));
    assert.deepEqual(await state(['realm_message_edit_history_visibility_policy']), { realm_message_edit_history_visibility_policy: 'all' });
  });

  it('booleans, digest_weekday, giphy_rating, video_chat_provider, default_code_block_language (administrators)', async () => {
    const { admin } = t.users;
    const keys = [
      'default_code_block_language',
      'digest_emails_enabled',
      'digest_weekday',
      'enable_read_receipts',
      'giphy_rating',
      'inline_image_preview',
      'inline_url_embed_preview',
      'message_content_allowed_in_email_notifications',
      'video_chat_provider',
      'want_advertise_in_communities_directory',
    ];
    const realmKeys = keys.map((k) => `realm_${k}`);
    const defaults = {
      realm_default_code_block_language: '',
      realm_digest_emails_enabled: false,
      realm_digest_weekday: 1,
      realm_enable_read_receipts: true, // on for invite-only organizations, as Zulip's do_create_realm
      realm_giphy_rating: 2,
      realm_inline_image_preview: true,
      realm_inline_url_embed_preview: false,
      realm_message_content_allowed_in_email_notifications: true,
      realm_video_chat_provider: 1,
      realm_want_advertise_in_communities_directory: false,
    };
    assert.deepEqual(await state(realmKeys), defaults);
    const changed = {
      default_code_block_language: 'python',
      digest_emails_enabled: true,
      digest_weekday: 4,
      enable_read_receipts: false,
      giphy_rating: 0,
      inline_image_preview: false,
      inline_url_embed_preview: true,
      message_content_allowed_in_email_notifications: false,
      video_chat_provider: 0,
      want_advertise_in_communities_directory: true,
    };
    // Strings are "updated" in the reply; the event and the state have the value.
    assert.deepEqual(await patch(admin, changed), ok({ ...changed, default_code_block_language: 'updated' }));
    assert.deepEqual(await realmEvents(), keys.map((k) => update(k, changed[k as keyof typeof changed])));
    assert.deepEqual(await state(realmKeys), Object.fromEntries(keys.map((k) => [`realm_${k}`, changed[k as keyof typeof changed]])));
    // The same values again: nothing to say.
    assert.deepEqual(await patch(admin, changed), ok());
    assert.deepEqual(await patch(admin, { video_chat_provider: 3 }, 400), err('Invalid video_chat_provider 3'));
    assert.deepEqual(await patch(admin, { giphy_rating: 6 }, 400), err('Invalid giphy_rating 6'));
    assert.deepEqual(await patch(admin, { digest_weekday: 7 }, 400), err('Invalid digest_weekday'));
    assert.deepEqual(await patch(admin, { digest_weekday: '"monday"' }, 400), err('digest_weekday is not an integer'));
    assert.deepEqual(await patch(admin, { inline_image_preview: 'yes' }, 400), err('inline_image_preview is not valid JSON'));
    assert.deepEqual(await patch(t.users.moderator, { digest_emails_enabled: false }, 400), err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    // Back to the defaults (the empty default code block language is a change too).
    assert.deepEqual(
      await patch(admin, {
        default_code_block_language: '',
        digest_emails_enabled: false,
        digest_weekday: 1,
        enable_read_receipts: true,
        giphy_rating: 2,
        inline_image_preview: true,
        inline_url_embed_preview: false,
        message_content_allowed_in_email_notifications: true,
        video_chat_provider: 1,
        want_advertise_in_communities_directory: false,
      }),
      ok({
        default_code_block_language: 'updated',
        digest_emails_enabled: false,
        digest_weekday: 1,
        enable_read_receipts: true,
        giphy_rating: 2,
        inline_image_preview: true,
        inline_url_embed_preview: false,
        message_content_allowed_in_email_notifications: true,
        video_chat_provider: 1,
        want_advertise_in_communities_directory: false,
      }),
    );
    assert.deepEqual(await state(realmKeys), defaults);
  });

  it('jitsi_server_url: a JSON string, a URL or "default" (null)', async () => {
    const { admin } = t.users;
    // "default" while already default: nothing.
    assert.deepEqual(await patch(admin, { jitsi_server_url: '"default"' }), ok());
    assert.deepEqual(await patch(admin, { jitsi_server_url: '"https://jitsi.example.com"' }), ok({ jitsi_server_url: 'updated' }));
    assert.deepEqual(await state(['realm_jitsi_server_url']), { realm_jitsi_server_url: 'https://jitsi.example.com' });
    assert.deepEqual(await patch(admin, { jitsi_server_url: '"default"' }), ok({ jitsi_server_url: null }));
    assert.deepEqual(await realmEvents(), [update('jitsi_server_url', 'https://jitsi.example.com'), update('jitsi_server_url', null)]);
    assert.deepEqual(await state(['realm_jitsi_server_url']), { realm_jitsi_server_url: null });
    const notAllowed = err('jitsi_server_url is not an allowed_type');
    for (const bad of ['""', '"invalidURL"', '"javascript:alert(1)"', JSON.stringify(`https://jitsi.example.com/${'a'.repeat(180)}`)]) {
      assert.deepEqual(await patch(admin, { jitsi_server_url: bad }, 400), notAllowed, bad);
    }
    assert.deepEqual(await patch(admin, { jitsi_server_url: '12' }, 400), err('jitsi_server_url is not a string'));
    assert.deepEqual(await patch(admin, { jitsi_server_url: 'https://jitsi.example.com' }, 400), err('jitsi_server_url is not valid JSON'));
  });

  it('org_type: one of the organization types; announced and in the reply even when unchanged', async () => {
    const { admin } = t.users;
    assert.deepEqual(await patch(admin, { org_type: 20 }), ok({ org_type: 20 }));
    assert.deepEqual(await patch(admin, { org_type: 20 }), ok({ org_type: 20 }));
    assert.deepEqual(await realmEvents(), [update('org_type', 20), update('org_type', 20)]);
    assert.deepEqual(await state(['realm_org_type']), { realm_org_type: 20 });
    assert.deepEqual(await patch(admin, { org_type: 15 }, 400), err('Invalid org_type'));
    await patch(admin, { org_type: 0 });
  });
});

describe('PATCH /realm: account-change, guest, welcome-email and push settings', () => {
  const SETTINGS = [
    ['avatar_changes_disabled', false],
    ['email_changes_disabled', false],
    ['enable_guest_user_dm_warning', true],
    ['enable_guest_user_indicator', true],
    ['name_changes_disabled', false],
    ['require_e2ee_push_notifications', false],
    ['require_unique_names', false],
    ['send_welcome_emails', true],
  ] as const;

  it('each: its default in /register, changed by administrators with an update event, back again', async () => {
    const { admin } = t.users;
    assert.deepEqual(await state(SETTINGS.map(([s]) => `realm_${s}`)), Object.fromEntries(SETTINGS.map(([s, d]) => [`realm_${s}`, d])));
    // All at once: the reply and the events in Zulip's order (its parameters, alphabetical).
    const flipped = Object.fromEntries(SETTINGS.map(([s, d]) => [s, !d]));
    assert.deepEqual(await patch(admin, flipped), ok(flipped));
    assert.deepEqual(await realmEvents(), SETTINGS.map(([s, d]) => update(s, !d)));
    assert.deepEqual(await state(SETTINGS.map(([s]) => `realm_${s}`)), Object.fromEntries(SETTINGS.map(([s, d]) => [`realm_${s}`, !d])));
    // Unchanged values: nothing in the reply, no event.
    assert.deepEqual(await patch(admin, flipped), ok());
    assert.deepEqual(await realmEvents(), SETTINGS.map(([s, d]) => update(s, !d)));
    const back = Object.fromEntries(SETTINGS.map(([s, d]) => [s, d]));
    assert.deepEqual(await patch(admin, back), ok(back));
  });

  it('refuses non-booleans and non-administrators, changing nothing', async () => {
    const { admin, moderator } = t.users;
    for (const [s] of SETTINGS) {
      assert.deepEqual(await patch(admin, { [s]: 'yes' }, 400), err(`${s} is not valid JSON`));
      assert.deepEqual(await patch(admin, { [s]: 1 }, 400), err(`${s} is not a boolean`));
      assert.deepEqual(await patch(moderator, { [s]: true }, 400), err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
    assert.deepEqual(await realmEvents(), []);
  });

  it('name_changes_disabled: a member\'s new name is dropped silently; administrators still rename', async () => {
    const { admin, hamlet } = t.users;
    await patch(admin, { name_changes_disabled: true });
    try {
      assert.deepEqual((await t.api(hamlet, 'PATCH', '/settings', { full_name: 'Prince Hamlet' })).body, ok());
      assert.equal((await t.api(hamlet, 'GET', '/users/me')).body.full_name, hamlet.fullName);
      assert.deepEqual((await t.api(admin, 'PATCH', '/settings', { full_name: 'Iago the Admin' })).body, ok());
      assert.equal((await t.api(admin, 'GET', '/users/me')).body.full_name, 'Iago the Admin');
      // An administrator may still rename others.
      assert.deepEqual((await t.api(admin, 'PATCH', `/users/${hamlet.id}`, { full_name: 'Prince Hamlet' })).body, ok());
      assert.equal((await t.api(hamlet, 'GET', '/users/me')).body.full_name, 'Prince Hamlet');
    } finally {
      await t.api(admin, 'PATCH', `/users/${hamlet.id}`, { full_name: hamlet.fullName });
      await t.api(admin, 'PATCH', '/settings', { full_name: admin.fullName });
      await patch(admin, { name_changes_disabled: false });
    }
  });

  it('email_changes_disabled: members are refused, administrators are not', async () => {
    const { admin, hamlet } = t.users;
    await patch(admin, { email_changes_disabled: true });
    try {
      const res = await t.api(hamlet, 'PATCH', '/settings', { email: 'new-hamlet@example.com' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Email address changes are disabled in this organization.'));
      assert.equal((await t.api(admin, 'PATCH', '/settings', { email: 'new-iago@example.com' })).status, 200);
    } finally {
      await patch(admin, { email_changes_disabled: false });
    }
  });

  it('require_unique_names: no two accounts with names equal but for case and compatibility forms', async () => {
    const { admin, hamlet, othello, owner } = t.users;
    await patch(admin, { require_unique_names: true });
    const UNIQUE = err('Unique names required in this organization.');
    try {
      for (const name of ['othello', 'OTHELLO', '𝕠𝕥𝕙𝕖𝕝𝕝𝕠', 'ｏｔｈｅｌｌｏ']) {
        assert.deepEqual((await t.api(hamlet, 'PATCH', '/settings', { full_name: name })).body, UNIQUE, name);
        assert.deepEqual((await t.api(admin, 'PATCH', `/users/${hamlet.id}`, { full_name: name })).body, UNIQUE, name);
      }
      // Creating accounts and bots, too; a deactivated account's name still counts.
      assert.deepEqual((await t.api(owner, 'POST', '/users', { email: 'twin@example.com', password: 'a-long-password-1', full_name: 'Othello' })).body, UNIQUE);
      assert.deepEqual((await t.api(hamlet, 'POST', '/bots', { short_name: 'twin', full_name: 'othello' })).body, UNIQUE);
      assert.deepEqual((await t.api(hamlet, 'PATCH', `/bots/${t.users.bot.id}`, { full_name: 'King hamlet' })).body, UNIQUE);
      const leaving = (await t.api(owner, 'POST', '/users', { email: 'leaving@example.com', password: 'a-long-password-1', full_name: 'Yorick' })).body.user_id;
      await t.api(owner, 'DELETE', `/users/${leaving}`);
      assert.deepEqual((await t.api(hamlet, 'PATCH', '/settings', { full_name: 'yorick' })).body, UNIQUE);
      // One's own name in another case is not a clash; the system bots' names are not taken.
      assert.deepEqual((await t.api(othello, 'PATCH', '/settings', { full_name: 'OTHELLO' })).body, ok());
      assert.deepEqual((await t.api(othello, 'PATCH', '/settings', { full_name: 'Othello' })).body, ok());
    } finally {
      await patch(admin, { require_unique_names: false });
    }
    // Off again: the same name is fine.
    assert.deepEqual((await t.api(admin, 'PATCH', `/users/${hamlet.id}`, { full_name: 'Othello' })).body, ok());
    await t.api(admin, 'PATCH', `/users/${hamlet.id}`, { full_name: hamlet.fullName });
  });

  it('authentication_methods (owners): only the password backend, which stays on', async () => {
    const { admin, owner } = t.users;
    assert.deepEqual(await state(['realm_authentication_methods']), { realm_authentication_methods: { Email: { enabled: true, available: true } } });
    // Unchanged: success with nothing to report.
    assert.deepEqual(await patch(owner, { authentication_methods: { Email: true } }), ok());
    assert.deepEqual(await patch(admin, { authentication_methods: { Email: true } }, 400), err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
    assert.deepEqual(
      await patch(owner, { authentication_methods: { Email: true, GitHub: true } }, 400),
      err("Invalid authentication method: GitHub. Valid methods are: ['Email']"),
    );
    assert.deepEqual(await patch(owner, { authentication_methods: { Email: false } }, 400), err('At least one authentication method must be enabled.'));
    assert.deepEqual(await patch(owner, { authentication_methods: {} }, 400), err('At least one authentication method must be enabled.'));
    assert.deepEqual(await patch(owner, { authentication_methods: { Email: 'yes' } }, 400), err('authentication_methods["Email"] is not a boolean'));
    assert.deepEqual(await patch(owner, { authentication_methods: [true] }, 400), err('authentication_methods is not a dict'));
    assert.deepEqual(await realmEvents(), []);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendToChannel, SUCCESS, systemGroups, type SystemGroupName } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

const NOW = 1_700_000_000;
/** Zulip's RequestVariableConversionError body. */
const badValue = (name: string, value: string | number) =>
  err(`Bad value for '${name}': ${value}`, 'REQUEST_VARIABLE_INVALID', { var_name: name, bad_value: value });
let t: TestServer;
let g: Record<SystemGroupName, number>;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => NOW * 1000 } });
  g = systemGroups(t);
});
after(() => t.close());

/** The channel object Zulip shows for a channel created with defaults by `creatorId`. */
function defaultChannel(id: number, name: string, creatorId: number, overrides: Record<string, unknown> = {}) {
  return {
    stream_id: id,
    name,
    is_archived: false,
    description: '',
    rendered_description: '',
    date_created: NOW,
    creator_id: creatorId,
    invite_only: false,
    is_web_public: false,
    stream_post_policy: 1,
    message_retention_days: null,
    history_public_to_subscribers: true,
    first_message_id: null,
    folder_id: null,
    topics_policy: 'inherit',
    is_recently_active: true,
    is_announcement_only: false,
    subscriber_count: 0,
    stream_weekly_traffic: null,
    can_add_subscribers_group: g['role:nobody'],
    can_administer_channel_group: { direct_members: [creatorId], direct_subgroups: [] },
    can_create_topic_group: g['role:everyone'],
    can_delete_any_message_group: g['role:nobody'],
    can_delete_own_message_group: g['role:nobody'],
    can_move_messages_out_of_channel_group: g['role:nobody'],
    can_move_messages_within_channel_group: g['role:nobody'],
    can_remove_subscribers_group: g['role:administrators'],
    can_resolve_topics_group: g['role:nobody'],
    can_send_message_group: g['role:everyone'],
    can_subscribe_group: g['role:nobody'],
    ...overrides,
  };
}

/** Zulip's IncompatibleParametersError for protected history with restricted topic creation. */
const incompatible = err('Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group', 'BAD_REQUEST', {
  parameters: 'history_public_to_subscribers, can_create_topic_group',
});

async function getChannel(id: number, user = t.users.owner) {
  const res = await t.api(user, 'GET', `/streams/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.stream;
}

describe('POST /channels/create', () => {
  it('creates a public channel with Zulip defaults and answers {id}', async () => {
    const u = t.users;
    const res = await t.api(u.hamlet, 'POST', '/channels/create', { name: 'design', subscribers: [u.hamlet.id, u.othello.id] });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['id', 'msg', 'result']);
    const id = res.body.id;
    assert.deepEqual(await getChannel(id), defaultChannel(id, 'design', u.hamlet.id, { subscriber_count: 2 }));
    const members = await t.api(u.hamlet, 'GET', `/streams/${id}/members`);
    assert.deepEqual(members.body, { ...SUCCESS, subscribers: [u.hamlet.id, u.othello.id] });
  });

  it('does not subscribe the creator unless listed', async () => {
    const id = await createChannel(t, t.users.hamlet, 'no-creator', [t.users.othello]);
    const members = await t.api(t.users.hamlet, 'GET', `/streams/${id}/members`);
    assert.deepEqual(members.body.subscribers, [t.users.othello.id]);
  });

  it('takes every field, group settings as an id or as {direct_members, direct_subgroups}', async () => {
    const u = t.users;
    const folder = await t.api(u.admin, 'POST', '/channel_folders/create', { name: 'Engineering', description: 'eng' });
    assert.equal(folder.status, 200, folder.text);
    const res = await t.api(u.owner, 'POST', '/channels/create', {
      name: '  backend  ',
      description: 'Server work',
      subscribers: [u.owner.id, u.bot.id],
      invite_only: true,
      history_public_to_subscribers: true,
      message_retention_days: 30,
      folder_id: folder.body.channel_folder_id,
      topics_policy: 'disable_empty_topic',
      can_add_subscribers_group: g['role:moderators'],
      can_administer_channel_group: { direct_members: [u.hamlet.id], direct_subgroups: [g['role:moderators']] },
      can_create_topic_group: g['role:members'],
      can_delete_any_message_group: g['role:administrators'],
      can_delete_own_message_group: g['role:members'],
      can_move_messages_out_of_channel_group: g['role:moderators'],
      can_move_messages_within_channel_group: { direct_members: [], direct_subgroups: [g['role:members']] },
      can_remove_subscribers_group: g['role:moderators'],
      can_resolve_topics_group: g['role:everyone'],
      can_send_message_group: { direct_members: [u.owner.id, u.othello.id], direct_subgroups: [] },
      can_subscribe_group: g['role:members'],
    });
    assert.equal(res.status, 200, res.text);
    const id = res.body.id;
    const stream = await getChannel(id);
    assert.ok(stream.rendered_description.includes('Server work'));
    assert.deepEqual(
      stream,
      defaultChannel(id, 'backend', u.owner.id, {
        description: 'Server work',
        rendered_description: stream.rendered_description,
        invite_only: true,
        history_public_to_subscribers: true,
        message_retention_days: 30,
        folder_id: folder.body.channel_folder_id,
        topics_policy: 'disable_empty_topic',
        subscriber_count: 2,
        can_add_subscribers_group: g['role:moderators'],
        can_administer_channel_group: { direct_members: [u.hamlet.id], direct_subgroups: [g['role:moderators']] },
        can_create_topic_group: g['role:members'],
        can_delete_any_message_group: g['role:administrators'],
        can_delete_own_message_group: g['role:members'],
        can_move_messages_out_of_channel_group: g['role:moderators'],
        // One subgroup and no members is that group itself, as in Zulip.
        can_move_messages_within_channel_group: g['role:members'],
        can_remove_subscribers_group: g['role:moderators'],
        can_resolve_topics_group: g['role:everyone'],
        can_send_message_group: { direct_members: [u.owner.id, u.othello.id], direct_subgroups: [] },
        can_subscribe_group: g['role:members'],
      }),
    );
  });

  it('makes private channels protected-history by default and keeps the public default', async () => {
    const id = await createChannel(t, t.users.hamlet, 'secret-default', [t.users.hamlet], { invite_only: true });
    const s = await getChannel(id);
    assert.equal(s.invite_only, true);
    assert.equal(s.history_public_to_subscribers, false);
  });

  it('takes message_retention_days raw, JSON-encoded, and the legacy "forever"', async () => {
    const cases: [string, unknown][] = [
      ['unlimited', -1],
      ['"unlimited"', -1],
      ['forever', -1],
      ['"forever"', -1],
      ['realm_default', null],
      ['"realm_default"', null],
      ['7', 7],
    ];
    let i = 0;
    for (const [raw, stored] of cases) {
      const res = await t.api(t.users.owner, 'POST', '/channels/create', { name: `retention-${i++}`, subscribers: [], message_retention_days: raw });
      assert.equal(res.status, 200, `${raw}: ${res.text}`);
      assert.equal((await getChannel(res.body.id)).message_retention_days, stored, raw);
    }
    const bad = await t.api(t.users.owner, 'POST', '/channels/create', { name: 'retention-bad', subscribers: [], message_retention_days: 'sometimes' });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, badValue('message_retention_days', 'sometimes'));
  });

  it('lets only owners set message_retention_days', async () => {
    const res = await t.api(t.users.admin, 'POST', '/channels/create', { name: 'retention-admin', subscribers: [], message_retention_days: 5 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
  });

  it('answers 409 CHANNEL_ALREADY_EXISTS with channel_name, case-insensitively', async () => {
    await createChannel(t, t.users.hamlet, 'Existing', []);
    const res = await t.api(t.users.othello, 'POST', '/channels/create', { name: 'existing', subscribers: [] });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, err("Channel 'Existing' already exists", 'CHANNEL_ALREADY_EXISTS', { channel_name: 'Existing' }));
  });

  it('refuses guests', async () => {
    const res = await t.api(t.users.guest, 'POST', '/channels/create', { name: 'guest-made', subscribers: [] });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Not allowed for guest users'));
  });

  it('requires name and subscribers', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/channels/create', { subscribers: [] });
    assert.deepEqual(res.body, err("Missing 'name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'name' }));
    res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'x' });
    assert.deepEqual(res.body, err("Missing 'subscribers' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'subscribers' }));
  });

  it('bounds the name and description', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '   ' }, 'name cannot be blank'],
      [{ name: 'x'.repeat(61) }, 'Channel name too long (limit: 60 characters).'],
      [{ name: 'bad\u0001name' }, 'Invalid character in channel name, at position 4.'],
      [{ name: 'long-desc', description: 'd'.repeat(1025) }, 'description is too long (limit: 1024 characters)'],
    ];
    for (const [params, msg] of cases) {
      const res = await t.api(t.users.hamlet, 'POST', '/channels/create', { subscribers: [], ...params });
      assert.equal(res.status, 400, msg);
      assert.deepEqual(res.body, err(msg));
    }
    // Exactly at the bounds is fine (code points, not UTF-16 units).
    const name = '🙂'.repeat(60);
    const ok = await t.api(t.users.hamlet, 'POST', '/channels/create', { name, subscribers: [], description: 'd'.repeat(1024) });
    assert.equal(ok.status, 200, ok.text);
  });

  it('refuses unknown subscribers with "No such user"', async () => {
    const res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'ghosts', subscribers: [99999] });
    assert.deepEqual(res.body, err('No such user'));
    assert.equal((await t.api(t.users.hamlet, 'GET', '/get_stream_id', { stream: 'ghosts' })).status, 400);
  });

  it('is_default_stream: administrators only, and never private', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'default-by-member', subscribers: [], is_default_stream: true });
    assert.deepEqual(res.body, err('Insufficient permission'));
    res = await t.api(t.users.admin, 'POST', '/channels/create', { name: 'default-private', subscribers: [], is_default_stream: true, invite_only: true });
    assert.deepEqual(res.body, err('A default channel cannot be private.'));
    const q = await registerQueue(t, t.users.hamlet, ['default_streams']);
    const guestQueue = await registerQueue(t, t.users.guest, ['default_streams']);
    res = await t.api(t.users.admin, 'POST', '/channels/create', { name: 'default-ok', subscribers: [], is_default_stream: true });
    assert.equal(res.status, 200, res.text);
    const defaults = await t.api(t.users.hamlet, 'GET', '/default_streams');
    assert.deepEqual(
      defaults.body.default_streams.map((s: { name: string }) => s.name),
      ['default-ok'],
    );
    // Zulip's notify_default_streams: the ids (FL 330), to non-guests.
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, q), [{ type: 'default_streams', default_streams: [res.body.id] }]);
    assert.deepEqual(await queuedEvents(t, t.users.guest, guestQueue), []);
  });

  it('web-public channels need the server setting', async () => {
    const res = await t.api(t.users.owner, 'POST', '/channels/create', { name: 'web', subscribers: [], is_web_public: true });
    assert.deepEqual(res.body, err('Web-public channels are not enabled.'));
  });

  it('can_create_topic_group must be role:everyone for private channels with protected history', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/channels/create', {
      name: 'protected-topics',
      subscribers: [],
      invite_only: true,
      history_public_to_subscribers: false,
      can_create_topic_group: g['role:members'],
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, incompatible);
    // Allowed with shared history, and for public channels.
    res = await t.api(t.users.hamlet, 'POST', '/channels/create', {
      name: 'shared-topics',
      subscribers: [],
      invite_only: true,
      history_public_to_subscribers: true,
      can_create_topic_group: g['role:members'],
    });
    assert.equal(res.status, 200, res.text);
  });

  it('refuses unknown groups in group settings', async () => {
    const res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'bad-group', subscribers: [], can_send_message_group: 99999 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid user group ID: 99999'));
  });
});

describe('GET /streams', () => {
  it('lists public and subscribed channels; private ones only to subscribers', async () => {
    const u = t.users;
    await createChannel(t, u.hamlet, 'listing-public', []);
    const priv = await createChannel(t, u.hamlet, 'listing-private', [u.hamlet], { invite_only: true });
    const names = async (user: typeof u.hamlet, params: Record<string, unknown> = {}) => {
      const res = await t.api(user, 'GET', '/streams', params);
      assert.equal(res.status, 200, res.text);
      return res.body.streams.map((s: { name: string }) => s.name) as string[];
    };
    const hamlet = await names(u.hamlet);
    assert.ok(hamlet.includes('listing-public') && hamlet.includes('listing-private'));
    const othello = await names(u.othello);
    assert.ok(othello.includes('listing-public') && !othello.includes('listing-private'));
    // include_public=false: only subscribed ones.
    assert.deepEqual(await names(u.othello, { include_public: false }), (await names(u.othello)).filter((n) => n === 'design' || n === 'no-creator'));
    // Admins see private channels with include_all.
    assert.ok((await names(u.admin, { include_all: true })).includes('listing-private'));
    // Guests see only what they are subscribed to (none here).
    assert.deepEqual(await names(u.guest), []);
    const guestAll = await t.api(u.guest, 'GET', '/streams', { include_all: true });
    assert.deepEqual(guestAll.body, err('User not authorized for this query'));
    void priv;
  });
});

describe('GET /streams/{stream_id} and GET /get_stream_id', () => {
  it('answers the same for missing and inaccessible channels', async () => {
    const priv = await createChannel(t, t.users.hamlet, 'hidden-one', [t.users.hamlet], { invite_only: true });
    for (const id of [priv, 99999]) {
      const res = await t.api(t.users.othello, 'GET', `/streams/${id}`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Invalid channel ID'));
    }
    for (const name of ['hidden-one', 'nowhere']) {
      const res = await t.api(t.users.othello, 'GET', '/get_stream_id', { stream: name });
      assert.deepEqual(res.body, err(`Invalid channel name '${name}'`));
    }
    const ok = await t.api(t.users.hamlet, 'GET', '/get_stream_id', { stream: 'HIDDEN-ONE' });
    assert.deepEqual(ok.body, { ...SUCCESS, stream_id: priv });
  });
});

describe('PATCH /streams/{stream_id}', () => {
  it('renames and redescribes for channel administrators; others are refused', async () => {
    const id = await createChannel(t, t.users.hamlet, 'to-rename', [t.users.hamlet]);
    let res = await t.api(t.users.othello, 'PATCH', `/streams/${id}`, { new_name: 'stolen' });
    assert.deepEqual(res.body, err('You do not have permission to administer this channel.'));
    res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { new_name: 'renamed', description: 'new words' });
    assert.deepEqual(res.body, SUCCESS);
    const s = await getChannel(id);
    assert.equal(s.name, 'renamed');
    assert.equal(s.description, 'new words');
    res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { new_name: 'design' });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, err("Channel 'design' already exists", 'CHANNEL_ALREADY_EXISTS', { channel_name: 'design' }));
  });

  it('makes a channel private and back; admins may always administer', async () => {
    const id = await createChannel(t, t.users.hamlet, 'privacy', [t.users.hamlet]);
    let res = await t.api(t.users.admin, 'PATCH', `/streams/${id}`, { is_private: true, history_public_to_subscribers: false });
    assert.deepEqual(res.body, SUCCESS);
    let s = await getChannel(id);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers], [true, false]);
    // Reading the channel is needed to change who may read it: the administrator is not subscribed.
    res = await t.api(t.users.admin, 'PATCH', `/streams/${id}`, { is_private: false });
    assert.deepEqual(res.body, err('Channel content access is required.'));
    res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { is_private: false });
    assert.deepEqual(res.body, SUCCESS);
    s = await getChannel(id);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers], [false, true]);
  });

  it('refuses empty_topic_only while other topics exist', async () => {
    const id = await createChannel(t, t.users.hamlet, 'topics-policy', [t.users.hamlet]);
    await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: id, topic: 'named', content: 'x' });
    const res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { topics_policy: 'empty_topic_only' });
    assert.deepEqual(
      res.body,
      err('To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.'),
    );
  });
});

describe('PATCH /streams/{stream_id} and default channels', () => {
  it('refuses to make a default channel private', async () => {
    const id = await createChannel(t, t.users.admin, 'default-then-private', [], { is_default_stream: true });
    const res = await t.api(t.users.admin, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, err('A default channel cannot be private.'));
    assert.equal((await getChannel(id)).invite_only, false);
  });
});

describe('DELETE /streams/{stream_id}', () => {
  it('archives: channel administrators only; archived channels leave the default listing', async () => {
    const id = await createChannel(t, t.users.hamlet, 'to-archive', [t.users.hamlet, t.users.othello]);
    let res = await t.api(t.users.othello, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, err('You do not have permission to administer this channel.'));
    res = await t.api(t.users.hamlet, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, SUCCESS);
    assert.equal((await getChannel(id)).is_archived, true);
    const list = await t.api(t.users.othello, 'GET', '/streams');
    assert.ok(!list.body.streams.some((s: { stream_id: number }) => s.stream_id === id));
    const withArchived = await t.api(t.users.othello, 'GET', '/streams', { exclude_archived: false });
    assert.ok(withArchived.body.streams.some((s: { stream_id: number }) => s.stream_id === id));
    res = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: id, topic: 'x', content: 'late' });
    assert.equal(res.status, 400);
    res = await t.api(t.users.hamlet, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, err('Channel is already deactivated'));
  });
});

describe('default channels', () => {
  it('POST/DELETE /default_streams: administrators only, public channels only', async () => {
    const pub = await createChannel(t, t.users.hamlet, 'defaultable', []);
    const priv = await createChannel(t, t.users.hamlet, 'not-defaultable', [t.users.hamlet], { invite_only: true });
    let res = await t.api(t.users.hamlet, 'POST', '/default_streams', { stream_id: pub });
    assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    res = await t.api(t.users.admin, 'POST', '/default_streams', { stream_id: priv });
    assert.deepEqual(res.body, err('Private channels cannot be made default.'));
    res = await t.api(t.users.admin, 'POST', '/default_streams', { stream_id: pub });
    assert.deepEqual(res.body, SUCCESS);
    const names = async () =>
      ((await t.api(t.users.hamlet, 'GET', '/default_streams')).body.default_streams as { name: string }[]).map((s) => s.name);
    assert.ok((await names()).includes('defaultable'));
    res = await t.api(t.users.admin, 'DELETE', '/default_streams', { stream_id: pub });
    assert.deepEqual(res.body, SUCCESS);
    assert.ok(!(await names()).includes('defaultable'));
    res = await t.api(t.users.admin, 'POST', '/default_streams', { stream_id: 99999 });
    assert.deepEqual(res.body, err('Invalid channel ID'));
  });
});

describe('channel folders', () => {
  it('creates, lists, renames and archives folders (administrators)', async () => {
    let res = await t.api(t.users.hamlet, 'POST', '/channel_folders/create', { name: 'Nope' });
    assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    res = await t.api(t.users.admin, 'POST', '/channel_folders/create', { name: 'Marketing', description: '' });
    assert.equal(res.status, 200, res.text);
    const id = res.body.channel_folder_id;
    res = await t.api(t.users.admin, 'POST', '/channel_folders/create', { name: 'marketing' });
    assert.deepEqual(res.body, err("Channel folder name 'marketing' is already in use."));
    res = await t.api(t.users.admin, 'PATCH', `/channel_folders/${id}`, { name: 'Sales', is_archived: true });
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(t.users.hamlet, 'GET', '/channel_folders');
    assert.ok(!res.body.channel_folders.some((f: { id: number }) => f.id === id));
    res = await t.api(t.users.hamlet, 'GET', '/channel_folders', { include_archived: true });
    const folder = res.body.channel_folders.find((f: { id: number }) => f.id === id);
    assert.deepEqual(folder, {
      id,
      name: 'Sales',
      description: '',
      rendered_description: '',
      order: folder.order,
      date_created: NOW,
      creator_id: t.users.admin.id,
      is_archived: true,
    });
    res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: 'in-missing-folder', subscribers: [], folder_id: 99999 });
    assert.deepEqual(res.body, err('Invalid channel folder ID'));
  });
});

describe('GET /users/me/{stream_id}/topics', () => {
  it('lists topics newest first, with the newest spelling', async () => {
    const id = await createChannel(t, t.users.hamlet, 'topic-list', [t.users.hamlet]);
    const send = (topic: string) => t.api(t.users.hamlet, 'POST', '/messages', { type: 'channel', to: id, topic, content: 'x' });
    const a = (await send('alpha')).body.id;
    const b = (await send('beta')).body.id;
    const a2 = (await send('ALPHA')).body.id;
    const e = (await send('')).body.id;
    const res = await t.api(t.users.othello, 'GET', `/users/me/${id}/topics`);
    assert.deepEqual(res.body, {
      ...SUCCESS,
      topics: [
        { max_id: e, name: 'general chat' },
        { max_id: a2, name: 'ALPHA' },
        { max_id: b, name: 'beta' },
      ],
    });
    const raw = await t.api(t.users.othello, 'GET', `/users/me/${id}/topics`, { allow_empty_topic_name: true });
    assert.equal(raw.body.topics[0].name, '');
    void a;
  });
});

/** A named group holding `members`, created over the API. */
async function namedGroup(name: string, members: number[]): Promise<number> {
  const res = await t.api(t.users.admin, 'POST', '/user_groups/create', { name, description: '', members });
  assert.equal(res.status, 200, res.text);
  return res.body.group_id;
}

describe('metadata access through channel group settings', () => {
  it('a member of can_add_subscribers_group sees a private channel and adds subscribers without being subscribed', async () => {
    const u = t.users;
    const adders = await namedGroup('channel-adders', [u.othello.id]);
    const q = await registerQueue(t, u.othello, ['stream']);
    const id = await createChannel(t, u.hamlet, 'adders-only', [u.hamlet], { invite_only: true, can_add_subscribers_group: adders });
    // Told about the channel at creation, like the administrators.
    const events = await queuedEvents(t, u.othello, q);
    assert.deepEqual(events.map((e) => [e.type, e.op, e.streams[0].stream_id]), [['stream', 'create', id]]);
    assert.equal((await getChannel(id, u.othello)).name, 'adders-only');
    const listed = await t.api(u.othello, 'GET', '/streams', { include_all: true });
    assert.ok(listed.body.streams.some((s: { stream_id: number }) => s.stream_id === id));
    const res = await t.api(u.othello, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'adders-only' }], principals: [u.moderator.id] });
    assert.deepEqual(res.body, { ...SUCCESS, subscribed: { [u.moderator.id]: ['adders-only'] }, already_subscribed: {}, new_subscription_messages_sent: true });
    // Others still cannot see it.
    assert.deepEqual((await t.api(u.bot, 'GET', `/streams/${id}`)).body, err('Invalid channel ID'));
  });

  it('changing a setting that grants metadata access: create and peer_add for those gaining it, delete for those losing it', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'gaining-access', [u.hamlet], { invite_only: true });
    const subscribers = await namedGroup('may-subscribe', [u.othello.id]);
    const qo = await registerQueue(t, u.othello, ['stream', 'subscription']);
    const qh = await registerQueue(t, u.hamlet, ['stream']);
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { can_subscribe_group: { new: subscribers } });
    assert.deepEqual(res.body, SUCCESS);
    const created = await queuedEvents(t, u.othello, qo);
    assert.deepEqual(created, [
      { type: 'stream', op: 'create', streams: [defaultChannel(id, 'gaining-access', u.hamlet.id, { invite_only: true, history_public_to_subscribers: false, subscriber_count: 1, can_subscribe_group: subscribers })] },
      { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [u.hamlet.id] },
    ]);
    const update = { type: 'stream', op: 'update', stream_id: id, name: 'gaining-access', property: 'can_subscribe_group', value: subscribers };
    assert.deepEqual(await queuedEvents(t, u.hamlet, qh), [update]);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { can_subscribe_group: { new: g['role:nobody'] } });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual((await queuedEvents(t, u.othello, qo)).slice(created.length), [{ type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] }]);
  });
});

describe('group settings that grant access refuse role:everyone', () => {
  for (const setting of ['can_add_subscribers_group', 'can_administer_channel_group', 'can_subscribe_group']) {
    it(`${setting}: at creation and in PATCH`, async () => {
      const msg = `'${setting}' setting cannot be set to 'role:everyone' group.`;
      let res = await t.api(t.users.hamlet, 'POST', '/channels/create', { name: `everyone-${setting}`, subscribers: [], [setting]: g['role:everyone'] });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err(msg));
      const id = await createChannel(t, t.users.hamlet, `patch-${setting}`, [t.users.hamlet]);
      res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { [setting]: { new: g['role:everyone'] } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err(msg));
      // role:members is fine.
      res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { [setting]: { new: g['role:members'] } });
      assert.deepEqual(res.body, SUCCESS);
    });
  }
});

describe('PATCH /streams/{stream_id}: access settings as Zulip\'s update_stream_backend', () => {
  it('is_private=true alone protects the history; contradictory combinations are "Invalid parameters"', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'going-private', [u.hamlet]);
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, SUCCESS);
    let s = await getChannel(id);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers, s.is_web_public], [true, false, false]);
    const cases: Record<string, unknown>[] = [
      { is_private: false, history_public_to_subscribers: false },
      { is_web_public: true, is_private: true },
      { is_web_public: true, history_public_to_subscribers: false },
      { history_public_to_subscribers: false, is_private: false },
    ];
    for (const params of cases) {
      res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.deepEqual(res.body, err('Invalid parameters'), JSON.stringify(params));
    }
    s = await getChannel(id);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers], [true, false]);
  });

  it('needs the organization permission to create a channel of the new kind, and for topics_policy', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'kind-rules', [u.hamlet]);
    const setRealm = async (setting: string, group: number) => {
      const res = await t.api(u.owner, 'PATCH', '/realm', { [setting]: { new: group } });
      assert.equal(res.status, 200, res.text);
    };
    await setRealm('can_create_private_channel_group', g['role:administrators']);
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, err('Insufficient permission'));
    await setRealm('can_create_private_channel_group', g['role:members']);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, SUCCESS);
    await setRealm('can_create_public_channel_group', g['role:administrators']);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: false });
    assert.deepEqual(res.body, err('Insufficient permission'));
    await setRealm('can_create_public_channel_group', g['role:members']);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_web_public: true, is_private: false });
    assert.deepEqual(res.body, err('Web-public channels are not enabled.'));
    await setRealm('can_set_topics_policy_group', g['role:administrators']);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { topics_policy: 'allow_empty_topic' });
    assert.deepEqual(res.body, err('Insufficient permission'));
    // Going back to the organization's policy needs no permission.
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { topics_policy: 'inherit' });
    assert.deepEqual(res.body, SUCCESS);
    await setRealm('can_set_topics_policy_group', g['role:members']);
  });

  it('privacy and the subscribe / add-subscribers groups need content access; other settings do not', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'admin-outside', [u.hamlet], { invite_only: true });
    for (const params of [
      { is_private: false },
      { can_subscribe_group: { new: g['role:members'] } },
      { can_add_subscribers_group: { new: g['role:members'] } },
    ]) {
      const res = await t.api(u.admin, 'PATCH', `/streams/${id}`, params);
      assert.deepEqual(res.body, err('Channel content access is required.'), JSON.stringify(params));
    }
    const res = await t.api(u.admin, 'PATCH', `/streams/${id}`, { description: 'seen from outside', can_send_message_group: { new: g['role:members'] } });
    assert.deepEqual(res.body, SUCCESS);
  });

  it('a refused later change leaves nothing of the earlier ones, in memory either (the private history stays private)', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'rolled-back-privacy', [u.hamlet], { invite_only: true });
    await sendToChannel(t, u.hamlet, id, 'secret', 'private words');
    // is_private=false is applied (and the channel row re-read) before the folder is refused.
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: false, folder_id: 999999 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err('Invalid channel folder ID'));
    const s = await getChannel(id, u.hamlet);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers], [true, false]);
    res = await t.api(u.othello, 'GET', '/messages', { anchor: 'newest', num_before: 10, narrow: [{ operator: 'channel', operand: id }] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.messages, []);
  });

  it('protected history with can_create_topic_group other than role:everyone is an incompatible combination', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'topic-creators', [u.hamlet], { invite_only: true, history_public_to_subscribers: true, can_create_topic_group: g['role:members'] });
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { history_public_to_subscribers: false });
    assert.deepEqual(res.body, incompatible);
    const open = await createChannel(t, u.hamlet, 'topic-creators-2', [u.hamlet], { invite_only: true });
    res = await t.api(u.hamlet, 'PATCH', `/streams/${open}`, { can_create_topic_group: { new: g['role:members'] } });
    assert.deepEqual(res.body, incompatible);
  });

  it('errors: the current name, retention days of 0 or -1', async () => {
    const id = await createChannel(t, t.users.hamlet, 'Same-Name', [t.users.hamlet]);
    let res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { new_name: ' Same-Name ' });
    assert.deepEqual(res.body, err('Channel already has that name.'));
    // A change of case only is a rename.
    res = await t.api(t.users.hamlet, 'PATCH', `/streams/${id}`, { new_name: 'same-name' });
    assert.deepEqual(res.body, SUCCESS);
    for (const days of [0, -1]) {
      res = await t.api(t.users.owner, 'PATCH', `/streams/${id}`, { message_retention_days: days });
      assert.deepEqual(res.body, badValue('message_retention_days', days));
      res = await t.api(t.users.owner, 'POST', '/channels/create', { name: `bad-retention-${days}`, subscribers: [], message_retention_days: days });
      assert.deepEqual(res.body, badValue('message_retention_days', days));
    }
    res = await t.api(t.users.owner, 'PATCH', `/streams/${id}`, { message_retention_days: 'sometimes' });
    assert.deepEqual(res.body, badValue('message_retention_days', 'sometimes'));
  });
});

describe('PATCH /streams/{stream_id} group settings: {new, old}', () => {
  it('checks old against the current value; an unchanged value changes nothing and sends no event', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'old-new', [u.hamlet]);
    const q = await registerQueue(t, u.hamlet, ['stream']);
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { can_send_message_group: { new: g['role:members'], old: g['role:moderators'] } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, err("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH'));
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { can_send_message_group: { new: g['role:everyone'], old: g['role:everyone'] } });
    assert.deepEqual(res.body, SUCCESS);
    // The same value written as an anonymous group of that one group is no change either.
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { can_send_message_group: { new: { direct_members: [], direct_subgroups: [g['role:everyone']] } } });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), []);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, {
      can_send_message_group: { new: { direct_members: [u.hamlet.id], direct_subgroups: [] }, old: { direct_members: [], direct_subgroups: [g['role:everyone']] } },
    });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), [
      { type: 'stream', op: 'update', stream_id: id, name: 'old-new', property: 'can_send_message_group', value: { direct_members: [u.hamlet.id], direct_subgroups: [] } },
    ]);
    assert.deepEqual((await getChannel(id)).can_send_message_group, { direct_members: [u.hamlet.id], direct_subgroups: [] });
  });
});

describe('PATCH /streams/{stream_id}: privacy events', () => {
  it('private → public: users who can newly see it get create and peer_add; those who could, the update', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'opening-up', [u.hamlet, u.moderator], { invite_only: true, history_public_to_subscribers: true });
    const qo = await registerQueue(t, u.othello, ['stream', 'subscription']);
    const qh = await registerQueue(t, u.hamlet, ['stream', 'subscription']);
    const qa = await registerQueue(t, u.admin, ['stream', 'subscription']);
    const qg = await registerQueue(t, u.guest, ['stream', 'subscription']);
    const res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: false });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u.othello, qo), [
      { type: 'stream', op: 'create', streams: [defaultChannel(id, 'opening-up', u.hamlet.id, { subscriber_count: 2 })] },
      { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [u.moderator.id, u.hamlet.id].sort((a, b) => a - b) },
    ]);
    const update = { type: 'stream', op: 'update', stream_id: id, name: 'opening-up', property: 'invite_only', value: false, history_public_to_subscribers: true, is_web_public: false };
    assert.deepEqual(await queuedEvents(t, u.hamlet, qh), [update]);
    assert.deepEqual(await queuedEvents(t, u.admin, qa), [update]);
    assert.deepEqual(await queuedEvents(t, u.guest, qg), []);
  });

  it('public → private: subscribers and administrators get the update; zulip-compat: those losing access hear nothing', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'closing-down', [u.hamlet]);
    const qo = await registerQueue(t, u.othello, ['stream', 'subscription']);
    const qh = await registerQueue(t, u.hamlet, ['stream']);
    const qa = await registerQueue(t, u.admin, ['stream']);
    const res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_private: true });
    assert.deepEqual(res.body, SUCCESS);
    const update = { type: 'stream', op: 'update', stream_id: id, name: 'closing-down', property: 'invite_only', value: true, history_public_to_subscribers: false, is_web_public: false };
    assert.deepEqual(await queuedEvents(t, u.hamlet, qh), [update]);
    assert.deepEqual(await queuedEvents(t, u.admin, qa), [update]);
    assert.deepEqual(await queuedEvents(t, u.othello, qo), []);
  });
});

describe('default channels: default_streams events', () => {
  it('PATCH is_default_stream and archiving a default channel tell the non-guests', async () => {
    const u = t.users;
    const id = await createChannel(t, u.admin, 'default-toggle', []);
    const before = ((await t.api(u.hamlet, 'GET', '/default_streams')).body.default_streams as { stream_id: number }[]).map((s) => s.stream_id);
    const q = await registerQueue(t, u.hamlet, ['default_streams', 'stream']);
    let res = await t.api(u.admin, 'PATCH', `/streams/${id}`, { is_default_stream: true });
    assert.deepEqual(res.body, SUCCESS);
    // Already default: nothing to say.
    res = await t.api(u.admin, 'PATCH', `/streams/${id}`, { is_default_stream: true });
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.admin, 'PATCH', `/streams/${id}`, { is_default_stream: false });
    res = await t.api(u.admin, 'PATCH', `/streams/${id}`, { is_default_stream: true });
    res = await t.api(u.admin, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, SUCCESS);
    const withIt = [...before, id].sort((a, b) => a - b);
    assert.deepEqual(await queuedEvents(t, u.hamlet, q), [
      { type: 'default_streams', default_streams: withIt },
      { type: 'default_streams', default_streams: before },
      { type: 'default_streams', default_streams: withIt },
      { type: 'default_streams', default_streams: before },
      { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] },
    ]);
  });
});

describe('DELETE /streams/{stream_id} and PATCH is_archived=false', () => {
  it('archives with a delete event holding only ids; unarchiving brings the channel back with a create event', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'round-trip', [u.hamlet]);
    const q = await registerQueue(t, u.othello, ['stream']);
    let res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_archived: false });
    assert.deepEqual(res.body, err('Channel is not currently deactivated'));
    res = await t.api(u.hamlet, 'DELETE', `/streams/${id}`);
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_archived: false });
    assert.deepEqual(res.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u.othello, q), [
      { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] },
      { type: 'stream', op: 'create', streams: [defaultChannel(id, 'round-trip', u.hamlet.id, { subscriber_count: 1 })] },
    ]);
    assert.equal((await getChannel(id)).is_archived, false);
    res = await t.api(u.hamlet, 'POST', '/messages', { type: 'channel', to: id, topic: 'back', content: 'again' });
    assert.equal(res.status, 200, res.text);
  });

  it('with the archived_channels capability: archived channels stay in /register, and archiving is an is_archived update', async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'archive-cap', [u.hamlet, u.othello]);
    assert.deepEqual((await t.api(u.othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['archive-cap'] })).body.result, 'success');
    const caps = (on: boolean) => ({ client_capabilities: { notification_settings_null: true, archived_channels: on } });
    const queue = async (user: TestUser, on: boolean) =>
      (await t.api(user, 'POST', '/register', { event_types: ['stream'], fetch_event_types: [], ...caps(on) })).body.queue_id as string;
    const capable = await queue(u.hamlet, true);
    const plain = await queue(u.hamlet, false);
    assert.deepEqual((await t.api(u.hamlet, 'DELETE', `/streams/${id}`)).body, SUCCESS);
    const archivedUpdate = { type: 'stream', op: 'update', stream_id: id, name: 'archive-cap', property: 'is_archived' };
    assert.deepEqual(await queuedEvents(t, u.hamlet, capable), [{ ...archivedUpdate, value: true }]);
    assert.deepEqual(await queuedEvents(t, u.hamlet, plain), [{ type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] }]);

    // The initial state: subscribed, unsubscribed, never subscribed, and the streams list.
    const state = async (user: TestUser, on: boolean) =>
      (await t.api(user, 'POST', '/register', { fetch_event_types: ['subscription', 'stream'], event_types: ['stream'], ...caps(on) })).body;
    const find = (list: { stream_id: number }[]) => list.find((s) => s.stream_id === id) as Record<string, unknown> | undefined;
    for (const [user, key] of [
      [u.hamlet, 'subscriptions'],
      [u.othello, 'unsubscribed'],
      [u.moderator, 'never_subscribed'],
    ] as const) {
      const withCap = await state(user, true);
      assert.equal(find(withCap[key])?.is_archived, true, `${user.email} ${key}`);
      assert.equal(find(withCap.streams)?.is_archived, true, `${user.email} streams`);
      const without = await state(user, false);
      for (const k of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) assert.equal(find(without[k]), undefined, `${user.email} ${k}`);
    }
    // GET /streams follows exclude_archived, whatever the capability.
    const listed = async (params: Record<string, unknown>) => find((await t.api(u.moderator, 'GET', '/streams', params)).body.streams)?.is_archived;
    assert.equal(await listed({}), undefined);
    assert.equal(await listed({ exclude_archived: false }), true);

    // Unarchiving: the capable client hears is_archived false; the other one hears the channel created.
    assert.deepEqual((await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { is_archived: false })).body, SUCCESS);
    assert.deepEqual((await queuedEvents(t, u.hamlet, capable)).slice(1), [{ ...archivedUpdate, value: false }]);
    const created = (await queuedEvents(t, u.hamlet, plain)).slice(1);
    assert.deepEqual(created.map((e) => [e.type, e.op, e.streams[0].stream_id, e.streams[0].is_archived]), [['stream', 'create', id, false]]);
    assert.ok(!('for_unarchiving' in created[0]));
  });

  it("an archived channel's messages can be read, not edited, moved, deleted or reacted to (Zulip's is_modifying_message)", async () => {
    const u = t.users;
    const id = await createChannel(t, u.hamlet, 'read-only-archive', [u.hamlet]);
    const other = await createChannel(t, u.hamlet, 'live-one', [u.hamlet]);
    const m = await sendToChannel(t, u.hamlet, id, 'kept', 'words');
    assert.deepEqual((await t.api(u.hamlet, 'DELETE', `/streams/${id}`)).body, SUCCESS);
    const read = await t.api(u.hamlet, 'GET', `/messages/${m}`);
    assert.equal(read.status, 200, read.text);
    const invalid = err('Invalid message(s)');
    const attempts: [string, string, Record<string, unknown>][] = [
      ['PATCH', `/messages/${m}`, { content: 'changed' }],
      ['PATCH', `/messages/${m}`, { topic: 'moved', propagate_mode: 'change_all' }],
      ['PATCH', `/messages/${m}`, { stream_id: other, propagate_mode: 'change_all' }],
      ['DELETE', `/messages/${m}`, {}],
      ['POST', `/messages/${m}/reactions`, { emoji_name: 'smile' }],
    ];
    for (const [method, path, params] of attempts) {
      const res = await t.api(u.hamlet, method, path, params);
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.deepEqual(res.body, invalid, `${method} ${path} ${JSON.stringify(params)}`);
    }
    // Nor can messages be moved into it.
    const n = await sendToChannel(t, u.hamlet, other, 'stay', 'here');
    const res = await t.api(u.hamlet, 'PATCH', `/messages/${n}`, { stream_id: id });
    assert.deepEqual(res.body, err('Invalid channel ID'));
  });

  it('a private channel without subscribers stays archived', async () => {
    const id = await createChannel(t, t.users.hamlet, 'empty-private', [], { invite_only: true });
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/streams/${id}`)).body, SUCCESS);
    const res = await t.api(t.users.admin, 'PATCH', `/streams/${id}`, { is_archived: false });
    assert.deepEqual(res.body, err('Channel is private and have no subscribers'));
  });
});

describe('GET /streams: sources and flags', () => {
  it('include_default only marks channels; sorted by name; include_can_access_content; include_owner_subscribed for bots', async () => {
    const u = t.users;
    const zed = await createChannel(t, u.hamlet, 'zz-listing', [u.hamlet]);
    const priv = await createChannel(t, u.hamlet, 'aa-listing-private', [u.hamlet], { invite_only: true });
    await t.api(u.admin, 'POST', '/default_streams', { stream_id: zed });
    const list = async (user: typeof u.hamlet, params: Record<string, unknown>) => {
      const res = await t.api(user, 'GET', '/streams', params);
      assert.equal(res.status, 200, res.text);
      return res.body.streams as Record<string, any>[];
    };
    // Not a source: no public, no subscribed, so nothing.
    assert.deepEqual(await list(u.othello, { include_public: false, include_subscribed: false, include_default: true }), []);
    const marked = await list(u.othello, { include_default: true });
    assert.ok(marked.every((s) => typeof s.is_default === 'boolean'));
    assert.deepEqual(marked.filter((s) => s.is_default).map((s) => s.stream_id).includes(zed), true);
    assert.ok(!('is_default' in (await list(u.othello, {}))[0]));
    const names = marked.map((s) => s.name);
    assert.deepEqual(names, [...names].sort());
    // Content access: public channels and subscribed private ones.
    const content = (await list(u.hamlet, { include_public: false, include_subscribed: false, include_can_access_content: true })).map((s) => s.stream_id);
    assert.ok(content.includes(priv) && content.includes(zed));
    assert.ok(!(await list(u.othello, { include_can_access_content: true })).some((s) => s.stream_id === priv));
    // The bot (owned by Hamlet) sees its owner's private channel with include_owner_subscribed.
    assert.ok(!(await list(u.bot, {})).some((s) => s.stream_id === priv));
    assert.ok((await list(u.bot, { include_owner_subscribed: true })).some((s) => s.stream_id === priv));
    // Not for humans.
    assert.ok(!(await list(u.othello, { include_owner_subscribed: true })).some((s) => s.stream_id === priv));
  });

  it("include_owner_subscribed follows the owner's current state: nothing once the owner is deactivated", async () => {
    const made = await t.api(t.users.admin, 'POST', '/users', { email: 'dana@example.com', password: 'dana-password-1', full_name: 'Dana' });
    assert.equal(made.status, 200, made.text);
    const key = await t.api(null, 'POST', '/fetch_api_key', { username: 'dana@example.com', password: 'dana-password-1' });
    const dana = { id: made.body.user_id, email: 'dana@example.com', apiKey: key.body.api_key, password: '', fullName: 'Dana' };
    const created = await t.api(dana, 'POST', '/bots', { full_name: 'Dana Bot', short_name: 'dana' });
    assert.equal(created.status, 200, created.text);
    const bot = { id: created.body.user_id, email: 'dana-bot@example.com', apiKey: created.body.api_key, password: '', fullName: 'Dana Bot' };
    const priv = await createChannel(t, dana, 'dana-private', [dana], { invite_only: true });
    const ownersOnly = { include_public: false, include_subscribed: false, include_owner_subscribed: true };
    const res = await t.api(bot, 'GET', '/streams', ownersOnly);
    assert.deepEqual({ ...res.body, streams: res.body.streams.map((s: { stream_id: number }) => s.stream_id) }, { ...SUCCESS, streams: [priv] });

    // Dana leaves (her bot with her); an administrator brings the bot back without her.
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${dana.id}`)).status, 200);
    assert.equal((await t.api(t.users.admin, 'POST', `/users/${bot.id}/reactivate`)).status, 200);
    // It came back with a new key (Dana knew the old one), which the administrator reads.
    bot.apiKey = (await t.api(t.users.admin, 'GET', `/bots/${bot.id}/api_key`)).body.api_key;
    assert.deepEqual((await t.api(bot, 'GET', '/streams', ownersOnly)).body, { ...SUCCESS, streams: [] });
  });
});

describe('channel folders: archiving and update events', () => {
  it('refuses to archive a folder holding channels (archived ones too); one event per changed field', async () => {
    const u = t.users;
    const folder = (await t.api(u.admin, 'POST', '/channel_folders/create', { name: 'Busy', description: 'd' })).body.channel_folder_id;
    const id = await createChannel(t, u.hamlet, 'in-busy', [u.hamlet], { folder_id: folder });
    await t.api(u.hamlet, 'DELETE', `/streams/${id}`);
    let res = await t.api(u.admin, 'PATCH', `/channel_folders/${folder}`, { is_archived: true });
    assert.deepEqual(res.body, err('You need to remove all the channels from this folder to archive it.'));
    const q = await registerQueue(t, u.othello, ['channel_folder']);
    res = await t.api(u.admin, 'PATCH', `/channel_folders/${folder}`, { name: 'Busy', description: 'new words' });
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.hamlet, 'PATCH', `/streams/${id}`, { folder_id: null });
    assert.deepEqual(res.body, SUCCESS);
    res = await t.api(u.admin, 'PATCH', `/channel_folders/${folder}`, { name: 'Quiet', is_archived: true });
    assert.deepEqual(res.body, SUCCESS);
    const events = await queuedEvents(t, u.othello, q);
    assert.deepEqual(events, [
      { type: 'channel_folder', op: 'update', channel_folder_id: folder, data: { description: 'new words', rendered_description: events[0].data.rendered_description } },
      { type: 'channel_folder', op: 'update', channel_folder_id: folder, data: { name: 'Quiet' } },
      { type: 'channel_folder', op: 'update', channel_folder_id: folder, data: { is_archived: true } },
    ]);
    assert.match(events[0].data.rendered_description, /new words/);
  });
});

describe('PATCH /channel_folders (reordering)', () => {
  const allFolders = async () => (await t.api(t.users.hamlet, 'GET', '/channel_folders', { include_archived: true })).body.channel_folders as { id: number; order: number; name: string }[];

  it('puts every folder at its place in `order`, sends a reorder event to everyone, and lists them so', async () => {
    const u = t.users;
    for (const name of ['Reorder A', 'Reorder B']) assert.equal((await t.api(u.admin, 'POST', '/channel_folders/create', { name })).status, 200);
    const before = await allFolders();
    assert.ok(before.length >= 3);
    const order = before.map((f) => f.id).reverse();
    const queues = await Promise.all([u.othello, u.guest].map((x) => registerQueue(t, x, ['channel_folder'])));
    assert.deepEqual((await t.api(u.admin, 'PATCH', '/channel_folders', { order })).body, SUCCESS);
    for (const [i, x] of [u.othello, u.guest].entries()) {
      assert.deepEqual(await queuedEvents(t, x, queues[i]), [{ type: 'channel_folder', op: 'reorder', order }]);
    }
    const after = await allFolders();
    assert.deepEqual(after, order.map((id, i) => ({ ...(before.find((f) => f.id === id) as object), order: i })));
    const reg = await t.api(u.hamlet, 'POST', '/register', { fetch_event_types: ['channel_folders'] });
    assert.deepEqual(reg.body.channel_folders, after);
  });

  it('refuses an order missing a folder (archived ones count), changing nothing', async () => {
    const before = await allFolders();
    const q = await registerQueue(t, t.users.othello, ['channel_folder']);
    for (const order of [[], before.slice(1).map((f) => f.id), before.slice(0, -1).map((f) => f.id)]) {
      const res = await t.api(t.users.admin, 'PATCH', '/channel_folders', { order });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err('Invalid order mapping.') });
    }
    assert.deepEqual(await allFolders(), before);
    assert.deepEqual(await queuedEvents(t, t.users.othello, q), []);
  });

  it('ignores ids that are no folder, and a repeated id takes its last place (as Zulip)', async () => {
    const before = await allFolders();
    const ids = before.map((f) => f.id);
    const order = [ids[ids.length - 1], 99999, ...ids];
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/channel_folders', { order })).body, SUCCESS);
    assert.deepEqual(
      (await allFolders()).map((f) => [f.id, f.order]),
      ids.map((id, i) => [id, i === ids.length - 1 ? order.length - 1 : i + 2]),
    );
  });

  it('is for administrators, before the parameters; hostile values get Zulip messages', async () => {
    const ids = (await allFolders()).map((f) => f.id);
    for (const x of [t.users.hamlet, t.users.moderator, t.users.guest, t.users.bot]) {
      const res = await t.api(x, 'PATCH', '/channel_folders', { order: ids });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL') });
    }
    const patch = (params: Record<string, unknown>) => t.api(t.users.admin, 'PATCH', '/channel_folders', params);
    assert.deepEqual((await patch({})).body, err("Missing 'order' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'order' }));
    assert.deepEqual((await patch({ order: 'first' })).body, err('order is not valid JSON'));
    assert.deepEqual((await patch({ order: { a: 1 } })).body, err('order is not a list'));
    assert.deepEqual((await patch({ order: ['1'] })).body, err('order[0] is not an integer'));
    assert.deepEqual((await patch({ order: [1.5] })).body, err('order[0] is not an integer'));
    assert.deepEqual((await patch({ order: Array(10001).fill(1) })).body, err('order is too long (limit: 10000 items)'));
  });
});

describe('GET /streams/{stream_id}/email_address', () => {
  // Parley has no email gateway: Zulip without EMAIL_GATEWAY_PATTERN answers an empty address after
  // the same checks.
  const address = (user: (typeof t.users)[keyof typeof t.users], id: number, params: Record<string, unknown> = {}) =>
    t.api(user, 'GET', `/streams/${id}/email_address`, params);
  const EMPTY = { ...SUCCESS, email: '' };

  it('answers an empty address to those who may read the channel, with or without a sender', async () => {
    const u = t.users;
    const pub = await createChannel(t, u.hamlet, 'mail-public', [u.hamlet]);
    for (const user of [u.hamlet, u.othello, u.admin, u.moderator]) {
      const res = await address(user, pub);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, EMPTY);
    }
    // sender_id: the caller, or a bot the caller administers (Hamlet owns the seeded bot; an
    // administrator administers every bot).
    assert.deepEqual((await address(u.hamlet, pub, { sender_id: u.hamlet.id })).body, EMPTY);
    assert.deepEqual((await address(u.hamlet, pub, { sender_id: u.bot.id })).body, EMPTY);
    assert.deepEqual((await address(u.admin, pub, { sender_id: u.bot.id })).body, EMPTY);
    // The bot itself may ask.
    assert.deepEqual((await address(u.bot, pub)).body, EMPTY);
  });

  it('refuses a sender that is not a bot the caller administers', async () => {
    const u = t.users;
    const pub = await createChannel(t, u.hamlet, 'mail-senders', [u.hamlet]);
    const check = async (sender: unknown, msg: string) => {
      const res = await address(u.othello, pub, { sender_id: sender });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err(msg));
    };
    await check(u.bot.id, 'Insufficient permission');
    await check(u.hamlet.id, 'No such bot');
    await check(999_999, 'No such bot');
    await check(-1, 'sender_id is too small');
    await check('me', 'sender_id is not valid JSON');
    await check(true, 'sender_id is not an integer');
  });

  it('answers "Invalid channel ID" for a missing, archived or unreadable channel', async () => {
    const u = t.users;
    const pub = await createChannel(t, u.hamlet, 'mail-guests', [u.hamlet]);
    const priv = await createChannel(t, u.hamlet, 'mail-private', [u.hamlet], { invite_only: true });
    const archived = await createChannel(t, u.hamlet, 'mail-archived', [u.hamlet]);
    await t.api(u.hamlet, 'DELETE', `/streams/${archived}`);
    for (const [user, id] of [
      [u.guest, pub], // a guest who is not subscribed
      [u.othello, priv],
      [u.admin, priv], // metadata access is not enough (require_content_access)
      [u.hamlet, archived],
      [u.hamlet, 999_999],
    ] as const) {
      const res = await address(user, id);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Invalid channel ID'));
    }
    assert.deepEqual((await address(u.hamlet, priv)).body, EMPTY);
    // Since feature level 448, only those who may post in the channel.
    const announce = await createChannel(t, u.admin, 'mail-announce', [u.admin, u.hamlet], { can_send_message_group: g['role:administrators'] });
    const refused = await address(u.hamlet, announce);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, err('You do not have permission to post in this channel.'));
    assert.deepEqual((await address(u.admin, announce)).body, EMPTY);
    // The check on the channel comes first.
    assert.deepEqual((await address(u.othello, priv, { sender_id: 999_999 })).body, err('Invalid channel ID'));
  });
});

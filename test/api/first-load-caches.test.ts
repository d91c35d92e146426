// The in-memory caches behind POST /register's largest parts (issue 17, first load): the
// organization's user rows and active users' JSON (realm_users), user groups' JSON, channel rows, channels' group-setting values and
// subscriber counts (streams, subscriptions, never_subscribed). Each is emptied by every write that changes what it
// holds; these tests warm each cache with a /register, make the change, and register again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { listedUsers } from '../../src/lib/users';
import { groupSettingForApi } from '../../src/lib/groups';
import { realmStreamRows } from '../../src/lib/streams';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const register = async (user: TestUser, types: string[], extra: Record<string, unknown> = {}) => {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: types, event_types: types, ...extra });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

type Dict = Record<string, unknown>;
const userIn = (list: Dict[], id: number) => list.find((u) => u.user_id === id);

/** A write straight to the database, as any code path could make it, committed. */
function sqlWrite(sql: string, ...args: unknown[]): void {
  t.app.batch.write(() => t.app.db.prepare(sql).run(...args));
  t.app.batch.commit();
}

async function newChannel(name: string, owner: TestUser, principals: TestUser[]): Promise<number> {
  const res = await t.api(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: principals.map((u) => u.id) });
  assert.equal(res.status, 200, res.text);
  const r = await t.api(owner, 'GET', '/get_stream_id', { stream: name });
  return r.body.stream_id;
}

describe('realm_users (user rows kept in memory until a user row changes)', () => {
  it('follows a name change, a role change, an email visibility change, a deactivation and a reactivation', async () => {
    const { hamlet, othello, owner } = t.users;
    const first = await register(othello, ['realm_user']);
    const before = userIn(first.realm_users, hamlet.id) as Dict;
    assert.equal(before.full_name, 'King Hamlet');

    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { full_name: 'Prince Hamlet' })).status, 200);
    let b = await register(othello, ['realm_user']);
    assert.deepStrictEqual(userIn(b.realm_users, hamlet.id), { ...before, full_name: 'Prince Hamlet' });

    assert.equal((await t.api(owner, 'PATCH', `/users/${hamlet.id}`, { role: 300 })).status, 200);
    b = await register(othello, ['realm_user']);
    assert.deepStrictEqual(userIn(b.realm_users, hamlet.id), { ...before, full_name: 'Prince Hamlet', role: 300 });

    // Email visibility "admins only": othello (a member) no longer reads the real address.
    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { email_address_visibility: 3 })).status, 200);
    b = await register(othello, ['realm_user']);
    const hidden = userIn(b.realm_users, hamlet.id) as Dict;
    assert.equal(hidden.delivery_email, null);
    assert.notEqual(hidden.email, before.email);
    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { email_address_visibility: 1 })).status, 200);

    assert.equal((await t.api(owner, 'DELETE', `/users/${hamlet.id}`)).status, 200);
    b = await register(othello, ['realm_user']);
    assert.equal(userIn(b.realm_users, hamlet.id), undefined);
    assert.deepStrictEqual(userIn(b.realm_non_active_users, hamlet.id), { ...before, full_name: 'Prince Hamlet', role: 300 });

    assert.equal((await t.api(owner, 'POST', `/users/${hamlet.id}/reactivate`)).status, 200);
    b = await register(othello, ['realm_user']);
    assert.deepStrictEqual(userIn(b.realm_users, hamlet.id), { ...before, full_name: 'Prince Hamlet', role: 300 });
    assert.equal(userIn(b.realm_non_active_users, hamlet.id), undefined);
    assert.equal((await t.api(owner, 'PATCH', `/users/${hamlet.id}`, { role: 400 })).status, 200);
    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { full_name: 'King Hamlet' })).status, 200);
  });

  it('follows any write to the user table (a new user, a timezone written by SQL)', async () => {
    const { othello, hamlet } = t.users;
    await register(othello, ['realm_user']);
    sqlWrite("UPDATE user SET timezone = 'Europe/Copenhagen' WHERE id = ?", hamlet.id);
    let b = await register(othello, ['realm_user']);
    assert.equal((userIn(b.realm_users, hamlet.id) as Dict).timezone, 'Europe/Copenhagen');
    sqlWrite("UPDATE user SET timezone = '' WHERE id = ?", hamlet.id);

    const res = await t.api(t.users.owner, 'POST', '/users', { email: 'newcomer@example.com', password: 'a-long-password-1', full_name: 'Newcomer' });
    assert.equal(res.status, 200, res.text);
    b = await register(othello, ['realm_user']);
    assert.equal((userIn(b.realm_users, res.body.user_id) as Dict).full_name, 'Newcomer');
  });

  it('follows profile field values, and gives each viewer its own delivery_email', async () => {
    const { othello, hamlet, owner } = t.users;
    const field = await t.api(owner, 'POST', '/realm/profile_fields', { name: 'Cache test field', field_type: 1 });
    assert.equal(field.status, 200, field.text);
    const fid = field.body.id as number;
    const before = userIn((await register(othello, ['realm_user'])).realm_users, hamlet.id) as Dict;
    assert.equal((await t.api(hamlet, 'PATCH', '/users/me/profile_data', { data: JSON.stringify([{ id: fid, value: 'first' }]) })).status, 200);
    let b = await register(othello, ['realm_user']);
    assert.deepStrictEqual(userIn(b.realm_users, hamlet.id), { ...before, profile_data: { ...(before.profile_data as Dict), [fid]: { value: 'first', rendered_value: '<p>first</p>' } } });
    sqlWrite('DELETE FROM custom_profile_field_value WHERE user_id = ? AND field_id = ?', hamlet.id, fid);
    b = await register(othello, ['realm_user']);
    assert.deepStrictEqual(userIn(b.realm_users, hamlet.id), before);
    assert.equal((await t.api(owner, 'DELETE', `/realm/profile_fields/${fid}`)).status, 200);

    // The same cached entries, read by an administrator and by the user: the real address.
    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { email_address_visibility: 3 })).status, 200);
    assert.equal((userIn((await register(othello, ['realm_user'])).realm_users, hamlet.id) as Dict).delivery_email, null);
    assert.equal((userIn((await register(owner, ['realm_user'])).realm_users, hamlet.id) as Dict).delivery_email, hamlet.email);
    assert.equal((userIn((await register(hamlet, ['realm_user'])).realm_users, hamlet.id) as Dict).delivery_email, hamlet.email);
    assert.equal((userIn((await register(othello, ['realm_user'])).realm_users, hamlet.id) as Dict).delivery_email, null);
    assert.equal((await t.api(hamlet, 'PATCH', '/settings', { email_address_visibility: 1 })).status, 200);
  });

  it('a rolled-back write leaves nothing stale behind', async () => {
    const { othello, hamlet } = t.users;
    await register(othello, ['realm_user']);
    assert.throws(() =>
      t.app.batch.write(() => {
        t.app.db.prepare("UPDATE user SET full_name = 'Never Committed' WHERE id = ?").run(hamlet.id);
        // Read (and cache) inside the write, then fail: the cache must not keep what was undone.
        assert.equal(listedUsers(t.app.db, 1).find((u) => u.id === hamlet.id)?.full_name, 'Never Committed');
        throw new Error('undo');
      }),
    );
    t.app.batch.commit();
    const b = await register(othello, ['realm_user']);
    assert.equal((userIn(b.realm_users, hamlet.id) as Dict).full_name, 'King Hamlet');
  });
});

describe('channel rows (kept in memory until a channel row changes)', () => {
  it('follow a rename, a new description, archiving, a new channel and any write to the stream table', async () => {
    const { owner, hamlet } = t.users;
    const id = await newChannel('cache rows', owner, [owner, hamlet]);
    const streamOf = (b: Dict, sid = id) => (b.streams as Dict[]).find((s) => s.stream_id === sid) as Dict | undefined;
    const subOf = (b: Dict) => (b.subscriptions as Dict[]).find((s) => s.stream_id === id) as Dict;
    const types = ['stream', 'subscription'];
    const caps = { client_capabilities: JSON.stringify({ notification_settings_null: false, archived_channels: true }) };
    const first = streamOf(await register(hamlet, types, caps)) as Dict;

    assert.equal((await t.api(owner, 'PATCH', `/streams/${id}`, { new_name: 'cache rows renamed' })).status, 200);
    let b = await register(hamlet, types, caps);
    assert.deepStrictEqual(streamOf(b), { ...first, name: 'cache rows renamed' });
    assert.equal(subOf(b).name, 'cache rows renamed');

    assert.equal((await t.api(owner, 'PATCH', `/streams/${id}`, { description: 'Now described' })).status, 200);
    b = await register(hamlet, types, caps);
    assert.deepStrictEqual(streamOf(b), { ...first, name: 'cache rows renamed', description: 'Now described', rendered_description: '<p>Now described</p>' });

    sqlWrite('UPDATE stream SET is_recently_active = 0 WHERE id = ?', id);
    b = await register(hamlet, types, caps);
    assert.equal((streamOf(b) as Dict).is_recently_active, false);

    const other = await newChannel('cache rows new', owner, [owner]);
    b = await register(hamlet, types, caps);
    assert.equal((streamOf(b, other) as Dict).name, 'cache rows new');

    assert.equal((await t.api(owner, 'DELETE', `/streams/${id}`)).status, 200);
    b = await register(hamlet, types, caps);
    assert.equal((streamOf(b) as Dict).is_archived, true);
  });

  it('a rolled-back write leaves nothing stale behind', async () => {
    const { owner, hamlet } = t.users;
    const id = await newChannel('cache rows undone', owner, [owner, hamlet]);
    await register(hamlet, ['stream']);
    assert.throws(() =>
      t.app.batch.write(() => {
        t.app.db.prepare("UPDATE stream SET name = 'never committed' WHERE id = ?").run(id);
        // Read (and cache) inside the write, then fail: the cache must not keep what was undone.
        assert.equal(realmStreamRows(t.app.db, 1).find((s) => s.id === id)?.name, 'never committed');
        throw new Error('undo');
      }),
    );
    t.app.batch.commit();
    const b = await register(hamlet, ['stream']);
    assert.equal(((b.streams as Dict[]).find((s) => s.stream_id === id) as Dict).name, 'cache rows undone');
  });
});

describe('channel group-setting values (kept in memory until a group, member or subgroup row changes)', () => {
  it('a channel setting changed to a new anonymous group, and an anonymous group changed in place', async () => {
    const { owner, hamlet, othello } = t.users;
    const id = await newChannel('cache group settings', owner, [owner, hamlet]);
    const streamOf = (b: Dict) => (b.streams as Dict[]).find((s) => s.stream_id === id) as Dict;
    const subOf = (b: Dict) => (b.subscriptions as Dict[]).find((s) => s.stream_id === id) as Dict;
    await register(hamlet, ['stream', 'subscription']);
    const res = await t.api(owner, 'PATCH', `/streams/${id}`, { can_administer_channel_group: JSON.stringify({ new: { direct_members: [hamlet.id], direct_subgroups: [] } }) });
    assert.equal(res.status, 200, res.text);
    let b = await register(hamlet, ['stream', 'subscription']);
    assert.deepStrictEqual(streamOf(b).can_administer_channel_group, { direct_members: [hamlet.id], direct_subgroups: [] });
    assert.deepStrictEqual(subOf(b).can_administer_channel_group, { direct_members: [hamlet.id], direct_subgroups: [] });

    // No API changes an anonymous group in place; any write to its rows still empties the cache.
    const gid = (t.app.db.prepare('SELECT can_administer_channel_group AS g FROM stream WHERE id = ?').get(id) as { g: number }).g;
    sqlWrite('INSERT INTO user_group_member (group_id, user_id) VALUES (?, ?)', gid, othello.id);
    b = await register(hamlet, ['stream', 'subscription']);
    assert.deepStrictEqual(streamOf(b).can_administer_channel_group, { direct_members: [hamlet.id, othello.id].sort((x, y) => x - y), direct_subgroups: [] });
    const members = (t.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:members'").get() as { id: number }).id;
    sqlWrite('INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)', gid, members);
    b = await register(hamlet, ['stream']);
    assert.deepStrictEqual(streamOf(b).can_administer_channel_group, { direct_members: [hamlet.id, othello.id].sort((x, y) => x - y), direct_subgroups: [members] });
    // A group row turned named (no API does this either) reads as its id. It is turned back at once:
    // a named group without its own settings is not a state Zulip's API can show (the conformance
    // check records every later reply of this server).
    const before = t.app.db.prepare('SELECT named, name FROM user_group WHERE id = ?').get(gid) as { named: number; name: string | null };
    sqlWrite("UPDATE user_group SET named = 1, name = 'cache test group' WHERE id = ?", gid);
    b = await register(hamlet, ['stream']);
    assert.equal(streamOf(b).can_administer_channel_group, gid);
    sqlWrite('UPDATE user_group SET named = ?, name = ? WHERE id = ?', before.named, before.name, gid);
    b = await register(hamlet, ['stream']);
    assert.deepStrictEqual(streamOf(b).can_administer_channel_group, { direct_members: [hamlet.id, othello.id].sort((x, y) => x - y), direct_subgroups: [members] });
  });
});

describe('watch triggers survive rollbacks', () => {
  it('a cache first used inside a write that rolls back still hears later changes', async () => {
    // A server of its own, so that nothing has used the group-setting cache yet.
    const s = await startTestServer();
    try {
      const groupId = (s.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:members'").get() as { id: number }).id;
      assert.throws(() =>
        s.app.batch.write(() => {
          s.app.db.prepare("UPDATE realm SET name = 'undone' WHERE id = 1").run();
          assert.equal(groupSettingForApi(s.app.db, groupId), groupId);
          throw new Error('undo');
        }),
      );
      s.app.batch.commit();
      assert.equal(groupSettingForApi(s.app.db, groupId), groupId);
      // Turned anonymous (no API does this): the cache must hear it.
      s.app.batch.write(() => s.app.db.prepare('UPDATE user_group SET named = 0 WHERE id = ?').run(groupId));
      s.app.batch.commit();
      const members = (s.app.db.prepare('SELECT user_id FROM user_group_member WHERE group_id = ? ORDER BY user_id').all(groupId) as { user_id: number }[]).map((r) => r.user_id);
      const subgroups = (s.app.db.prepare('SELECT subgroup_id FROM user_group_subgroup WHERE supergroup_id = ? ORDER BY subgroup_id').all(groupId) as { subgroup_id: number }[]).map((r) => r.subgroup_id);
      assert.deepStrictEqual(groupSettingForApi(s.app.db, groupId), { direct_members: members, direct_subgroups: subgroups });
    } finally {
      await s.close();
    }
  });
});

describe('subscriber counts (kept in memory until a subscription, user or channel row changes)', () => {
  it('follow subscribing, unsubscribing, deactivating and reactivating a subscriber', async () => {
    const { owner, hamlet, othello, admin } = t.users;
    const id = await newChannel('cache counts', owner, [owner, hamlet]);
    const counts = (b: Dict) => ({
      stream: ((b.streams as Dict[]).find((s) => s.stream_id === id) as Dict).subscriber_count,
      sub: ((b.subscriptions as Dict[]).find((s) => s.stream_id === id) as Dict | undefined)?.subscriber_count,
    });
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 2, sub: 2 });

    let res = await t.api(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'cache counts' }], principals: [othello.id, admin.id] });
    assert.equal(res.status, 200, res.text);
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 4, sub: 4 });

    res = await t.api(othello, 'DELETE', '/users/me/subscriptions', { subscriptions: ['cache counts'] });
    assert.equal(res.status, 200, res.text);
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 3, sub: 3 });

    assert.equal((await t.api(owner, 'DELETE', `/users/${admin.id}`)).status, 200);
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 2, sub: 2 });
    // GET /streams reads the same counts.
    const streams = await t.api(hamlet, 'GET', '/streams');
    assert.equal((streams.body.streams as Dict[]).find((s) => s.stream_id === id)?.subscriber_count, 2);

    assert.equal((await t.api(owner, 'POST', `/users/${admin.id}/reactivate`)).status, 200);
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 3, sub: 3 });

    // Any write to the subscription table, whatever its path.
    sqlWrite('UPDATE subscription SET active = 0 WHERE user_id = ? AND stream_id = ?', admin.id, id);
    assert.deepStrictEqual(counts(await register(hamlet, ['stream', 'subscription'])), { stream: 2, sub: 2 });
  });
});

describe('realm_user_groups (JSON kept until a group, membership, subgroup or user row changes)', () => {
  it('follows a new group, a member added, a subgroup written by SQL, and a member deactivated', async () => {
    const { owner, hamlet, othello } = t.users;
    const groupOf = (b: Dict, name: string) => (b.realm_user_groups as Dict[]).find((g) => g.name === name) as Dict | undefined;
    await register(hamlet, ['realm_user_groups']);
    const res = await t.api(owner, 'POST', '/user_groups/create', { name: 'cache group', description: 'd', members: JSON.stringify([hamlet.id]) });
    assert.equal(res.status, 200, res.text);
    let b = await register(hamlet, ['realm_user_groups']);
    const group = groupOf(b, 'cache group') as Dict;
    assert.deepStrictEqual(group.members, [hamlet.id]);
    // GET /user_groups answers the same dictionaries.
    const listed = await t.api(hamlet, 'GET', '/user_groups');
    assert.deepStrictEqual(b.realm_user_groups, listed.body.user_groups);

    assert.equal((await t.api(owner, 'POST', `/user_groups/${group.id}/members`, { add: JSON.stringify([othello.id]) })).status, 200);
    b = await register(hamlet, ['realm_user_groups']);
    assert.deepStrictEqual(groupOf(b, 'cache group'), { ...group, members: [hamlet.id, othello.id].sort((x, y) => x - y) });

    const members = (t.app.db.prepare("SELECT id FROM user_group WHERE name = 'role:members'").get() as { id: number }).id;
    sqlWrite('INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)', group.id, members);
    b = await register(hamlet, ['realm_user_groups']);
    assert.deepStrictEqual((groupOf(b, 'cache group') as Dict).direct_subgroup_ids, [members]);

    assert.equal((await t.api(owner, 'DELETE', `/users/${othello.id}`)).status, 200);
    b = await register(hamlet, ['realm_user_groups']);
    assert.deepStrictEqual((groupOf(b, 'cache group') as Dict).members, [hamlet.id]);
    assert.equal((await t.api(owner, 'POST', `/users/${othello.id}/reactivate`)).status, 200);
    b = await register(hamlet, ['realm_user_groups']);
    assert.deepStrictEqual((groupOf(b, 'cache group') as Dict).members, [hamlet.id, othello.id].sort((x, y) => x - y));
  });
});

describe('recent_private_conversations (one query)', () => {
  it('lists each conversation with its other members, newest first, the self conversation with none', async () => {
    const { hamlet, othello, admin } = t.users;
    const send = async (to: number[]) => {
      const res = await t.api(hamlet, 'POST', '/messages', { type: 'direct', to: JSON.stringify(to), content: 'hi' });
      assert.equal(res.status, 200, res.text);
      return res.body.id as number;
    };
    const a = await send([othello.id]);
    const self = await send([hamlet.id]);
    const group = await send([othello.id, admin.id]);
    const b = await register(hamlet, ['recent_private_conversations']);
    assert.deepStrictEqual(b.recent_private_conversations, [
      { max_message_id: group, user_ids: [othello.id, admin.id].sort((x, y) => x - y) },
      { max_message_id: self, user_ids: [] },
      { max_message_id: a, user_ids: [othello.id] },
    ]);
  });
});

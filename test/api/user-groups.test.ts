import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
let sys: Record<string, number>;
before(async () => {
  t = await startTestServer();
  const res = await t.api(t.users.owner, 'GET', '/user_groups');
  sys = Object.fromEntries(res.body.user_groups.map((g: { name: string; id: number }) => [g.name, g.id]));
});
after(() => t.close());

const ok = { result: 'success', msg: '' };
const bad = (msg: string, extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code: 'BAD_REQUEST', ...extra });
let counter = 0;

async function create(user: TestUser, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await t.api(user, 'POST', '/user_groups/create', { name: `group ${++counter}`, description: 'd', members: [], ...extra });
  assert.equal(res.status, 200, res.text);
  return res.body.group_id;
}
const groupById = async (id: number) =>
  (await t.api(t.users.owner, 'GET', '/user_groups', { include_deactivated_groups: true })).body.user_groups.find((g: { id: number }) => g.id === id);

describe('POST /user_groups/create', () => {
  it('creates a group with Zulip default settings and returns group_id', async () => {
    const h = t.users.hamlet;
    const res = await t.api(h, 'POST', '/user_groups/create', { name: 'Writers', description: 'People who write', members: [h.id, t.users.othello.id] });
    assert.deepEqual(Object.keys(res.body).sort(), ['group_id', 'msg', 'result']);
    const g = await groupById(res.body.group_id);
    assert.equal(typeof g.date_created, 'number');
    assert.deepEqual(g, {
      id: res.body.group_id,
      name: 'Writers',
      description: 'People who write',
      date_created: g.date_created,
      creator_id: h.id,
      members: [h.id, t.users.othello.id],
      direct_subgroup_ids: [],
      is_system_group: false,
      deactivated: false,
      can_add_members_group: { direct_members: [h.id], direct_subgroups: [] },
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:everyone'],
      can_manage_group: { direct_members: [h.id], direct_subgroups: [] },
      can_mention_group: sys['role:everyone'],
      can_remove_members_group: sys['role:nobody'],
    });
  });

  it('takes subgroups and group settings', async () => {
    const sub = await create(t.users.hamlet);
    const id = await create(t.users.hamlet, {
      subgroups: [sub],
      can_manage_group: sys['role:moderators'],
      can_mention_group: { direct_members: [t.users.othello.id], direct_subgroups: [sub] },
    });
    const g = await groupById(id);
    assert.deepEqual(g.direct_subgroup_ids, [sub]);
    assert.equal(g.can_manage_group, sys['role:moderators']);
    assert.deepEqual(g.can_mention_group, { direct_members: [t.users.othello.id], direct_subgroups: [sub] });
  });

  it('checks names', async () => {
    const h = t.users.hamlet;
    const post = (name: string) => t.api(h, 'POST', '/user_groups/create', { name, description: '', members: [] });
    assert.deepEqual((await post('Writers')).body, bad("User group 'Writers' already exists."));
    assert.deepEqual((await post('role:x')).body, bad("User group name cannot start with 'role:'."));
    assert.deepEqual((await post('@x')).body, bad("User group name cannot start with '@'."));
    assert.deepEqual((await post('channel:x')).body, bad("User group name cannot start with 'channel:'."));
    assert.deepEqual((await post('  ')).body, bad("User group name can't be empty!"));
    assert.deepEqual((await post('x'.repeat(101))).body, bad('User group name cannot exceed 100 characters.'));
  });

  it('validates members, subgroups and settings', async () => {
    const h = t.users.hamlet;
    const post = (extra: Record<string, unknown>) => t.api(h, 'POST', '/user_groups/create', { name: 'V', description: '', members: [], ...extra });
    assert.deepEqual((await post({ members: [9999] })).body, bad('Invalid user ID: 9999'));
    assert.deepEqual((await post({ subgroups: [9999] })).body, bad('Invalid user group ID: 9999'));
    assert.deepEqual((await post({ can_join_group: sys['role:internet'] })).body, bad("'can_join_group' setting cannot be set to 'role:internet' group."));
    assert.deepEqual((await post({ can_manage_group: sys['role:everyone'] })).body, bad("'can_manage_group' setting cannot be set to 'role:everyone' group."));
    const gone = await create(t.users.owner);
    await t.api(t.users.owner, 'POST', `/user_groups/${gone}/deactivate`);
    assert.deepEqual((await post({ subgroups: [gone] })).body, bad('User group is deactivated.'));
    assert.deepEqual((await post({ can_mention_group: gone })).body, bad('User group is deactivated.'));
    assert.deepEqual((await t.api(h, 'POST', '/user_groups/create', { name: 'V', members: [] })).body, {
      result: 'error',
      msg: "Missing 'description' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'description',
    });
  });

  it('refuses guests, bots, and users outside can_create_groups', async () => {
    const post = (u: TestUser) => t.api(u, 'POST', '/user_groups/create', { name: 'Nope', description: '', members: [] });
    assert.deepEqual((await post(t.users.guest)).body, bad('Not allowed for guest users'));
    assert.deepEqual((await post(t.users.bot)).body, bad('This endpoint does not accept bot requests.'));
    t.app.db.prepare('UPDATE realm SET can_create_groups = ?').run(sys['role:moderators']);
    try {
      assert.deepEqual((await post(t.users.hamlet)).body, bad('Insufficient permission'));
      const res = await post(t.users.moderator);
      assert.equal(res.body.result, 'success');
    } finally {
      t.app.db.prepare('UPDATE realm SET can_create_groups = ?').run(sys['role:members']);
    }
  });
});

describe('GET /user_groups', () => {
  it('lists system groups and leaves out deactivated groups unless asked', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/user_groups');
    assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'result', 'user_groups']);
    const owners = res.body.user_groups.find((g: { name: string }) => g.name === 'role:owners');
    assert.deepEqual(owners, {
      id: sys['role:owners'],
      name: 'role:owners',
      description: 'Owners of this organization',
      date_created: owners.date_created,
      creator_id: null,
      members: [t.users.owner.id],
      direct_subgroup_ids: [],
      is_system_group: true,
      deactivated: false,
      can_add_members_group: sys['role:nobody'],
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:nobody'],
      can_manage_group: sys['role:nobody'],
      can_mention_group: sys['role:everyone'],
      can_remove_members_group: sys['role:nobody'],
    });
    const members = res.body.user_groups.find((g: { name: string }) => g.name === 'role:members');
    assert.deepEqual(members.members, [t.users.hamlet.id, t.users.othello.id, t.users.bot.id]);
    assert.deepEqual(members.direct_subgroup_ids, [sys['role:fullmembers']]);
    const id = await create(t.users.owner);
    await t.api(t.users.owner, 'POST', `/user_groups/${id}/deactivate`);
    assert.equal((await t.api(t.users.hamlet, 'GET', '/user_groups')).body.user_groups.some((g: { id: number }) => g.id === id), false);
    assert.equal((await groupById(id)).deactivated, true);
  });

  it('refuses guests', async () => {
    assert.deepEqual((await t.api(t.users.guest, 'GET', '/user_groups')).body, bad('Not allowed for guest users'));
  });
});

describe('PATCH /user_groups/{id}', () => {
  it('changes name, description and settings ({new, old})', async () => {
    const h = t.users.hamlet;
    const id = await create(h);
    assert.deepEqual((await t.api(h, 'PATCH', `/user_groups/${id}`, { name: 'Renamed', description: 'new d' })).body, ok);
    const setting = { new: sys['role:members'], old: { direct_members: [h.id], direct_subgroups: [] } };
    assert.deepEqual((await t.api(h, 'PATCH', `/user_groups/${id}`, { can_add_members_group: setting })).body, ok);
    const g = await groupById(id);
    assert.equal(g.name, 'Renamed');
    assert.equal(g.description, 'new d');
    assert.equal(g.can_add_members_group, sys['role:members']);
    assert.deepEqual(
      (await t.api(h, 'PATCH', `/user_groups/${id}`, { can_add_members_group: { new: sys['role:nobody'], old: sys['role:owners'] } })).body,
      { result: 'error', msg: "'old' value does not match the expected value.", code: 'EXPECTATION_MISMATCH' },
    );
  });

  it('refuses empty requests, system groups, unknown groups and users without can_manage_group', async () => {
    const id = await create(t.users.hamlet);
    assert.deepEqual((await t.api(t.users.hamlet, 'PATCH', `/user_groups/${id}`)).body, bad('No new data supplied'));
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/user_groups/${sys['role:members']}`, { name: 'x' })).body, bad('Insufficient permission'));
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/user_groups/9999', { name: 'x' })).body, bad('Invalid user group'));
    assert.deepEqual((await t.api(t.users.othello, 'PATCH', `/user_groups/${id}`, { name: 'x' })).body, bad('Insufficient permission'));
    // Role matrix: can_manage_all_groups (role:owners, Zulip's default) lets owners in; administrators,
    // moderators and members are not.
    for (const [u, allowed] of [
      [t.users.owner, true],
      [t.users.admin, false],
      [t.users.moderator, false],
      [t.users.othello, false],
    ] as const) {
      const res = await t.api(u, 'PATCH', `/user_groups/${id}`, { description: `by ${u.id}` });
      assert.deepEqual(res.body, allowed ? ok : bad('Insufficient permission'), u.email);
    }
    assert.deepEqual((await t.api(t.users.guest, 'PATCH', `/user_groups/${id}`, { name: 'x' })).body, bad('Not allowed for guest users'));
  });
});

describe('POST /user_groups/{id}/members', () => {
  it('adds and removes members, and reports mistakes', async () => {
    const h = t.users.hamlet;
    const o = t.users.othello;
    const id = await create(h, { members: [h.id] });
    const post = (params: Record<string, unknown>, u = h) => t.api(u, 'POST', `/user_groups/${id}/members`, params);
    assert.deepEqual((await post({})).body, bad('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'));
    assert.deepEqual((await post({ add: [o.id] })).body, ok);
    assert.deepEqual((await post({ add: [o.id] })).body, bad(`User ${o.id} is already a member of this group`));
    assert.deepEqual((await post({ add: [9999] })).body, bad('Invalid user ID: 9999'));
    assert.deepEqual((await post({ delete: [t.users.admin.id] })).body, bad(`There is no member '${t.users.admin.id}' in this user group`));
    assert.deepEqual((await post({ delete: [o.id] })).body, ok);
    const sub = await create(h);
    assert.deepEqual((await post({ add_subgroups: [sub] })).body, ok);
    assert.deepEqual((await groupById(id)).direct_subgroup_ids, [sub]);
    assert.deepEqual((await post({ delete_subgroups: [sub] })).body, ok);
    assert.deepEqual((await groupById(id)).members, [h.id]);
    // Others need can_add_members_group / can_remove_members_group.
    assert.deepEqual((await post({ add: [t.users.admin.id] }, o)).body, bad('Insufficient permission'));
    // can_manage_all_groups is role:owners by default (Zulip's default_group_name).
    assert.deepEqual((await post({ add: [o.id] }, t.users.admin)).body, bad('Insufficient permission'));
    assert.deepEqual((await post({ add: [o.id] }, t.users.owner)).body, ok);
  });

  it('lets users join through can_join_group and leave through can_leave_group', async () => {
    const o = t.users.othello;
    const id = await create(t.users.hamlet, { can_join_group: sys['role:members'], can_leave_group: sys['role:nobody'] });
    assert.deepEqual((await t.api(o, 'POST', `/user_groups/${id}/members`, { add: [o.id] })).body, ok);
    assert.deepEqual((await t.api(o, 'POST', `/user_groups/${id}/members`, { delete: [o.id] })).body, bad('Insufficient permission'));
  });

  it('refuses system groups and deactivated groups', async () => {
    const id = await create(t.users.owner);
    await t.api(t.users.owner, 'POST', `/user_groups/${id}/deactivate`);
    assert.deepEqual((await t.api(t.users.owner, 'POST', `/user_groups/${id}/members`, { add: [t.users.hamlet.id] })).body, bad('User group is deactivated.'));
    assert.deepEqual(
      (await t.api(t.users.owner, 'POST', `/user_groups/${sys['role:members']}/members`, { add: [t.users.guest.id] })).body,
      bad('Insufficient permission'),
    );
  });
});

describe('POST /user_groups/{user_group_id}/subgroups', () => {
  it('adds and deletes subgroups, atomically, and refuses cycles', async () => {
    const h = t.users.hamlet;
    const a = await create(h);
    const b = await create(h);
    const c = await create(h);
    const post = (id: number, params: Record<string, unknown>, u = h) => t.api(u, 'POST', `/user_groups/${id}/subgroups`, params);
    assert.deepEqual((await post(a, {})).body, bad('Nothing to do. Specify at least one of "add" or "delete".'));
    assert.deepEqual((await post(a, { add: [b] })).body, ok);
    assert.deepEqual((await post(b, { add: [c] })).body, ok);
    assert.deepEqual((await post(a, { add: [b] })).body, bad(`User group ${b} is already a subgroup of this group.`));
    assert.deepEqual((await post(c, { add: [a] })).body, bad(`User group ${c} is already a subgroup of one of the passed subgroups.`));
    assert.deepEqual((await post(a, { add: [a] })).body, bad(`User group ${a} is already a subgroup of one of the passed subgroups.`));
    assert.deepEqual((await post(a, { delete: [c] })).body, bad(`User group ${c} is not a subgroup of this group.`));
    assert.deepEqual((await post(a, { add: [9999] })).body, bad('Invalid user group ID: 9999'));
    assert.deepEqual((await post(9999, { add: [a] })).body, bad('Invalid user group'));
    assert.deepEqual((await post(sys['role:members'], { add: [a] }, t.users.owner)).body, bad('Insufficient permission'));
    assert.deepEqual((await post(a, { add: [c] }, t.users.othello)).body, bad('Insufficient permission'));
    assert.deepEqual((await post(a, { add: [c] }, t.users.guest)).body, bad('Not allowed for guest users'));
    // add + delete apply together, or not at all.
    assert.deepEqual((await post(a, { add: [c], delete: [9999] })).body, bad('Invalid user group ID: 9999'));
    assert.deepEqual((await groupById(a)).direct_subgroup_ids, [b]);
    assert.deepEqual((await post(a, { add: [c], delete: [b] })).body, ok);
    assert.deepEqual((await groupById(a)).direct_subgroup_ids, [c]);
  });

  it('works on deactivated groups and for bots', async () => {
    const owner = t.users.owner;
    const a = await create(owner);
    const b = await create(owner);
    await t.api(owner, 'POST', `/user_groups/${a}/deactivate`);
    assert.deepEqual((await t.api(owner, 'POST', `/user_groups/${a}/subgroups`, { add: [b] })).body, ok);
    // The bot manages its own group.
    const botGroup = await create(owner, { can_manage_group: { direct_members: [t.users.bot.id], direct_subgroups: [] } });
    assert.deepEqual((await t.api(t.users.bot, 'POST', `/user_groups/${botGroup}/subgroups`, { add: [b] })).body, ok);
  });
});

describe('GET /user_groups/{id}/members and /subgroups', () => {
  it('lists members recursively or directly, without deactivated users', async () => {
    const h = t.users.hamlet;
    const inner = await create(h, { members: [t.users.othello.id] });
    const outer = await create(h, { members: [h.id], subgroups: [inner] });
    assert.deepEqual((await t.api(h, 'GET', `/user_groups/${outer}/members`)).body, { ...ok, members: [h.id, t.users.othello.id] });
    assert.deepEqual((await t.api(h, 'GET', `/user_groups/${outer}/members`, { direct_member_only: true })).body, { ...ok, members: [h.id] });
    assert.deepEqual((await t.api(h, 'GET', `/user_groups/${outer}/subgroups`)).body, { ...ok, subgroups: [inner] });
    assert.deepEqual((await t.api(h, 'GET', `/user_groups/${sys['role:administrators']}/subgroups`)).body, { ...ok, subgroups: [sys['role:owners']] });
    assert.deepEqual((await t.api(h, 'GET', '/user_groups/9999/members')).body, bad('Invalid user group'));
  });
});

describe('GET /user_groups/{user_group_id}/members/{user_id}', () => {
  it('answers through nested subgroups, directly when asked, for bots, and never for deactivated users', async () => {
    const owner = t.users.owner;
    const extra = (await t.api(owner, 'POST', '/users', { email: 'ophelia@example.com', password: 'a-long-password-1', full_name: 'Ophelia' })).body.user_id;
    const leaf = await create(owner, { members: [extra, t.users.bot.id] });
    const mid = await create(owner, { subgroups: [leaf] });
    const top = await create(owner, { subgroups: [mid], members: [t.users.hamlet.id] });
    const q = (g: number, u: number, params: Record<string, unknown> = {}) => t.api(t.users.hamlet, 'GET', `/user_groups/${g}/members/${u}`, params);
    assert.deepEqual((await q(top, extra)).body, { ...ok, is_user_group_member: true });
    assert.deepEqual((await q(top, extra, { direct_member_only: true })).body, { ...ok, is_user_group_member: false });
    assert.deepEqual((await q(top, t.users.hamlet.id, { direct_member_only: true })).body, { ...ok, is_user_group_member: true });
    assert.deepEqual((await q(top, t.users.bot.id)).body, { ...ok, is_user_group_member: true });
    assert.deepEqual((await q(top, t.users.othello.id)).body, { ...ok, is_user_group_member: false });
    // System groups nest too: owners are administrators.
    assert.deepEqual((await q(sys['role:administrators'], owner.id)).body, { ...ok, is_user_group_member: true });
    await t.api(owner, 'DELETE', `/users/${extra}`);
    assert.deepEqual((await q(top, extra)).body, { ...ok, is_user_group_member: false });
    assert.deepEqual((await q(leaf, extra, { direct_member_only: true })).body, { ...ok, is_user_group_member: false });
    assert.deepEqual((await t.api(owner, 'GET', `/user_groups/${leaf}/members`)).body, { ...ok, members: [t.users.bot.id] });
    assert.deepEqual((await q(top, 9999)).body, bad('No such user'));
    assert.deepEqual((await q(9999, extra)).body, bad('Invalid user group'));
    assert.deepEqual((await t.api(t.users.guest, 'GET', `/user_groups/${top}/members/${extra}`)).body, bad('Not allowed for guest users'));
  });
});

describe('POST /user_groups/{id}/deactivate', () => {
  it('refuses a group in use with its objections, and deactivates an unused one', async () => {
    const owner = t.users.owner;
    const used = await create(owner);
    const user = await create(owner, { can_mention_group: { direct_members: [], direct_subgroups: [used, sys['role:owners']] } });
    const parent = await create(owner, { subgroups: [used] });
    t.app.db.prepare('UPDATE realm SET can_create_bots_group = ?').run(used);
    try {
      const res = await t.api(owner, 'POST', `/user_groups/${used}/deactivate`);
      assert.deepEqual(res.body, {
        result: 'error',
        msg: 'Cannot deactivate user group in use.',
        code: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
        objections: [
          { type: 'subgroup', supergroup_ids: [parent] },
          { type: 'user_group', group_id: user, settings: ['can_mention_group'] },
          { type: 'realm', settings: ['can_create_bots_group'] },
        ],
      });
    } finally {
      t.app.db.prepare('UPDATE realm SET can_create_bots_group = ?').run(sys['role:members']);
    }
    assert.deepEqual((await t.api(owner, 'POST', `/user_groups/${user}/deactivate`)).body, ok);
    assert.deepEqual((await t.api(owner, 'POST', `/user_groups/${user}/deactivate`)).body, bad('User group is deactivated.'));
    assert.deepEqual((await t.api(owner, 'POST', `/user_groups/${sys['role:members']}/deactivate`)).body, bad('Insufficient permission'));
    assert.deepEqual((await t.api(t.users.othello, 'POST', `/user_groups/${used}/deactivate`)).body, bad('Insufficient permission'));
  });
});

describe('user_group events', () => {
  async function queue(user: TestUser, params: Record<string, unknown> = {}) {
    const res = await t.api(user, 'POST', '/register', { event_types: ['user_group'], ...params });
    assert.equal(res.status, 200, res.text);
    return res.body.queue_id as string;
  }
  async function events(user: TestUser, queueId: string): Promise<Record<string, unknown>[]> {
    const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200, res.text);
    return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat').map(({ id: _id, ...e }: { id: number }) => e);
  }

  it('announces add, update, membership, subgroups and deactivation', async () => {
    const h = t.users.hamlet;
    const o = t.users.othello;
    const sub = await create(h);
    const qid = await queue(o);
    const modern = await queue(o, { client_capabilities: { notification_settings_null: false, include_deactivated_groups: true } });
    const id = await create(h, { members: [h.id] });
    await t.api(h, 'PATCH', `/user_groups/${id}`, { name: 'Evented', description: 'ed', can_join_group: { new: sys['role:members'] } });
    await t.api(h, 'POST', `/user_groups/${id}/members`, { add: [o.id] });
    await t.api(h, 'POST', `/user_groups/${id}/members`, { delete: [o.id] });
    await t.api(h, 'POST', `/user_groups/${id}/subgroups`, { add: [sub] });
    await t.api(h, 'POST', `/user_groups/${id}/subgroups`, { delete: [sub] });
    await t.api(h, 'POST', `/user_groups/${id}/deactivate`);
    const got = await events(o, qid);
    const add = got[0] as { group: Record<string, unknown> };
    assert.deepEqual(got, [
      { type: 'user_group', op: 'add', group: { ...add.group } },
      { type: 'user_group', op: 'update', group_id: id, data: { name: 'Evented' } },
      { type: 'user_group', op: 'update', group_id: id, data: { description: 'ed' } },
      { type: 'user_group', op: 'update', group_id: id, data: { can_join_group: sys['role:members'] } },
      { type: 'user_group', op: 'add_members', group_id: id, user_ids: [o.id] },
      { type: 'user_group', op: 'remove_members', group_id: id, user_ids: [o.id] },
      { type: 'user_group', op: 'add_subgroups', group_id: id, direct_subgroup_ids: [sub] },
      { type: 'user_group', op: 'remove_subgroups', group_id: id, direct_subgroup_ids: [sub] },
      { type: 'user_group', op: 'remove', group_id: id },
    ]);
    assert.deepEqual(add.group, await groupById(id).then((g) => ({ ...g, name: `group ${counter}`, description: 'd', can_join_group: sys['role:nobody'], deactivated: false })));
    const modernGot = await events(o, modern);
    assert.deepEqual(modernGot[modernGot.length - 1], { type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } });
  });

  it('moves users between system groups on role changes, with events', async () => {
    const o = t.users.othello;
    const qid = await queue(t.users.hamlet);
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${o.id}`, { role: 300 })).body, ok);
    assert.deepEqual(await events(t.users.hamlet, qid), [
      // Zulip's do_change_user_role: the role's group, then the full-members update.
      { type: 'user_group', op: 'remove_members', group_id: sys['role:members'], user_ids: [o.id] },
      { type: 'user_group', op: 'add_members', group_id: sys['role:moderators'], user_ids: [o.id] },
      { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: [o.id] },
    ]);
    const q = (g: string) => t.api(o, 'GET', `/user_groups/${sys[g]}/members/${o.id}`, { direct_member_only: true });
    assert.equal((await q('role:moderators')).body.is_user_group_member, true);
    assert.equal((await q('role:members')).body.is_user_group_member, false);
    await t.api(t.users.owner, 'PATCH', `/users/${o.id}`, { role: 400 });
    assert.equal((await q('role:members')).body.is_user_group_member, true);
    assert.equal((await q('role:fullmembers')).body.is_user_group_member, true);
    assert.equal((await q('role:moderators')).body.is_user_group_member, false);
  });
});

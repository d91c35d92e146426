// The organization's waiting period (waiting_period_threshold, days): role:fullmembers holds the members
// whose accounts are at least that old (Zulip's is_provisional_member), recomputed when the setting
// changes, when roles change and by the periodic job as time passes; events observed over the wire.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { err, systemGroups, type SystemGroupName } from '../helpers/chat';
import { promoteNewFullMembers } from '../../src/actions/user-groups';

const DAY = 86400;
let now = 1_750_000_000;
let t: TestServer;
let sys: Record<SystemGroupName, number>;
before(async () => {
  t = await startTestServer({ clock: { nowMs: () => now * 1000 } });
  sys = systemGroups(t);
});
after(() => t.close());

type Ev = Record<string, unknown>;

async function queue(user: TestUser): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: ['user_group', 'realm'] });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}

const lastIds = new Map<string, number>();
/** The events since the last call for this queue. */
async function events(user: TestUser, queueId: string): Promise<Ev[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: lastIds.get(queueId) ?? -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  for (const e of res.body.events) lastIds.set(queueId, e.id);
  return res.body.events.filter((e: Ev) => e.type !== 'heartbeat').map(({ id: _id, ...e }: Ev) => e);
}

/** Direct members of a system group, over the API. */
async function direct(group: SystemGroupName): Promise<number[]> {
  const res = await t.api(t.users.hamlet, 'GET', `/user_groups/${sys[group]}/members`, { direct_member_only: true });
  assert.equal(res.status, 200, res.text);
  return [...res.body.members].sort((a: number, b: number) => a - b);
}

/**
 * Moves the clock, then opens a queue for `user` (idle queues expire by the same clock) and runs the
 * periodic job (Zulip's daily promote_new_full_members); returns the queue.
 */
async function advance(days: number, user: TestUser): Promise<string> {
  now += days * DAY;
  const q = await queue(user);
  promoteNewFullMembers(t.app);
  t.app.batch.commit();
  return q;
}

const byId = (...users: TestUser[]) => users.map((u) => u.id).sort((a, b) => a - b);

describe('waiting_period_threshold and role:fullmembers', () => {
  let newcomer: TestUser;

  it('with no waiting period every member is a full member, bots with the member role included', async () => {
    const { hamlet, othello, bot } = t.users;
    assert.deepEqual(await direct('role:fullmembers'), byId(hamlet, othello, bot));
    assert.deepEqual(await direct('role:members'), byId(hamlet, othello, bot));
  });

  it('PATCH /realm: owners only; a longer period takes the new accounts out, with one remove_members event after the realm update', async () => {
    const { owner, admin, hamlet, othello, bot } = t.users;
    assert.deepEqual((await t.api(admin, 'PATCH', '/realm', { waiting_period_threshold: 3 })).body, err('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'));
    now += 2 * DAY;
    const q = await queue(hamlet);
    const res = await t.api(owner, 'PATCH', '/realm', { waiting_period_threshold: 3 });
    assert.deepEqual(res.body, { result: 'success', msg: '', waiting_period_threshold: 3 });
    assert.deepEqual(await events(hamlet, q), [
      { type: 'realm', op: 'update', property: 'waiting_period_threshold', value: 3 },
      { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: byId(hamlet, othello, bot) },
    ]);
    assert.deepEqual(await direct('role:fullmembers'), []);
    assert.deepEqual(await direct('role:members'), byId(hamlet, othello, bot));
    // Unchanged: no events at all.
    assert.equal((await t.api(owner, 'PATCH', '/realm', { waiting_period_threshold: 3 })).status, 200);
    assert.deepEqual(await events(hamlet, q), []);
  });

  it('a permission given to role:fullmembers follows', async () => {
    const { owner, hamlet } = t.users;
    assert.equal((await t.api(owner, 'PATCH', '/realm', { can_create_public_channel_group: { new: sys['role:fullmembers'] } })).status, 200);
    const refused = await t.api(hamlet, 'POST', '/channels/create', { name: 'too early', subscribers: [hamlet.id] });
    assert.deepEqual(refused.body, err('Insufficient permission'));
  });

  it('as time passes, the periodic job adds the members whose period ended (one add_members event)', async () => {
    const { owner, hamlet, othello, bot } = t.users;
    const created = await t.api(owner, 'POST', '/users', { email: 'newcomer@example.com', password: 'a-long-enough-password', full_name: 'Newcomer' });
    assert.equal(created.status, 200, created.text);
    newcomer = { id: created.body.user_id, email: 'newcomer@example.com', apiKey: '', password: 'a-long-enough-password', fullName: 'Newcomer' };
    // A new account starts provisional.
    assert.deepEqual(await direct('role:members'), byId(hamlet, othello, bot, newcomer));
    assert.deepEqual(await direct('role:fullmembers'), []);
    let q = await advance(0.5, hamlet); // 2.5 days for the seeded accounts: not yet
    assert.deepEqual(await events(hamlet, q), []);
    q = await advance(0.5, hamlet);
    assert.deepEqual(await events(hamlet, q), [
      { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: byId(hamlet, othello, bot) },
    ]);
    assert.deepEqual(await direct('role:fullmembers'), byId(hamlet, othello, bot));
    const allowed = await t.api(hamlet, 'POST', '/channels/create', { name: 'on time', subscribers: [hamlet.id] });
    assert.equal(allowed.status, 200, allowed.text);
    q = await advance(1, hamlet); // nothing new
    assert.deepEqual(await events(hamlet, q), []);
  });

  it('role changes: the role group first, then the full-members update; a provisional member is not added back', async () => {
    const { owner, hamlet, othello } = t.users;
    const q = await queue(hamlet);
    assert.equal((await t.api(owner, 'PATCH', `/users/${othello.id}`, { role: 300 })).status, 200);
    assert.equal((await t.api(owner, 'PATCH', `/users/${newcomer.id}`, { role: 300 })).status, 200);
    assert.equal((await t.api(owner, 'PATCH', `/users/${newcomer.id}`, { role: 400 })).status, 200);
    assert.equal((await t.api(owner, 'PATCH', `/users/${othello.id}`, { role: 400 })).status, 200);
    assert.deepEqual(
      (await events(hamlet, q)).filter((e) => e.type === 'user_group'),
      [
        { type: 'user_group', op: 'remove_members', group_id: sys['role:members'], user_ids: [othello.id] },
        { type: 'user_group', op: 'add_members', group_id: sys['role:moderators'], user_ids: [othello.id] },
        { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: [othello.id] },
        { type: 'user_group', op: 'remove_members', group_id: sys['role:members'], user_ids: [newcomer.id] },
        { type: 'user_group', op: 'add_members', group_id: sys['role:moderators'], user_ids: [newcomer.id] },
        { type: 'user_group', op: 'remove_members', group_id: sys['role:moderators'], user_ids: [newcomer.id] },
        { type: 'user_group', op: 'add_members', group_id: sys['role:members'], user_ids: [newcomer.id] },
        { type: 'user_group', op: 'remove_members', group_id: sys['role:moderators'], user_ids: [othello.id] },
        { type: 'user_group', op: 'add_members', group_id: sys['role:members'], user_ids: [othello.id] },
        { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: [othello.id] },
      ],
    );
    assert.deepEqual(await direct('role:fullmembers'), byId(hamlet, othello, t.users.bot));
  });

  it('a shorter period takes the newcomer in; back to 0 everyone is a full member', async () => {
    const { owner, hamlet, othello, bot } = t.users;
    const q = await queue(hamlet);
    // The newcomer's account is 2 days old.
    assert.equal((await t.api(owner, 'PATCH', '/realm', { waiting_period_threshold: 2 })).status, 200);
    assert.deepEqual((await events(hamlet, q)).slice(1), [
      { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: [newcomer.id] },
    ]);
    assert.equal((await t.api(owner, 'PATCH', '/realm', { waiting_period_threshold: 10 })).status, 200);
    assert.deepEqual((await events(hamlet, q)).slice(1), [
      { type: 'user_group', op: 'remove_members', group_id: sys['role:fullmembers'], user_ids: byId(hamlet, othello, bot, newcomer) },
    ]);
    assert.equal((await t.api(owner, 'PATCH', '/realm', { waiting_period_threshold: 0 })).status, 200);
    assert.deepEqual((await events(hamlet, q)).slice(1), [
      { type: 'user_group', op: 'add_members', group_id: sys['role:fullmembers'], user_ids: byId(hamlet, othello, bot, newcomer) },
    ]);
    // With no waiting period the periodic job has nothing to do.
    const later = await advance(1, hamlet);
    assert.deepEqual(await events(hamlet, later), []);
  });
});

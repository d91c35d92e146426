// Isolation of who-is-who data: presence and users when the organization limits guests' access to
// other users (can_access_all_users_group = members; CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE on),
// channel metadata and membership of private channels, and user groups.
//
// Limited access in Zulip: a user outside can_access_all_users_group can access themselves, the
// subscribers of channels they are subscribed to, and the people they have direct message
// conversations with; everyone else is inaccessible. Parley has no API to change the setting yet, so
// the test sets the column directly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type SeedName, type TestServer } from '../helpers/server';
import { createChannel, err, sendDirect, systemGroups } from '../helpers/chat';

let t: TestServer;
let guestChannel: number;
let secret: number;
let guestQueue: string;
const HUMANS: SeedName[] = ['owner', 'admin', 'moderator', 'hamlet', 'othello', 'guest'];

/** Whom each viewer may access: everyone for members; for the guest, its channel-mates and DM partners. */
const ACCESSIBLE: Partial<Record<SeedName, SeedName[]>> = {
  guest: ['guest', 'othello', 'hamlet'],
};
const accessible = (v: SeedName): SeedName[] => ACCESSIBLE[v] ?? HUMANS;

before(async () => {
  t = await startTestServer();
  const u = t.users;
  guestChannel = await createChannel(t, u.owner, 'guests welcome', [u.guest, u.othello]);
  secret = await createChannel(t, u.hamlet, 'secret', [u.hamlet, u.othello], { invite_only: true });
  await sendDirect(t, u.hamlet, [u.guest], 'hello guest');
  t.app.db.prepare('UPDATE realm SET can_access_all_users_group = ?').run(systemGroups(t)['role:members']);
  // Registered before anyone reports presence: each user's first report is announced.
  guestQueue = (await t.api(u.guest, 'POST', '/register', { event_types: ['presence'], fetch_event_types: [] })).body.queue_id;
  for (const name of HUMANS) {
    const res = await t.api(u[name], 'POST', '/users/me/presence', { status: 'active', ping_only: true });
    assert.equal(res.status, 200, res.text);
  }
});
after(() => t.close());

const emailsOf = (names: SeedName[]) => names.map((n) => t.users[n].email).sort();
const idsOf = (names: SeedName[]) => names.map((n) => String(t.users[n].id)).sort();

describe('presence under limited access', () => {
  for (const v of HUMANS) {
    it(`${v} sees the presence of exactly ${v === 'guest' ? accessible(v).join(', ') : 'everyone'}`, async () => {
      const realm = await t.api(t.users[v], 'GET', '/realm/presence');
      assert.equal(realm.status, 200, realm.text);
      assert.deepEqual(Object.keys(realm.body.presences).sort(), emailsOf(accessible(v)));

      const own = await t.api(t.users[v], 'POST', '/users/me/presence', { status: 'active', last_update_id: -1 });
      assert.equal(own.status, 200, own.text);
      assert.deepEqual(Object.keys(own.body.presences).sort(), idsOf(accessible(v)));

      const reg = await t.api(t.users[v], 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true });
      assert.deepEqual(Object.keys(reg.body.presences).sort(), idsOf(accessible(v)));
      await t.api(t.users[v], 'DELETE', '/events', { queue_id: reg.body.queue_id });

      for (const target of HUMANS) {
        for (const key of [t.users[target].id, t.users[target].email]) {
          const one = await t.api(t.users[v], 'GET', `/users/${key}/presence`);
          if (accessible(v).includes(target)) assert.equal(one.status, 200, `${v} → ${target}: ${one.text}`);
          else assert.deepEqual(one.body, err('No such user'), `${v} must not see ${target}'s presence`);
        }
      }
    });
  }

  it('presence events reach the guest only for the users it may access', async () => {
    const res = await t.api(t.users.guest, 'GET', '/events', { queue_id: guestQueue, last_event_id: -1, dont_block: true });
    assert.equal(res.status, 200, res.text);
    const from = new Set(res.body.events.filter((e: { type: string }) => e.type === 'presence').map((e: { user_id: number }) => e.user_id));
    assert.deepEqual([...from].sort(), accessible('guest').map((n) => t.users[n].id).sort());
  });
});

describe('users under limited access (Zulip: placeholders in GET /users, "Insufficient permission" for GET /users/{id})', () => {
  it('GET /users shows the guest only its accessible users by name and email', async () => {
    const res = await t.api(t.users.guest, 'GET', '/users');
    assert.equal(res.status, 200, res.text);
    const seen = res.body.members.filter((m: { full_name: string }) => m.full_name !== 'Unknown user').map((m: { email: string }) => m.email);
    for (const name of HUMANS) {
      assert.equal(seen.includes(t.users[name].email), accessible('guest').includes(name), name);
    }
  });

  it('GET /users/{id} refuses an inaccessible user', async () => {
    const res = await t.api(t.users.guest, 'GET', `/users/${t.users.admin.id}`);
    assert.deepEqual(res.body, err('Insufficient permission'));
  });

  it('members still get every user in full', async () => {
    const res = await t.api(t.users.othello, 'GET', '/users');
    assert.equal(res.status, 200, res.text);
    const emails = res.body.members.map((m: { email: string }) => m.email);
    for (const name of HUMANS) assert.ok(emails.includes(t.users[name].email), name);
  });
});

describe('private channel metadata', () => {
  const NON_SUBSCRIBERS: SeedName[] = ['moderator', 'guest', 'bot'];

  for (const v of NON_SUBSCRIBERS) {
    it(`${v} (not subscribed) cannot list, look up, or read the members of a private channel`, async () => {
      const list = await t.api(t.users[v], 'GET', '/streams');
      assert.equal(list.status, 200, list.text);
      assert.ok(!list.body.streams.some((s: { stream_id: number }) => s.stream_id === secret), `${v} lists the private channel`);
      const subs = await t.api(t.users[v], 'GET', '/users/me/subscriptions', { include_subscribers: true });
      assert.ok(!JSON.stringify(subs.body).includes('"secret"'));
      for (const path of [`/streams/${secret}`, `/streams/${secret}/members`]) {
        const res = await t.api(t.users[v], 'GET', path);
        assert.deepEqual(res.body, err('Invalid channel ID'), `${v} ${path}`);
      }
      const member = await t.api(t.users[v], 'GET', `/users/${t.users.hamlet.id}/subscriptions/${secret}`);
      assert.deepEqual(member.body, err('Invalid channel ID'), `${v} asks whether hamlet is subscribed`);
      const id = await t.api(t.users[v], 'GET', '/get_stream_id', { stream: 'secret' });
      assert.deepEqual(id.body, err("Invalid channel name 'secret'"));
    });
  }

  it('subscribers read its members', async () => {
    const res = await t.api(t.users.othello, 'GET', `/streams/${secret}/members`);
    assert.deepEqual(res.body.subscribers.sort(), [t.users.hamlet.id, t.users.othello.id].sort());
  });

  it("an administrator lists it with include_all (Zulip shows administrators private channels' metadata) but does not read its members' messages", async () => {
    const res = await t.api(t.users.admin, 'GET', '/streams', { include_all: true });
    assert.ok(res.body.streams.some((s: { stream_id: number }) => s.stream_id === secret));
  });
});

describe('user groups', () => {
  it('members all see the same groups and members; guests and bots are refused (require_member_or_admin)', async () => {
    const bodies = [];
    for (const v of ['owner', 'admin', 'moderator', 'hamlet', 'othello'] as SeedName[]) {
      const res = await t.api(t.users[v], 'GET', '/user_groups');
      assert.equal(res.status, 200, `${v}: ${res.text}`);
      bodies.push(res.body);
    }
    for (const b of bodies.slice(1)) assert.deepEqual(b, bodies[0]);
    const groups = systemGroups(t);
    for (const path of ['/user_groups', `/user_groups/${groups['role:members']}/members`, `/user_groups/${groups['role:members']}/members/${t.users.admin.id}`]) {
      const res = await t.api(t.users.guest, 'GET', path);
      assert.deepEqual(res.body, err('Not allowed for guest users'), path);
      const bot = await t.api(t.users.bot, 'GET', path);
      assert.deepEqual(bot.body, err('This endpoint does not accept bot requests.'), path);
    }
  });
});

describe('register under limited access', () => {
  it('shows inaccessible users as Unknown user placeholders, or leaves them out for user_list_incomplete clients', async () => {
    const plain = await t.api(t.users.guest, 'POST', '/register', { fetch_event_types: ['realm_user'] });
    assert.equal(plain.status, 200, plain.text);
    const byId = new Map<number, { full_name: string; email: string }>(plain.body.realm_users.map((u: { user_id: number }) => [u.user_id, u]));
    for (const name of HUMANS) {
      const u = byId.get(t.users[name].id);
      assert.ok(u, name);
      if (accessible('guest').includes(name)) assert.equal(u.email, t.users[name].email, name);
      else assert.deepEqual([u.full_name, u.email.startsWith(`user${t.users[name].id}@`)], ['Unknown user', true], name);
    }
    await t.api(t.users.guest, 'DELETE', '/events', { queue_id: plain.body.queue_id });

    const incomplete = await t.api(t.users.guest, 'POST', '/register', {
      fetch_event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: false, user_list_incomplete: true },
    });
    assert.equal(incomplete.status, 200, incomplete.text);
    const ids = incomplete.body.realm_users.map((u: { user_id: number }) => u.user_id);
    for (const name of HUMANS) assert.equal(ids.includes(t.users[name].id), accessible('guest').includes(name), name);
    await t.api(t.users.guest, 'DELETE', '/events', { queue_id: incomplete.body.queue_id });
  });
});

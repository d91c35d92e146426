// The system bots (Notification Bot, Welcome Bot) are Zulip's cross-realm bots (issue 15, item 11):
// /register lists them as cross_realm_bots, not as realm_users; GET /users and the organization's
// groups leave them out, lookups do not find them, yet their messages show their name and avatar,
// and users may send them direct messages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, SUCCESS, systemGroups } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { notificationBot, welcomeBot } from '../../src/actions/system-bots';
import { avatarUrl, isoTime, type UserRow } from '../../src/lib/users';

let t: TestServer;
let realmId: number;
let notification: UserRow;
let welcome: UserRow;
let eventsAtCreation: any[];
let channel: number;

before(async () => {
  t = await startTestServer();
  realmId = t.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').pluck().get(t.users.owner.id) as number;
  const queues = await Promise.all([t.users.owner, t.users.hamlet].map((u) => registerQueue(t, u, ['realm_user', 'user_group'])));
  // The bots are made on first use, inside a write, as the server makes them.
  t.app.batch.write(() => {
    notification = notificationBot(t.app, realmId);
    welcome = welcomeBot(t.app, realmId);
  });
  t.app.batch.commit();
  eventsAtCreation = [...(await queuedEvents(t, t.users.owner, queues[0])), ...(await queuedEvents(t, t.users.hamlet, queues[1]))];
  channel = await createChannel(t, t.users.owner, 'bots here', [t.users.owner, t.users.hamlet]);
});
after(() => t.close());

const ALL: (keyof TestServer['users'])[] = ['owner', 'admin', 'moderator', 'hamlet', 'othello', 'guest', 'bot'];

function crossRealmDict(u: UserRow): Record<string, unknown> {
  return {
    email: u.email,
    user_id: u.id,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    role: 400,
    is_bot: true,
    full_name: u.full_name,
    timezone: '',
    is_active: true,
    date_joined: isoTime(u.date_joined),
    avatar_url: avatarUrl(u),
    delivery_email: u.delivery_email,
    is_imported_stub: false,
    bot_type: 1,
    bot_owner_id: null,
    is_system_bot: true,
  };
}

async function ok(user: TestUser, method: string, path: string, params?: Record<string, unknown>): Promise<any> {
  const res = await t.api(user, method, path, params);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('cross_realm_bots', () => {
  it('creating a system bot tells nobody: no realm_user add, no group membership', () => {
    assert.deepEqual(eventsAtCreation, []);
  });

  it('/register lists the system bots as cross_realm_bots, by name, for every user; never as realm users', async () => {
    for (const name of ALL) {
      const body = await ok(t.users[name], 'POST', '/register', { fetch_event_types: ['realm_user'] });
      assert.deepEqual(body.cross_realm_bots, [crossRealmDict(notification), crossRealmDict(welcome)], name);
      const listed = [...body.realm_users, ...body.realm_non_active_users].map((u: { user_id: number }) => u.user_id);
      assert.ok(!listed.includes(notification.id) && !listed.includes(welcome.id), name);
      assert.deepEqual(
        listed.sort((a: number, b: number) => a - b),
        Object.values(t.users)
          .map((u) => u.id)
          .sort((a, b) => a - b),
      );
    }
  });

  it('GET /users leaves them out, also when asked for them by id', async () => {
    for (const name of ALL) {
      const body = await ok(t.users[name], 'GET', '/users');
      assert.deepEqual(
        body.members.map((m: { user_id: number }) => m.user_id).sort((a: number, b: number) => a - b),
        Object.values(t.users)
          .map((u) => u.id)
          .sort((a, b) => a - b),
        name,
      );
    }
    assert.deepEqual(await ok(t.users.hamlet, 'GET', '/users', { user_ids: [notification.id, welcome.id] }), { ...SUCCESS, members: [] });
  });

  it('GET /users/{id} and /users/{email} do not find them (Zulip: "No such user")', async () => {
    for (const name of ALL) {
      for (const bot of [notification, welcome]) {
        for (const path of [`/users/${bot.id}`, `/users/${encodeURIComponent(bot.email)}`]) {
          const res = await t.api(t.users[name], 'GET', path);
          assert.deepEqual([res.status, res.body], [400, err('No such user')], `${name} ${path}`);
        }
      }
    }
  });

  it('nobody administers them: not in the bot lists, not deactivated, not re-roled', async () => {
    const admin = t.users.admin;
    const reg = await ok(admin, 'POST', '/register', { fetch_event_types: ['realm_bot'] });
    assert.deepEqual(
      reg.realm_bots.map((b: { user_id: number }) => b.user_id),
      [t.users.bot.id],
    );
    assert.deepEqual(
      (await ok(admin, 'GET', '/bots')).bots.map((b: { username: string }) => b.username),
      [t.users.bot.email],
    );
    assert.deepEqual((await t.api(admin, 'DELETE', `/users/${notification.id}`)).body, err('No such user'));
    assert.deepEqual((await t.api(admin, 'PATCH', `/users/${notification.id}`, { role: 200 })).body, err('No such user'));
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/bots/${notification.id}`, { full_name: 'Mine now' })).body, err('No such bot'));
  });
});

describe('groups and channels', () => {
  it("are in none of the organization's groups", async () => {
    const groups = systemGroups(t);
    for (const name of ['role:everyone', 'role:members', 'role:fullmembers'] as const) {
      const members = (await ok(t.users.hamlet, 'GET', `/user_groups/${groups[name]}/members`)).members as number[];
      assert.ok(!members.includes(notification.id) && !members.includes(welcome.id), name);
      assert.ok(members.includes(t.users.hamlet.id), name);
    }
    const reg = await ok(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['realm_user_groups'] });
    for (const g of reg.realm_user_groups) assert.ok(!g.members.includes(notification.id), g.name);
    const res = await t.api(t.users.hamlet, 'GET', `/user_groups/${groups['role:everyone']}/members/${notification.id}`);
    assert.deepEqual([res.status, res.body], [400, err('No such user')]);
  });

  it('cannot be added to a group, named in a group setting, or subscribed to a channel', async () => {
    const owner = t.users.owner;
    const created = await ok(owner, 'POST', '/user_groups/create', { name: 'with bots', description: '', members: [owner.id] });
    const gid = created.group_id;
    assert.deepEqual((await t.api(owner, 'POST', `/user_groups/${gid}/members`, { add: [notification.id] })).body, err(`Invalid user ID: ${notification.id}`));
    assert.deepEqual(
      (await t.api(owner, 'PATCH', `/user_groups/${gid}`, { can_mention_group: { new: { direct_members: [welcome.id], direct_subgroups: [] } } })).body,
      err(`Invalid user ID: ${welcome.id}`),
    );
    assert.deepEqual((await t.api(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bots here' }], principals: [notification.id] })).body, err('No such user'));
    assert.deepEqual(
      (await t.api(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'bots here' }], principals: [notification.email] })).body,
      err('No such user'),
    );
    assert.deepEqual((await ok(owner, 'GET', `/streams/${channel}/members`)).subscribers.sort(), [owner.id, t.users.hamlet.id].sort());
    assert.deepEqual((await ok(owner, 'GET', `/user_groups/${gid}/members`)).members, [owner.id]);
  });
});

describe('messages', () => {
  it("their messages carry their name and avatar; users can send them direct messages and type to them", async () => {
    const hamlet = t.users.hamlet;
    // Subscribing Hamlet to an existing channel makes Notification Bot tell him in a direct message.
    await createChannel(t, t.users.owner, 'told by the bot', [t.users.owner]);
    await ok(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'told by the bot' }], principals: [hamlet.id] });
    const newest = await ok(hamlet, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, client_gravatar: false, narrow: [{ operator: 'is', operand: 'dm' }] });
    const m = newest.messages[0];
    assert.deepEqual(
      [m.sender_id, m.sender_full_name, m.sender_email, m.avatar_url, m.type],
      [notification.id, 'Notification Bot', notification.email, avatarUrl(notification), 'private'],
    );
    assert.deepEqual(
      m.display_recipient.map((r: { id: number; full_name: string }) => [r.id, r.full_name]).sort((a: number[], b: number[]) => a[0] - b[0]),
      [
        [hamlet.id, hamlet.fullName],
        [notification.id, 'Notification Bot'],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );

    // Writing back, as in Zulip, is a direct message like any other.
    const queue = await registerQueue(t, hamlet, ['typing']);
    assert.deepEqual(await ok(hamlet, 'POST', '/typing', { op: 'start', type: 'direct', to: [notification.id] }), SUCCESS);
    const events = await queuedEvents(t, hamlet, queue);
    assert.deepEqual(events.map((e) => [e.type, e.op, e.sender.user_id]), [['typing', 'start', hamlet.id]]);
    const sent = await ok(hamlet, 'POST', '/messages', { type: 'direct', to: [notification.id], content: 'thanks, bot' });
    assert.deepEqual(sent, { ...SUCCESS, id: sent.id });
  });

  it('mentioning one by name mentions nobody', async () => {
    const hamlet = t.users.hamlet;
    const cases: [string, string][] = [
      ['@**Notification Bot** hi', '<p>@<strong>Notification Bot</strong> hi</p>'],
      [`@**Notification Bot|${notification.id}** hi`, `<p>@<strong>Notification Bot|${notification.id}</strong> hi</p>`],
      [`@_**Welcome Bot|${welcome.id}** hi`, `<p>@_<strong>Welcome Bot|${welcome.id}</strong> hi</p>`],
    ];
    for (const [content, rendered] of cases) {
      const sent = await ok(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 'mentions', content });
      const got = await ok(hamlet, 'GET', `/messages/${sent.id}`);
      assert.deepEqual([got.message.content, got.message.flags], [rendered, ['read']], content);
    }
    // A real user's mention still renders, to show the lookup is what changed.
    const sent = await ok(hamlet, 'POST', '/messages', { type: 'channel', to: channel, topic: 'mentions', content: `@**${t.users.owner.fullName}**` });
    assert.match((await ok(hamlet, 'GET', `/messages/${sent.id}`)).message.content, /class="user-mention"/);
  });

  it('may be muted, as Zulip allows for cross-realm bots', async () => {
    assert.deepEqual(await ok(t.users.othello, 'POST', `/users/me/muted_users/${notification.id}`), SUCCESS);
    assert.deepEqual(await ok(t.users.othello, 'DELETE', `/users/me/muted_users/${notification.id}`), SUCCESS);
  });
});

// Security review of issue 15: the system bots are made on first use, at `<local>@<the server's
// host>`. Where members' addresses share that domain, a member's bot named "notification" took
// notification-bot@<host> first, and from then on every report, reminder and Welcome Bot message
// failed ("Email is already in use."). A taken address now gives the system bot a fresh one.
describe('a system bot address a member took first', () => {
  it('the system bots are made at another address; reports and Welcome Bot work; the member keeps an ordinary bot', async () => {
    const t2 = await startTestServer();
    try {
      const { owner, admin, hamlet, othello } = t2.users;
      // Members' addresses are @example.com; so is the server.
      t2.app.publicUrl = 'http://example.com';
      const squatters: number[] = [];
      for (const short_name of ['notification', 'welcome']) {
        const res = await t2.api(hamlet, 'POST', '/bots', { full_name: `Not the ${short_name} bot`, short_name });
        assert.equal(res.status, 200, res.text);
        squatters.push(res.body.user_id);
      }
      const reg = async (key: string) => (await t2.api(hamlet, 'POST', '/register', { fetch_event_types: ['realm_user'] })).body[key];
      assert.deepEqual(
        (await reg('realm_users')).filter((u: { user_id: number }) => squatters.includes(u.user_id)).map((u: { email: string }) => u.email),
        ['notification-bot@example.com', 'welcome-bot@example.com'],
      );

      const mods = await createChannel(t2, owner, 'mods', [owner], { invite_only: true });
      assert.equal((await t2.api(owner, 'PATCH', '/realm', { moderation_request_channel_id: mods })).status, 200);
      const pub = await createChannel(t2, owner, 'pub', [owner, hamlet, othello]);
      const sent = await t2.api(hamlet, 'POST', '/messages', { type: 'channel', to: pub, topic: 't', content: 'hello' });
      const report = await t2.api(othello, 'POST', `/messages/${sent.body.id}/report`, { report_type: 'spam' });
      assert.deepEqual([report.status, report.body], [200, SUCCESS]);
      const welcomeTest = await t2.api(admin, 'POST', '/realm/test_welcome_bot_custom_message', { welcome_message_custom_text: 'Hello!' });
      assert.equal(welcomeTest.status, 200, welcomeTest.text);

      const cross = await reg('cross_realm_bots');
      assert.deepEqual(
        cross.map((b: { full_name: string }) => b.full_name),
        ['Notification Bot', 'Welcome Bot'],
      );
      assert.match(cross[0].email, /^notification-bot\+[0-9a-f]{12}@example\.com$/);
      assert.match(cross[1].email, /^welcome-bot\+[0-9a-f]{12}@example\.com$/);
      assert.ok(cross.every((b: { user_id: number; is_system_bot: boolean }) => b.is_system_bot && !squatters.includes(b.user_id)));
      // The report came from Notification Bot; the members' bots are still ordinary bots of their owner.
      const modMsgs = await t2.api(owner, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: mods }] });
      assert.equal(modMsgs.body.messages[0].sender_id, cross[0].user_id);
      const bots = (await t2.api(hamlet, 'GET', '/bots')).body.bots.map((b: { username: string }) => b.username);
      assert.deepEqual(bots, ['helper-bot@example.com', 'notification-bot@example.com', 'welcome-bot@example.com']);
      // Asked for again, each system bot is the same one (found by its name part, whatever follows "+").
      t2.app.batch.write(() => {
        assert.equal(notificationBot(t2.app, realmIdOf(t2)).id, cross[0].user_id);
        assert.equal(welcomeBot(t2.app, realmIdOf(t2)).id, cross[1].user_id);
      });
      t2.app.batch.commit();
    } finally {
      await t2.close();
    }
  });
});

function realmIdOf(server: TestServer): number {
  return server.app.db.prepare('SELECT realm_id FROM user WHERE id = ?').pluck().get(server.users.owner.id) as number;
}

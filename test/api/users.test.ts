// The users API: the own-user object, lookups, and the administrative basics (create, deactivate,
// reactivate, name and role), with success and error bodies asserted whole.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { doCreateUser } from '../../src/actions/users';
import { stmt } from '../../src/db/stmt';
import type { ParleyEvent } from '../../src/events/bus';
import { ROLE } from '../../src/lib/roles';
import { basicAuth, PASSWORD, startTestServer, type SeedName, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';

const START = Date.UTC(2024, 0, 15, 12, 0, 0);
let nowMs = START;
const clock = { nowMs: () => nowMs };
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', '+00:00');

let t: TestServer;
let events: { event: ParleyEvent; userIds: readonly number[] }[] = [];
before(async () => {
  t = await startTestServer({ clock });
  t.app.events.listen((event, userIds) => events.push({ event, userIds }));
});
after(() => t.close());

const gravatar = (email: string, version = 1) =>
  `https://secure.gravatar.com/avatar/${crypto.createHash('md5').update(email.toLowerCase()).digest('hex')}?d=identicon&version=${version}`;

const SEED: Record<SeedName, { role: number; fullName: string; bot?: boolean }> = {
  owner: { role: ROLE.OWNER, fullName: 'Desdemona' },
  admin: { role: ROLE.ADMINISTRATOR, fullName: 'Iago' },
  moderator: { role: ROLE.MODERATOR, fullName: 'Shiva' },
  hamlet: { role: ROLE.MEMBER, fullName: 'King Hamlet' },
  othello: { role: ROLE.MEMBER, fullName: 'Othello' },
  guest: { role: ROLE.GUEST, fullName: 'Polonius' },
  bot: { role: ROLE.MEMBER, fullName: 'Helper Bot', bot: true },
};

/** The user object of GET /users for a seeded user, as it should be. */
function userObject(name: SeedName, opts: { clientGravatar?: boolean; profileData?: boolean } = {}): Record<string, unknown> {
  const u = t.users[name];
  const { role, fullName, bot } = SEED[name];
  const out: Record<string, unknown> = {
    email: u.email,
    user_id: u.id,
    avatar_version: 1,
    is_admin: role <= ROLE.ADMINISTRATOR,
    is_owner: role === ROLE.OWNER,
    is_guest: role === ROLE.GUEST,
    role,
    is_bot: bot === true,
    full_name: fullName,
    timezone: '',
    is_active: true,
    date_joined: iso(START),
    avatar_url: opts.clientGravatar === false ? gravatar(u.email) : null,
    delivery_email: u.email,
    is_imported_stub: false,
  };
  if (bot) {
    out.bot_type = 1;
    out.bot_owner_id = t.users.hamlet.id;
  } else if (opts.profileData) {
    out.profile_data = {};
  }
  return out;
}

const success = (data: Record<string, unknown> = {}) => ({ result: 'success', msg: '', ...data });
const badRequest = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
const ADMIN_REQUIRED = { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' };
const OWNER_REQUIRED = { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' };
const NO_SUCH_USER = badRequest('No such user');

let counter = 0;
/** A fresh member (no password: created directly, fast) for tests that change users. */
function freshMember(role: number = ROLE.MEMBER): TestUser {
  counter++;
  const email = `fresh${counter}@example.com`;
  const fullName = `Fresh ${counter}`;
  const u = doCreateUser(t.app, { realmId: t.app.realmId(), email, password: null, fullName, role, acting: null });
  t.app.batch.commit();
  return { id: u.userId, email, apiKey: u.apiKey, password: '', fullName };
}

async function expectStatus(res: { status: number; body: unknown }, status: number, body: unknown) {
  assert.deepEqual({ status: res.status, body: res.body }, { status, body });
}

const getUser = async (id: number) => (await t.api(t.users.owner, 'GET', `/users/${id}`, { client_gravatar: false })).body.user;

describe('GET /users/me', () => {
  it("returns every field of the spec's own-user object", async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/users/me');
    const u = t.users.hamlet;
    await expectStatus(res, 200, {
      result: 'success',
      msg: '',
      avatar_url: gravatar(u.email),
      avatar_version: 1,
      email: u.email,
      delivery_email: u.email,
      full_name: 'King Hamlet',
      is_admin: false,
      is_owner: false,
      is_guest: false,
      is_bot: false,
      is_active: true,
      is_imported_stub: false,
      role: 400,
      timezone: '',
      date_joined: iso(START),
      max_message_id: -1,
      user_id: u.id,
      profile_data: {},
    });
    assert.equal('is_billing_admin' in res.body, false);
  });

  it('has exactly the keys of the spec table (plus the envelope)', async () => {
    const res = await t.api(t.users.owner, 'GET', '/users/me');
    const SPEC_FIELDS = [
      'avatar_url', 'avatar_version', 'email', 'delivery_email', 'full_name', 'is_admin', 'is_owner', 'is_guest', 'is_bot',
      'is_active', 'is_imported_stub', 'role', 'timezone', 'date_joined', 'max_message_id', 'user_id', 'profile_data',
    ];
    assert.deepEqual(Object.keys(res.body).sort(), ['msg', 'result', ...SPEC_FIELDS].sort());
  });

  it('reports the role flags of owners, moderators and guests', async () => {
    const flags = async (name: SeedName) => {
      const b = (await t.api(t.users[name], 'GET', '/users/me')).body;
      return { role: b.role, is_admin: b.is_admin, is_owner: b.is_owner, is_guest: b.is_guest };
    };
    assert.deepEqual(await flags('owner'), { role: 100, is_admin: true, is_owner: true, is_guest: false });
    assert.deepEqual(await flags('admin'), { role: 200, is_admin: true, is_owner: false, is_guest: false });
    assert.deepEqual(await flags('moderator'), { role: 300, is_admin: false, is_owner: false, is_guest: false });
    assert.deepEqual(await flags('guest'), { role: 600, is_admin: false, is_owner: false, is_guest: true });
  });

  it('leaves profile_data out for bots and names their type and owner', async () => {
    const u = t.users.bot;
    const res = await t.api(u, 'GET', '/users/me');
    await expectStatus(res, 200, {
      result: 'success',
      msg: '',
      avatar_url: gravatar(u.email),
      avatar_version: 1,
      email: u.email,
      delivery_email: u.email,
      full_name: 'Helper Bot',
      is_admin: false,
      is_owner: false,
      is_guest: false,
      is_bot: true,
      is_active: true,
      is_imported_stub: false,
      role: 400,
      timezone: '',
      date_joined: iso(START),
      max_message_id: -1,
      user_id: u.id,
      bot_type: 1,
      bot_owner_id: t.users.hamlet.id,
    });
  });

  it("reports the newest message the user received as max_message_id", async () => {
    // Messages arrive with a later issue; the user's message rows are what counts.
    stmt(t.app.db, 'INSERT INTO usermessage (user_id, message_id) VALUES (?, ?), (?, ?), (?, ?)').run(
      t.users.guest.id, 40, t.users.guest.id, 42, t.users.othello.id, 50,
    );
    const res = await t.api(t.users.guest, 'GET', '/users/me');
    assert.equal(res.body.max_message_id, 42);
    stmt(t.app.db, 'DELETE FROM usermessage WHERE message_id IN (40, 42, 50)').run();
  });

  it('lists unsupported parameters', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/users/me', { foo: 'bar' });
    assert.deepEqual(res.body.ignored_parameters_unsupported, ['foo']);
  });

  // GET /users/me is answered from text cached until the next write (lib/read-cache.ts): every kind
  // of change must show in the very next answer.
  describe('never answers from a stale cache', () => {
    it('after a change made through the API in an earlier request', async () => {
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.full_name, 'Othello');
      const patch = await t.api(t.users.othello, 'PATCH', '/settings', { full_name: 'Othello the Moor' });
      assert.equal(patch.status, 200);
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.full_name, 'Othello the Moor');
      await t.api(t.users.othello, 'PATCH', '/settings', { full_name: 'Othello' });
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.full_name, 'Othello');
    });

    it('after a change sent in the same event-loop turn, before the read', async () => {
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.full_name, 'Othello');
      // Both requests are in flight together: the server reads them in one turn, the write first.
      const [patch, me] = await Promise.all([
        t.api(t.users.othello, 'PATCH', '/settings', { full_name: 'Same Turn' }),
        t.api(t.users.othello, 'GET', '/users/me'),
      ]);
      assert.equal(patch.status, 200);
      assert.equal(me.body.full_name, 'Same Turn');
      await t.api(t.users.othello, 'PATCH', '/settings', { full_name: 'Othello' });
    });

    it('after a commit by another connection to the database file', async () => {
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.timezone, '');
      const { default: Database } = await import('better-sqlite3');
      const other = new Database(`${t.dataDir}/parley.db`);
      try {
        other.prepare('UPDATE user SET timezone = ? WHERE id = ?').run('Europe/Oslo', t.users.othello.id);
      } finally {
        other.close();
      }
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.timezone, 'Europe/Oslo');
      stmt(t.app.db, "UPDATE user SET timezone = '' WHERE id = ?").run(t.users.othello.id);
      assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).body.timezone, '');
    });
  });
});

describe('GET /users', () => {
  const ALL: SeedName[] = ['owner', 'admin', 'moderator', 'hamlet', 'othello', 'guest', 'bot'];

  it('lists every user in id order, avatar_url null by default (client_gravatar)', async () => {
    const res = await t.api(t.users.guest, 'GET', '/users');
    await expectStatus(res, 200, success({ members: ALL.map((n) => userObject(n)) }));
  });

  it('sends avatar URLs with client_gravatar=false', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/users', { client_gravatar: false });
    await expectStatus(res, 200, success({ members: ALL.map((n) => userObject(n, { clientGravatar: false })) }));
  });

  it('adds profile_data for people with include_custom_profile_fields', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/users', { include_custom_profile_fields: true });
    await expectStatus(res, 200, success({ members: ALL.map((n) => userObject(n, { profileData: true })) }));
  });

  it('narrows to user_ids', async () => {
    const res = await t.api(t.users.hamlet, 'GET', '/users', { user_ids: [t.users.othello.id, t.users.owner.id, 9999] });
    await expectStatus(res, 200, success({ members: [userObject('owner'), userObject('othello')] }));
  });

  it('refuses malformed parameters', async () => {
    await expectStatus(await t.api(t.users.hamlet, 'GET', '/users', { client_gravatar: 'yes' }), 400, badRequest('client_gravatar is not valid JSON'));
    await expectStatus(await t.api(t.users.hamlet, 'GET', '/users', { user_ids: '[1,"x"]' }), 400, badRequest('user_ids[1] is not an integer'));
  });
});

describe('GET /users/{user_id}', () => {
  it('returns one user', async () => {
    await expectStatus(await t.api(t.users.guest, 'GET', `/users/${t.users.othello.id}`), 200, success({ user: userObject('othello') }));
    await expectStatus(
      await t.api(t.users.guest, 'GET', `/users/${t.users.bot.id}`, { client_gravatar: false, include_custom_profile_fields: true }),
      200,
      success({ user: userObject('bot', { clientGravatar: false, profileData: true }) }),
    );
    await expectStatus(
      await t.api(t.users.guest, 'GET', `/users/${t.users.othello.id}`, { include_custom_profile_fields: true }),
      200,
      success({ user: userObject('othello', { profileData: true }) }),
    );
  });

  it('answers "No such user" for an unknown id', async () => {
    for (const id of ['9999', '0', '99999999999999999999']) {
      await expectStatus(await t.api(t.users.hamlet, 'GET', `/users/${id}`), 400, NO_SUCH_USER);
    }
  });
});

describe('GET /users/{email}', () => {
  it('returns one user by email, in any case and percent-encoded', async () => {
    const want = success({ user: userObject('othello') });
    await expectStatus(await t.api(t.users.hamlet, 'GET', `/users/${t.users.othello.email}`), 200, want);
    await expectStatus(await t.api(t.users.hamlet, 'GET', `/users/${t.users.othello.email.toUpperCase()}`), 200, want);
    await expectStatus(await t.api(t.users.hamlet, 'GET', `/users/${encodeURIComponent(t.users.othello.email)}`), 200, want);
    await expectStatus(
      await t.api(t.users.hamlet, 'GET', `/users/${t.users.bot.email}`, { client_gravatar: false }),
      200,
      success({ user: userObject('bot', { clientGravatar: false }) }),
    );
  });

  it('answers "No such user" for an unknown email', async () => {
    for (const email of ['nobody@example.com', 'not-an-email', '-1']) {
      await expectStatus(await t.api(t.users.hamlet, 'GET', `/users/${email}`), 400, NO_SUCH_USER);
    }
  });
});

describe('POST /users', () => {
  it('lets an administrator create a member', async () => {
    const res = await t.api(t.users.admin, 'POST', '/users', { email: 'new.person@example.com', password: PASSWORD, full_name: '  New Person  ' });
    assert.equal(res.status, 200);
    const id = res.body.user_id;
    assert.deepEqual(res.body, success({ user_id: id }));
    assert.deepEqual(await getUser(id), {
      email: 'new.person@example.com',
      user_id: id,
      avatar_version: 1,
      is_admin: false,
      is_owner: false,
      is_guest: false,
      role: 400,
      is_bot: false,
      full_name: 'New Person',
      timezone: '',
      is_active: true,
      date_joined: iso(nowMs),
      avatar_url: gravatar('new.person@example.com'),
      delivery_email: 'new.person@example.com',
      is_imported_stub: false,
    });
    const login = await t.api(null, 'POST', '/fetch_api_key', { username: 'new.person@example.com', password: PASSWORD });
    assert.equal(login.status, 200);
    assert.equal(login.body.user_id, id);
  });

  it('lets an owner create a member', async () => {
    const res = await t.api(t.users.owner, 'POST', '/users', { email: 'by.owner@example.com', password: PASSWORD, full_name: 'By Owner' });
    assert.deepEqual(res.body, success({ user_id: res.body.user_id }));
  });

  it('announces the new user to everyone', async () => {
    events = [];
    const res = await t.api(t.users.admin, 'POST', '/users', { email: 'announced@example.com', password: PASSWORD, full_name: 'Announced' });
    const adds = events.filter((e) => e.event.type === 'realm_user' && e.event.op === 'add');
    assert.equal(adds.length, 1);
    assert.equal((adds[0].event.person as { user_id: number }).user_id, res.body.user_id);
    assert.ok(adds[0].userIds.includes(t.users.guest.id));
  });

  it('refuses everyone below administrator with UNAUTHORIZED_PRINCIPAL', async () => {
    for (const name of ['moderator', 'hamlet', 'guest', 'bot'] as const) {
      const res = await t.api(t.users[name], 'POST', '/users', { email: `x-${name}@example.com`, password: PASSWORD, full_name: 'Someone' });
      await expectStatus(res, 400, ADMIN_REQUIRED);
    }
  });

  const refusals: [string, Record<string, string>, string][] = [
    ['an email in use', { email: 'hamlet@example.com' }, 'Email is already in use.'],
    ['an email in use in another case', { email: 'HAMLET@example.com' }, 'Email is already in use.'],
    ['a bot email', { email: 'helper-bot@example.com' }, 'Email is already in use.'],
    ['an invalid email', { email: 'not-an-email' }, 'Bad name or username'],
    ['an email with spaces', { email: 'a b@example.com' }, 'Bad name or username'],
    ['an empty email', { email: '' }, 'Bad name or username'],
    ['a weak password', { password: 'abc' }, 'The password is too weak.'],
    ['an empty password', { password: '' }, 'The password is too weak.'],
    ['an empty name', { full_name: '' }, 'Name too short!'],
    ['a blank name', { full_name: '   ' }, 'Name too short!'],
    ['a one-character name', { full_name: 'A' }, 'Name too short!'],
    ['a long name', { full_name: 'x'.repeat(101) }, 'Name too long!'],
    ['a name with reserved characters', { full_name: 'Bad*Name' }, 'Invalid characters in name!'],
    ['a name with an @', { full_name: 'a@b' }, 'Invalid characters in name!'],
    ['a name like a mention suffix', { full_name: 'Hamlet|12' }, 'Invalid format!'],
    ['a bad name and a bad email (the name is checked first)', { full_name: '', email: 'bad' }, 'Name too short!'],
    ['a used email and a weak password (the email is checked first)', { email: 'othello@example.com', password: 'x' }, 'Email is already in use.'],
  ];
  for (const [what, override, msg] of refusals) {
    it(`refuses ${what}`, async () => {
      const params = { email: 'valid.new@example.com', password: PASSWORD, full_name: 'Valid Name', ...override };
      await expectStatus(await t.api(t.users.admin, 'POST', '/users', params), 400, badRequest(msg));
    });
  }

  it('accepts a 100-character name and a 2-character one', async () => {
    const long = await t.api(t.users.admin, 'POST', '/users', { email: 'long@example.com', password: PASSWORD, full_name: '😀'.repeat(100) });
    assert.equal(long.status, 200);
    const short = await t.api(t.users.admin, 'POST', '/users', { email: 'short@example.com', password: PASSWORD, full_name: 'Al' });
    assert.equal(short.status, 200);
  });

  it('refuses the email of a deactivated user', async () => {
    const gone = freshMember();
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${gone.id}`)).status, 200);
    await expectStatus(
      await t.api(t.users.admin, 'POST', '/users', { email: gone.email, password: PASSWORD, full_name: 'Again' }),
      400,
      badRequest('Email is already in use.'),
    );
  });

  it('requires email, password and full_name', async () => {
    for (const missing of ['email', 'password', 'full_name']) {
      const params: Record<string, string> = { email: 'req@example.com', password: PASSWORD, full_name: 'Req Uired' };
      delete params[missing];
      await expectStatus(await t.api(t.users.admin, 'POST', '/users', params), 400, {
        result: 'error',
        msg: `Missing '${missing}' argument`,
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: missing,
      });
    }
  });
});

describe('DELETE /users/{user_id}', () => {
  it('lets an administrator deactivate a member, who can then no longer log in', async () => {
    const member = freshMember();
    events = [];
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${member.id}`), 200, success());
    assert.equal((await getUser(member.id)).is_active, false);
    await expectStatus(await t.api(member, 'GET', '/users/me'), 401, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
    const update = events.find((e) => e.event.type === 'realm_user' && e.event.op === 'update');
    assert.deepEqual(update?.event.person, { user_id: member.id, is_active: false });
  });

  it("deactivates the user's bots with them, with new keys; reactivating the user does not bring the bots back", async () => {
    // Alice, a member with a bot that posts to her private channel.
    const alice = freshMember();
    const created = await t.api(alice, 'POST', '/bots', { full_name: 'Alice Bot', short_name: 'alice' });
    assert.equal(created.status, 200, created.text);
    const bot: TestUser = { id: created.body.user_id, email: 'alice-bot@example.com', apiKey: created.body.api_key, password: '', fullName: 'Alice Bot' };
    const channel = await t.api(alice, 'POST', '/channels/create', { name: 'alice-private', subscribers: [alice.id], invite_only: true });
    assert.equal(channel.status, 200, channel.text);
    const post = () => t.api(bot, 'POST', '/messages', { type: 'channel', to: 'alice-private', topic: 't', content: 'still here' });
    assert.equal((await post()).status, 200);

    const qAdmin = await registerQueue(t, t.users.admin, ['realm_user', 'realm_bot']);
    const qMember = await registerQueue(t, t.users.othello, ['realm_user', 'realm_bot']);
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${alice.id}`), 200, success());
    // As Zulip's do_deactivate_user: the bots first, then the person. Each bot also gets a new key,
    // told to administrators (Alice knew the old one; see test/api/bots.test.ts).
    const botGone = { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } };
    const aliceGone = { type: 'realm_user', op: 'update', person: { user_id: alice.id, is_active: false } };
    const newKey = (t.app.db.prepare('SELECT api_key FROM user WHERE id = ?').get(bot.id) as { api_key: string }).api_key;
    assert.notEqual(newKey, bot.apiKey);
    assert.deepEqual(await queuedEvents(t, t.users.admin, qAdmin), [
      botGone,
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: false } },
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: newKey } },
      aliceGone,
    ]);
    assert.deepEqual(await queuedEvents(t, t.users.othello, qMember), [botGone, aliceGone]);

    const invalidKey = { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' };
    await expectStatus(await post(), 401, invalidKey);
    const deactivated = { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' };
    bot.apiKey = newKey;
    await expectStatus(await post(), 401, deactivated);
    assert.equal((await getUser(bot.id)).is_active, false);

    await expectStatus(await t.api(t.users.admin, 'POST', `/users/${alice.id}/reactivate`), 200, success());
    assert.equal((await getUser(alice.id)).is_active, true);
    assert.equal((await getUser(bot.id)).is_active, false);
    await expectStatus(await post(), 401, deactivated);
  });

  it('accepts a deactivation_notification_comment and limits its length', async () => {
    const member = freshMember();
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${member.id}`, { deactivation_notification_comment: 'Farewell!' }), 200, success());
    const other = freshMember();
    await expectStatus(
      await t.api(t.users.admin, 'DELETE', `/users/${other.id}`, { deactivation_notification_comment: 'x'.repeat(2001) }),
      400,
      badRequest('deactivation_notification_comment is too long (limit: 2000 characters)'),
    );
  });

  it('refuses to deactivate a user twice', async () => {
    const member = freshMember();
    await t.api(t.users.admin, 'DELETE', `/users/${member.id}`);
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${member.id}`), 400, badRequest('User is deactivated'));
  });

  it('refuses everyone below administrator with UNAUTHORIZED_PRINCIPAL', async () => {
    const member = freshMember();
    for (const name of ['moderator', 'hamlet', 'guest', 'bot'] as const) {
      await expectStatus(await t.api(t.users[name], 'DELETE', `/users/${member.id}`), 400, ADMIN_REQUIRED);
    }
    assert.equal((await getUser(member.id)).is_active, true);
  });

  it('lets only owners deactivate an owner', async () => {
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${t.users.owner.id}`), 400, OWNER_REQUIRED);
    const secondOwner = freshMember(ROLE.OWNER);
    await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${secondOwner.id}`), 400, OWNER_REQUIRED);
    await expectStatus(await t.api(t.users.owner, 'DELETE', `/users/${secondOwner.id}`), 200, success());
  });

  it('refuses to deactivate the only owner', async () => {
    await expectStatus(
      await t.api(t.users.owner, 'DELETE', `/users/${t.users.owner.id}`),
      400,
      badRequest('Cannot deactivate the only organization owner'),
    );
    assert.equal((await getUser(t.users.owner.id)).is_active, true);
  });

  it('answers "No such user" for unknown users and for bots', async () => {
    for (const id of [9999, t.users.bot.id]) {
      await expectStatus(await t.api(t.users.admin, 'DELETE', `/users/${id}`), 400, NO_SUCH_USER);
    }
  });

  it('has no DELETE by email', async () => {
    const res = await t.api(t.users.admin, 'DELETE', `/users/${t.users.othello.email}`);
    await expectStatus(res, 405, { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['GET'] });
  });
});

describe('POST /users/{user_id}/reactivate', () => {
  it('lets an administrator reactivate a user, who can log in again', async () => {
    const member = freshMember();
    await t.api(t.users.admin, 'DELETE', `/users/${member.id}`);
    events = [];
    await expectStatus(await t.api(t.users.admin, 'POST', `/users/${member.id}/reactivate`), 200, success());
    assert.equal((await getUser(member.id)).is_active, true);
    assert.equal((await t.api(member, 'GET', '/users/me')).status, 200);
    const update = events.find((e) => e.event.type === 'realm_user' && e.event.op === 'update');
    assert.deepEqual(update?.event.person, { user_id: member.id, is_active: true });
  });

  it('answers success for an active user, as Zulip does, and changes nothing', async () => {
    events = [];
    await expectStatus(await t.api(t.users.admin, 'POST', `/users/${t.users.othello.id}/reactivate`), 200, success());
    assert.equal((await getUser(t.users.othello.id)).is_active, true);
    assert.equal((await t.api(t.users.othello, 'GET', '/users/me')).status, 200);
    assert.deepEqual(events, []);
    // Still only for administrators.
    await expectStatus(await t.api(t.users.hamlet, 'POST', `/users/${t.users.othello.id}/reactivate`), 400, ADMIN_REQUIRED);
  });

  it('refuses everyone below administrator', async () => {
    const member = freshMember();
    await t.api(t.users.admin, 'DELETE', `/users/${member.id}`);
    for (const name of ['moderator', 'hamlet', 'guest'] as const) {
      await expectStatus(await t.api(t.users[name], 'POST', `/users/${member.id}/reactivate`), 400, ADMIN_REQUIRED);
    }
  });

  it('answers "No such user" for an unknown id', async () => {
    await expectStatus(await t.api(t.users.admin, 'POST', '/users/9999/reactivate'), 400, NO_SUCH_USER);
  });
});

describe('PATCH /users/{user_id}', () => {
  it('changes the full name, trimmed', async () => {
    const member = freshMember();
    events = [];
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { full_name: '  Renamed Person ' }), 200, success());
    assert.equal((await getUser(member.id)).full_name, 'Renamed Person');
    assert.deepEqual(events.map((e) => e.event), [{ type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Renamed Person' } }]);
  });

  it('ignores an empty or blank full name', async () => {
    const member = freshMember();
    for (const full_name of ['', '   ']) {
      await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { full_name }), 200, success());
    }
    assert.equal((await getUser(member.id)).full_name, member.fullName);
  });

  it('refuses invalid names', async () => {
    const member = freshMember();
    for (const [full_name, msg] of [
      ['A', 'Name too short!'],
      ['x'.repeat(101), 'Name too long!'],
      ['Back`tick', 'Invalid characters in name!'],
      ['Name|7', 'Invalid format!'],
    ]) {
      await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { full_name }), 400, badRequest(msg));
    }
  });

  it("lets administrators rename owners and bots", async () => {
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${t.users.bot.id}`, { full_name: 'Helper Bot' }), 200, success());
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${t.users.owner.id}`, { full_name: 'Desdemona' }), 200, success());
  });

  it('changes roles below owner as an administrator', async () => {
    const member = freshMember();
    for (const role of [ROLE.MODERATOR, ROLE.GUEST, ROLE.ADMINISTRATOR, ROLE.MEMBER]) {
      events = [];
      await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { role }), 200, success());
      const u = await getUser(member.id);
      assert.deepEqual({ role: u.role, is_admin: u.is_admin, is_guest: u.is_guest }, {
        role,
        is_admin: role === ROLE.ADMINISTRATOR,
        is_guest: role === ROLE.GUEST,
      });
      // (user_group add_members/remove_members for the system groups follow; test/api/user-groups.test.ts checks them)
      assert.deepEqual(events.map((e) => e.event).filter((e) => e.type === 'realm_user'), [{ type: 'realm_user', op: 'update', person: { user_id: member.id, role } }]);
    }
  });

  it('keeps the system groups in step with the role', async () => {
    const member = freshMember();
    await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { role: ROLE.MODERATOR });
    const groups = stmt(
      t.app.db,
      'SELECT g.name FROM user_group_member m JOIN user_group g ON g.id = m.group_id WHERE m.user_id = ? AND g.is_system_group = 1',
    ).all(member.id) as { name: string }[];
    assert.deepEqual(groups.map((g) => g.name), ['role:moderators']);
  });

  it('accepts an unchanged role', async () => {
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${t.users.othello.id}`, { role: ROLE.MEMBER }), 200, success());
  });

  it('lets only owners give or take the owner role', async () => {
    const member = freshMember();
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { role: ROLE.OWNER }), 400, OWNER_REQUIRED);
    await expectStatus(await t.api(t.users.owner, 'PATCH', `/users/${member.id}`, { role: ROLE.OWNER }), 200, success());
    assert.equal((await getUser(member.id)).is_owner, true);
    await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${member.id}`, { role: ROLE.MEMBER }), 400, OWNER_REQUIRED);
    await expectStatus(await t.api(t.users.owner, 'PATCH', `/users/${member.id}`, { role: ROLE.MEMBER }), 200, success());
    assert.equal((await getUser(member.id)).role, ROLE.MEMBER);
  });

  it('keeps the owner role on the only owner', async () => {
    await expectStatus(
      await t.api(t.users.owner, 'PATCH', `/users/${t.users.owner.id}`, { role: ROLE.ADMINISTRATOR }),
      400,
      badRequest('The owner permission cannot be removed from the only organization owner.'),
    );
    assert.equal((await getUser(t.users.owner.id)).role, ROLE.OWNER);
  });

  it('lets an owner step down when another owner remains', async () => {
    const second = freshMember(ROLE.OWNER);
    await expectStatus(await t.api(second, 'PATCH', `/users/${second.id}`, { role: ROLE.MEMBER }), 200, success());
    assert.equal((await getUser(second.id)).role, ROLE.MEMBER);
  });

  it('refuses a role outside the list, and malformed roles', async () => {
    for (const [role, msg] of [
      ['500', 'Invalid role: Value error, Not in the list of possible values'],
      ['0', 'Invalid role: Value error, Not in the list of possible values'],
      ['-100', 'Invalid role: Value error, Not in the list of possible values'],
      ['abc', 'role is not valid JSON'],
      ['"400"', 'role is not an integer'],
      ['400.0', 'role is not an integer'],
      ['1.5', 'role is not an integer'],
      ['99999999999999999999', 'role is too large'],
    ]) {
      await expectStatus(await t.api(t.users.admin, 'PATCH', `/users/${t.users.othello.id}`, { role }), 400, badRequest(msg));
    }
  });

  it('refuses everyone below administrator', async () => {
    for (const name of ['moderator', 'hamlet', 'guest'] as const) {
      await expectStatus(await t.api(t.users[name], 'PATCH', `/users/${t.users.othello.id}`, { full_name: 'Hacked Name' }), 400, ADMIN_REQUIRED);
      await expectStatus(await t.api(t.users[name], 'PATCH', `/users/${t.users[name].id}`, { role: ROLE.ADMINISTRATOR }), 400, ADMIN_REQUIRED);
    }
    assert.equal((await getUser(t.users.othello.id)).full_name, 'Othello');
  });

  it('answers "No such user" for an unknown id', async () => {
    await expectStatus(await t.api(t.users.admin, 'PATCH', '/users/9999', { full_name: 'Nobody Here' }), 400, NO_SUCH_USER);
  });

  it('lists unsupported parameters', async () => {
    const res = await t.api(t.users.admin, 'PATCH', `/users/${t.users.othello.id}`, { full_name: 'Othello', new_name: 'x', colour: 'red' });
    await expectStatus(res, 200, success({ ignored_parameters_unsupported: ['colour', 'new_name'] }));
  });
});

describe('date_joined of API-created users', () => {
  it('is the creation time until the first login, then the first login time', async () => {
    nowMs = Date.UTC(2024, 1, 1, 9, 30, 0);
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'late.joiner@example.com', password: PASSWORD, full_name: 'Late Joiner' });
    const id = created.body.user_id;
    assert.equal((await getUser(id)).date_joined, '2024-02-01T09:30:00+00:00');

    nowMs = Date.UTC(2024, 1, 3, 8, 0, 0);
    events = [];
    const login = await t.api(null, 'POST', '/fetch_api_key', { username: 'late.joiner@example.com', password: PASSWORD });
    assert.equal(login.status, 200);
    assert.equal((await getUser(id)).date_joined, '2024-02-03T08:00:00+00:00');
    const joiner = { id, email: 'late.joiner@example.com', apiKey: login.body.api_key, password: PASSWORD, fullName: 'Late Joiner' };
    const me = await t.api(joiner, 'GET', '/users/me');
    assert.equal(me.body.date_joined, '2024-02-03T08:00:00+00:00');
    assert.deepEqual(
      events.map((e) => e.event),
      [{ type: 'realm_user', op: 'update', person: { user_id: id, date_joined: '2024-02-03T08:00:00+00:00' } }],
    );

    nowMs = Date.UTC(2024, 1, 10, 8, 0, 0);
    events = [];
    await t.api(null, 'POST', '/fetch_api_key', { username: 'late.joiner@example.com', password: PASSWORD });
    assert.equal((await getUser(id)).date_joined, '2024-02-03T08:00:00+00:00');
    assert.deepEqual(events, []);
  });

  it('does not move for accounts created otherwise', async () => {
    nowMs = Date.UTC(2024, 2, 1, 0, 0, 0);
    await t.api(null, 'POST', '/fetch_api_key', { username: t.users.hamlet.email, password: PASSWORD });
    assert.equal((await getUser(t.users.hamlet.id)).date_joined, iso(START));
  });

  it('does not move on a failed login', async () => {
    nowMs = Date.UTC(2024, 3, 1, 0, 0, 0);
    const created = await t.api(t.users.admin, 'POST', '/users', { email: 'never.in@example.com', password: PASSWORD, full_name: 'Never In' });
    nowMs = Date.UTC(2024, 3, 2, 0, 0, 0);
    await t.api(null, 'POST', '/fetch_api_key', { username: 'never.in@example.com', password: 'wrong-password' });
    assert.equal((await getUser(created.body.user_id)).date_joined, '2024-04-01T00:00:00+00:00');
  });
});

describe('authentication on the users API', () => {
  it('needs credentials on every users endpoint', async () => {
    for (const [method, path] of [
      ['GET', '/users/me'],
      ['GET', '/users'],
      ['GET', `/users/${t.users.hamlet.id}`],
      ['POST', '/users'],
      ['DELETE', `/users/${t.users.hamlet.id}`],
      ['PATCH', `/users/${t.users.hamlet.id}`],
      ['POST', `/users/${t.users.hamlet.id}/reactivate`],
    ]) {
      const res = await t.raw(method, `/api/v1${path}`);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
    const ok = await t.raw('GET', '/api/v1/users/me', { headers: { authorization: basicAuth(t.users.hamlet) } });
    assert.equal(ok.status, 200);
  });
});

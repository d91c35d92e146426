// email_address_visibility (a personal setting since Zulip 7.0): who may read a user's real address.
// Zulip's model, followed here: a user's `email` (the API email) is the real address only while the
// setting is "everyone"; otherwise it is the placeholder user{id}@{the organization's host}, the same
// for every viewer and everywhere an email goes out (user objects, messages' sender_email and
// display_recipient, presence, typing, events). `delivery_email` is the real address for the viewers
// can_access_delivery_email allows (the user themself, and the roles the setting names) and null for
// everyone else. Logging in and API keys go by the real address.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { basicAuth, startTestServer, type SeedName, type TestServer, type TestUser } from '../helpers/server';
import { err, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const VISIBILITY = { everyone: 1, members: 2, admins: 3, nobody: 4, moderators: 5 } as const;
type Visibility = keyof typeof VISIBILITY;
/** Who, besides the user, may read the real address for each setting (Zulip's ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS). */
const READERS: Record<Visibility, SeedName[]> = {
  everyone: ['owner', 'admin', 'moderator', 'othello', 'guest', 'bot'],
  members: ['owner', 'admin', 'moderator', 'othello', 'bot'],
  moderators: ['owner', 'admin', 'moderator'],
  admins: ['owner', 'admin'],
  nobody: [],
};
const VIEWERS: SeedName[] = ['owner', 'admin', 'moderator', 'othello', 'guest', 'bot', 'hamlet'];

const host = () => new URL(t.url).hostname;
const placeholder = (u: TestUser) => `user${u.id}@${host()}`;
const gravatar = (email: string, medium = false) =>
  `https://secure.gravatar.com/avatar/${crypto.createHash('md5').update(email.toLowerCase()).digest('hex')}?d=identicon${medium ? '&s=500' : ''}&version=1`;

async function setVisibility(user: TestUser, v: Visibility): Promise<void> {
  const res = await t.api(user, 'PATCH', '/settings', { email_address_visibility: VISIBILITY[v] });
  assert.equal(res.status, 200, res.text);
}

describe('user objects', () => {
  for (const v of Object.keys(VISIBILITY) as Visibility[]) {
    it(`with "${v}", GET /users/{id}, GET /users and /register show the address to exactly ${v === 'nobody' ? 'the user' : READERS[v].join(', ') + ' and the user'}`, async () => {
      const hamlet = t.users.hamlet;
      await setVisibility(hamlet, v);
      const email = v === 'everyone' ? hamlet.email : placeholder(hamlet);
      for (const viewer of VIEWERS) {
        const delivery = viewer === 'hamlet' || READERS[v].includes(viewer) ? hamlet.email : null;
        const one = await t.api(t.users[viewer], 'GET', `/users/${hamlet.id}`);
        assert.equal(one.status, 200, one.text);
        assert.deepEqual([one.body.user.email, one.body.user.delivery_email], [email, delivery], `${viewer} GET /users/{id}`);
        const all = await t.api(t.users[viewer], 'GET', '/users');
        const listed = all.body.members.find((m: { user_id: number }) => m.user_id === hamlet.id);
        assert.deepEqual([listed.email, listed.delivery_email], [email, delivery], `${viewer} GET /users`);
        const reg = await t.api(t.users[viewer], 'POST', '/register', { fetch_event_types: ['realm_user'] });
        const registered = reg.body.realm_users.find((m: { user_id: number }) => m.user_id === hamlet.id);
        assert.deepEqual([registered.email, registered.delivery_email], [email, delivery], `${viewer} /register`);
        await t.api(t.users[viewer], 'DELETE', '/events', { queue_id: reg.body.queue_id });
      }
      const me = await t.api(hamlet, 'GET', '/users/me');
      assert.deepEqual([me.body.email, me.body.delivery_email], [email, hamlet.email]);
      const reg = await t.api(hamlet, 'POST', '/register', { fetch_event_types: ['realm_user'] });
      assert.deepEqual([reg.body.email, reg.body.delivery_email], [email, hamlet.email]);
      await t.api(hamlet, 'DELETE', '/events', { queue_id: reg.body.queue_id });
    });
  }

  it('a hidden address is not computed by clients: avatar_url is sent even with client_gravatar', async () => {
    const hamlet = t.users.hamlet;
    await setVisibility(hamlet, 'admins');
    const res = await t.api(t.users.othello, 'GET', `/users/${hamlet.id}`, { client_gravatar: true });
    assert.equal(res.body.user.avatar_url, gravatar(hamlet.email));
    const public_ = await t.api(t.users.othello, 'GET', `/users/${t.users.admin.id}`, { client_gravatar: true });
    assert.equal(public_.body.user.avatar_url, null);
  });
});

describe('messages', () => {
  it('sender_email and display_recipient carry the placeholder; avatar_url is always sent', async () => {
    const { hamlet, othello } = t.users;
    await setVisibility(hamlet, 'admins');
    const queue = await registerQueue(t, othello, ['message']);
    const sent = await t.api(hamlet, 'POST', '/messages', { type: 'direct', to: [othello.id], content: 'who am I?' });
    assert.equal(sent.status, 200, sent.text);
    const expectRecipients = [
      { id: hamlet.id, email: placeholder(hamlet), full_name: 'King Hamlet', is_mirror_dummy: false },
      { id: othello.id, email: othello.email, full_name: 'Othello', is_mirror_dummy: false },
    ].sort((a, b) => a.id - b.id);
    const fetched = await t.api(othello, 'GET', `/messages/${sent.body.id}`, { client_gravatar: true });
    const m = fetched.body.message;
    assert.deepEqual([m.sender_email, m.display_recipient, m.avatar_url], [placeholder(hamlet), expectRecipients, gravatar(hamlet.email)]);
    const [event] = await queuedEvents(t, othello, queue);
    assert.deepEqual([event.message.sender_email, event.message.display_recipient], [placeholder(hamlet), expectRecipients]);
    assert.ok(!JSON.stringify(event).includes(hamlet.email), 'the real address is nowhere in the event');
    // A client that computes Gravatar URLs itself still gets this sender's URL.
    const gravatarQueue = await t.api(othello, 'POST', '/register', { event_types: ['message'], fetch_event_types: [], client_gravatar: true });
    await t.api(hamlet, 'POST', '/messages', { type: 'direct', to: [othello.id], content: 'again' });
    const [again] = await queuedEvents(t, othello, gravatarQueue.body.queue_id);
    assert.equal(again.message.avatar_url, gravatar(hamlet.email));
  });

  it('typing notifications and presence name the placeholder', async () => {
    const { hamlet, othello } = t.users;
    await setVisibility(hamlet, 'admins');
    const queue = await registerQueue(t, othello, ['typing']);
    await t.api(hamlet, 'POST', '/typing', { op: 'start', to: [othello.id] });
    const [typing] = await queuedEvents(t, othello, queue);
    assert.equal(typing.sender.email, placeholder(hamlet));
    await t.api(hamlet, 'POST', '/users/me/presence', { status: 'active' });
    const presence = await t.api(othello, 'GET', '/realm/presence');
    assert.ok(placeholder(hamlet) in presence.body.presences);
    assert.ok(!(hamlet.email in presence.body.presences));
  });
});

describe('changing the setting', () => {
  it('tells each user what changed for them: delivery_email to those who gain or lose it, the new API email and avatar to all', async () => {
    const { hamlet, othello, admin } = t.users;
    await setVisibility(hamlet, 'everyone');
    const queues = { othello: await registerQueue(t, othello, ['realm_user']), admin: await registerQueue(t, admin, ['realm_user']) };
    await setVisibility(hamlet, 'admins');
    const avatar = { user_id: hamlet.id, avatar_source: 'G', avatar_url: gravatar(hamlet.email), avatar_url_medium: gravatar(hamlet.email, true), avatar_version: 1 };
    const update = (person: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person });
    assert.deepEqual(await queuedEvents(t, othello, queues.othello), [
      update({ user_id: hamlet.id, delivery_email: null }),
      update({ user_id: hamlet.id, new_email: placeholder(hamlet) }),
      update(avatar),
    ]);
    assert.deepEqual(await queuedEvents(t, admin, queues.admin), [update({ user_id: hamlet.id, new_email: placeholder(hamlet) }), update(avatar)]);

    // Between two hidden settings the API email stays; only delivery_email moves.
    queues.othello = await registerQueue(t, othello, ['realm_user']);
    queues.admin = await registerQueue(t, admin, ['realm_user']);
    await setVisibility(hamlet, 'members');
    assert.deepEqual(await queuedEvents(t, othello, queues.othello), [update({ user_id: hamlet.id, delivery_email: hamlet.email })]);
    assert.deepEqual(await queuedEvents(t, admin, queues.admin), []);

    queues.othello = await registerQueue(t, othello, ['realm_user']);
    await setVisibility(hamlet, 'everyone');
    assert.deepEqual(await queuedEvents(t, othello, queues.othello), [update({ user_id: hamlet.id, new_email: hamlet.email }), update(avatar)]);
  });

  it('a new user starts from the organization default, announced with delivery_email only to those who may read it', async () => {
    const { owner, othello, admin } = t.users;
    const defaults = await t.api(owner, 'PATCH', '/realm/user_settings_defaults', { email_address_visibility: VISIBILITY.admins });
    assert.equal(defaults.status, 200, defaults.text);
    const queues = { othello: await registerQueue(t, othello, ['realm_user']), admin: await registerQueue(t, admin, ['realm_user']) };
    const created = await t.api(owner, 'POST', '/users', { email: 'ophelia@example.com', password: 'ophelia-secret', full_name: 'Ophelia' });
    assert.equal(created.status, 200, created.text);
    const id = created.body.user_id;
    const [toOthello] = await queuedEvents(t, othello, queues.othello);
    const [toAdmin] = await queuedEvents(t, admin, queues.admin);
    assert.deepEqual([toOthello.person.email, toOthello.person.delivery_email], [`user${id}@${host()}`, null]);
    assert.deepEqual([toAdmin.person.email, toAdmin.person.delivery_email], [`user${id}@${host()}`, 'ophelia@example.com']);
    assert.deepEqual({ ...toOthello, person: { ...toOthello.person, delivery_email: 'ophelia@example.com' } }, toAdmin);
    // The new user logs in with the real address.
    const login = await t.api(null, 'POST', '/fetch_api_key', { username: 'ophelia@example.com', password: 'ophelia-secret' });
    assert.deepEqual([login.status, login.body.email, login.body.user_id], [200, 'ophelia@example.com', id]);
    await t.api(owner, 'PATCH', '/realm/user_settings_defaults', { email_address_visibility: VISIBILITY.everyone });
  });

  it('a confirmed address change reaches only those who may read it, and changes the API email only when public', async () => {
    const { hamlet, othello, admin, owner } = t.users;
    await setVisibility(hamlet, 'admins');
    t.app.db.prepare('UPDATE realm SET can_change_user_emails = 1').run();
    const queues = { othello: await registerQueue(t, othello, ['realm_user']), admin: await registerQueue(t, admin, ['realm_user']) };
    const res = await t.api(owner, 'PATCH', `/users/${hamlet.id}`, { new_email: 'prince@example.com' });
    assert.deepEqual(res.body, SUCCESS);
    const update = (person: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person });
    const avatar = { user_id: hamlet.id, avatar_source: 'G', avatar_url: gravatar('prince@example.com'), avatar_url_medium: gravatar('prince@example.com', true), avatar_version: 1 };
    assert.deepEqual(await queuedEvents(t, admin, queues.admin), [update({ user_id: hamlet.id, delivery_email: 'prince@example.com' }), update(avatar)]);
    assert.deepEqual(await queuedEvents(t, othello, queues.othello), [update(avatar)]);
    const seen = await t.api(othello, 'GET', `/users/${hamlet.id}`);
    assert.deepEqual([seen.body.user.email, seen.body.user.delivery_email], [placeholder(hamlet), null]);
    // Back, for the tests after this one.
    const back = await t.api(owner, 'PATCH', `/users/${hamlet.id}`, { new_email: hamlet.email });
    assert.deepEqual(back.body, SUCCESS);
  });
});

describe('a role change', () => {
  it('tells the person whose role changed which addresses they may now read or no longer read (not in Zulip: its clients keep stale ones)', async () => {
    const { hamlet, othello, owner } = t.users;
    await setVisibility(hamlet, 'admins');
    // Hidden from members now: Hamlet, and Ophelia (created under an "admins" default above).
    const all = (await t.api(owner, 'GET', '/users')).body.members as { user_id: number; delivery_email: string }[];
    const hidden = [hamlet.id, all.find((m) => m.delivery_email === 'ophelia@example.com')!.user_id].map((id) => ({
      id,
      address: all.find((m) => m.user_id === id)!.delivery_email,
    }));
    const update = (person: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person });
    let queue = await registerQueue(t, othello, ['realm_user']);
    const promote = await t.api(owner, 'PATCH', `/users/${othello.id}`, { role: 200 });
    assert.deepEqual(promote.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, othello, queue), [
      update({ user_id: othello.id, role: 200 }),
      ...hidden.map((h) => update({ user_id: h.id, delivery_email: h.address })),
    ]);
    queue = await registerQueue(t, othello, ['realm_user']);
    const demote = await t.api(owner, 'PATCH', `/users/${othello.id}`, { role: 400 });
    assert.deepEqual(demote.body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, othello, queue), [
      update({ user_id: othello.id, role: 400 }),
      ...hidden.map((h) => update({ user_id: h.id, delivery_email: null })),
    ]);
    await setVisibility(hamlet, 'everyone');
  });
});

describe('finding users by address', () => {
  it('GET /users/{email} takes the placeholder from anyone, the real address only from those who may read it', async () => {
    const { hamlet, othello, admin } = t.users;
    await setVisibility(hamlet, 'admins');
    for (const viewer of [othello, admin]) {
      const res = await t.api(viewer, 'GET', `/users/${placeholder(hamlet)}`);
      assert.equal(res.body.user?.user_id, hamlet.id, res.text);
    }
    const hidden = await t.api(othello, 'GET', `/users/${hamlet.email}`);
    assert.deepEqual(hidden.body, err('No such user'));
    const shown = await t.api(admin, 'GET', `/users/${hamlet.email}`);
    assert.deepEqual([shown.body.user.user_id, shown.body.user.delivery_email], [hamlet.id, hamlet.email]);
  });

  it('direct messages address a hidden user by the placeholder, as Zulip does; the real address is unknown', async () => {
    const { hamlet, othello } = t.users;
    await setVisibility(hamlet, 'admins');
    const real = await t.api(othello, 'POST', '/messages', { type: 'direct', to: [hamlet.email], content: 'guess' });
    assert.deepEqual(real.body, err(`Invalid email '${hamlet.email}'`));
    const dummy = await t.api(othello, 'POST', '/messages', { type: 'direct', to: [placeholder(hamlet)], content: 'hi' });
    assert.equal(dummy.status, 200, dummy.text);
  });

  it('a hidden user authenticates with the real address (Zulip checks delivery_email), not the placeholder', async () => {
    const { hamlet } = t.users;
    await setVisibility(hamlet, 'nobody');
    const real = await t.raw('GET', '/api/v1/users/me', { headers: { authorization: basicAuth(hamlet) } });
    assert.equal(real.status, 200, real.text);
    const dummy = await t.raw('GET', '/api/v1/users/me', { headers: { authorization: basicAuth({ email: placeholder(hamlet), apiKey: hamlet.apiKey }) } });
    assert.equal(dummy.status, 401, dummy.text);
    await setVisibility(hamlet, 'everyone');
  });
});

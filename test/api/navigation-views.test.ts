import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS } from '../helpers/chat';
import { MAX_NAVIGATION_VIEWS } from '../../src/actions/navigation-views';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const get = async (user: TestUser) => (await t.api(user, 'GET', '/navigation_views')).body;
const registered = async (user: TestUser) => (await t.api(user, 'POST', '/register', { fetch_event_types: ['navigation_views'] })).body.navigation_views;
const add = (user: TestUser, params: Record<string, unknown>) => t.api(user, 'POST', '/navigation_views', params);
const exists = err('Navigation view already exists.');
const notFound = { status: 404, body: err('Navigation view does not exist.') };
const bad = async (res: Promise<{ status: number; body: unknown }>, body: unknown, status = 400) => {
  const r = await res;
  assert.deepEqual({ status: r.status, body: r.body }, { status, body });
};

describe('GET /navigation_views', () => {
  it('answers an empty list for a user who has none', async () => {
    assert.deepEqual(await get(t.users.othello), { ...SUCCESS, navigation_views: [] });
    assert.deepEqual(await registered(t.users.othello), []);
  });
});

describe('POST /navigation_views', () => {
  it('adds a built-in view setting and a named custom view, with add events to the owner only', async () => {
    const u = t.users.hamlet;
    const mine = await registerQueue(t, u, ['navigation_view']);
    const other = await registerQueue(t, t.users.othello, ['navigation_view']);
    assert.deepEqual((await add(u, { fragment: ' recent ', is_pinned: true })).body, SUCCESS);
    assert.deepEqual((await add(u, { fragment: 'narrow/is/alerted', is_pinned: false, name: ' Alert Words ' })).body, SUCCESS);
    const views = [
      { fragment: 'recent', is_pinned: true, name: null },
      { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Alert Words' },
    ];
    assert.deepEqual(await get(u), { ...SUCCESS, navigation_views: views });
    assert.deepEqual(await registered(u), views);
    assert.deepEqual(
      await queuedEvents(t, u, mine),
      views.map((v) => ({ type: 'navigation_view', op: 'add', navigation_view: v })),
    );
    assert.deepEqual(await queuedEvents(t, t.users.othello, other), []);
    assert.deepEqual(await get(t.users.othello), { ...SUCCESS, navigation_views: [] });
  });

  it("refuses what Zulip's view refuses, storing nothing", async () => {
    const u = t.users.hamlet;
    const q = await registerQueue(t, u, ['navigation_view']);
    await bad(add(u, { fragment: 'inbox', is_pinned: true, name: 'My inbox' }), err('Built-in views cannot have a custom name.'));
    await bad(add(u, { fragment: 'narrow/is/starred', is_pinned: true, name: 'x' }), err('Built-in views cannot have a custom name.'));
    await bad(add(u, { fragment: '', is_pinned: true }), err('fragment cannot be blank'));
    await bad(add(u, { fragment: '  ', is_pinned: true }), err('fragment cannot be blank'));
    await bad(add(u, { fragment: 'narrow/view', is_pinned: true }), err('Custom views must have a valid name.'));
    await bad(add(u, { fragment: 'narrow/view', is_pinned: true, name: ' ' }), err('name cannot be blank'));
    await bad(add(u, { fragment: 'recent', is_pinned: false }), exists);
    await bad(add(u, { fragment: 'narrow/is/attachment', is_pinned: true, name: 'Alert Words' }), exists);
    await bad(add(u, { fragment: 'x'.repeat(2001), is_pinned: true, name: 'x' }), err('fragment is too long (limit: 2000 characters)'));
    await bad(add(u, { fragment: 'narrow/view', is_pinned: true, name: 'n'.repeat(101) }), err('name is too long (limit: 100 characters)'));
    await bad(add(u, { fragment: 'narrow/view', name: 'x' }), err("Missing 'is_pinned' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'is_pinned' }));
    await bad(add(u, { is_pinned: true, name: 'x' }), err("Missing 'fragment' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'fragment' }));
    await bad(add(u, { fragment: 'narrow/view', is_pinned: 'yes', name: 'x' }), err('is_pinned is not valid JSON'));
    await bad(add(u, { fragment: 'narrow/view', is_pinned: 1, name: 'x' }), err('is_pinned is not a boolean'));
    assert.equal((await get(u)).navigation_views.length, 2);
    assert.deepEqual(await queuedEvents(t, u, q), []);
  });

  it('lets every role keep views, each their own (the same fragment and name for two users)', async () => {
    for (const u of [t.users.guest, t.users.bot, t.users.othello]) {
      assert.deepEqual((await add(u, { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alert Words' })).body, SUCCESS);
      assert.deepEqual((await get(u)).navigation_views, [{ fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alert Words' }]);
    }
  });

  it(`keeps at most ${MAX_NAVIGATION_VIEWS} views per user`, async () => {
    const u = t.users.moderator;
    const stmt = t.app.db.prepare('INSERT INTO navigation_view (user_id, fragment, is_pinned, name) VALUES (?, ?, 1, ?)');
    t.app.db.transaction(() => {
      for (let i = 0; i < MAX_NAVIGATION_VIEWS; i++) stmt.run(u.id, `narrow/channel/${i}`, `view ${i}`);
    })();
    await bad(add(u, { fragment: 'inbox', is_pinned: true }), err(`You can have at most ${MAX_NAVIGATION_VIEWS} navigation views.`));
    assert.equal((await get(u)).navigation_views.length, MAX_NAVIGATION_VIEWS);
  });
});

describe('PATCH /navigation_views/{fragment}', () => {
  it('changes is_pinned and the name of a custom view, with update events naming what changed', async () => {
    const u = t.users.hamlet;
    const q = await registerQueue(t, u, ['navigation_view']);
    assert.deepEqual((await t.api(u, 'PATCH', '/navigation_views/recent', { is_pinned: false })).body, SUCCESS);
    assert.deepEqual((await t.api(u, 'PATCH', '/navigation_views/narrow/is/alerted', { is_pinned: true, name: ' Watched Phrases ' })).body, SUCCESS);
    // The fragment may come percent-encoded whole.
    assert.deepEqual((await t.api(u, 'PATCH', `/navigation_views/${encodeURIComponent('narrow/is/alerted')}`, { is_pinned: false })).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u, q), [
      { type: 'navigation_view', op: 'update', fragment: 'recent', data: { is_pinned: false } },
      { type: 'navigation_view', op: 'update', fragment: 'narrow/is/alerted', data: { name: 'Watched Phrases', is_pinned: true } },
      { type: 'navigation_view', op: 'update', fragment: 'narrow/is/alerted', data: { is_pinned: false } },
    ]);
    assert.deepEqual((await get(u)).navigation_views, [
      { fragment: 'recent', is_pinned: false, name: null },
      { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Watched Phrases' },
    ]);
  });

  it('answers success with an empty update event when nothing is given, as Zulip does', async () => {
    const u = t.users.hamlet;
    const q = await registerQueue(t, u, ['navigation_view']);
    assert.deepEqual((await t.api(u, 'PATCH', '/navigation_views/recent')).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u, q), [{ type: 'navigation_view', op: 'update', fragment: 'recent', data: {} }]);
  });

  it("refuses names of built-in views, names in use, and missing or other users' views", async () => {
    const u = t.users.hamlet;
    const before = (await get(u)).navigation_views;
    const q = await registerQueue(t, u, ['navigation_view']);
    await bad(t.api(u, 'PATCH', '/navigation_views/recent', { is_pinned: true, name: 'Recent' }), err('Built-in views cannot have a custom name.'));
    // Built-in, even when the user has no setting for it yet.
    await bad(t.api(u, 'PATCH', '/navigation_views/inbox', { name: 'Inbox' }), err('Built-in views cannot have a custom name.'));
    assert.deepEqual((await add(u, { fragment: 'narrow/is/attachment', is_pinned: true, name: 'Attachments' })).body, SUCCESS);
    await bad(t.api(u, 'PATCH', '/navigation_views/narrow/is/attachment', { is_pinned: false, name: 'Watched Phrases' }), exists);
    // zulip-compat: a view's own name counts as in use.
    await bad(t.api(u, 'PATCH', '/navigation_views/narrow/is/attachment', { name: 'Attachments' }), exists);
    await bad(t.api(u, 'PATCH', '/navigation_views/nonexistent', { is_pinned: false, name: 'New view' }), notFound.body, 404);
    await bad(t.api(t.users.admin, 'PATCH', '/navigation_views/recent', { is_pinned: true }), notFound.body, 404);
    await bad(t.api(u, 'PATCH', '/navigation_views/recent', { is_pinned: 'maybe' }), err('is_pinned is not valid JSON'));
    await bad(t.api(u, 'PATCH', '/navigation_views/narrow/is/attachment', { name: '' }), err('name cannot be blank'));
    await bad(t.api(u, 'PATCH', `/navigation_views/${'x'.repeat(2001)}`, { is_pinned: true }), err('fragment is too long (limit: 2000 characters)'));
    await bad(t.api(u, 'PATCH', `/navigation_views/${encodeURIComponent('  ')}`, { is_pinned: true }), err('fragment cannot be blank'));
    assert.deepEqual((await get(u)).navigation_views, [...before, { fragment: 'narrow/is/attachment', is_pinned: true, name: 'Attachments' }]);
    assert.equal((await queuedEvents(t, u, q)).length, 1); // the add only
  });
});

describe('DELETE /navigation_views/{fragment}', () => {
  it("removes the user's view with a remove event; others' and missing ones are 404", async () => {
    const u = t.users.hamlet;
    const before = (await get(u)).navigation_views;
    await bad(t.api(t.users.owner, 'DELETE', '/navigation_views/narrow/is/attachment'), notFound.body, 404);
    const q = await registerQueue(t, u, ['navigation_view']);
    assert.deepEqual((await t.api(u, 'DELETE', '/navigation_views/narrow/is/attachment')).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u, q), [{ type: 'navigation_view', op: 'remove', fragment: 'narrow/is/attachment' }]);
    assert.deepEqual((await get(u)).navigation_views, before.filter((v: { fragment: string }) => v.fragment !== 'narrow/is/attachment'));
    await bad(t.api(u, 'DELETE', '/navigation_views/narrow/is/attachment'), notFound.body, 404);
    await bad(t.api(u, 'DELETE', '/navigation_views/nonexistent'), notFound.body, 404);
    // The others' views of that fragment stay.
    assert.equal((await get(t.users.othello)).navigation_views.length, 1);
  });

  it('a removed view may be added again', async () => {
    const u = t.users.hamlet;
    assert.deepEqual((await add(u, { fragment: 'narrow/is/attachment', is_pinned: false, name: 'Files' })).body, SUCCESS);
    const views = (await get(u)).navigation_views;
    assert.deepEqual(views[views.length - 1], { fragment: 'narrow/is/attachment', is_pinned: false, name: 'Files' });
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS } from '../helpers/chat';
import { MAX_SAVED_SNIPPETS } from '../../src/actions/saved-snippets';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const get = async (user: TestUser) => (await t.api(user, 'GET', '/saved_snippets')).body;
const registered = async (user: TestUser) => (await t.api(user, 'POST', '/register', { fetch_event_types: ['saved_snippets'] })).body.saved_snippets;
const create = (user: TestUser, title: unknown, content: unknown) => t.api(user, 'POST', '/saved_snippets', { title, content });
const notFound = { status: 404, body: err('Saved snippet does not exist.') };

describe('GET /saved_snippets', () => {
  it('answers an empty list for a user without snippets', async () => {
    assert.deepEqual(await get(t.users.othello), { ...SUCCESS, saved_snippets: [] });
    assert.deepEqual(await registered(t.users.othello), []);
  });
});

describe('POST /saved_snippets', () => {
  it('creates a snippet (stripped), answers its id and sends an add event to its owner only', async () => {
    const u = t.users.hamlet;
    const mine = await registerQueue(t, u, ['saved_snippets']);
    const other = await registerQueue(t, t.users.othello, ['saved_snippets']);
    const before = Math.floor(Date.now() / 1000);
    const res = await create(u, '  Welcome message ', '\n**Welcome** to the organization.\n\n');
    assert.equal(res.status, 200, res.text);
    const id = res.body.saved_snippet_id;
    assert.deepEqual(res.body, { ...SUCCESS, saved_snippet_id: id });
    const snippet = (await get(u)).saved_snippets[0];
    assert.ok(snippet.date_created >= before && snippet.date_created <= before + 2);
    const expected = { id, title: 'Welcome message', content: '**Welcome** to the organization.', date_created: snippet.date_created };
    assert.deepEqual(await get(u), { ...SUCCESS, saved_snippets: [expected] });
    assert.deepEqual(await registered(u), [expected]);
    assert.deepEqual(await queuedEvents(t, u, mine), [{ type: 'saved_snippets', op: 'add', saved_snippet: expected }]);
    assert.deepEqual(await queuedEvents(t, t.users.othello, other), []);
    assert.deepEqual(await get(t.users.othello), { ...SUCCESS, saved_snippets: [] });
  });

  it('lists snippets in the order they were created; every role may keep them', async () => {
    for (const u of [t.users.guest, t.users.bot, t.users.owner]) {
      const a = (await create(u, 'A', 'first')).body.saved_snippet_id;
      const b = (await create(u, 'B', 'second')).body.saved_snippet_id;
      assert.deepEqual(
        (await get(u)).saved_snippets.map((s: { id: number; title: string }) => [s.id, s.title]),
        [
          [a, 'A'],
          [b, 'B'],
        ],
      );
    }
  });

  it('refuses blank, oversized and missing values with Zulip messages, storing nothing', async () => {
    const u = t.users.moderator;
    const q = await registerQueue(t, u, ['saved_snippets']);
    const cases: [unknown, unknown, unknown][] = [
      ['', 'x', err('title cannot be blank')],
      ['   ', 'x', err('title cannot be blank')],
      ['x', ' \n ', err('content cannot be blank')],
      ['A'.repeat(61), 'x', err('title is too long (limit: 60 characters)')],
      ['x', 'c'.repeat(10001), err('content is too long (limit: 10000 characters)')],
      [undefined, 'x', err("Missing 'title' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'title' })],
      ['x', undefined, err("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' })],
    ];
    for (const [title, content, body] of cases) {
      const res = await create(u, title, content);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body }, JSON.stringify([title, content]));
    }
    // Limits count characters after stripping, and code points (an emoji is one).
    const ok = await create(u, ` ${'😀'.repeat(60)} `, ' ' + 'c'.repeat(10000) + ' ');
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual((await get(u)).saved_snippets.map((s: { title: string; content: string }) => [s.title, s.content.length]), [['😀'.repeat(60), 10000]]);
    assert.equal((await queuedEvents(t, u, q)).length, 1);
  });

  it(`keeps at most ${MAX_SAVED_SNIPPETS} snippets per user`, async () => {
    const u = t.users.othello;
    const stmt = t.app.db.prepare('INSERT INTO saved_snippet (user_id, title, content, date_created) VALUES (?, ?, ?, 0)');
    t.app.db.transaction(() => {
      for (let i = 0; i < MAX_SAVED_SNIPPETS; i++) stmt.run(u.id, `t${i}`, 'c');
    })();
    const res = await create(u, 'one more', 'c');
    assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err(`You can have at most ${MAX_SAVED_SNIPPETS} saved snippets.`) });
    assert.equal((await get(u)).saved_snippets.length, MAX_SAVED_SNIPPETS);
    t.app.db.prepare('DELETE FROM saved_snippet WHERE user_id = ?').run(u.id);
  });
});

describe('PATCH /saved_snippets/{saved_snippet_id}', () => {
  it('changes the title, the content or both and sends the whole snippet in an update event', async () => {
    const u = t.users.hamlet;
    const [snippet] = (await get(u)).saved_snippets;
    const q = await registerQueue(t, u, ['saved_snippets']);
    assert.deepEqual((await t.api(u, 'PATCH', `/saved_snippets/${snippet.id}`, { title: ' New title ' })).body, SUCCESS);
    const v1 = { ...snippet, title: 'New title' };
    assert.deepEqual((await t.api(u, 'PATCH', `/saved_snippets/${snippet.id}`, { content: ' New content ' })).body, SUCCESS);
    const v2 = { ...v1, content: 'New content' };
    assert.deepEqual((await t.api(u, 'PATCH', `/saved_snippets/${snippet.id}`, { title: 'T', content: 'C' })).body, SUCCESS);
    const v3 = { ...v2, title: 'T', content: 'C' };
    assert.deepEqual(await queuedEvents(t, u, q), [
      { type: 'saved_snippets', op: 'update', saved_snippet: v1 },
      { type: 'saved_snippets', op: 'update', saved_snippet: v2 },
      { type: 'saved_snippets', op: 'update', saved_snippet: v3 },
    ]);
    assert.deepEqual(await get(u), { ...SUCCESS, saved_snippets: [v3] });
  });

  it('answers success without an event when nothing is to change', async () => {
    const u = t.users.hamlet;
    const [snippet] = (await get(u)).saved_snippets;
    const q = await registerQueue(t, u, ['saved_snippets']);
    assert.deepEqual((await t.api(u, 'PATCH', `/saved_snippets/${snippet.id}`)).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u, q), []);
    assert.deepEqual(await get(u), { ...SUCCESS, saved_snippets: [snippet] });
  });

  it("answers 404 for a missing snippet and for another user's, changing nothing", async () => {
    const [snippet] = (await get(t.users.hamlet)).saved_snippets;
    for (const [u, id] of [
      [t.users.hamlet, 99999],
      [t.users.othello, snippet.id],
      [t.users.admin, snippet.id],
      [t.users.guest, snippet.id],
    ] as const) {
      const res = await t.api(u, 'PATCH', `/saved_snippets/${id}`, { title: 'stolen' });
      assert.deepEqual({ status: res.status, body: res.body }, notFound);
    }
    assert.deepEqual((await get(t.users.hamlet)).saved_snippets, [snippet]);
  });

  it('refuses blank and oversized values', async () => {
    const [snippet] = (await get(t.users.hamlet)).saved_snippets;
    const patch = (params: Record<string, unknown>) => t.api(t.users.hamlet, 'PATCH', `/saved_snippets/${snippet.id}`, params);
    assert.deepEqual((await patch({ title: ' ' })).body, err('title cannot be blank'));
    assert.deepEqual((await patch({ content: '' })).body, err('content cannot be blank'));
    assert.deepEqual((await patch({ title: 'x'.repeat(61) })).body, err('title is too long (limit: 60 characters)'));
    assert.deepEqual((await patch({ content: 'x', title: 'y'.repeat(61) })).body, err('title is too long (limit: 60 characters)'));
    assert.deepEqual((await get(t.users.hamlet)).saved_snippets, [snippet]);
  });
});

describe('DELETE /saved_snippets/{saved_snippet_id}', () => {
  it("deletes the owner's snippet with a remove event; others' and missing ones are 404", async () => {
    const u = t.users.hamlet;
    const [snippet] = (await get(u)).saved_snippets;
    for (const other of [t.users.othello, t.users.owner]) {
      assert.deepEqual(await t.api(other, 'DELETE', `/saved_snippets/${snippet.id}`).then((r) => ({ status: r.status, body: r.body })), notFound);
    }
    const q = await registerQueue(t, u, ['saved_snippets']);
    assert.deepEqual((await t.api(u, 'DELETE', `/saved_snippets/${snippet.id}`)).body, SUCCESS);
    assert.deepEqual(await queuedEvents(t, u, q), [{ type: 'saved_snippets', op: 'remove', saved_snippet_id: snippet.id }]);
    assert.deepEqual(await get(u), { ...SUCCESS, saved_snippets: [] });
    const again = await t.api(u, 'DELETE', `/saved_snippets/${snippet.id}`);
    assert.deepEqual({ status: again.status, body: again.body }, notFound);
  });

  it("never gives a deleted snippet's id to a new one", async () => {
    const u = t.users.hamlet;
    const id = (await create(u, 'newest', 'x')).body.saved_snippet_id;
    assert.equal((await t.api(u, 'DELETE', `/saved_snippets/${id}`)).status, 200);
    assert.equal((await create(u, 'next', 'x')).body.saved_snippet_id, id + 1);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { queuedEvents, registerQueue } from '../helpers/events';
import { err, SUCCESS } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { ROLE } from '../../src/lib/roles';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const python = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };
const add = (params: Record<string, unknown>, user: TestUser = t.users.admin) => t.api(user, 'POST', '/realm/playgrounds', params);
const listed = async (user: TestUser = t.users.hamlet) =>
  (await t.api(user, 'POST', '/register', { fetch_event_types: ['realm_playgrounds'] })).body.realm_playgrounds;
const invalid = (msg: string, errors: Record<string, string[]>) => err(msg, 'BAD_REQUEST', { errors });

describe('POST /realm/playgrounds', () => {
  it('adds a playground (values stripped), answers its id, and sends the whole list to every user', async () => {
    const queues = await Promise.all([t.users.admin, t.users.hamlet, t.users.guest].map((u) => registerQueue(t, u, ['realm_playgrounds'])));
    const res = await add({ name: '  Python playground ', pygments_language: ' Python ', url_template: ' https://python.example.com?code={code} ' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ...SUCCESS, id: res.body.id });
    assert.equal(typeof res.body.id, 'number');
    const list = [{ id: res.body.id, ...python }];
    for (const [i, u] of [t.users.admin, t.users.hamlet, t.users.guest].entries()) {
      assert.deepEqual(await queuedEvents(t, u, queues[i]), [{ type: 'realm_playgrounds', realm_playgrounds: list }]);
      assert.deepEqual(await listed(u), list);
    }
  });

  it('takes several playgrounds for one language, listed in the order they were added', async () => {
    const before = await listed();
    const a = (await add({ name: 'Python playground 2', pygments_language: 'Python', url_template: 'https://python2.example.com{code}' })).body.id;
    const b = (await add({ name: 'Rust', pygments_language: 'c++/rust#2.0', url_template: 'https://play.rust-lang.org/?code={code}' })).body.id;
    assert.deepEqual(await listed(), [
      ...before,
      { id: a, name: 'Python playground 2', pygments_language: 'Python', url_template: 'https://python2.example.com{code}' },
      { id: b, name: 'Rust', pygments_language: 'c++/rust#2.0', url_template: 'https://play.rust-lang.org/?code={code}' },
    ]);
  });

  it("refuses what Zulip's model refuses, with its messages and errors by field, storing nothing", async () => {
    const q = await registerQueue(t, t.users.hamlet, ['realm_playgrounds']);
    const before = await listed();
    const cases: [Record<string, unknown>, unknown][] = [
      [{ ...python, name: 'x', pygments_language: 'a$b$c' }, err('Invalid characters in pygments language')],
      [{ ...python, name: 'x', pygments_language: 'py thon' }, invalid('Invalid characters in pygments language', { pygments_language: ['Invalid characters in pygments language'] })],
      [{ ...python, name: 'x', url_template: 'https://template.com{?test,code}' }, invalid('"code" should be the only variable present in the URL template', { __all__: ['"code" should be the only variable present in the URL template'] })],
      [{ ...python, name: 'x', url_template: 'https://template.com?test={test' }, invalid('Invalid URL template.', { url_template: ['Invalid URL template.'] })],
      [{ ...python, name: 'x', url_template: 'https://template.com{?test}' }, invalid('Missing the required variable "code" in the URL template', { __all__: ['Missing the required variable "code" in the URL template'] })],
      [{ ...python, name: 'x', url_template: 'https://template.com/' }, invalid('Missing the required variable "code" in the URL template', { __all__: ['Missing the required variable "code" in the URL template'] })],
      [
        { ...python, name: 'x', url_template: '   ' },
        invalid('This field cannot be blank.', { url_template: ['This field cannot be blank.'], __all__: ['Missing the required variable "code" in the URL template'] }),
      ],
      [{ ...python, name: ' \t ' }, invalid('This field cannot be blank.', { name: ['This field cannot be blank.'] })],
      [{ ...python, name: 'x', pygments_language: '  ' }, invalid('This field cannot be blank.', { pygments_language: ['This field cannot be blank.'] })],
      [python, invalid('Realm playground with this Realm, Pygments language and Name already exists.', { __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] })],
      [{ ...python, pygments_language: 'p'.repeat(41) }, err('pygments_language is too long (limit: 40 characters)')],
      [{ ...python, name: 'n'.repeat(101) }, err('name is too long (limit: 100 characters)')],
      [{ ...python, url_template: 'https://x.example/{code}' + 'a'.repeat(2000) }, err('url_template is too long (limit: 2000 characters)')],
      [{ url_template: python.url_template, pygments_language: 'Python' }, err("Missing 'name' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'name' })],
      [{ name: 'x', pygments_language: 'Python' }, err("Missing 'url_template' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'url_template' })],
      [{ name: 'x', url_template: python.url_template }, err("Missing 'pygments_language' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'pygments_language' })],
    ];
    for (const [params, body] of cases) {
      const res = await add(params);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body }, JSON.stringify(params));
    }
    // 40 characters of language is the limit, not past it.
    const ok = await add({ ...python, name: 'long language', pygments_language: 'p'.repeat(40) });
    assert.equal(ok.status, 200, ok.text);
    const after = await listed();
    assert.deepEqual(after, [...before, { id: ok.body.id, name: 'long language', pygments_language: 'p'.repeat(40), url_template: python.url_template }]);
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, q), [{ type: 'realm_playgrounds', realm_playgrounds: after }]);
  });

  it('is for administrators only, checked before the parameters', async () => {
    const q = await registerQueue(t, t.users.hamlet, ['realm_playgrounds']);
    for (const u of [t.users.hamlet, t.users.moderator, t.users.guest, t.users.bot]) {
      for (const params of [python, {}, { name: [1], pygments_language: 'a$b' }]) {
        const res = await add(params, u);
        assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL') });
      }
    }
    const owner = await add({ ...python, name: 'by the owner' }, t.users.owner);
    assert.equal(owner.status, 200, owner.text);
    assert.equal((await queuedEvents(t, t.users.hamlet, q)).length, 1);
  });

  it('refuses a deactivated administrator', async () => {
    const email = 'gone-admin@example.com';
    const u = doCreateUser(t.app, { realmId: t.app.realmId(), email, password: null, fullName: 'Gone Admin', role: ROLE.ADMINISTRATOR, acting: null });
    t.app.batch.commit();
    const gone = { id: u.userId, email, apiKey: u.apiKey, password: '', fullName: 'Gone Admin' };
    assert.equal((await t.api(t.users.owner, 'DELETE', `/users/${gone.id}`)).status, 200);
    const res = await add({ ...python, name: 'never' }, gone);
    assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
  });
});

describe('DELETE /realm/playgrounds/{playground_id}', () => {
  it('removes the playground and sends the remaining list; a missing one is "Invalid playground"', async () => {
    const before = await listed();
    const victim = before[before.length - 1];
    const queues = await Promise.all([t.users.hamlet, t.users.guest].map((u) => registerQueue(t, u, ['realm_playgrounds'])));
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/realm/playgrounds/${victim.id}`)).body, SUCCESS);
    const rest = before.slice(0, -1);
    for (const [i, u] of [t.users.hamlet, t.users.guest].entries()) {
      assert.deepEqual(await queuedEvents(t, u, queues[i]), [{ type: 'realm_playgrounds', realm_playgrounds: rest }]);
    }
    assert.deepEqual(await listed(), rest);
    for (const id of [victim.id, 99999, 0]) {
      const res = await t.api(t.users.admin, 'DELETE', `/realm/playgrounds/${id}`);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err('Invalid playground') });
    }
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, queues[0]), [{ type: 'realm_playgrounds', realm_playgrounds: rest }]);
  });

  it('never gives a removed playground\'s id to a new one', async () => {
    const id = (await add({ ...python, name: 'newest' })).body.id;
    assert.equal((await t.api(t.users.admin, 'DELETE', `/realm/playgrounds/${id}`)).status, 200);
    const next = (await add({ ...python, name: 'after it' })).body.id;
    assert.equal(next, id + 1);
  });

  it('is for administrators only', async () => {
    const [first] = await listed();
    for (const u of [t.users.hamlet, t.users.moderator, t.users.guest, t.users.bot]) {
      const res = await t.api(u, 'DELETE', `/realm/playgrounds/${first.id}`);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL') });
    }
    assert.deepEqual((await listed())[0], first);
    const res = await t.api(t.users.admin, 'DELETE', '/realm/playgrounds/abc');
    assert.equal(res.status, 404);
  });
});

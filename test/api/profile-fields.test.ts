import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const ok = { result: 'success', msg: '' };
const bad = (msg: string, extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code: 'BAD_REQUEST', ...extra });
const adminRequired = { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' };

const seen = new Map<string, number>();
async function queue(user: TestUser, types: string[]): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { event_types: types });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
async function events(user: TestUser, queueId: string): Promise<Record<string, unknown>[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: seen.get(queueId) ?? -1, dont_block: true });
  for (const e of res.body.events) seen.set(queueId, e.id);
  return res.body.events.filter((e: { type: string }) => e.type !== 'heartbeat').map(({ id: _id, ...e }: { id: number }) => e);
}
async function createField(params: Record<string, unknown>): Promise<number> {
  const res = await t.api(t.users.admin, 'POST', '/realm/profile_fields', params);
  assert.equal(res.status, 200, res.text);
  return res.body.id;
}

let phone: number;
let bio: number;
let team: number;
let mentor: number;
let birthday: number;
let site: number;

describe('POST /realm/profile_fields', () => {
  it('creates fields of every type and announces the list', async () => {
    const q = await queue(t.users.hamlet, ['custom_profile_fields']);
    phone = await createField({ name: 'Phone', hint: 'Your number', field_type: 1 });
    bio = await createField({ name: 'Biography', field_type: 2, display_in_profile_summary: true });
    team = await createField({ name: 'Team', field_type: 3, field_data: { a: { text: 'Alpha', order: '1' }, b: { text: 'Beta', order: '2' } } });
    birthday = await createField({ name: 'Birthday', field_type: 4 });
    site = await createField({ name: 'Website', field_type: 5 });
    mentor = await createField({ name: 'Mentor', field_type: 6, editable_by_user: false });
    const gh = await createField({ field_type: 7, field_data: { subtype: 'github' } });
    const pronouns = await createField({ name: 'Pronouns', field_type: 8, required: true });
    const res = await t.api(t.users.hamlet, 'GET', '/realm/profile_fields');
    assert.deepEqual(res.body.custom_fields[0], {
      id: phone, name: 'Phone', type: 1, hint: 'Your number', field_data: '', order: 1, required: false, editable_by_user: true,
    });
    assert.deepEqual(res.body.custom_fields[1], {
      id: bio, name: 'Biography', type: 2, hint: '', field_data: '', order: 2, required: false, editable_by_user: true, display_in_profile_summary: true,
    });
    assert.equal(res.body.custom_fields[2].field_data, JSON.stringify({ a: { text: 'Alpha', order: '1' }, b: { text: 'Beta', order: '2' } }));
    assert.deepEqual(
      res.body.custom_fields.map((f: { id: number; name: string }) => [f.id, f.name]),
      [[phone, 'Phone'], [bio, 'Biography'], [team, 'Team'], [birthday, 'Birthday'], [site, 'Website'], [mentor, 'Mentor'], [gh, 'GitHub'], [pronouns, 'Pronouns']],
    );
    const got = await events(t.users.hamlet, q);
    assert.equal(got.length, 8);
    assert.deepEqual(got[7], { type: 'custom_profile_fields', fields: res.body.custom_fields });
    // register state agrees
    const reg = await t.api(t.users.hamlet, 'POST', '/register', { fetch_event_types: ['custom_profile_fields'] });
    assert.deepEqual(reg.body.custom_profile_fields, res.body.custom_fields);
  });

  it('refuses bad definitions', async () => {
    const post = (params: Record<string, unknown>) => t.api(t.users.admin, 'POST', '/realm/profile_fields', params);
    assert.deepEqual((await post({ name: 'Phone' })).body, bad('A field with that label already exists.'));
    assert.deepEqual((await post({ name: '' })).body, bad('Label cannot be empty.'));
    assert.deepEqual((await post({ name: 'x'.repeat(41) })).body, bad('name is too long (limit: 40 characters)'));
    assert.deepEqual((await post({ name: 'Hinty', hint: 'x'.repeat(81) })).body, bad('hint is too long (limit: 80 characters)'));
    assert.deepEqual((await post({ name: 'Typo', field_type: 99 })).body, bad('Invalid field type.'));
    assert.deepEqual((await post({ name: 'Empty', field_type: 3, field_data: {} })).body, bad('Field must have at least one choice.'));
    assert.deepEqual((await post({ name: 'Sum', display_in_profile_summary: true })).body.result, 'success');
    assert.deepEqual(
      (await post({ name: 'Sum2', display_in_profile_summary: true })).body,
      bad('Only 2 custom profile fields can be displayed in the profile summary.'),
    );
    assert.deepEqual((await post({ name: 'Ext', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x/' } })).body, bad('Malformed URL pattern.'));
    assert.deepEqual((await post({ name: 'Ext', field_type: 7, field_data: { subtype: 'constructor' } })).body, bad('Invalid external account type'));
  });

  it('is for administrators only', async () => {
    for (const u of [t.users.moderator, t.users.hamlet, t.users.guest, t.users.bot]) {
      assert.deepEqual((await t.api(u, 'POST', '/realm/profile_fields', { name: 'Nope' })).body, adminRequired);
      assert.deepEqual((await t.api(u, 'PATCH', `/realm/profile_fields/${phone}`, { name: 'Nope' })).body, adminRequired);
      assert.deepEqual((await t.api(u, 'DELETE', `/realm/profile_fields/${phone}`)).body, adminRequired);
      assert.deepEqual((await t.api(u, 'PATCH', '/realm/profile_fields', { order: [] })).body, adminRequired);
    }
  });
});

describe('PATCH and DELETE /realm/profile_fields', () => {
  it('edits a field, reorders, deletes', async () => {
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/realm/profile_fields/${phone}`, { name: 'Telephone', hint: 'Mobile' })).body, ok);
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/realm/profile_fields/9999', { name: 'X' })).body, bad('Field id 9999 not found.'));
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/realm/profile_fields/${phone}`, { name: 'Biography' })).body, bad('A field with that label already exists.'));
    const ids = (await t.api(t.users.owner, 'GET', '/realm/profile_fields')).body.custom_fields.map((f: { id: number }) => f.id);
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/realm/profile_fields', { order: ids.slice(1) })).body, bad('Invalid order mapping.'));
    const reversed = [...ids].reverse();
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', '/realm/profile_fields', { order: reversed })).body, ok);
    const after = (await t.api(t.users.owner, 'GET', '/realm/profile_fields')).body.custom_fields;
    assert.deepEqual(after.map((f: { id: number }) => f.id), reversed);
    assert.equal(after.find((f: { id: number }) => f.id === phone).name, 'Telephone');
    const tmp = await createField({ name: 'Temporary' });
    assert.deepEqual((await t.api(t.users.owner, 'DELETE', `/realm/profile_fields/${tmp}`)).body, ok);
    assert.deepEqual((await t.api(t.users.owner, 'DELETE', `/realm/profile_fields/${tmp}`)).body, bad(`Field id ${tmp} not found.`));
  });
});

describe('PATCH /users/me/profile_data', () => {
  it('sets values by type, renders text fields, clears with null, and announces each change', async () => {
    const h = t.users.hamlet;
    const q = await queue(t.users.othello, ['realm_user']);
    const data = [
      { id: phone, value: '**555**' },
      { id: team, value: 'b' },
      { id: birthday, value: '2000-02-29' },
      { id: site, value: 'https://example.org/me' },
    ];
    assert.deepEqual((await t.api(h, 'PATCH', '/users/me/profile_data', { data })).body, ok);
    const me = (await t.api(h, 'GET', '/users/me')).body;
    assert.deepEqual(me.profile_data, {
      [phone]: { value: '**555**', rendered_value: '<p><strong>555</strong></p>' },
      [team]: { value: 'b' },
      [birthday]: { value: '2000-02-29' },
      [site]: { value: 'https://example.org/me' },
    });
    assert.deepEqual(await events(t.users.othello, q), [
      { type: 'realm_user', op: 'update', person: { user_id: h.id, custom_profile_field: { id: phone, value: '**555**', rendered_value: '<p><strong>555</strong></p>' } } },
      { type: 'realm_user', op: 'update', person: { user_id: h.id, custom_profile_field: { id: team, value: 'b' } } },
      { type: 'realm_user', op: 'update', person: { user_id: h.id, custom_profile_field: { id: birthday, value: '2000-02-29' } } },
      { type: 'realm_user', op: 'update', person: { user_id: h.id, custom_profile_field: { id: site, value: 'https://example.org/me' } } },
    ]);
    assert.deepEqual((await t.api(h, 'PATCH', '/users/me/profile_data', { data: [{ id: team, value: null }] })).body, ok);
    assert.deepEqual(await events(t.users.othello, q), [
      { type: 'realm_user', op: 'update', person: { user_id: h.id, custom_profile_field: { id: team, value: null } } },
    ]);
    assert.deepEqual((await t.api(h, 'DELETE', '/users/me/profile_data', { data: [site] })).body, ok);
    const users = (await t.api(t.users.othello, 'GET', '/users', { include_custom_profile_fields: true })).body.members;
    assert.deepEqual(Object.keys(users.find((u: { user_id: number }) => u.user_id === h.id).profile_data).map(Number).sort(), [phone, birthday].sort());
  });

  it('validates values per field type', async () => {
    const h = t.users.hamlet;
    const set = (id: number, value: unknown) => t.api(h, 'PATCH', '/users/me/profile_data', { data: [{ id, value }] });
    assert.deepEqual((await set(9999, 'x')).body, bad('Field id 9999 not found.'));
    assert.deepEqual((await set(team, 'z')).body, bad("'z' is not a valid choice for 'Team'."));
    assert.deepEqual((await set(birthday, '2001-02-29')).body, bad('Birthday is not a date'));
    assert.deepEqual((await set(site, 'not a url')).body, bad('Website is not a URL'));
    assert.deepEqual((await set(phone, 'x'.repeat(51))).body, bad('Telephone is too long (limit: 50 characters)'));
    assert.deepEqual((await set(bio, 'x'.repeat(501))).body, bad('Biography is too long (limit: 500 characters)'));
    assert.deepEqual((await set(phone, [1])).body, bad('Telephone is not a string'));
    assert.deepEqual((await set(mentor, [t.users.othello.id])).body, bad('You are not allowed to change this field. Contact an administrator to update it.'));
  });
});

describe('PATCH /users/{user_id}', () => {
  it('sets profile data for others, including user lists, as an administrator', async () => {
    const o = t.users.othello;
    const res = await t.api(t.users.admin, 'PATCH', `/users/${o.id}`, {
      profile_data: [{ id: mentor, value: [t.users.hamlet.id, t.users.admin.id] }, { id: bio, value: 'I *act*' }],
    });
    assert.deepEqual(res.body, ok);
    const got = (await t.api(t.users.hamlet, 'GET', `/users/${o.id}`, { include_custom_profile_fields: true })).body.user.profile_data;
    assert.deepEqual(got, {
      [mentor]: { value: JSON.stringify([t.users.hamlet.id, t.users.admin.id]) },
      [bio]: { value: 'I *act*', rendered_value: '<p>I <em>act</em></p>' },
    });
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/users/${o.id}`, { profile_data: [{ id: mentor, value: [9999] }] })).body, bad('Invalid user ID: 9999'));
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/users/${o.id}`, { profile_data: [{ id: 9001, value: 'x' }] })).body, bad('Field id 9001 not found.'));
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/users/${o.id}`, { profile_data: [{ id: mentor, value: null }] })).body, ok);
    assert.deepEqual(Object.keys((await t.api(o, 'GET', '/users/me')).body.profile_data), [String(bio)]);
    for (const u of [t.users.moderator, t.users.hamlet, t.users.guest]) {
      assert.deepEqual((await t.api(u, 'PATCH', `/users/${o.id}`, { profile_data: [{ id: bio, value: 'x' }] })).body, adminRequired);
    }
  });

  it('changes emails only for owners with can_change_user_emails', async () => {
    const target = (await t.api(t.users.owner, 'POST', '/users', { email: 'rosalind@example.com', password: 'long-enough-pw', full_name: 'Rosalind' })).body.user_id;
    const notAuthorized = bad('User not authorized to change user emails');
    assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${target}`, { new_email: 'ros@example.com' })).body, notAuthorized);
    t.app.db.prepare('UPDATE realm SET can_change_user_emails = 1').run();
    try {
      assert.deepEqual((await t.api(t.users.admin, 'PATCH', `/users/${target}`, { new_email: 'ros@example.com' })).body, notAuthorized);
      assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${target}`, { new_email: 'not-an-email' })).body, bad('Invalid new email address.'));
      assert.deepEqual(
        (await t.api(t.users.owner, 'PATCH', `/users/${target}`, { new_email: t.users.hamlet.email })).body,
        bad('New email value error: Already has an account.'),
      );
      const q = await queue(t.users.hamlet, ['realm_user']);
      assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${target}`, { new_email: 'ros@example.com' })).body, ok);
      const u = (await t.api(t.users.owner, 'GET', `/users/${target}`)).body.user;
      assert.deepEqual([u.email, u.delivery_email], ['ros@example.com', 'ros@example.com']);
      // As Zulip's do_change_user_delivery_email: the address, the Gravatar made from it, the API email.
      const avatar = (await t.api(t.users.hamlet, 'GET', `/users/${target}`, { client_gravatar: false })).body.user.avatar_url;
      assert.deepEqual(await events(t.users.hamlet, q), [
        { type: 'realm_user', op: 'update', person: { user_id: target, delivery_email: 'ros@example.com' } },
        {
          type: 'realm_user',
          op: 'update',
          person: { user_id: target, avatar_source: 'G', avatar_url: avatar, avatar_url_medium: avatar.replace('?d=identicon&', '?d=identicon&s=500&'), avatar_version: 1 },
        },
        { type: 'realm_user', op: 'update', person: { user_id: target, new_email: 'ros@example.com' } },
      ]);
      // A refused part leaves the rest unchanged.
      assert.deepEqual((await t.api(t.users.owner, 'PATCH', `/users/${target}`, { full_name: 'Ros', new_email: 'bad' })).body, bad('Invalid new email address.'));
      assert.equal((await t.api(t.users.owner, 'GET', `/users/${target}`)).body.user.full_name, 'Rosalind');
    } finally {
      t.app.db.prepare('UPDATE realm SET can_change_user_emails = 0').run();
    }
  });
});

// Invitations over HTTP: POST /invites with its permission rules and INVITATION_FAILED bodies, the
// invitation email in the outbox, the sign-up page that turns a link into an account (role, channels,
// groups, welcome message, referrer notice, session), GET /invites, revoke, resend and reusable links.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { stmt } from '../../src/db/stmt';
import type { ParleyEvent } from '../../src/events/bus';
import { systemGroupId } from '../../src/lib/realm';
import { ROLE } from '../../src/lib/roles';
import { doCreateUser } from '../../src/actions/users';
import { encodeParams, startTestServer, type SeedName, type TestServer, type TestUser } from '../helpers/server';

const START = Date.UTC(2024, 0, 15, 12, 0, 0);
let nowMs = START;
const clock = { nowMs: () => nowMs };
const now = () => Math.floor(nowMs / 1000);

let t: TestServer;
let events: { event: ParleyEvent; userIds: readonly number[] }[] = [];
let design: number; // a channel hamlet is subscribed to
let lobby: number; // a default channel
let secret: number; // a private channel only the admin is in
let town: number; // a public channel the admin created
let crew: number; // a user group members may add to

before(async () => {
  t = await startTestServer({ clock });
  t.app.events.listen((event, userIds) => events.push({ event, userIds }));
  const ok = async (user: TestUser, method: string, p: string, params: Record<string, unknown>) => {
    const r = await t.api(user, method, p, params);
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  await ok(t.users.hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'design' }] });
  await ok(t.users.admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_default_stream: true });
  await ok(t.users.admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
  await ok(t.users.admin, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'town' }] });
  const ids = (name: string) => (stmt(t.app.db, 'SELECT id FROM stream WHERE name = ?').get(name) as { id: number }).id;
  design = ids('design');
  lobby = ids('lobby');
  secret = ids('secret');
  town = ids('town');
  crew = (await ok(t.users.admin, 'POST', '/user_groups/create', { name: 'crew', description: 'The crew', members: [t.users.admin.id] })).group_id;
  stmt(t.app.db, 'UPDATE user_group SET can_add_members_group = ? WHERE id = ?').run(systemGroupId(t.app.db, t.app.realmId(), 'role:members'), crew);
});
after(() => t.close());
beforeEach(() => {
  events = [];
});

const outbox = () => path.join(t.dataDir, 'outbox');
function readOutbox(): string[] {
  if (!fs.existsSync(outbox())) return [];
  return fs.readdirSync(outbox()).sort().map((f) => fs.readFileSync(path.join(outbox(), f), 'utf8'));
}
function clearOutbox(): void {
  fs.rmSync(outbox(), { recursive: true, force: true });
}
/** The single email to `to` in the outbox. */
function emailTo(to: string): string {
  const found = readOutbox().filter((m) => m.includes(`\r\nTo: ${to}\r\n`));
  assert.equal(found.length, 1, `emails to ${to}: ${found.length}`);
  return found[0];
}
const linkIn = (eml: string) => (/(http:\/\/\S+\/join\/[a-z0-9]{24}\/)/.exec(eml) as RegExpExecArray)[1];
const pathOf = (link: string) => new URL(link).pathname;

const invite = (user: TestUser | SeedName, params: Record<string, unknown>) =>
  t.api(typeof user === 'string' ? t.users[user] : user, 'POST', '/invites', { stream_ids: [], ...params });

const form = (fields: Record<string, string>) => ({ 'content-type': 'application/x-www-form-urlencoded', body: encodeParams(fields) });
/** Posts a form like a browser would, without following the redirect. */
async function postForm(p: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const f = form(fields);
  const res = await fetch(t.url + p, { method: 'POST', redirect: 'manual', headers: { 'content-type': f['content-type'], ...headers }, body: f.body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function failed(msg: string, errors: [string, string, boolean][], sent: boolean, daily = false) {
  return { result: 'error', msg, code: 'INVITATION_FAILED', errors, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: daily };
}
const bad = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

function invitationRows(email: string) {
  return stmt(t.app.db, 'SELECT * FROM invitation WHERE email = ? ORDER BY id').all(email) as Record<string, unknown>[];
}

describe('invitation flow end to end', () => {
  it('emails a link whose sign-up page creates the account with role, channels, groups, welcome message and referrer notice', async () => {
    clearOutbox();
    const r = await invite('admin', {
      invitee_emails: 'Newbie Person <newbie@example.com>',
      stream_ids: [design, secret],
      group_ids: [crew],
      invite_as: ROLE.MODERATOR,
      include_realm_default_subscriptions: true,
      welcome_message_custom_text: 'Read the **handbook** first.',
    });
    assert.deepEqual(r.body, { result: 'success', msg: '' });
    assert.equal(r.status, 200);

    const eml = emailTo('newbie@example.com');
    assert.match(eml, /^Content-Type: text\/plain; charset=UTF-8\r$/m);
    assert.match(eml, /^Content-Transfer-Encoding: 8bit\r$/m);
    assert.match(eml, /^Subject: Iago invited you to join Test Org\r$/m);
    const link = linkIn(eml);
    assert.ok(link.startsWith(t.url + '/join/'), link);
    assert.equal(invitationRows('newbie@example.com')[0].expires, now() + 14400 * 60);

    const page = await t.raw('GET', pathOf(link));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /Iago invited you to join Test Org\./);
    assert.match(page.text, /newbie@example\.com/);
    assert.match(page.text, /name="full_name"/);
    assert.equal(page.headers.get('referrer-policy'), 'same-origin');

    // A too-short password re-renders the form with the error and creates nothing.
    const weak = await postForm(pathOf(link), { full_name: 'New Bie', password: 'abc' });
    assert.equal(weak.status, 400);
    assert.match(weak.text, /The password is too weak\./);
    assert.match(weak.text, /value="New Bie"/);
    assert.equal((stmt(t.app.db, "SELECT count(*) AS n FROM user WHERE delivery_email = 'newbie@example.com'").get() as { n: number }).n, 0);

    events = [];
    const done = await postForm(pathOf(link), { full_name: 'New Bie', password: 'a-good-password' });
    assert.equal(done.status, 303, done.text);
    assert.equal(done.headers.get('location'), '/');
    const cookie = done.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^parley_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Max-Age=1209600$/);
    const token = cookie.split(';')[0];
    const app = await t.raw('GET', '/', { headers: { cookie: token } });
    assert.equal(app.status, 200);
    assert.match(app.text, /<div id="app">/);

    const keyed = await t.api(null, 'POST', '/fetch_api_key', { username: 'newbie@example.com', password: 'a-good-password' });
    assert.equal(keyed.status, 200, keyed.text);
    const newbie: TestUser = { id: keyed.body.user_id, email: keyed.body.email, apiKey: keyed.body.api_key, password: 'a-good-password', fullName: 'New Bie' };
    const me = await t.api(newbie, 'GET', '/users/me');
    assert.equal(me.body.full_name, 'New Bie');
    assert.equal(me.body.role, ROLE.MODERATOR);
    assert.equal(me.body.delivery_email, 'newbie@example.com');

    const subs = await t.api(newbie, 'GET', '/users/me/subscriptions');
    assert.deepEqual(subs.body.subscriptions.map((s: { name: string }) => s.name).sort(), ['design', 'lobby', 'secret']);
    const inCrew = await t.api(newbie, 'GET', `/user_groups/${crew}/members/${newbie.id}`);
    assert.deepEqual(inCrew.body, { result: 'success', msg: '', is_user_group_member: true });

    const mine = await t.api(newbie, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [], apply_markdown: false });
    const contents = mine.body.messages.map((m: { content: string; sender_full_name: string }) => [m.sender_full_name, m.content]);
    assert.equal(contents.length, 2);
    assert.equal(contents[0][0], 'Welcome Bot');
    assert.match(contents[0][1], /^Hello, and welcome to Test Org!/);
    assert.deepEqual(contents[1], ['Welcome Bot', 'A message from the administrators of Test Org:\n\nRead the **handbook** first.']);

    const iago = await t.api(t.users.admin, 'GET', '/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'dm' }],
      apply_markdown: false,
    });
    const notice = iago.body.messages[0];
    assert.equal(notice.sender_full_name, 'Notification Bot');
    assert.equal(notice.content, `@_**New Bie|${newbie.id}** accepted your invitation to join Test Org!`);
    assert.match(notice.sender_email, /^notification-bot@/);

    // The invitation is used: gone from GET /invites, its link refused, admins told.
    assert.equal(invitationRows('newbie@example.com')[0].status, 1);
    const changed = events.filter((e) => e.event.type === 'invites_changed');
    assert.equal(changed.length, 1);
    assert.deepEqual([...changed[0].userIds].sort((a, b) => a - b), [t.users.owner.id, t.users.admin.id]);
    const again = await t.raw('GET', pathOf(link));
    assert.equal(again.status, 410);
    assert.match(again.text, /<h1>Invitation already used<\/h1>/);
    const reuse = await postForm(pathOf(link), { full_name: 'Second Try', password: 'a-good-password' });
    assert.equal(reuse.status, 410);
    assert.equal((stmt(t.app.db, "SELECT count(*) AS n FROM user WHERE full_name = 'Second Try'").get() as { n: number }).n, 0);
  });

  it('without custom text uses the organization default; an empty string sends only the greeting; notify_referrer_on_join false sends no notice', async () => {
    assert.equal((await t.api(t.users.admin, 'PATCH', '/realm', { welcome_message_custom_text: 'Org default text' })).status, 200);
    clearOutbox();
    assert.equal((await invite('hamlet', { invitee_emails: 'd1@example.com', notify_referrer_on_join: false })).status, 200);
    assert.equal((await invite('admin', { invitee_emails: 'd2@example.com', welcome_message_custom_text: '' })).status, 200);
    const hamletBefore = (stmt(t.app.db, 'SELECT count(*) AS n FROM usermessage WHERE user_id = ?').get(t.users.hamlet.id) as { n: number }).n;
    for (const [email, name] of [['d1@example.com', 'Dee One'], ['d2@example.com', 'Dee Two']]) {
      const r = await postForm(pathOf(linkIn(emailTo(email))), { full_name: name, password: 'a-good-password' });
      assert.equal(r.status, 303, r.text);
    }
    const texts = (name: string) =>
      (stmt(t.app.db, 'SELECT m.content FROM message m JOIN usermessage um ON um.message_id = m.id JOIN user u ON u.id = um.user_id WHERE u.full_name = ? ORDER BY m.id').all(name) as { content: string }[]).map((r) => r.content);
    assert.equal(texts('Dee One').length, 2);
    assert.equal(texts('Dee One')[1], 'A message from the administrators of Test Org:\n\nOrg default text');
    assert.equal(texts('Dee Two').length, 1);
    assert.equal((stmt(t.app.db, 'SELECT count(*) AS n FROM usermessage WHERE user_id = ?').get(t.users.hamlet.id) as { n: number }).n, hamletBefore);
    assert.equal((await t.api(t.users.admin, 'PATCH', '/realm', { welcome_message_custom_text: '' })).status, 200);
  });
});

describe('POST /invites', () => {
  it('refuses guests, bots and members outside can_invite_users_group', async () => {
    assert.deepEqual((await invite('guest', { invitee_emails: 'x@example.com' })).body, bad('Not allowed for guest users'));
    assert.deepEqual((await invite('bot', { invitee_emails: 'x@example.com' })).body, bad('This endpoint does not accept bot requests.'));
    const realmId = t.app.realmId();
    stmt(t.app.db, 'UPDATE realm SET can_invite_users_group = ? WHERE id = ?').run(systemGroupId(t.app.db, realmId, 'role:administrators'), realmId);
    try {
      assert.deepEqual((await invite('hamlet', { invitee_emails: 'x@example.com' })).body, bad('Insufficient permission'));
    } finally {
      stmt(t.app.db, 'UPDATE realm SET can_invite_users_group = ? WHERE id = ?').run(systemGroupId(t.app.db, realmId, 'role:members'), realmId);
    }
  });

  it('requires invitee_emails and stream_ids', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/invites', { stream_ids: [] })).body, {
      result: 'error',
      msg: "Missing 'invitee_emails' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'invitee_emails',
    });
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/invites', { invitee_emails: 'a@example.com' })).body, {
      result: 'error',
      msg: "Missing 'stream_ids' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'stream_ids',
    });
    assert.deepEqual((await invite('hamlet', { invitee_emails: '' })).body, bad('You must specify at least one email address.'));
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'a@example.com', invite_as: 500 })).body, bad('Invalid invite_as: Value error, Not in the list of possible values'));
  });

  it('checks channels: missing or inaccessible ids, and permission to subscribe others', async () => {
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'c@example.com', stream_ids: [99999] })).body, bad('Invalid channel ID 99999. No invites were sent.'));
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'c@example.com', stream_ids: [secret] })).body, bad(`Invalid channel ID ${secret}. No invites were sent.`));
    const realmId = t.app.realmId();
    stmt(t.app.db, 'UPDATE realm SET can_add_subscribers_group = ? WHERE id = ?').run(systemGroupId(t.app.db, realmId, 'role:administrators'), realmId);
    try {
      assert.deepEqual(
        (await invite('hamlet', { invitee_emails: 'c@example.com', stream_ids: [town] })).body,
        bad('You do not have permission to subscribe other users to channels.'),
      );
      // Default channels are always allowed (Zulip FL 342), and so is an empty list.
      assert.equal((await invite('hamlet', { invitee_emails: 'c1@example.com', stream_ids: [lobby] })).status, 200);
      assert.equal((await invite('hamlet', { invitee_emails: 'c2@example.com', stream_ids: [] })).status, 200);
    } finally {
      stmt(t.app.db, 'UPDATE realm SET can_add_subscribers_group = ? WHERE id = ?').run(systemGroupId(t.app.db, realmId, 'role:members'), realmId);
    }
    assert.equal(invitationRows('c@example.com').length, 0);
  });

  it('checks groups', async () => {
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'g@example.com', group_ids: [99999] })).body, bad('Invalid user group'));
    const admins = systemGroupId(t.app.db, t.app.realmId(), 'role:administrators');
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'g@example.com', group_ids: [admins] })).body, bad('Insufficient permission'));
    assert.equal(invitationRows('g@example.com').length, 0);
  });

  it('lets only administrators set welcome_message_custom_text, up to 8000 code points', async () => {
    assert.deepEqual((await invite('hamlet', { invitee_emails: 'w@example.com', welcome_message_custom_text: 'hi' })).body, bad('Must be an organization administrator'));
    assert.deepEqual((await invite('admin', { invitee_emails: 'w@example.com', welcome_message_custom_text: '😀'.repeat(8001) })).body, bad('welcome_message_custom_text is too long (limit: 8000 characters)'));
    assert.equal((await invite('admin', { invitee_emails: 'w@example.com', welcome_message_custom_text: '😀'.repeat(8000) })).status, 200);
    assert.equal(invitationRows('w@example.com')[0].welcome_message_custom_text, '😀'.repeat(8000));
    // Others may send the JSON null (the organization default).
    assert.equal((await invite('hamlet', { invitee_emails: 'w2@example.com', welcome_message_custom_text: null })).status, 200);
    assert.equal(invitationRows('w2@example.com')[0].welcome_message_custom_text, null);
  });

  it('applies the role ceiling to invite_as', async () => {
    const expected: Record<string, Record<number, unknown>> = {
      owner: { 100: 'ok', 200: 'ok', 300: 'ok', 400: 'ok', 600: 'ok' },
      admin: { 100: 'owner', 200: 'ok', 300: 'ok', 400: 'ok', 600: 'ok' },
      moderator: { 100: 'owner', 200: 'admin', 300: 'ok', 400: 'ok', 600: 'ok' },
      hamlet: { 100: 'owner', 200: 'admin', 300: 'admin', 400: 'ok', 600: 'ok' },
    };
    for (const [caller, row] of Object.entries(expected)) {
      for (const [role, want] of Object.entries(row)) {
        const email = `role-${caller}-${role}@example.com`;
        const r = await invite(caller as SeedName, { invitee_emails: email, invite_as: Number(role) });
        const body =
          want === 'ok'
            ? { result: 'success', msg: '' }
            : want === 'owner'
              ? { result: 'error', msg: 'Must be an organization owner', code: 'UNAUTHORIZED_PRINCIPAL' }
              : bad('Must be an organization administrator');
        assert.deepEqual(r.body, body, `${caller} inviting as ${role}`);
        assert.equal(invitationRows(email).length, want === 'ok' ? 1 : 0);
        if (want === 'ok') assert.equal(invitationRows(email)[0].invited_as, Number(role));
      }
    }
  });

  it('reports invalid addresses and sends nothing', async () => {
    clearOutbox();
    const r = await invite('hamlet', { invitee_emails: 'fine@example.com, not-an-address\nothello@example.com' });
    assert.equal(r.status, 400);
    assert.deepEqual(
      r.body,
      failed("Some emails did not validate, so we didn't send any invitations.", [
        ['not-an-address', 'Invalid address.', false],
        ['othello@example.com', 'Already has an account.', false],
      ], false),
    );
    assert.equal(invitationRows('fine@example.com').length, 0);
    assert.deepEqual(readOutbox(), []);
  });

  it('skips existing and deactivated accounts and still invites the others', async () => {
    clearOutbox();
    const gone = await t.api(t.users.admin, 'POST', '/users', { email: 'gone@example.com', password: 'some-password', full_name: 'Gone User' });
    assert.equal(gone.status, 200);
    assert.equal((await t.api(t.users.admin, 'DELETE', `/users/${gone.body.user_id}`)).status, 200);
    events = [];
    const r = await invite('hamlet', { invitee_emails: 'Othello <othello@example.com>\nfresh1@example.com,gone@example.com, fresh2@example.com' });
    assert.equal(r.status, 400);
    assert.deepEqual(
      r.body,
      failed(
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
        [
          ['othello@example.com', 'Already has an account.', false],
          ['gone@example.com', 'Account has been deactivated.', true],
        ],
        true,
      ),
    );
    assert.equal(invitationRows('fresh1@example.com').length, 1);
    assert.equal(invitationRows('fresh2@example.com').length, 1);
    assert.equal(readOutbox().length, 2);
    const changed = events.filter((e) => e.event.type === 'invites_changed');
    assert.deepEqual([...changed[0].userIds].sort((a, b) => a - b), [t.users.owner.id, t.users.admin.id, t.users.hamlet.id]);

    const none = await invite('hamlet', { invitee_emails: 'othello@example.com,iago@example.com' });
    assert.deepEqual(
      none.body,
      failed("We weren't able to invite anyone.", [
        ['othello@example.com', 'Already has an account.', false],
        ['iago@example.com', 'Already has an account.', false],
      ], false),
    );
  });

  it('stops at the daily limit with daily_limit_reached', async () => {
    const realmId = t.app.realmId();
    const sent = (stmt(t.app.db, 'SELECT count(*) AS n FROM invitation WHERE realm_id = ? AND multiuse = 0 AND created > ?').get(realmId, now() - 86400) as { n: number }).n as number;
    stmt(t.app.db, 'UPDATE realm SET extra_settings = json_set(extra_settings, ?, ?) WHERE id = ?').run('$.max_invites', sent + 1, realmId);
    try {
      const r = await invite('hamlet', { invitee_emails: 'lim1@example.com, lim2@example.com' });
      assert.deepEqual(
        r.body,
        failed('To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.', [], false, true),
      );
      assert.equal((await invite('hamlet', { invitee_emails: 'lim1@example.com' })).status, 200);
    } finally {
      stmt(t.app.db, "UPDATE realm SET extra_settings = json_remove(extra_settings, '$.max_invites') WHERE id = ?").run(realmId);
    }
  });

  it('uses the expiry given, the server setting by default, and null for never', async () => {
    await invite('hamlet', { invitee_emails: 'exp1@example.com', invite_expires_in_minutes: 60 });
    await invite('hamlet', { invitee_emails: 'exp2@example.com', invite_expires_in_minutes: null });
    assert.equal(invitationRows('exp1@example.com')[0].expires, now() + 3600);
    assert.equal(invitationRows('exp2@example.com')[0].expires, null);
  });
});

describe('GET /invites, DELETE /invites/{id}, POST /invites/{id}/resend', () => {
  it('lists what the caller manages, revokes and resends with the access rules', async () => {
    await invite('othello', { invitee_emails: 'list-o@example.com', invite_as: ROLE.GUEST, invite_expires_in_minutes: 30 });
    const row = invitationRows('list-o@example.com')[0];
    const expectedObject = {
      email: 'list-o@example.com',
      invited_by_user_id: t.users.othello.id,
      invited: now(),
      expiry_date: now() + 1800,
      id: row.id,
      invited_as: ROLE.GUEST,
      is_multiuse: false,
      notify_referrer_on_join: true,
    };
    const mine = await t.api(t.users.othello, 'GET', '/invites');
    assert.deepEqual(mine.body, { result: 'success', msg: '', invites: [expectedObject] });
    const all = await t.api(t.users.admin, 'GET', '/invites');
    assert.ok(all.body.invites.length > 1);
    assert.deepEqual(all.body.invites.find((i: { id: number; is_multiuse: boolean }) => i.id === row.id && !i.is_multiuse), expectedObject);
    assert.deepEqual((await t.api(t.users.guest, 'GET', '/invites')).body, bad('Not allowed for guest users'));

    clearOutbox();
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', `/invites/${row.id}/resend`)).body, bad('Must be an organization administrator'));
    assert.deepEqual((await t.api(t.users.othello, 'POST', `/invites/${row.id}/resend`)).body, { result: 'success', msg: '' });
    assert.deepEqual((await t.api(t.users.othello, 'POST', '/invites/99999/resend')).body, bad('No such invitation'));
    const link = linkIn(emailTo('list-o@example.com'));
    assert.ok(link.endsWith(`/join/${row.confirmation_key}/`));

    assert.deepEqual((await t.api(t.users.hamlet, 'DELETE', `/invites/${row.id}`)).body, bad('Must be an organization administrator'));
    assert.deepEqual((await t.api(t.users.othello, 'DELETE', '/invites/99999')).body, bad('No such invitation'));
    events = [];
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/invites/${row.id}`)).body, { result: 'success', msg: '' });
    assert.deepEqual(events.map((e) => e.event.type), ['invites_changed']);
    assert.deepEqual((await t.api(t.users.othello, 'GET', '/invites')).body.invites, []);
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/invites/${row.id}`)).body, bad('No such invitation'));

    const page = await t.raw('GET', pathOf(link));
    assert.equal(page.status, 410);
    assert.match(page.text, /<h1>Invitation revoked<\/h1>/);
    const post = await postForm(pathOf(link), { full_name: 'Too Late', password: 'a-good-password' });
    assert.equal(post.status, 410);
    assert.equal((stmt(t.app.db, "SELECT count(*) AS n FROM user WHERE delivery_email = 'list-o@example.com'").get() as { n: number }).n, 0);
  });

  it('only owners revoke invitations to owners', async () => {
    await invite('owner', { invitee_emails: 'own@example.com', invite_as: ROLE.OWNER });
    const row = invitationRows('own@example.com')[0];
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/invites/${row.id}`)).body, {
      result: 'error',
      msg: 'Must be an organization owner',
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    assert.deepEqual((await t.api(t.users.owner, 'DELETE', `/invites/${row.id}`)).body, { result: 'success', msg: '' });
  });

  it('gives expired links a clear page and no account', async () => {
    clearOutbox();
    await invite('hamlet', { invitee_emails: 'late@example.com', invite_expires_in_minutes: 10 });
    const link = linkIn(emailTo('late@example.com'));
    nowMs += 11 * 60 * 1000;
    try {
      const page = await t.raw('GET', pathOf(link));
      assert.equal(page.status, 410);
      assert.match(page.text, /<h1>Invitation expired<\/h1>/);
      const post = await postForm(pathOf(link), { full_name: 'Late Comer', password: 'a-good-password' });
      assert.equal(post.status, 410);
      assert.equal(post.headers.get('set-cookie'), null);
      assert.equal((stmt(t.app.db, "SELECT count(*) AS n FROM user WHERE delivery_email = 'late@example.com'").get() as { n: number }).n, 0);
      assert.equal((await t.api(t.users.hamlet, 'GET', '/invites')).body.invites.some((i: { email?: string }) => i.email === 'late@example.com'), false);
    } finally {
      nowMs = START;
    }
    const unknown = await t.raw('GET', '/join/aaaaaaaaaaaaaaaaaaaaaaaa/');
    assert.equal(unknown.status, 404);
    assert.match(unknown.text, /<h1>Invitation not found<\/h1>/);
  });

  it('refuses a sign-up form posted from another site', async () => {
    clearOutbox();
    await invite('hamlet', { invitee_emails: 'csrf@example.com' });
    const link = linkIn(emailTo('csrf@example.com'));
    const r = await postForm(pathOf(link), { full_name: 'Csrf Victim', password: 'a-good-password' }, { origin: 'https://evil.example' });
    assert.equal(r.status, 403);
    assert.equal((stmt(t.app.db, "SELECT count(*) AS n FROM user WHERE delivery_email = 'csrf@example.com'").get() as { n: number }).n, 0);
    const ok = await postForm(pathOf(link), { full_name: 'Csrf Victim', password: 'a-good-password' }, { origin: t.url });
    assert.equal(ok.status, 303);
  });
});

describe('POST /invites/multiuse, DELETE /invites/multiuse/{id}', () => {
  it('creates a reusable link for administrators that signs up several people, then revokes it', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/invites/multiuse', {})).body, bad('Insufficient permission'));
    assert.deepEqual((await t.api(t.users.guest, 'POST', '/invites/multiuse', {})).body, bad('Not allowed for guest users'));
    assert.deepEqual((await t.api(t.users.admin, 'POST', '/invites/multiuse', { invite_as: ROLE.OWNER })).body, {
      result: 'error',
      msg: 'Must be an organization owner',
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    const r = await t.api(t.users.admin, 'POST', '/invites/multiuse', { stream_ids: [design], invite_as: ROLE.GUEST, invite_expires_in_minutes: null });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['result', 'msg', 'invite_link']);
    const link: string = r.body.invite_link;
    assert.match(link, new RegExp(`^${t.url}/join/[a-z0-9]{24}/$`));
    const row = stmt(t.app.db, 'SELECT * FROM invitation WHERE multiuse = 1 ORDER BY id DESC LIMIT 1').get() as { id: number };
    const listed = (await t.api(t.users.admin, 'GET', '/invites')).body.invites.find((i: { is_multiuse: boolean; id: number }) => i.is_multiuse && i.id === row.id);
    assert.deepEqual(listed, {
      invited_by_user_id: t.users.admin.id,
      invited: now(),
      expiry_date: null,
      id: row.id,
      link_url: link,
      invited_as: ROLE.GUEST,
      is_multiuse: true,
    });

    const page = await t.raw('GET', pathOf(link));
    assert.match(page.text, /name="email"/);
    assert.doesNotMatch(page.text, /name="password"/);
    clearOutbox();
    for (const [email, name] of [['m1@example.com', 'Multi One'], ['m2@example.com', 'Multi Two']]) {
      // The link asks for the address and sends it a link to finish: nothing is created before.
      const asked = await postForm(pathOf(link), { email });
      assert.equal(asked.status, 200, asked.text);
      assert.match(asked.text, new RegExp(`We sent a link to <strong>${email}</strong>`));
      assert.equal(stmt(t.app.db, 'SELECT id FROM user WHERE delivery_email = ?').get(email), undefined);
      const eml = emailTo(email);
      assert.match(eml, /^Subject: Confirm your email address to join Test Org\r$/m);
      const finish = linkIn(eml);
      assert.notEqual(finish, link);
      const form = await t.raw('GET', pathOf(finish));
      assert.match(form.text, new RegExp(`<p>Email: <strong>${email}</strong></p>`));
      assert.match(form.text, /name="password"/);
      const res = await postForm(pathOf(finish), { full_name: name, password: 'a-good-password' });
      assert.equal(res.status, 303, res.text);
      const u = stmt(t.app.db, 'SELECT id, role FROM user WHERE delivery_email = ?').get(email) as { id: number; role: number };
      assert.equal(u.role, ROLE.GUEST);
      assert.ok(stmt(t.app.db, 'SELECT 1 FROM subscription WHERE user_id = ? AND stream_id = ? AND active = 1').get(u.id, design));
      // The confirmation link is spent; the reusable link stays usable.
      assert.equal((await postForm(pathOf(finish), { full_name: name, password: 'a-good-password' })).status, 410);
    }
    // Sign-ups waiting for confirmation are not invitations anyone lists or counts.
    assert.deepEqual(
      (await t.api(t.users.admin, 'GET', '/invites')).body.invites.filter((i: { email?: string }) => i.email?.startsWith('m')),
      [],
    );
    const taken = await postForm(pathOf(link), { email: 'othello@example.com' });
    assert.equal(taken.status, 400);
    assert.match(taken.text, /An account with this email address already exists\. Log in instead\./);
    const invalid = await postForm(pathOf(link), { email: 'not-an-address' });
    assert.equal(invalid.status, 400);
    assert.match(invalid.text, /Enter a valid email address\./);
    // A registration under way when the link is revoked cannot be finished.
    clearOutbox();
    assert.equal((await postForm(pathOf(link), { email: 'late@example.com' })).status, 200);
    const pending = linkIn(emailTo('late@example.com'));
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/invites/multiuse/${row.id}`)).body, { result: 'success', msg: '' });
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', `/invites/multiuse/${row.id}`)).body, bad('Invitation has already been revoked'));
    assert.deepEqual((await t.api(t.users.admin, 'DELETE', '/invites/multiuse/99999')).body, bad('No such invitation'));
    const gone = await postForm(pathOf(link), { email: 'm3@example.com' });
    assert.equal(gone.status, 410);
    const stopped = await postForm(pathOf(pending), { full_name: 'Late Comer', password: 'a-good-password' });
    assert.equal(stopped.status, 410);
    assert.match(stopped.text, /This invitation was revoked/);
    assert.equal(stmt(t.app.db, 'SELECT id FROM user WHERE delivery_email = ?').get('late@example.com'), undefined);
  });

  it('confirms an address before making its account: a link alone makes none', async () => {
    const r = await t.api(t.users.admin, 'POST', '/invites/multiuse', { invite_expires_in_minutes: 60 });
    const link = pathOf(r.body.invite_link);
    const users = () => (stmt(t.app.db, 'SELECT count(*) AS n FROM user').get() as { n: number }).n;
    const before = users();
    // The old one-step form (an address with a password) makes no account either.
    const direct = await postForm(link, { email: 'someone-else@example.com', full_name: 'Not Them', password: 'a-good-password' });
    assert.equal(direct.status, 200);
    assert.equal(users(), before);
    clearOutbox();
    // An address may be sent only so many sign-up emails a day.
    for (let i = 0; i < 5; i++) assert.equal((await postForm(link, { email: 'flood@example.com' })).status, 200);
    const sixth = await postForm(link, { email: 'flood@example.com' });
    assert.equal(sixth.status, 400);
    assert.match(sixth.text, /Too many sign-up emails were sent to this address today/);
    assert.equal(readOutbox().filter((m) => m.includes('\r\nTo: flood@example.com\r\n')).length, 5);
    // A confirmation link expires after a day.
    const first = linkIn(readOutbox().find((m) => m.includes('\r\nTo: flood@example.com\r\n')) as string);
    const later = nowMs;
    nowMs += 24 * 3600 * 1000 + 1000;
    try {
      const expired = await postForm(pathOf(first), { full_name: 'Slow Reader', password: 'a-good-password' });
      assert.equal(expired.status, 410);
      assert.match(expired.text, /This invitation link has expired/);
    } finally {
      nowMs = later;
    }
    assert.equal(users(), before);
  });
});

describe('an organization restricted to its domains', () => {
  it("admits only addresses Django's validator takes in an allowed domain: none that mail software would deliver elsewhere", async () => {
    const realmId = t.app.realmId();
    t.app.db.prepare('UPDATE realm SET emails_restricted_to_domains = 1 WHERE id = ?').run(realmId);
    t.app.db.prepare("INSERT INTO realm_domain (realm_id, domain, allow_subdomains) VALUES (?, 'example.com', 1)").run(realmId);
    try {
      clearOutbox();
      // These end in an allowed subdomain, and the old check took them; nodemailer reads the first two
      // as victim@evil.com, the third as two addresses.
      const r = await invite('admin', { invitee_emails: 'victim@evil.com(x.example.com\nvictim@evil.com>x.example.com\n"a,b"@example.com\nx+tag@example.com\nx@evil.com' });
      assert.deepEqual(
        r.body,
        failed("Some emails did not validate, so we didn't send any invitations.", [
          ['victim@evil.com(x.example.com', 'Invalid address.', false],
          ['victim@evil.com>x.example.com', 'Invalid address.', false],
          ['"a', 'Invalid address.', false],
          ['b"@example.com', 'Invalid address.', false],
          ['x+tag@example.com', 'Email addresses containing + are not allowed.', false],
          ['x@evil.com', 'Outside your domain.', false],
        ], false),
      );
      assert.deepEqual(readOutbox(), []);
      // A reusable link's sign-up form applies the same rules before sending anything.
      const link = pathOf((await t.api(t.users.admin, 'POST', '/invites/multiuse', {})).body.invite_link);
      for (const [email, message] of [
        ['victim@evil.com(x.example.com', /Enter a valid email address\./],
        ['victim+1@example.com', /Email addresses containing \+ are not allowed\./],
        ['victim@evil.com', /Your email address is not in one of the domains this organization allows\./],
      ] as const) {
        const res = await postForm(link, { email });
        assert.equal(res.status, 400, email);
        assert.match(res.text, message);
      }
      assert.deepEqual(readOutbox(), []);
      assert.equal((await invite('admin', { invitee_emails: 'ok@team.example.com' })).status, 200);
      assert.equal(readOutbox().length, 1);
    } finally {
      t.app.db.prepare('UPDATE realm SET emails_restricted_to_domains = 0 WHERE id = ?').run(realmId);
      t.app.db.prepare('DELETE FROM realm_domain WHERE realm_id = ?').run(realmId);
    }
  });
});

describe('sign-up emails per client address', () => {
  it("are at most 5 a day from one address, whatever addresses they go to (Zulip's sends_email_by_ip)", async () => {
    // The per-address cap (5 a day to one mailbox) did not stop one client holding a link, which needs
    // no login, from having the server mail any number of strangers.
    const limited = await startTestServer({ configure: (c) => (c.rateLimits = true) });
    try {
      const link = pathOf((await limited.api(limited.users.admin, 'POST', '/invites/multiuse', {})).body.invite_link);
      const post = (email: string) =>
        fetch(limited.url + link, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encodeParams({ email }) });
      const sent = () => (fs.existsSync(path.join(limited.dataDir, 'outbox')) ? fs.readdirSync(path.join(limited.dataDir, 'outbox')).length : 0);
      // Refused addresses send nothing and count for nothing.
      for (const email of ['not-an-address', 'othello@example.com']) assert.equal((await post(email)).status, 400);
      for (let i = 0; i < 5; i++) assert.equal((await post(`stranger${i}@example.org`)).status, 200);
      assert.equal(sent(), 5);
      const sixth = await post('stranger5@example.org');
      assert.equal(sixth.status, 429);
      assert.ok(Number(sixth.headers.get('retry-after')) > 80_000);
      assert.match(await sixth.text(), /Too many sign-up emails were sent from your network today\./);
      assert.equal(sent(), 5);
      assert.equal((stmt(limited.app.db, "SELECT count(*) AS n FROM invitation WHERE email = 'stranger5@example.org'").get() as { n: number }).n, 0);
    } finally {
      await limited.close();
    }
  });
});

describe('deactivating the person who invited', () => {
  it("revokes their invitations and reusable links, and the sign-ups under way through them (Zulip's revoke_invites_generated_by_user)", async () => {
    // An administrator who leaves, with a link that makes administrators and an email invitation.
    const made = doCreateUser(t.app, {
      realmId: t.app.realmId(),
      email: 'leaving-admin@example.com',
      password: 'a-good-password',
      fullName: 'Leaving Admin',
      role: ROLE.ADMINISTRATOR,
      acting: null,
    });
    t.app.batch.commit();
    const leaving: TestUser = { id: made.userId, email: 'leaving-admin@example.com', apiKey: made.apiKey, password: 'a-good-password', fullName: 'Leaving Admin' };
    clearOutbox();
    const linkRes = await t.api(leaving, 'POST', '/invites/multiuse', { invite_as: ROLE.ADMINISTRATOR, stream_ids: [secret] });
    assert.equal(linkRes.status, 200, linkRes.text);
    const link = pathOf(linkRes.body.invite_link);
    assert.equal((await invite(leaving, { invitee_emails: 'by-email@example.com', invite_as: ROLE.ADMINISTRATOR })).status, 200);
    const emailed = pathOf(linkIn(emailTo('by-email@example.com')));
    assert.equal((await postForm(link, { email: 'under-way@example.com' })).status, 200);
    const underWay = pathOf(linkIn(emailTo('under-way@example.com')));
    const listed = async () =>
      (await t.api(t.users.owner, 'GET', '/invites')).body.invites.filter((i: { invited_by_user_id: number }) => i.invited_by_user_id === leaving.id).length;
    assert.equal(await listed(), 2);

    events = [];
    assert.deepEqual((await t.api(t.users.owner, 'DELETE', `/users/${leaving.id}`)).body, { result: 'success', msg: '' });
    assert.ok(events.some((e) => e.event.type === 'invites_changed' && e.userIds.includes(t.users.owner.id)));
    assert.equal(await listed(), 0);
    for (const path_ of [link, emailed, underWay]) {
      const page = await t.raw('GET', path_);
      assert.equal(page.status, 410, path_);
      assert.match(page.text, /This invitation was revoked/);
    }
    assert.equal((await postForm(link, { email: 'newcomer@example.com' })).status, 410);
    for (const [path_, name] of [[emailed, 'By Email'], [underWay, 'Under Way']]) {
      assert.equal((await postForm(path_, { full_name: name, password: 'a-good-password' })).status, 410);
    }
    for (const email of ['by-email@example.com', 'under-way@example.com', 'newcomer@example.com']) {
      assert.equal(stmt(t.app.db, 'SELECT id FROM user WHERE delivery_email = ?').get(email), undefined, email);
    }
    // Reactivating the person does not bring them back, as in Zulip.
    assert.equal((await t.api(t.users.owner, 'POST', `/users/${leaving.id}/reactivate`)).status, 200);
    assert.equal((await t.raw('GET', link)).status, 410);
  });
});

describe('PATCH /realm', () => {
  it('sets the default welcome text (administrators only) with a realm update event', async () => {
    assert.deepEqual((await t.api(t.users.hamlet, 'PATCH', '/realm', { welcome_message_custom_text: 'x' })).body, {
      result: 'error',
      msg: 'Must be an organization administrator',
      code: 'UNAUTHORIZED_PRINCIPAL',
    });
    events = [];
    // As Zulip's update_realm: each changed text setting comes back as "updated".
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', '/realm', { welcome_message_custom_text: 'Hello team' })).body, {
      result: 'success',
      msg: '',
      welcome_message_custom_text: 'updated',
    });
    assert.deepEqual(events[0].event, { type: 'realm', op: 'update', property: 'welcome_message_custom_text', value: 'Hello team' });
    assert.deepEqual((await t.api(t.users.admin, 'PATCH', '/realm', { welcome_message_custom_text: 'a'.repeat(8001) })).body,
      bad('welcome_message_custom_text is too long (limit: 8000 characters)'));
    await t.api(t.users.admin, 'PATCH', '/realm', { welcome_message_custom_text: '' });
  });
});

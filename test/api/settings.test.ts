import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { err, SUCCESS, systemGroups } from '../helpers/chat';
import { checkPassword } from '../../src/lib/secrets';

let offsetMs = 0;
const clock = { nowMs: () => Date.now() + offsetMs };

let t: TestServer;
before(async () => {
  t = await startTestServer({ clock });
});
after(() => t.close());

const patch = (user: TestUser, params: Record<string, unknown>, p = '/settings') => t.api(user, 'PATCH', p, params);
const row = (u: TestUser) => t.app.db.prepare('SELECT * FROM user WHERE id = ?').get(u.id) as Record<string, any>;

async function queue(user: TestUser, params: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: [], ...params });
  assert.equal(res.status, 200, res.text);
  return res.body.queue_id;
}
async function events(user: TestUser, queueId: string): Promise<any[]> {
  const res = await t.api(user, 'GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  assert.equal(res.status, 200, res.text);
  return res.body.events.filter((e: any) => e.type !== 'heartbeat').map(({ id, ...rest }: any) => rest);
}
const notInList = (name: string) => err(`Invalid ${name}: Value error, Not in the list of possible values`);

describe('PATCH /settings', () => {
  it('changes settings of each type and sends one user_settings event per change', async () => {
    const u = t.users.hamlet;
    const q = await queue(u, { event_types: ['user_settings'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    const res = await patch(u, { twenty_four_hour_time: true, web_font_size_px: 18, emojiset: 'twitter', web_channel_default_view: 4 });
    assert.deepEqual(res.body, SUCCESS);
    const r = row(u);
    assert.deepEqual([r.twenty_four_hour_time, r.web_font_size_px, r.emojiset, r.web_channel_default_view], [1, 18, 'twitter', 4]);
    assert.deepEqual(await events(u, q), [
      { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true },
      { type: 'user_settings', op: 'update', property: 'web_channel_default_view', value: 4 },
      { type: 'user_settings', op: 'update', property: 'web_font_size_px', value: 18 },
      { type: 'user_settings', op: 'update', property: 'emojiset', value: 'twitter' },
    ].sort((a, b) => order(a.property) - order(b.property)));
    const reg = await t.api(u, 'POST', '/register', { fetch_event_types: ['user_settings'] });
    assert.equal(reg.body.user_settings.emojiset, 'twitter');
    assert.equal(reg.body.user_settings.twenty_four_hour_time, true);
  });

  it('stores enter_sends: its event, and register after it', async () => {
    const u = t.users.othello;
    const q = await queue(u, { event_types: ['user_settings'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    assert.deepEqual((await patch(u, { enter_sends: true })).body, SUCCESS);
    assert.equal(row(u).enter_sends, 1);
    assert.deepEqual(await events(u, q), [{ type: 'user_settings', op: 'update', property: 'enter_sends', value: true }]);
    const reg = await t.api(u, 'POST', '/register', { fetch_event_types: ['user_settings'] });
    assert.equal(reg.body.user_settings.enter_sends, true);
    // Unchanged now, so reported as ignored like any other setting.
    assert.deepEqual((await patch(u, { enter_sends: true })).body, { ...SUCCESS, ignored_parameters_unsupported: ['enter_sends'] });
    assert.deepEqual((await patch(u, { enter_sends: false })).body, SUCCESS);
    assert.equal(row(u).enter_sends, 0);
  });

  it('reports unchanged and unknown parameters in ignored_parameters_unsupported', async () => {
    const u = t.users.hamlet;
    const res = await patch(u, { twenty_four_hour_time: true, color_scheme: 2, dense_mode: true });
    assert.deepEqual(res.body, { ...SUCCESS, ignored_parameters_unsupported: ['dense_mode', 'twenty_four_hour_time'] });
    assert.equal(row(u).color_scheme, 2);
  });

  it('accepts every enumerated value and refuses others', async () => {
    const u = t.users.othello;
    for (const v of [1, 2, 3, 4]) assert.equal((await patch(u, { web_channel_default_view: v })).status, 200);
    const cases: [string, unknown][] = [
      ['web_channel_default_view', 5],
      ['color_scheme', 4],
      ['demote_inactive_streams', 0],
      ['user_list_style', 4],
      ['web_stream_unreads_count_display_policy', 4],
      ['web_mark_read_on_scroll_policy', 4],
      ['desktop_icon_count_display', 5],
      ['automatically_follow_topics_policy', 5],
      ['email_address_visibility', 6],
      ['emojiset', 'apple'],
      ['web_home_view', 'feed'],
      ['web_animate_image_previews', 'sometimes'],
      ['resolved_topic_notice_auto_read_policy', 'often'],
    ];
    for (const [name, value] of cases) {
      const res = await patch(u, { [name]: value });
      assert.equal(res.status, 400, name);
      assert.deepEqual(res.body, notInList(name));
    }
    assert.deepEqual((await patch(u, { color_scheme: '"dark"' })).body, err('color_scheme is not an integer'));
    assert.deepEqual((await patch(u, { left_side_userlist: 'yes' })).body, err('left_side_userlist is not valid JSON'));
    assert.deepEqual((await patch(u, { left_side_userlist: 1 })).body, err('left_side_userlist is not a boolean'));
  });

  it('reads web_home_view recent_topics as recent', async () => {
    const u = t.users.othello;
    assert.deepEqual((await patch(u, { web_home_view: 'recent_topics' })).body, SUCCESS);
    assert.equal(row(u).web_home_view, 'recent');
    assert.deepEqual((await patch(u, { web_home_view: 'recent' })).body, { ...SUCCESS, ignored_parameters_unsupported: ['web_home_view'] });
    assert.deepEqual((await patch(u, { web_home_view: 'all_messages', web_animate_image_previews: 'never' })).body, SUCCESS);
  });

  it('validates time zones, languages, sounds and the email batching period', async () => {
    const u = t.users.othello;
    assert.deepEqual((await patch(u, { timezone: 'Europe/Berlin' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { timezone: 'Asia/Calcutta' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { timezone: '' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { timezone: 'Mars/Olympus' })).body, err('Invalid timezone: Value error, Not a recognized time zone'));
    assert.deepEqual((await patch(u, { default_language: 'xx' })).body, err('Invalid default_language'));
    assert.deepEqual((await patch(u, { default_language: 'de' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { default_language: 'en' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { notification_sound: 'gong' })).body, err("Invalid notification sound 'gong'"));
    assert.deepEqual((await patch(u, { notification_sound: 'none' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { notification_sound: 'ding' })).body, SUCCESS);
    for (const s of [0, -5, 604801]) {
      assert.deepEqual((await patch(u, { email_notifications_batching_period_seconds: s })).body, err(`Invalid email batching period: ${s} seconds`));
    }
    assert.deepEqual((await patch(u, { email_notifications_batching_period_seconds: 604800 })).body, SUCCESS);
    assert.equal(row(u).email_notifications_batching_period_seconds, 604800);
  });

  it('sends language_name with default_language and realm_user updates for the time zone', async () => {
    const u = t.users.moderator;
    const q = await queue(u, { event_types: ['user_settings', 'realm_user'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    const other = await queue(t.users.hamlet, { event_types: ['user_settings', 'realm_user'] });
    assert.deepEqual((await patch(u, { default_language: 'fr', timezone: 'America/New_York' })).body, SUCCESS);
    assert.deepEqual(await events(u, q), [
      { type: 'user_settings', op: 'update', property: 'default_language', value: 'fr', language_name: 'Français' },
      { type: 'user_settings', op: 'update', property: 'timezone', value: 'America/New_York' },
      { type: 'realm_user', op: 'update', person: { email: u.email, user_id: u.id, timezone: 'America/New_York' } },
    ]);
    assert.deepEqual(await events(t.users.hamlet, other), [
      { type: 'realm_user', op: 'update', person: { email: u.email, user_id: u.id, timezone: 'America/New_York' } },
    ]);
    // Error messages now come in French where a translation exists; the English text is the fallback.
    await patch(u, { default_language: 'en' });
  });

  it('gives clients without user_settings_object the legacy event', async () => {
    const u = t.users.moderator;
    const q = await queue(u, { event_types: ['update_display_settings', 'update_global_notifications'] });
    await patch(u, { high_contrast_mode: true, enable_sounds: false });
    const got = await events(u, q);
    assert.deepEqual(got, [
      { type: 'update_display_settings', user: u.email, setting_name: 'high_contrast_mode', setting: true },
      { type: 'update_global_notifications', user: u.email, notification_name: 'enable_sounds', setting: false },
    ]);
  });

  it('changes the full name and tells everyone', async () => {
    const u = t.users.moderator;
    const q = await queue(t.users.hamlet, { event_types: ['realm_user'] });
    assert.deepEqual((await patch(u, { full_name: '  Shiva the Great ' })).body, SUCCESS);
    assert.equal(row(u).full_name, 'Shiva the Great');
    assert.deepEqual(await events(t.users.hamlet, q), [
      { type: 'realm_user', op: 'update', person: { user_id: u.id, full_name: 'Shiva the Great' } },
    ]);
    assert.deepEqual((await patch(u, { full_name: 'x'.repeat(101) })).body, err('Name too long!'));
    assert.deepEqual((await patch(u, { full_name: 'S' })).body, err('Name too short!'));
    assert.deepEqual((await patch(u, { full_name: 'Bad*Name' })).body, err('Invalid characters in name!'));
    assert.deepEqual((await patch(u, { full_name: 'Shiva|12' })).body, err('Invalid format!'));
    // Blank names are ignored.
    assert.deepEqual((await patch(u, { full_name: '   ' })).body, SUCCESS);
    assert.equal(row(u).full_name, 'Shiva the Great');
  });

  it('changes the password only with the right old password', async () => {
    const u = t.users.moderator;
    assert.deepEqual((await patch(u, { new_password: 'another-long-password' })).body, err('Wrong password!'));
    assert.deepEqual((await patch(u, { old_password: 'nope', new_password: 'another-long-password' })).body, err('Wrong password!'));
    assert.deepEqual((await patch(u, { old_password: u.password, new_password: 'abc' })).body, err('New password is too weak!'));
    assert.ok(checkPassword(u.password, row(u).password_hash));
    assert.deepEqual((await patch(u, { old_password: u.password, new_password: 'another-long-password' })).body, SUCCESS);
    assert.ok(checkPassword('another-long-password', row(u).password_hash));
    // old_password alone changes nothing and is not reported.
    assert.deepEqual((await patch(u, { old_password: 'x' })).body, SUCCESS);
  });

  it('refuses bots', async () => {
    assert.deepEqual((await patch(t.users.bot, { color_scheme: 2 })).body, err('This endpoint does not accept bot requests.'));
  });

  it('is also served at the deprecated /settings/display and /settings/notifications', async () => {
    const u = t.users.guest;
    assert.deepEqual((await patch(u, { left_side_userlist: true }, '/settings/display')).body, SUCCESS);
    assert.deepEqual((await patch(u, { enable_digest_emails: false }, '/settings/notifications')).body, SUCCESS);
    assert.deepEqual([row(u).left_side_userlist, row(u).enable_digest_emails], [1, 0]);
  });

  it('deletes stored drafts when draft synchronization is turned off, without drafts events', async () => {
    const u = t.users.guest;
    const created = await t.api(u, 'POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'hello' }] });
    assert.equal(created.status, 200, created.text);
    const q = await queue(u, { event_types: ['drafts', 'user_settings'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    assert.deepEqual((await patch(u, { enable_drafts_synchronization: false })).body, SUCCESS);
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM draft WHERE user_id = ?').get(u.id) as { n: number }).n, 0);
    assert.deepEqual(await events(u, q), [{ type: 'user_settings', op: 'update', property: 'enable_drafts_synchronization', value: false }]);
    await patch(u, { enable_drafts_synchronization: true });
  });

  it('records the settings a user edited', async () => {
    const u = t.users.guest;
    assert.deepEqual(JSON.parse(row(u).edited_settings), ['enable_digest_emails', 'enable_drafts_synchronization', 'left_side_userlist']);
  });
});

describe('PATCH /settings with target_users', () => {
  it('is for administrators only', async () => {
    for (const u of [t.users.moderator, t.users.hamlet, t.users.guest]) {
      const res = await patch(u, { target_users: { user_ids: [t.users.othello.id] }, color_scheme: 3 });
      assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
  });

  it('changes listed users and the active members of groups, recursively', async () => {
    const groups = systemGroups(t);
    const q = await queue(t.users.othello, { event_types: ['user_settings'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    const res = await patch(t.users.admin, { target_users: { user_ids: [t.users.othello.id] }, starred_message_counts: false });
    assert.deepEqual(res.body, SUCCESS);
    assert.equal(row(t.users.othello).starred_message_counts, 0);
    assert.deepEqual(await events(t.users.othello, q), [{ type: 'user_settings', op: 'update', property: 'starred_message_counts', value: false }]);
    // The admin's own settings are untouched, and the target's edited list does not grow.
    assert.equal(row(t.users.admin).starred_message_counts, 1);
    assert.ok(!JSON.parse(row(t.users.othello).edited_settings).includes('starred_message_counts'));
    // role:moderators holds moderators, administrators and owners through subgroups.
    assert.deepEqual((await patch(t.users.owner, { target_users: { group_ids: [groups['role:moderators']] }, fluid_layout_width: true })).body, SUCCESS);
    for (const u of [t.users.owner, t.users.admin, t.users.moderator]) assert.equal(row(u).fluid_layout_width, 1);
    for (const u of [t.users.hamlet, t.users.guest]) assert.equal(row(u).fluid_layout_width, 0);
  });

  it('skips users who edited the setting themselves with skip_if_already_edited', async () => {
    const groups = systemGroups(t);
    // The guest set left_side_userlist to true themselves (above); the others did not.
    const everyone = { group_ids: [groups['role:everyone']], skip_if_already_edited: true };
    assert.deepEqual((await patch(t.users.admin, { target_users: everyone, left_side_userlist: true })).body, SUCCESS);
    assert.equal(row(t.users.hamlet).left_side_userlist, 1);
    assert.deepEqual((await patch(t.users.admin, { target_users: everyone, left_side_userlist: false })).body, SUCCESS);
    assert.equal(row(t.users.hamlet).left_side_userlist, 0);
    assert.equal(row(t.users.guest).left_side_userlist, 1);
    // Without skip_if_already_edited the guest's choice is overridden too.
    await patch(t.users.admin, { target_users: { user_ids: [t.users.guest.id, t.users.hamlet.id] }, left_side_userlist: true });
    assert.equal(row(t.users.guest).left_side_userlist, 1);
    assert.equal(row(t.users.hamlet).left_side_userlist, 1);
    // Unchanged for every target: reported as ignored.
    assert.deepEqual((await patch(t.users.admin, { target_users: { user_ids: [t.users.hamlet.id] }, left_side_userlist: true })).body, {
      ...SUCCESS,
      ignored_parameters_unsupported: ['left_side_userlist'],
    });
  });

  it('refuses unknown users and groups, bots, and account fields', async () => {
    const a = t.users.admin;
    assert.deepEqual((await patch(a, { target_users: { user_ids: [99999] }, color_scheme: 2 })).body, err('Invalid user ID: 99999'));
    assert.deepEqual((await patch(a, { target_users: { user_ids: [t.users.bot.id] }, color_scheme: 2 })).body, err(`Invalid user ID: ${t.users.bot.id}`));
    assert.deepEqual((await patch(a, { target_users: { group_ids: [99999] }, color_scheme: 2 })).body, err('Invalid user group ID: 99999'));
    assert.deepEqual(
      (await patch(a, { target_users: { user_ids: [t.users.hamlet.id] }, full_name: 'Hacked' })).body,
      err('Unsupported parameter combination: target_users, full_name', 'BAD_REQUEST', { parameters: 'target_users, full_name' }),
    );
    assert.deepEqual((await patch(a, { target_users: { users: [1] } })).body, err('Argument "users" at target_users is unexpected'));
    assert.deepEqual((await patch(a, { target_users: [1] })).body, err('target_users is not a dict'));
  });
});

describe('PATCH /settings email change', () => {
  const outbox = () => path.join(t.dataDir, 'outbox');
  const mails = () => (fs.existsSync(outbox()) ? fs.readdirSync(outbox()).sort() : []);

  it('writes a confirmation email with a readable link; opening it applies the change', async () => {
    const u = t.users.othello;
    const before = mails().length;
    assert.deepEqual((await patch(u, { email: 'othello.new@example.com' })).body, SUCCESS);
    assert.equal(row(u).email, u.email, 'not changed before confirmation');
    const files = mails();
    assert.equal(files.length, before + 1);
    const eml = fs.readFileSync(path.join(outbox(), files[files.length - 1]), 'utf8');
    assert.match(eml, /^To: othello\.new@example\.com\r$/m);
    assert.match(eml, /^Content-Type: text\/plain; charset=UTF-8\r$/m);
    assert.match(eml, /^Content-Transfer-Encoding: 8bit\r$/m);
    const link = new RegExp(`${t.url.replace(/[.]/g, '\\.')}/accounts/confirm_new_email/([a-z0-9]+)`).exec(eml);
    assert.ok(link, eml);
    const q = await queue(t.users.hamlet, { event_types: ['realm_user'] });
    const page = await t.raw('GET', `/accounts/confirm_new_email/${link[1]}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /othello\.new@example\.com/);
    assert.deepEqual([row(u).email, row(u).delivery_email], ['othello.new@example.com', 'othello.new@example.com']);
    const got = await events(t.users.hamlet, q);
    // As Zulip's do_change_user_delivery_email: the address, the Gravatar made from it, the API email.
    assert.deepEqual([got[0], got[2]], [
      { type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: 'othello.new@example.com' } },
      { type: 'realm_user', op: 'update', person: { user_id: u.id, new_email: 'othello.new@example.com' } },
    ]);
    assert.equal(got[1].person.avatar_source, 'G');
    u.email = 'othello.new@example.com';
    assert.equal((await t.api(u, 'GET', '/users/me')).body.email, 'othello.new@example.com');
    const again = await t.raw('GET', `/accounts/confirm_new_email/${link[1]}`);
    assert.equal(again.status, 404);
    assert.match(again.text, /already been used/);
  });

  it('answers unknown and expired links with a clear page', async () => {
    const unknown = await t.raw('GET', '/accounts/confirm_new_email/nosuchkey');
    assert.equal(unknown.status, 404);
    assert.match(unknown.text, /not valid/);
    const u = t.users.hamlet;
    assert.deepEqual((await patch(u, { email: 'hamlet.new@example.com' })).body, SUCCESS);
    const key = (t.app.db.prepare('SELECT confirmation_key FROM email_change WHERE user_id = ? ORDER BY id DESC').get(u.id) as { confirmation_key: string })
      .confirmation_key;
    offsetMs += 25 * 3600 * 1000;
    try {
      const page = await t.raw('GET', `/accounts/confirm_new_email/${key}`);
      assert.equal(page.status, 404);
      assert.match(page.text, /expired/);
      assert.equal(row(u).email, 'hamlet@example.com');
    } finally {
      offsetMs -= 25 * 3600 * 1000;
    }
  });

  it('email_changes_disabled: a change requested before the setting is not made when its link is opened later', async () => {
    const u = t.users.moderator;
    assert.deepEqual((await patch(u, { email: 'shiva.new@example.com' })).body, SUCCESS);
    const key = (t.app.db.prepare('SELECT confirmation_key FROM email_change WHERE user_id = ? ORDER BY id DESC').get(u.id) as { confirmation_key: string })
      .confirmation_key;
    assert.equal((await t.api(t.users.admin, 'PATCH', '/realm', { email_changes_disabled: true })).status, 200);
    try {
      const page = await t.raw('GET', `/accounts/confirm_new_email/${key}`);
      assert.equal(page.status, 400);
      assert.match(page.text, /Email address changes are disabled in this organization\./);
      assert.equal(row(u).email, u.email);
      // Requests are refused meanwhile, as in Zulip.
      assert.deepEqual((await patch(u, { email: 'shiva.other@example.com' })).body, err('Email address changes are disabled in this organization.'));
    } finally {
      assert.equal((await t.api(t.users.admin, 'PATCH', '/realm', { email_changes_disabled: false })).status, 200);
    }
    // Turned back on before it expires, the same link works.
    assert.equal((await t.raw('GET', `/accounts/confirm_new_email/${key}`)).status, 200);
    assert.equal(row(u).email, 'shiva.new@example.com');
    u.email = 'shiva.new@example.com';
  });

  it('refuses invalid and taken addresses, and more than two requests an hour', async () => {
    const u = t.users.guest;
    assert.deepEqual((await patch(u, { email: 'not-an-email' })).body, err('Invalid address.'));
    assert.deepEqual((await patch(u, { email: t.users.admin.email })).body, err('Email is already in use.'));
    // The current address is no change.
    assert.deepEqual((await patch(u, { email: u.email })).body, SUCCESS);
    assert.deepEqual((await patch(u, { email: 'p1@example.com' })).body, SUCCESS);
    assert.deepEqual((await patch(u, { email: 'p2@example.com' })).body, SUCCESS);
    const res = await patch(u, { email: 'p3@example.com' });
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'RATE_LIMIT_HIT');
  });

  it("applies the organization's rules for addresses: its allowed domains, and Django's syntax", async () => {
    // As Zulip's validate_email_change_request: otherwise a member of an organization restricted to
    // its domains could move their account to any address.
    const u = t.users.moderator;
    const realmId = t.app.realmId();
    t.app.db.prepare('UPDATE realm SET emails_restricted_to_domains = 1 WHERE id = ?').run(realmId);
    t.app.db.prepare("INSERT INTO realm_domain (realm_id, domain, allow_subdomains) VALUES (?, 'example.com', 1)").run(realmId);
    const before = mails().length;
    try {
      assert.deepEqual((await patch(u, { email: 'shiva@elsewhere.org' })).body, err('Outside your domain.'));
      assert.deepEqual((await patch(u, { email: 'shiva+tag@example.com' })).body, err('Email addresses containing + are not allowed.'));
      // Ends in an allowed subdomain, but mail software delivers it to elsewhere.org.
      assert.deepEqual((await patch(u, { email: 'shiva@elsewhere.org(x.example.com' })).body, err('Invalid address.'));
      assert.deepEqual((await patch(u, { email: 'shiva@elsewhere.org,x.example.com' })).body, err('Invalid address.'));
      assert.equal(mails().length, before, 'nothing was sent');
      assert.deepEqual((await patch(u, { email: 'shiva@team.example.com' })).body, SUCCESS);
    } finally {
      t.app.db.prepare('UPDATE realm SET emails_restricted_to_domains = 0 WHERE id = ?').run(realmId);
      t.app.db.prepare('DELETE FROM realm_domain WHERE realm_id = ?').run(realmId);
    }
  });
});

// The order in which PATCH /settings applies settings: the order of the settings table.
import { SETTINGS } from '../../src/lib/settings';
const order = (name: string) => Object.keys(SETTINGS).indexOf(name);

// `parley import` of an export as Zulip's own exporter writes it (zulip-fixture.ts), by the real CLI
// into an empty data directory, then served by the real server and checked through the API: Zulip's
// ids kept, people, bots and system bots, groups, channels and subscriptions with their settings,
// messages with their rendering, edit history and flags, direct messages and group DMs, reactions,
// uploads (a path Parley cannot serve moved, and the message's link with it), avatars, emoji, the
// icon. Then what bad input gets: a clear message naming the file, table, row and field, exit 1, and
// the data directory left as it was.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { makeTempDirs, runCli, startServe, type ServeProcess } from '../helpers/cli';
import { basicAuth, encodeParams } from '../helpers/server';
import { AVATAR, GROUPS, ICON, IDS, KEPT_PATH, MOVED_PATH, PNG, REALM_ID, STREAMS, TOP, exportEntries, makeTarGz, zulipExport, type TarEntrySpec } from './zulip-fixture';

const tmp = makeTempDirs('parley-zulip-import-');
let server: ServeProcess;
let dataDir: string;
let importOut: { code: number | null; stdout: string; stderr: string };
let dataDirListing: string[];
const keys = new Map<string, string>();
const accounts: Record<string, unknown>[] = [];

after(async () => {
  if (server) assert.equal((await server.stop()).code, 0);
  tmp.cleanup();
});

async function call(email: string, method: string, apiPath: string, params: Record<string, unknown> = {}) {
  const q = encodeParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth({ email, apiKey: keys.get(email) as string }) };
  const res = await fetch(server.url + '/api/v1' + apiPath + (method === 'GET' && q ? `?${q}` : ''), { method, headers, body: method === 'GET' ? undefined : q });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

const IAGO = 'iago@zulip.example';
const HAMLET = 'hamlet@zulip.example';
const OTHELLO = 'othello@zulip.example';

describe('parley import of an export made by Zulip', () => {
  before(async () => {
    const dir = tmp.make();
    const file = path.join(dir, `${TOP}.tar.gz`);
    fs.writeFileSync(file, await makeTarGz(exportEntries(zulipExport())));
    dataDir = path.join(dir, 'data');
    importOut = await runCli(['import', '--data-dir', dataDir, '--external-url', 'https://chat.example', file], { timeoutMs: 60_000 });
    assert.equal(importOut.code, 0, importOut.stderr);
    for (const line of importOut.stdout.trim().split('\n').slice(1)) {
      const a = JSON.parse(line);
      accounts.push(a);
      keys.set(a.email, a.api_key);
    }
    dataDirListing = fs.readdirSync(dataDir).sort();
    server = await startServe(['--data-dir', dataDir, '--port', '0', '--no-rate-limits']);
  });

  it('prints what it imported and each account with a new key, people with a link to set a password', () => {
    const [summary] = importOut.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(summary, {
      realm_id: REALM_ID,
      imported: { users: 6, channels: 2, user_groups: 9, subscriptions: 7, custom_profile_fields: 1, linkifiers: 1, custom_emoji: 1, uploads: 2, messages: 8, usermessages: 20, reactions: 2 },
      warnings: ['the system bot emailgateway@zulip.com is imported as Notification Bot'],
    });
    assert.deepEqual(
      accounts.map((a) => [a.user_id, a.email, a.role, a.is_bot, a.is_active, typeof a.set_password_url]),
      [
        [IDS.iago, IAGO, 100, false, true, 'string'],
        [IDS.hamlet, HAMLET, 400, false, true, 'string'],
        [IDS.othello, OTHELLO, 400, false, true, 'string'],
        [IDS.polonius, 'polonius@zulip.example', 600, false, true, 'string'],
        [IDS.webhook, 'webhook-bot@zulip.example', 400, true, true, 'undefined'],
        [IDS.gone, 'gone@zulip.example', 400, false, false, 'undefined'],
      ],
    );
    for (const a of accounts) assert.match(a.api_key as string, /^[A-Za-z0-9]{32}$/);
    assert.match(accounts[0].set_password_url as string, /^https:\/\/chat\.example\/accounts\/password\/set\/[A-Za-z0-9]{32}\/$/);
    // Nothing of the unpacked export is left.
    assert.deepEqual(dataDirListing, ['parley.db', 'uploads']);
  });

  it("keeps Zulip's user ids, roles and settings; bots keep working with their new key", async () => {
    const res = await call(IAGO, 'GET', '/users');
    assert.equal(res.status, 200, res.text);
    const people = (res.body.members as Record<string, unknown>[]).map((u) => [u.user_id, u.full_name, u.role, u.is_active, u.is_bot, u.timezone]);
    assert.deepEqual(people, [
      [IDS.iago, 'Iago', 100, true, false, 'Europe/Paris'],
      [IDS.hamlet, 'King Hamlet', 400, true, false, 'Europe/Paris'],
      [IDS.othello, 'Othello', 400, true, false, 'Europe/Paris'],
      [IDS.polonius, 'Polonius', 600, true, false, 'Europe/Paris'],
      [IDS.webhook, 'Webhook Bot', 400, true, true, ''],
      [IDS.gone, 'Gone Person', 400, false, false, 'Europe/Paris'],
    ]);
    const me = await call('webhook-bot@zulip.example', 'GET', '/users/me');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.user_id, IDS.webhook);
    const settings = await call(HAMLET, 'POST', '/register', { fetch_event_types: ['user_settings', 'realm', 'realm_user_settings_defaults', 'realm_user_groups', 'custom_profile_fields', 'realm_linkifiers', 'user_topic', 'alert_words', 'default_streams'],
      client_capabilities: { notification_settings_null: false, linkifier_url_template: true },
    });
    assert.equal(settings.status, 200, settings.text);
    const r = settings.body;
    assert.equal(r.user_settings.twenty_four_hour_time, true);
    assert.equal(r.realm_user_settings_defaults.enter_sends, true);
    assert.equal(r.realm_user_settings_defaults.twenty_four_hour_time, false);
    assert.equal(r.realm_name, 'Shakespeare Company');
    assert.equal(r.realm_description, 'The **Globe**');
    assert.equal(r.realm_message_edit_history_visibility_policy, 'moves');
    assert.equal(r.realm_message_content_edit_limit_seconds, 600);
    assert.equal(r.realm_giphy_rating, 3);
    assert.equal(r.realm_new_stream_announcements_stream_id, STREAMS.general);
    assert.equal(r.realm_signup_announcements_stream_id, -1);
    assert.equal(r.realm_icon_url, `/user_avatars/${REALM_ID}/realm/icon.png?version=4`);
    assert.equal(r.realm_can_access_all_users_group, GROUPS.everyone);
    assert.deepEqual(
      (r.realm_user_groups as Record<string, unknown>[]).filter((g) => g.name === 'designers').map((g) => [g.id, g.members, g.description, g.can_manage_group]),
      [[GROUPS.designers, [IDS.hamlet, IDS.othello], 'They draw', GROUPS.administrators]],
    );
    assert.deepEqual(
      (r.realm_user_groups as Record<string, unknown>[]).filter((g) => g.name === 'role:members').map((g) => [g.id, g.members, g.direct_subgroup_ids]),
      // The deactivated member is in the group but, as in Zulip, not listed among its members.
      [[GROUPS.members, [IDS.hamlet, IDS.othello, IDS.webhook], [GROUPS.fullmembers]]],
    );
    assert.deepEqual(
      (r.custom_profile_fields as Record<string, unknown>[]).map((f) => [f.id, f.name, f.hint, f.type]),
      [[3, 'Pronouns', 'How to address you', 1]],
    );
    assert.deepEqual(r.realm_linkifiers, [{ id: 4, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}', example_input: null, reverse_template: null, alternative_url_templates: [] }]);
    const profile = await call(IAGO, 'GET', `/users/${IDS.hamlet}`, { include_custom_profile_fields: true });
    assert.deepEqual(profile.body.user.profile_data, { 3: { value: 'he/him' } });
    assert.match(profile.body.user.avatar_url, new RegExp(`^/user_avatars/${REALM_ID}/[A-Za-z0-9_-]{32}\\.png\\?version=3$`));
    const othello = await call(OTHELLO, 'POST', '/register', { fetch_event_types: ['user_topic', 'subscription'] });
    assert.deepEqual(othello.body.user_topics, [{ stream_id: STREAMS.general, topic_name: 'Hello', last_updated: 1700000050, visibility_policy: 1 }]);
    const general = (othello.body.subscriptions as Record<string, unknown>[]).find((s) => s.stream_id === STREAMS.general) as Record<string, unknown>;
    assert.deepEqual([general.name, general.is_muted, general.desktop_notifications, general.description], ['general', true, true, 'About general']);
    const polonius = await call('polonius@zulip.example', 'POST', '/register', { fetch_event_types: ['alert_words'] });
    assert.deepEqual(polonius.body.alert_words, ['dagger']);
  });

  it("keeps Zulip's message ids, rendering, edit history and each person's flags", async () => {
    const res = await call(HAMLET, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: STREAMS.general }] });
    assert.equal(res.status, 200, res.text);
    const shown = (res.body.messages as Record<string, any>[]).map((m) => [m.id, m.sender_id, m.subject, m.content, m.flags, m.timestamp, m.client]);
    assert.deepEqual(shown, [
      [1000, IDS.hamlet, 'Hello', '<p>Hello <span class="user-mention" data-user-id="12">@Othello</span></p>', ['read'], 1700000001, 'website'],
      [1001, IDS.notificationBot, 'channel events', '<p><strong>Iago</strong> created this channel.</p>', ['read'], 1700000001, 'website'],
      [1004, IDS.othello, 'Hello', '<p>some <strong>bold</strong> words</p>', [], 1700000001, 'website'],
      [
        1005,
        IDS.hamlet,
        'files',
        (res.body.messages as Record<string, any>[])[3].content,
        ['read'],
        1700000001,
        'website',
      ],
      // The emoji's file was renamed after its id (Zulip's name is a salted hash): the message shows it there.
      [1007, IDS.othello, 'Hello', `<p><img alt=":octopus:" class="emoji" src="/user_avatars/${REALM_ID}/emoji/images/5.png" title="octopus"></p>`, ['read'], 1700000001, 'website'],
    ]);
    assert.equal((res.body.messages as Record<string, any>[])[1].sender_full_name, 'Notification Bot');
    assert.equal((res.body.messages as Record<string, any>[])[0].last_edit_timestamp, 1700000030);
    // The organization shows moves only (policy 2): the content edit stays hidden, as in Zulip.
    const history = await call(HAMLET, 'GET', '/messages/1000/history');
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(
      (history.body.message_history as Record<string, unknown>[]).map((h) => [h.content, h.timestamp, h.user_id]),
      [['Helo', 1700000001, IDS.hamlet]],
    );
    const othello = await call(OTHELLO, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [] });
    assert.deepEqual(
      (othello.body.messages as Record<string, any>[]).map((m) => [m.id, m.flags]),
      [
        [1000, ['read', 'starred', 'mentioned']],
        [1002, []],
        [1003, []],
        [1004, ['read']],
        [1005, []],
        [1007, ['read']],
      ],
    );
    const polonius = await call('polonius@zulip.example', 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [] });
    assert.deepEqual((polonius.body.messages as Record<string, any>[]).map((m) => [m.id, m.flags]), [[1000, ['read', 'has_alert_word']]]);
    // Reactions, the custom emoji's under its Zulip id.
    const m = (res.body.messages as Record<string, any>[])[0];
    assert.deepEqual(
      (m.reactions as Record<string, unknown>[]).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type, r.user_id]),
      [
        ['smile', '1f604', 'unicode_emoji', IDS.othello],
        ['octopus', '5', 'realm_emoji', IDS.iago],
      ],
    );
    // A private channel whose history is hidden: a message before Hamlet's row... he has one, historical.
    const secret = await call(HAMLET, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: STREAMS.secret }] });
    assert.deepEqual((secret.body.messages as Record<string, any>[]).map((x) => [x.id, x.flags]), [[1006, ['read', 'historical']]]);
  });

  it('keeps direct messages and group DMs as conversations of their people', async () => {
    const dm = await call(OTHELLO, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'dm', operand: [IDS.hamlet] }] });
    assert.deepEqual(
      (dm.body.messages as Record<string, any>[]).map((m) => [m.id, m.content, m.client, (m.display_recipient as { id: number }[]).map((r) => r.id)]),
      [[1002, '<p>a secret between us</p>', 'ZulipMobile', [IDS.hamlet, IDS.othello]]],
    );
    const group = await call(HAMLET, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'dm', operand: [IDS.iago, IDS.othello] }] });
    assert.deepEqual(
      (group.body.messages as Record<string, any>[]).map((m) => [m.id, m.flags, (m.display_recipient as { id: number }[]).map((r) => r.id)]),
      [[1003, [], [IDS.iago, IDS.hamlet, IDS.othello]]],
    );
    // Polonius was in neither.
    const none = await call('polonius@zulip.example', 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'is', operand: 'dm' }] });
    assert.deepEqual(none.body.messages, []);
  });

  it('serves the uploads: a path Parley can serve kept, another moved with its links', async () => {
    const res = await call(HAMLET, 'GET', '/messages/1005');
    const content = res.body.message.content as string;
    assert.ok(content.includes(`/user_uploads/${KEPT_PATH}`), content);
    assert.ok(!content.includes(MOVED_PATH), content);
    const moved = /\/user_uploads\/(2\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/[^"]+)">cv/.exec(content);
    assert.ok(moved, content);
    // The thumbnail Zulip showed is the file itself here, at its new path.
    assert.ok(content.endsWith(`<div class="message_inline_image"><a href="/user_uploads/${moved[1]}" title="cv"><img data-original-dimensions="1x1" src="/user_uploads/${moved[1]}"></a></div>`), content);
    const raw = await call(HAMLET, 'GET', '/messages/1005', { apply_markdown: false });
    assert.equal(raw.body.message.content, `[notes.txt](/user_uploads/${KEPT_PATH}) and [cv](/user_uploads/${moved[1]})`);
    for (const [p, bytes] of [
      [KEPT_PATH, 'the notes'],
      [moved[1], '%PDF-1'],
    ]) {
      const f = await fetch(`${server.url}/user_uploads/${p}`, { headers: { authorization: basicAuth({ email: HAMLET, apiKey: keys.get(HAMLET) as string }) } });
      assert.equal(f.status, 200, p);
      assert.equal(await f.text(), bytes);
    }
    const list = await call(HAMLET, 'GET', '/attachments');
    assert.deepEqual(
      (list.body.attachments as Record<string, any>[]).map((a) => [a.id, a.name, a.size, (a.messages as { id: number }[]).map((m) => m.id)]),
      [
        [41, 'résumé.pdf', 6, [1005]],
        [40, 'notes.txt', 9, [1005]],
      ],
    );
  });

  it('goes on: a new message takes the next id and reaches every subscriber, unread', async () => {
    const sent = await call(HAMLET, 'POST', '/messages', { type: 'channel', to: STREAMS.general, topic: 'after the move', content: 'we are on Parley now' });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.id, 1008);
    // The sender's too: sent from a script (no app's User-Agent), as Zulip's default_read_by_sender has it.
    for (const email of [HAMLET, OTHELLO, IAGO, 'polonius@zulip.example']) {
      const res = await call(email, 'GET', '/messages', { anchor: 1008, num_before: 0, num_after: 0, narrow: [] });
      assert.deepEqual((res.body.messages as Record<string, any>[]).map((m) => [m.id, m.flags]), [[1008, []]], email);
    }
    // The imported history stays as it was for them (no rows appeared for messages before their subscription).
    const polonius = await call('polonius@zulip.example', 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [] });
    assert.deepEqual((polonius.body.messages as Record<string, any>[]).map((m) => m.id), [1000, 1008]);
  });

  it('keeps the avatar (the original), the custom emoji and the icon', async () => {
    const avatars = fs.readdirSync(path.join(dataDir, 'uploads', 'avatars', String(REALM_ID)));
    const file = avatars.find((f) => f !== 'realm') as string;
    assert.deepEqual(fs.readFileSync(path.join(dataDir, 'uploads', 'avatars', String(REALM_ID), file)), AVATAR);
    assert.deepEqual(fs.readFileSync(path.join(dataDir, 'uploads', 'avatars', String(REALM_ID), 'realm', 'icon')), ICON);
    assert.deepEqual(fs.readFileSync(path.join(dataDir, 'uploads', 'emoji', String(REALM_ID), '5.png')), PNG);
    const emoji = await call(IAGO, 'GET', '/realm/emoji');
    assert.deepEqual(emoji.body.emoji['5'], { id: '5', name: 'octopus', source_url: `/user_avatars/${REALM_ID}/emoji/images/5.png`, still_url: null, deactivated: false, author_id: IDS.iago });
  });
});

describe('parley import of an export of an earlier Zulip', () => {
  it('takes its groups, and gives the group settings and channels it did not have their Zulip defaults', async () => {
    const r = await importTar(
      withChange((f) => {
        const realm = f['realm.json'];
        delete realm.zerver_realm[0].can_summarize_topics_group;
        delete realm.zerver_realm[0].can_set_topics_policy_group;
        delete realm.zerver_realm[0].moderation_request_channel;
        for (const st of realm.zerver_stream) delete st.can_subscribe_group;
        for (const g of realm.zerver_namedusergroup) delete g.can_leave_group;
        delete realm.import_source;
        // Before 9.0, a group's name and settings were on zerver_usergroup (no NamedUserGroup).
        realm.zerver_usergroup = realm.zerver_namedusergroup.map((g: Record<string, unknown>) => {
          const { usergroup_ptr: _ptr, realm_for_sharding: _realm, ...rest } = g;
          return { ...rest, realm: REALM_ID };
        });
        delete realm.zerver_namedusergroup;
      }),
    );
    assert.equal(r.code, 0, r.stderr);
    const db = new Database(path.join(path.dirname(r.file), 'data', 'parley.db'), { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT can_summarize_topics_group, can_set_topics_policy_group FROM realm').get(), {
        can_summarize_topics_group: GROUPS.everyone,
        can_set_topics_policy_group: GROUPS.members,
      });
      assert.deepEqual(db.prepare('SELECT DISTINCT can_subscribe_group FROM stream').pluck().all(), [GROUPS.nobody]);
      assert.deepEqual(db.prepare('SELECT DISTINCT can_leave_group FROM user_group WHERE named = 1').pluck().all(), [GROUPS.everyone]);
      assert.deepEqual(db.prepare("SELECT id, description, is_system_group FROM user_group WHERE name = 'designers'").get(), { id: GROUPS.designers, description: 'They draw', is_system_group: 0 });
    } finally {
      db.close();
    }
  });
});

/** Imports `entries` as a .tar.gz into a fresh data dir; the result and what the data dir holds after. */
async function importTar(entries: TarEntrySpec[] | Buffer) {
  const dir = tmp.make();
  const file = path.join(dir, 'export.tar.gz');
  fs.writeFileSync(file, Buffer.isBuffer(entries) ? entries : await makeTarGz(entries));
  const data = path.join(dir, 'data');
  const r = await runCli(['import', '--data-dir', data, file], { timeoutMs: 60_000 });
  return { ...r, file, left: fs.existsSync(data) ? fs.readdirSync(data) : [] };
}

async function refuses(entries: TarEntrySpec[] | Buffer, message: (file: string) => string) {
  const r = await importTar(entries);
  assert.deepEqual(
    { code: r.code, stdout: r.stdout, stderr: r.stderr, left: r.left },
    { code: 1, stdout: '', stderr: `parley: import failed, nothing was written: ${message(r.file)}\n`, left: [] },
  );
}

/** The fixture with `change` applied to its files. */
function withChange(change: (files: Record<string, any>) => void): TarEntrySpec[] {
  const files = zulipExport() as Record<string, any>;
  change(files);
  return exportEntries(files);
}

describe('parley import of a Zulip export: HTML not of the kind Zulip writes', () => {
  it('renders such messages and edit histories again from their Markdown, and says so', async () => {
    const r = await importTar(
      withChange((f) => {
        const m = f['messages-000001.json'].zerver_message;
        m[1].rendered_content = '<p><strong>Iago</strong> created this channel.<img src="x" onerror="alert(document.cookie)"></p>';
        m[2].rendered_content = '<p><a href="jav&#x09;ascript:alert(1)">a secret between us</a></p>';
        m[0].edit_history = JSON.stringify([{ user_id: IDS.hamlet, timestamp: 1_700_000_030, prev_content: 'Helo', prev_rendered_content: '<p>Helo<script>alert(1)</script></p>', prev_rendered_content_version: 1 }]);
        const realm = f['realm.json'];
        realm.zerver_stream[0].rendered_description = `<p onmouseover="alert(1)">${realm.zerver_stream[0].description}</p>`;
        realm.zerver_customprofilefieldvalue[0].rendered_value = '<p><a href="javascript:alert(1)">he/him</a></p>';
      }),
    );
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout.trim().split('\n')[0]);
    assert.ok(
      summary.warnings.includes(
        "3 message(s) carried HTML not of the kind Zulip's Markdown writes (a script, an event handler, an unknown tag or link); they were rendered again from their Markdown",
      ),
      JSON.stringify(summary.warnings),
    );
    const db = new Database(path.join(path.dirname(r.file), 'data', 'parley.db'), { readonly: true });
    try {
      const rendered = db.prepare('SELECT id, rendered_content FROM message WHERE id IN (1000, 1001, 1002, 1003) ORDER BY id').all();
      assert.deepEqual(rendered, [
        // Kept: Zulip's own rendering of a mention.
        { id: 1000, rendered_content: '<p>Hello <span class="user-mention" data-user-id="12">@Othello</span></p>' },
        { id: 1001, rendered_content: '<p><strong>Iago</strong> created this channel.</p>' },
        { id: 1002, rendered_content: '<p>a secret between us</p>' },
        { id: 1003, rendered_content: '<p>three of us</p>' },
      ]);
      const history = JSON.parse(db.prepare('SELECT edit_history FROM message WHERE id = 1000').pluck().get() as string);
      assert.equal(history[0].prev_rendered_content, '<p>Helo</p>');
      // Descriptions and profile values too: rendered here from their text.
      const first = db.prepare('SELECT description, rendered_description FROM stream WHERE id = ?').get(STREAMS.general) as { description: string; rendered_description: string };
      assert.deepEqual(first, { description: first.description, rendered_description: `<p>${first.description}</p>` });
      assert.equal(db.prepare('SELECT rendered_value FROM custom_profile_field_value WHERE field_id = 3').pluck().get(), '<p>he/him</p>');
    } finally {
      db.close();
    }
  });
});

describe('parley import of a Zulip export: bad input', () => {
  it('names the file, table, row and field of an id that points nowhere', async () => {
    await refuses(
      withChange((f) => (f['messages-000002.json'].zerver_message[1].sender = 999)),
      () => "the export is not what Zulip's exporter writes:\n  messages-000002.json: zerver_message[1].sender: 999 is not an id of zerver_userprofile",
    );
  });

  it('names a field of the wrong type and a table of the wrong shape', async () => {
    await refuses(
      withChange((f) => {
        f['realm.json'].zerver_stream[0].invite_only = 'no';
        f['realm.json'].zerver_realmfilter = { pattern: 'x' };
      }),
      () => `the export is not what Zulip's exporter writes:\n  realm.json: zerver_realmfilter is not a list\n  realm.json: zerver_stream[0].invite_only: "no" is not of type bool`,
    );
  });

  it('names a missing upload and a missing file', async () => {
    await refuses(
      withChange((f) => delete f[`uploads/${KEPT_PATH}`]),
      () => `the export is not what Zulip's exporter writes:\n  uploads/records.json[0].path: no file uploads/${KEPT_PATH}`,
    );
    await refuses(
      withChange((f) => delete f['attachment.json']),
      () => 'attachment.json is missing from the export',
    );
    await refuses(
      withChange((f) => delete f['realm.json']),
      () => 'the archive holds no realm.json (at its top or in its one top directory): it is not a Zulip export',
    );
  });

  it('refuses JSON that is not JSON, and a message file whose per-user rows are of another file', async () => {
    await refuses(
      withChange((f) => (f['messages-000001.json'] = '{"zerver_message": [')),
      () => 'messages-000001.json is not valid JSON (Unexpected end of JSON input)',
    );
    await refuses(
      withChange((f) => f['messages-000001.json'].zerver_usermessage.push({ id: 99, user_profile: IDS.iago, message: 1005, flags_mask: 0 })),
      () => "the export is not what Zulip's exporter writes:\n  messages-000001.json: zerver_usermessage[11].message 1005 is not a message of this file",
    );
  });

  it('refuses JSON nested too deeply, and shows a long wrong value short', async () => {
    // JSON.parse takes any depth; a value too deep to print is named without it.
    await refuses(
      withChange((f) => {
        f['realm.json'].zerver_stream[0].description = 'DEEP';
        f['realm.json'] = JSON.stringify(f['realm.json']).replace('"DEEP"', `${'['.repeat(200_000)}${']'.repeat(200_000)}`);
      }),
      () => "the export is not what Zulip's exporter writes:\n  realm.json: zerver_stream[0].description: (a value nested too deeply) is not of type string",
    );
    await refuses(
      withChange((f) => (f['realm.json'].zerver_stream[1].invite_only = 'x'.repeat(5000))),
      () => `the export is not what Zulip's exporter writes:\n  realm.json: zerver_stream[1].invite_only: "${'x'.repeat(99)}… is not of type bool`,
    );
  });

  it('refuses an edit history that is not a list of edits', async () => {
    await refuses(
      withChange((f) => (f['messages-000001.json'].zerver_message[0].edit_history = '[null]')),
      () => 'messages-000001.json: zerver_message[0] (message 1000).edit_history[0]: not an edit (an object with a numeric timestamp)',
    );
    await refuses(
      withChange((f) => (f['messages-000001.json'].zerver_message[0].edit_history = '{"a": 1}')),
      () => 'messages-000001.json: zerver_message[0] (message 1000).edit_history: not a JSON list',
    );
  });

  it('names a per-user row given twice (found while writing: nothing is left of what was written)', async () => {
    await refuses(
      withChange((f) => f['messages-000002.json'].zerver_usermessage.push({ id: 99, user_profile: IDS.othello, message: 1004, flags_mask: 0 })),
      () => 'messages-000002.json: zerver_usermessage[9]: UNIQUE constraint failed: usermessage.user_id, usermessage.message_id',
    );
  });

  it('refuses a group DM without members and a group setting naming no group, leaving nothing behind', async () => {
    await refuses(
      withChange((f) => (f['realm.json'].zerver_subscription = f['realm.json'].zerver_subscription.filter((s: { recipient: number }) => s.recipient !== 60))),
      () => 'messages-000001.json: zerver_message[3] (message 1003).recipient: the group DM of recipient 60 has no members (no zerver_subscription to it)',
    );
    await refuses(
      withChange((f) => (f['realm.json'].zerver_stream[0].can_send_message_group = 77)),
      () => "the export is not what Zulip's exporter writes:\n  realm.json: zerver_stream[0].can_send_message_group: 77 is not an id of zerver_usergroup",
    );
  });

  it('refuses hostile archives: a path leaving the archive, absolute paths, links, devices, a name twice', async () => {
    const base = exportEntries(zulipExport());
    await refuses([...base, { name: `${TOP}/../evil.txt`, data: 'x' }], (file) => `${file}: unsafe entry name "${TOP}/../evil.txt" (a ".." segment that leaves the archive)`);
    await refuses([{ name: '/etc/evil', data: 'x' }, ...base], (file) => `${file}: unsafe entry name "/etc/evil" (an absolute path)`);
    await refuses([{ name: `${TOP}/link`, type: 'symlink', linkname: '/etc/passwd' }, ...base], (file) => `${file}: entry "${TOP}/link" is a symlink, not a file (links and devices are refused)`);
    await refuses([...base, { name: `${TOP}/hard`, type: 'link', linkname: `${TOP}/realm.json` }], (file) => `${file}: entry "${TOP}/hard" is a link, not a file (links and devices are refused)`);
    await refuses([{ name: `${TOP}/dev`, type: 'character-device' }, ...base], (file) => `${file}: entry "${TOP}/dev" is a character-device, not a file (links and devices are refused)`);
    await refuses([...base, { name: `${TOP}/realm.json`, data: '{}' }], (file) => `${file}: entry "${TOP}/realm.json" appears twice`);
    await refuses([{ name: `${TOP}/a\u001b[2Jb`, data: 'x' }], (file) => `${file}: unsafe entry name "${TOP}/a\\u001b[2Jb" (a control character)`);
  });

  it('refuses what is not a .tar.gz, and a truncated one', async () => {
    await refuses(Buffer.from('not an archive'), (file) => `${file} is not a readable .tar.gz archive (incorrect header check)`);
    const whole = await makeTarGz(exportEntries(zulipExport()));
    await refuses(whole.subarray(0, Math.floor(whole.length / 2)), (file) => `${file} is not a readable .tar.gz archive (unexpected end of file)`);
  });
});

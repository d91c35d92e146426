// `parley import --from slack` end to end: a small Slack export (slack-fixture.ts) imported by the
// real CLI into an empty data dir, then served by the real server and checked through the API:
// people, channels, subscriptions, conversations, every message's topic, Markdown and rendering,
// reactions, files, and what each account can log in with.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDirs, runCli, startServe, type ServeProcess } from '../helpers/cli';
import { basicAuth, encodeParams } from '../helpers/server';
import { makeExportZip } from '../helpers/zip';
import { BIO, LONG_TEXT, slackExport } from './slack-fixture';

const tmp = makeTempDirs('parley-slack-');
let server: ServeProcess;
let dataDir: string;
let dataDirListing: string[];
let importOut: { code: number | null; stdout: string; stderr: string };
const keys = new Map<string, string>();
const passwordLinks = new Map<string, string>();

interface Who {
  email: string;
}

async function call(who: Who | null, method: string, apiPath: string, params: Record<string, unknown> = {}) {
  const q = encodeParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (who) headers.authorization = basicAuth({ email: who.email, apiKey: keys.get(who.email) as string });
  const res = await fetch(server.url + '/api/v1' + apiPath + (method === 'GET' && q ? `?${q}` : ''), { method, headers, body: method === 'GET' ? undefined : q });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

const ada = { email: 'ada@example.com' };
const bob = { email: 'bob@example.com' };
const cleo = { email: 'cleo@example.com' };
const gina = { email: 'gina@example.com' };

before(async () => {
  const dir = tmp.make();
  const zip = path.join(dir, 'slack-export.zip');
  fs.writeFileSync(zip, makeExportZip(slackExport()));
  dataDir = path.join(dir, 'data');
  importOut = await runCli(['import', '--from', 'slack', '--data-dir', dataDir, '--realm-name', 'Acme', '--external-url', 'https://chat.acme.example', zip], { timeoutMs: 60_000 });
  assert.equal(importOut.code, 0, importOut.stderr);
  for (const line of importOut.stdout.trim().split('\n').slice(1)) {
    const a = JSON.parse(line);
    keys.set(a.email, a.api_key);
    if (a.set_password_url) passwordLinks.set(a.email, a.set_password_url);
  }
  dataDirListing = fs.readdirSync(dataDir).sort();
  server = await startServe(['--data-dir', dataDir, '--port', '0', '--no-rate-limits']);
});

after(async () => {
  if (server) assert.equal((await server.stop()).code, 0);
  tmp.cleanup();
});

const THREAD_1 = '2024-01-02 Deploy plan for tomorrow morning, please review …';
const THREAD_2 = '2024-01-02 Deploy plan for tomorrow morning, please rev… (2)';
const THREAD_3 = '2024-01-02 Ünïcode 🎉 thread ☃ second line';
const UNTHREADED = 'imported from Slack';

describe('parley import --from slack', () => {
  it('prints what it imported and every account with its API key, and leaves only the data', () => {
    const [summary, ...accounts] = importOut.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(summary, {
      realm_id: 1,
      imported: { users: 8, channels: 4, direct_conversations: 2, messages: 20, reactions: 5, uploads: 1 },
      warnings: ['1 reactions with emoji Zulip does not have (custom Slack emoji) were left out'],
    });
    for (const a of accounts) assert.match(a.api_key, /^[A-Za-z0-9]{32}$/);
    // People (active, not bots) get a one-time link to set a password, on the external URL.
    for (const a of accounts) {
      if (a.is_active && !a.is_bot) assert.match(a.set_password_url, /^https:\/\/chat\.acme\.example\/accounts\/password\/set\/[A-Za-z0-9]{32}\/$/);
      else assert.equal(a.set_password_url, undefined);
    }
    assert.deepEqual(
      accounts.map(({ api_key: _k, set_password_url: _u, ...rest }) => rest),
      [
        { user_id: 1, email: 'ada@example.com', full_name: 'Ada Lovelace', role: 100, is_bot: false, is_active: true },
        { user_id: 2, email: 'bob@example.com', full_name: 'Bob Builder', role: 200, is_bot: false, is_active: true },
        { user_id: 3, email: 'cleo@example.com', full_name: 'Cléo Ünïcode', role: 400, is_bot: false, is_active: true },
        { user_id: 4, email: 'dan@example.com', full_name: 'dan', role: 400, is_bot: false, is_active: false },
        { user_id: 5, email: 'gina@example.com', full_name: 'Gina Guest', role: 600, is_bot: false, is_active: true },
        { user_id: 6, email: 'deploy-bot@example.com', full_name: 'Deploy Bot', role: 400, is_bot: true, is_active: true },
        { user_id: 7, email: 'imported-slackbot-bot@example.com', full_name: 'Slackbot', role: 400, is_bot: true, is_active: true },
        { user_id: 8, email: 'github-bot@example.com', full_name: 'GitHub', role: 400, is_bot: true, is_active: true },
      ],
    );
    assert.equal(
      importOut.stderr,
      `parley: warning: 1 reactions with emoji Zulip does not have (custom Slack emoji) were left out\nparley: imported into ${dataDir}; start the server with parley serve\n`,
    );
    // No staging directory, WAL or anything else left behind.
    assert.deepEqual(dataDirListing, ['parley.db', 'uploads']);
  });

  it('maps people: primary owner, admins, guests, deactivated, bots, integrations, merged addresses, time zones', async () => {
    const r = await call(ada, 'GET', '/users');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result, 'success');
    const joined = r.body.members[0].date_joined;
    const base = { avatar_version: 1, date_joined: joined, avatar_url: null, is_imported_stub: false };
    const person = (id: number, email: string, fullName: string, role: number, timezone: string, isActive = true) => ({
      ...base,
      email,
      user_id: id,
      is_admin: role <= 200,
      is_owner: role === 100,
      is_guest: role === 600,
      role,
      is_bot: false,
      full_name: fullName,
      timezone,
      is_active: isActive,
      delivery_email: email,
    });
    const bot = (id: number, email: string, fullName: string) => ({ ...person(id, email, fullName, 400, 'America/New_York'), is_bot: true, bot_type: 1, bot_owner_id: null });
    assert.deepEqual(r.body.members, [
      person(1, 'ada@example.com', 'Ada Lovelace', 100, 'Europe/London'),
      person(2, 'bob@example.com', 'Bob Builder', 200, 'America/Chicago'),
      // A time zone Zulip cannot read ("Etc") becomes its default, America/New_York.
      person(3, 'cleo@example.com', 'Cléo Ünïcode', 400, 'America/New_York'),
      // Deleted in Slack: deactivated, known by the handle (Zulip's get_user_full_name).
      person(4, 'dan@example.com', 'dan', 400, 'America/New_York', false),
      person(5, 'gina@example.com', 'Gina Guest', 600, 'America/New_York'),
      bot(6, 'deploy-bot@example.com', 'Deploy Bot'),
      bot(7, 'imported-slackbot-bot@example.com', 'Slackbot'),
      bot(8, 'github-bot@example.com', 'GitHub'),
    ]);
  });

  it("maps Slack's profile fields (phone, skype, the workspace's own) to custom profile fields", async () => {
    const fields = await call(ada, 'GET', '/realm/profile_fields');
    assert.equal(fields.status, 200, fields.text);
    assert.deepEqual(
      fields.body.custom_fields.map((f: Record<string, unknown>) => [f.id, f.name, f.type, f.hint, f.order]),
      [
        [1, 'Slack custom field 1', 1, '', 1],
        [2, 'phone', 1, '', 2],
        // A value longer than 50 characters: long text.
        [3, 'Slack custom field 3', 2, '', 3],
        [4, 'skype', 1, '', 4],
      ],
    );
    const adaProfile = await call(ada, 'GET', '/users/1', { include_custom_profile_fields: true });
    assert.deepEqual(adaProfile.body.user.profile_data, {
      1: { value: 'Mathematician', rendered_value: '<p>Mathematician</p>' },
      2: { value: '+44 20 7946 0000', rendered_value: '<p>+44 20 7946 0000</p>' },
    });
    const bobProfile = await call(ada, 'GET', '/users/2', { include_custom_profile_fields: true });
    assert.deepEqual(bobProfile.body.user.profile_data, {
      3: { value: BIO, rendered_value: `<p>${BIO}</p>` },
      4: { value: 'bob.builder', rendered_value: '<p>bob.builder</p>' },
    });
  });

  it('logs people in with their printed API keys; a deactivated account cannot', async () => {
    assert.equal((await call(cleo, 'GET', '/users/me')).body.full_name, 'Cléo Ünïcode');
    const dan = await call({ email: 'dan@example.com' }, 'GET', '/users/me');
    assert.equal(dan.status, 401, dan.text);
    assert.deepEqual(dan.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
  });

  it('lets people set a password through their printed link, and log in with it', async () => {
    const link = new URL(passwordLinks.get(cleo.email) as string).pathname;
    const page = await fetch(server.url + link);
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes('<p>Email: <strong>cleo@example.com</strong></p>'));
    const set = await fetch(server.url + link, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=cl%C3%A9o-secret' });
    assert.equal(set.status, 303);
    const login = await fetch(server.url + '/api/v1/fetch_api_key', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=cleo%40example.com&password=cl%C3%A9o-secret' });
    assert.equal(login.status, 200);
    assert.equal(((await login.json()) as { api_key: string }).api_key, keys.get(cleo.email));
  });

  it('maps channels: public, private with hidden history, archived, descriptions, creation dates, subscribers', async () => {
    const r = await call(ada, 'GET', '/streams', { exclude_archived: false });
    assert.equal(r.status, 200, r.text);
    const pick = (s: Record<string, unknown>) => ({
      name: s.name,
      description: s.description,
      rendered_description: s.rendered_description,
      invite_only: s.invite_only,
      history_public_to_subscribers: s.history_public_to_subscribers,
      is_archived: s.is_archived,
      date_created: s.date_created,
      creator_id: s.creator_id,
      subscriber_count: s.subscriber_count,
    });
    const day = 1704196800;
    assert.deepEqual(r.body.streams.map(pick), [
      // The purpose on one line (Zulip's build_stream).
      { name: 'general', description: 'Company-wide announcements', rendered_description: '<p>Company-wide announcements</p>', invite_only: false, history_public_to_subscribers: true, is_archived: false, date_created: day - 86400, creator_id: null, subscriber_count: 5 },
      { name: 'old-project', description: 'Done', rendered_description: '<p>Done</p>', invite_only: false, history_public_to_subscribers: true, is_archived: true, date_created: day - 2 * 86400, creator_id: null, subscriber_count: 1 },
      // No purpose: the channel's topic. Ada's second account is Ada: two members, one subscriber.
      { name: 'random', description: 'Anything goes', rendered_description: '<p>Anything goes</p>', invite_only: false, history_public_to_subscribers: true, is_archived: false, date_created: day - 86400, creator_id: null, subscriber_count: 2 },
      { name: 'secret-plans', description: 'Private stuff', rendered_description: '<p>Private stuff</p>', invite_only: true, history_public_to_subscribers: false, is_archived: false, date_created: day - 86400, creator_id: null, subscriber_count: 2 },
    ]);
    const subs = await call(cleo, 'GET', '/users/me/subscriptions');
    assert.deepEqual(subs.body.subscriptions.map((s: { name: string }) => s.name), ['general']);
    // A member of no private channel sees only the public ones.
    const cleoStreams = await call(cleo, 'GET', '/streams');
    assert.deepEqual(cleoStreams.body.streams.map((s: { name: string }) => s.name), ['general', 'random']);
  });

  it('makes #general and #random the default channels and #general the announcements channel', async () => {
    const r = await call(ada, 'POST', '/register', { fetch_event_types: ['default_streams', 'realm'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.realm_default_streams, [1, 2]);
    assert.equal(r.body.realm_new_stream_announcements_stream_id, 1);
    assert.equal(r.body.realm_zulip_update_announcements_stream_id, 1);
    assert.equal(r.body.realm_name, 'Acme');
    assert.equal(r.body.realm_description, 'Organization imported from Slack!');
  });

  it('imports #general in time order: threads as topics, formatting, mentions, links, emoji, bots, files', async () => {
    const r = await call(ada, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: 'general' }], apply_markdown: false });
    assert.equal(r.status, 200, r.text);
    const upload = /\/user_uploads\/1\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/report\.txt/.exec(r.text)?.[0];
    assert.ok(upload, r.text);
    const rows = r.body.messages.map((m: Record<string, unknown>) => [m.id, m.sender_full_name, m.subject, m.content, m.timestamp, m.flags]);
    const t = 1704196800;
    assert.deepEqual(rows, [
      [
        1,
        'Ada Lovelace',
        UNTHREADED,
        'Hello **team** and *all* of ~~you~~ @**all**, see [the site](https://example.com/a_b), https://example.org and #**random** :+1: :big_smile: :wave: <tag> & mailto:x@example.com',
        t,
        ['read'],
      ],
      // Thread names: date + start of the first message, cut at 60 characters; a second thread with
      // the same start gets " (2)" and a shorter cut; replies (even a day later) join their thread.
      [8, 'Bob Builder', THREAD_1, LONG_TEXT, t + 3200, ['read']],
      [9, 'Cléo Ünïcode', THREAD_1, '@**Bob Builder** looks good `*not bold*` <@U999>', t + 3300, ['read']],
      [10, 'Ada Lovelace', THREAD_2, LONG_TEXT, t + 6800, ['read']],
      [11, 'Cléo Ünïcode', THREAD_3, 'Ünïcode 🎉 thread ☃\nsecond line', t + 10400, ['read']],
      [12, 'Ada Lovelace', THREAD_3, 'Also sent to the channel', t + 10500, ['read']],
      [13, 'GitHub', UNTHREADED, '## [PR #1](https://github.com/x/y/pull/1)\n\nFix **bug**\n\n**Status**: open\n**Reviewers**\n\nGitHub\n\n<time:2024-01-02T15:40:00+00:00>', t + 13200, ['read']],
      [14, 'Ada Lovelace', UNTHREADED, `Here is the report\n[Report](${upload})\n[Chart](https://files.slack.com/files-pri/T1-F002/chart.png)`, t + 14200, ['read']],
      [15, 'Bob Builder', UNTHREADED, '/me waves', t + 15000, ['read']],
      [16, 'dan', UNTHREADED, 'An old message from someone who left', t + 16000, ['read']],
      [17, 'Ada Lovelace', UNTHREADED, 'Code: \n```\nconst x = *y*; a < b\n```\n and\n> a quote with *style*', t + 17000, ['read']],
      [18, 'Deploy Bot', UNTHREADED, 'Deployed v1.2 to [prod](https://prod.example.com)', t + 18000, ['read']],
      [19, 'Ada Lovelace', THREAD_1, 'Done, deployed.', t + 86400 + 100, ['read']],
      [20, 'Slackbot', UNTHREADED, 'Reminder: standup.', t + 86400 + 200, ['read']],
    ]);
  });

  it("renders with Parley's renderer (rendered_content) and keeps Zulip's client for imports", async () => {
    const r = await call(ada, 'GET', '/messages', { anchor: 1, num_before: 0, num_after: 0 });
    assert.equal(r.status, 200, r.text);
    const [m] = r.body.messages;
    assert.deepEqual(m, {
      id: 1,
      sender_id: 1,
      content:
        '<p>Hello <strong>team</strong> and <em>all</em> of <del>you</del> <span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>, see <a href="https://example.com/a_b">the site</a>, <a href="https://example.org">https://example.org</a> and <a class="stream" data-stream-id="2" href="/#narrow/channel/2-random">#random</a> <span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span> <span aria-label="big smile" class="emoji emoji-1f604" role="img" title="big smile">:big_smile:</span> <span aria-label="wave" class="emoji emoji-1f44b" role="img" title="wave">:wave:</span> &lt;tag&gt; &amp; mailto:<a href="mailto:x@example.com">x@example.com</a></p>',
      recipient_id: 1,
      timestamp: 1704196800,
      client: 'ZulipDataImport',
      subject: UNTHREADED,
      topic_links: [],
      is_me_message: false,
      // Skin tones merged into the base emoji; a user deleted from the workspace (U404) and a custom
      // emoji (customparrot) left out; Slack's thumbsup and +1 are Zulip's +1, counted once per person.
      reactions: [
        { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 2 },
        { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 3 },
        { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 5 },
        { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: 3 },
      ],
      submessages: [],
      sender_full_name: 'Ada Lovelace',
      sender_email: 'ada@example.com',
      sender_realm_str: '',
      avatar_url: null,
      content_type: 'text/html',
      type: 'stream',
      stream_id: 1,
      display_recipient: 'general',
      flags: ['read'],
    });
    const code = await call(ada, 'GET', '/messages', { anchor: 17, num_before: 0, num_after: 0 });
    assert.equal(
      code.body.messages[0].content,
      '<p>Code: </p>\n<div class="codehilite"><pre><span></span><code>const x = *y*; a &lt; b\n</code></pre></div>\n<p>and</p>\n<blockquote>\n<p>a quote with <em>style</em></p>\n</blockquote>',
    );
    const me = await call(ada, 'GET', '/messages', { anchor: 15, num_before: 0, num_after: 0 });
    assert.equal(me.body.messages[0].is_me_message, true, me.text);
  });

  it('attaches files the export holds as uploads people can fetch, and links the others to Slack', async () => {
    const r = await call(ada, 'GET', '/messages', { anchor: 14, num_before: 0, num_after: 0 });
    const m = r.body.messages[0];
    const upload = /href="(\/user_uploads\/[^"]+)"/.exec(m.content)?.[1] as string;
    assert.ok(upload, m.content);
    const file = await fetch(server.url + upload, { headers: { authorization: basicAuth({ email: ada.email, apiKey: keys.get(ada.email) as string }) } });
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'hello world');
    const attachments = await call(ada, 'GET', '/attachments');
    assert.equal(attachments.status, 200, attachments.text);
    assert.deepEqual(
      attachments.body.attachments.map((a: Record<string, unknown>) => ({ name: a.name, path_id: a.path_id, size: a.size, create_time: a.create_time, messages: a.messages })),
      [{ name: 'report.txt', path_id: upload.slice('/user_uploads/'.length), size: 11, create_time: 1704211000 * 1000, messages: [{ id: 14, date_sent: 1704211000 * 1000 }] }],
    );
  });

  it('keeps private channels private: members read them with their mentions, others cannot', async () => {
    const narrow = [{ operator: 'channel', operand: 'secret-plans' }];
    const r = await call(bob, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow, apply_markdown: false });
    assert.deepEqual(
      r.body.messages.map((m: Record<string, unknown>) => [m.id, m.sender_full_name, m.subject, m.content, m.flags]),
      [[4, 'Ada Lovelace', UNTHREADED, 'Only for @**Bob Builder**', ['read', 'mentioned']]],
    );
    const other = await call(cleo, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow, apply_markdown: false });
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.messages, []);
  });

  it('imports DMs and group DMs as direct messages', async () => {
    const dm = await call(ada, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'dm', operand: [2] }], apply_markdown: false });
    assert.deepEqual(
      dm.body.messages.map((m: Record<string, unknown>) => [m.id, m.sender_full_name, m.type, m.subject, m.content, m.flags, (m.reactions as { emoji_name: string }[]).map((x) => x.emoji_name)]),
      [
        [6, 'Bob Builder', 'private', '', 'hi Ada', ['read'], []],
        [7, 'Ada Lovelace', 'private', '', 'hi Bob', ['read'], ['heart']],
      ],
    );
    const group = await call(cleo, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'dm', operand: [1, 2] }], apply_markdown: false });
    assert.deepEqual(
      group.body.messages.map((m: Record<string, unknown>) => [m.id, m.sender_full_name, m.content, (m.display_recipient as { id: number }[]).map((u) => u.id)]),
      [[5, 'Cléo Ünïcode', 'Group hello @**Ada Lovelace**', [1, 2, 3]]],
    );
    // Ada was mentioned there.
    const mentions = await call(ada, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'is', operand: 'mentioned' }], apply_markdown: false });
    assert.deepEqual(mentions.body.messages.map((m: { id: number }) => m.id), [5]);
  });

  it('starts everything read, so nobody begins with thousands of unread messages', async () => {
    const r = await call(gina, 'POST', '/register', { fetch_event_types: ['message', 'update_message_flags'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.unread_msgs.count, 0);
    // The guest is a subscriber of #general only.
    const mine = await call(gina, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0 });
    assert.equal(mine.body.messages.length, 14);
  });
});

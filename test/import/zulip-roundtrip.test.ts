// The round trip of issue 18: a rich organization built through the real API, `parley export`ed by
// the real CLI, `parley import`ed by the real CLI into an empty data directory, and both served: the
// two must answer the same to /register for every account, to GET /messages for every channel,
// topic and direct-message conversation of every account, and serve every upload with the same bytes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { basicAuth, encodeParams, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { multipart, type Part } from '../helpers/multipart';
import { makeTempDirs, runCli, startServe, type ServeProcess } from '../helpers/cli';
import { MESSAGE_CHUNK_SIZE } from '../../src/export/zulip-format';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const tmp = makeTempDirs('parley-zulip-roundtrip-');
let t: TestServer;
let copy: ServeProcess;
let importOut: { code: number | null; stdout: string; stderr: string };
const copyKeys = new Map<string, string>();
let copyDataDir: string;

async function multipartCall(user: TestUser, apiPath: string, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  const res = await t.raw('POST', `/api/v1${apiPath}`, { headers: { authorization: basicAuth(user), 'content-type': contentType }, body });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function ok(user: TestUser, method: string, apiPath: string, params: Record<string, unknown> = {}) {
  const res = await t.api(user, method, apiPath, params);
  assert.equal(res.status, 200, `${method} ${apiPath}: ${res.text}`);
  return res.body;
}

/** Every kind of object an export carries, made as a client would. */
async function buildOrganization(): Promise<void> {
  const { owner, admin, hamlet, othello, guest, moderator } = t.users;
  const pub = await createChannel(t, owner, 'public', [owner, hamlet, othello, guest, admin]);
  const priv = await createChannel(t, owner, 'secret', [owner, hamlet], { invite_only: true, history_public_to_subscribers: false });
  await createChannel(t, admin, 'quiet', [admin, othello], { description: 'A **quiet** place' });
  const m1 = await sendToChannel(t, hamlet, pub, 'greetings', 'Hello @**Othello** and everyone');
  await sendToChannel(t, othello, pub, 'greetings', 'hi *there* https://example.com');
  await sendToChannel(t, owner, priv, 'plans', 'between us');
  // Someone subscribed after this message: no row of theirs for it.
  await sendToChannel(t, owner, priv, 'plans', 'before Iago');
  await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [admin.id] });
  await sendToChannel(t, admin, priv, 'plans', 'I am here now');
  await sendDirect(t, hamlet, [othello], 'a direct message');
  await sendDirect(t, othello, [hamlet], 'a reply');
  await sendDirect(t, hamlet, [othello, owner], 'a group DM');
  await sendDirect(t, admin, [admin], 'note to self');
  const up = await multipartCall(hamlet, '/user_uploads', [{ field: 'file', filename: 'notes.txt', type: 'text/plain', data: 'the notes' }]);
  await sendToChannel(t, hamlet, pub, 'files', `see [notes.txt](${up.url as string})`);
  const img = await multipartCall(othello, '/user_uploads', [{ field: 'file', filename: 'pic.png', type: 'image/png', data: PNG }]);
  await sendDirect(t, othello, [hamlet], `[pic.png](${img.url as string})`);
  // Edits with history: content, then the topic.
  await ok(hamlet, 'PATCH', `/messages/${m1}`, { content: 'Hello, edited' });
  await ok(hamlet, 'PATCH', `/messages/${m1}`, { topic: 'welcome' });
  // Reactions: a Unicode emoji and a custom one.
  await multipartCall(owner, '/realm/emoji/parrot', [{ field: 'file', filename: 'parrot.png', type: 'image/png', data: PNG }]);
  await ok(othello, 'POST', `/messages/${m1}/reactions`, { emoji_name: 'smile' });
  await ok(owner, 'POST', `/messages/${m1}/reactions`, { emoji_name: 'parrot', reaction_type: 'realm_emoji' });
  // Flags: starred, read, unread.
  await ok(othello, 'POST', '/messages/flags', { messages: [m1], op: 'add', flag: 'starred' });
  await ok(othello, 'POST', '/messages/flags', { messages: [m1], op: 'add', flag: 'read' });
  // User groups with a subgroup.
  const g = await ok(owner, 'POST', '/user_groups/create', { name: 'actors', description: 'on stage', members: [hamlet.id, othello.id] });
  await ok(owner, 'POST', '/user_groups/create', { name: 'crew', description: 'behind', members: [moderator.id], subgroups: [g.group_id] });
  // Custom profile fields and values.
  const f = await ok(owner, 'POST', '/realm/profile_fields', { name: 'Phone', field_type: 1, hint: 'your number' });
  const mentor = await ok(owner, 'POST', '/realm/profile_fields', { name: 'Mentor', field_type: 6 });
  await ok(hamlet, 'PATCH', '/users/me/profile_data', { data: [{ id: f.id, value: '555-1234' }, { id: mentor.id, value: [othello.id] }] });
  // A linkifier, a default channel, user topics, alert words.
  await ok(owner, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' });
  await ok(owner, 'POST', '/default_streams', { stream_id: pub });
  await ok(hamlet, 'POST', '/user_topics', { stream_id: pub, topic: 'greetings', visibility_policy: 1 });
  await ok(othello, 'POST', '/user_topics', { stream_id: pub, topic: 'files', visibility_policy: 3 });
  await ok(hamlet, 'POST', '/users/me/alert_words', { alert_words: ['moor', 'dagger'] });
  // Subscription settings.
  await ok(hamlet, 'POST', '/users/me/subscriptions/properties', {
    subscription_data: [
      { stream_id: pub, property: 'color', value: '#abcdef' },
      { stream_id: pub, property: 'pin_to_top', value: true },
      { stream_id: priv, property: 'is_muted', value: true },
    ],
  });
  // Personal settings, an avatar, the organization's icon, a status, a muted user.
  await ok(hamlet, 'PATCH', '/settings', { twenty_four_hour_time: true, web_font_size_px: 14 });
  await multipartCall(hamlet, '/users/me/avatar', [{ field: 'file', filename: 'me.png', type: 'image/png', data: PNG }]);
  await multipartCall(owner, '/realm/icon', [{ field: 'file', filename: 'icon.png', type: 'image/png', data: PNG }]);
  await ok(othello, 'POST', '/users/me/status', { status_text: 'on stage', emoji_name: 'parrot', reaction_type: 'realm_emoji' });
  await ok(hamlet, 'POST', `/users/me/muted_users/${guest.id}`);
  await ok(hamlet, 'POST', '/saved_snippets', { title: 'greeting', content: 'Hello!' });
  await ok(t.users.bot, 'PUT', '/bot_storage', { storage: { a: '1' } });
  // Scheduled messages (one to a group that never talked), presence, a navigation view, a playground,
  // a channel folder, an archived channel, organization settings, and a draft (never exported).
  const later = Math.floor(Date.now() / 1000) + 86400;
  await ok(hamlet, 'POST', '/scheduled_messages', { type: 'channel', to: pub, topic: 'soon', content: 'scheduled', scheduled_delivery_timestamp: later });
  await ok(othello, 'POST', '/scheduled_messages', { type: 'direct', to: [admin.id, hamlet.id], content: 'to a new group', scheduled_delivery_timestamp: later });
  await ok(hamlet, 'POST', '/users/me/presence', { status: 'active', new_user_input: true });
  await ok(othello, 'POST', '/users/me/presence', { status: 'idle' });
  await ok(hamlet, 'POST', '/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Alert Words' });
  await ok(owner, 'POST', '/realm/playgrounds', { name: 'Python runner', pygments_language: 'Python', url_template: 'https://python.example/?code={code}' });
  const folder = await ok(owner, 'POST', '/channel_folders/create', { name: 'Teams', description: 'All the *teams*' });
  await ok(owner, 'PATCH', `/streams/${pub}`, { folder_id: folder.channel_folder_id, description: 'Everyone **here**' });
  const old = await createChannel(t, owner, 'old times', [owner, othello]);
  await sendToChannel(t, othello, old, 'memories', 'long ago');
  await ok(owner, 'DELETE', `/streams/${old}`);
  await ok(owner, 'PATCH', '/realm', { description: 'The **company**', message_content_edit_limit_seconds: 3600, waiting_period_threshold: 2 });
  await ok(owner, 'PATCH', '/realm/user_settings_defaults', { enter_sends: true, web_font_size_px: 18, emojiset: 'twitter' });
  await ok(hamlet, 'POST', '/drafts', { drafts: [{ type: 'stream', to: [pub], topic: 'later', content: 'draft text', timestamp: 1700000000 }] });
  // A deactivated user.
  await ok(owner, 'DELETE', `/users/${moderator.id}`);
  // More than one message file.
  const many = Array.from({ length: MESSAGE_CHUNK_SIZE + 5 }, (_, i) => i);
  for (let i = 0; i < many.length; i += 50) {
    await Promise.all(many.slice(i, i + 50).map((n) => sendToChannel(t, n % 2 ? hamlet : othello, pub, `bulk ${n % 3}`, `message ${n}`)));
  }
}

/** Calls the imported copy as the account with `email` (its key from the import's output). */
async function copyApi(email: string, method: string, apiPath: string, params: Record<string, unknown> = {}) {
  const q = encodeParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth({ email, apiKey: copyKeys.get(email) as string }) };
  const res = await fetch(copy.url + '/api/v1' + apiPath + (method === 'GET' && q ? `?${q}` : ''), { method, headers, body: method === 'GET' ? undefined : q });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) };
}

before(async () => {
  t = await startTestServer();
  await buildOrganization();
  const dir = tmp.make();
  const out = path.join(dir, 'org.tar.gz');
  const exp = await runCli(['export', '--data-dir', t.dataDir, out], { timeoutMs: 60_000 });
  assert.equal(exp.code, 0, exp.stderr);
  const dataDir = (copyDataDir = path.join(dir, 'data'));
  importOut = await runCli(['import', '--data-dir', dataDir, out], { timeoutMs: 60_000 });
  assert.equal(importOut.code, 0, importOut.stderr);
  for (const line of importOut.stdout.trim().split('\n').slice(1)) {
    const a = JSON.parse(line);
    copyKeys.set(a.email, a.api_key);
  }
  copy = await startServe(['--data-dir', dataDir, '--port', '0', '--no-rate-limits']);
});

after(async () => {
  if (copy) await copy.stop();
  await t?.close();
  tmp.cleanup();
});

const everyone = () => Object.values(t.users).filter((u) => u.id !== t.users.moderator.id);

/**
 * What must differ between the two servers: the event queue (queue_id, last_event_id), API keys
 * (reset by the import), the server's own URL (another port) wherever it appears, its start
 * (server_generation) and clock (server_timestamp), and when the system bots' accounts were made:
 * an export does not carry them (Zulip's cross-realm bots live outside any organization), the
 * importing server makes its own.
 */
const DIFFERS = new Set(['queue_id', 'last_event_id', 'api_key', 'server_generation', 'server_timestamp']);
function normalise(body: unknown, url: string): unknown {
  const text = JSON.stringify(body).split(url).join('SERVER');
  return JSON.parse(text, (key, value) => {
    if (DIFFERS.has(key)) return '<differs>';
    if (value && typeof value === 'object' && typeof value.email === 'string' && /^(notification|welcome)-bot@/.test(value.email) && 'date_joined' in value) {
      return { ...value, date_joined: '<differs>' };
    }
    return value;
  });
}

describe('Parley → parley export → parley import → Parley', () => {
  it('reports what it imported, with every account', () => {
    const [summary, ...accounts] = importOut.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(summary.realm_id, 1);
    assert.equal(summary.imported.messages, (t.app.db.prepare('SELECT count(*) FROM message').pluck().get() as number));
    assert.deepEqual(
      accounts.map((a: { user_id: number; email: string; is_active: boolean }) => [a.user_id, a.email, a.is_active]),
      (t.app.db.prepare("SELECT id, email, is_active FROM user WHERE email NOT LIKE 'notification-bot%' AND email NOT LIKE 'welcome-bot%' ORDER BY id").raw().all() as [number, string, number][]).map(
        ([id, email, active]) => [id, email, active === 1],
      ),
    );
  });

  it('answers /register the same for every account', async () => {
    for (const u of everyone()) {
      const a = await t.api(u, 'POST', '/register', {});
      const b = await copyApi(u.email, 'POST', '/register', {});
      assert.equal(a.status, 200, a.text);
      // Drafts are not in Zulip's format (export.py: "Drafts don't need to be exported as they are
      // supposed to be more ephemeral"): the copy has none.
      assert.deepEqual(b.body.drafts, []);
      a.body.drafts = [];
      assert.deepEqual(normalise(b.body, copy.url), normalise(a.body, t.url), u.email);
    }
  });

  it('answers GET /messages the same for every channel, topic and conversation of every account', async () => {
    const channels = t.app.db.prepare('SELECT id FROM stream ORDER BY id').pluck().all() as number[];
    const topics = t.app.db.prepare('SELECT DISTINCT stream_id, topic FROM message WHERE stream_id IS NOT NULL ORDER BY 1, 2').all() as { stream_id: number; topic: string }[];
    const conversations = (t.app.db.prepare('SELECT member_key FROM direct_group ORDER BY id').pluck().all() as string[]).map((k) => k.split(',').map(Number));
    const narrows: unknown[][] = [
      [],
      ...channels.map((c) => [{ operator: 'channel', operand: c }]),
      ...topics.map((x) => [
        { operator: 'channel', operand: x.stream_id },
        { operator: 'topic', operand: x.topic },
      ]),
      ...conversations.map((ids) => [{ operator: 'dm', operand: ids }]),
      [{ operator: 'is', operand: 'starred' }],
      [{ operator: 'is', operand: 'unread' }],
      [{ operator: 'is', operand: 'mentioned' }],
    ];
    for (const u of everyone()) {
      for (const narrow of narrows) {
        const params = { anchor: 'oldest', num_before: 0, num_after: 2000, narrow };
        const a = await t.api(u, 'GET', '/messages', params);
        const b = await copyApi(u.email, 'GET', '/messages', params);
        assert.equal(b.status, a.status, `${u.email} ${JSON.stringify(narrow)}`);
        assert.deepEqual(normalise(b.body, copy.url), normalise(a.body, t.url), `${u.email} ${JSON.stringify(narrow)}`);
      }
    }
  });

  it('serves every upload with the same bytes', async () => {
    const uploads = t.app.db.prepare('SELECT path_id, owner_id FROM attachment ORDER BY id').all() as { path_id: string; owner_id: number }[];
    assert.ok(uploads.length >= 2);
    for (const { path_id } of uploads) {
      const a = await fetch(`${t.url}/user_uploads/${path_id}`, { headers: { authorization: basicAuth(t.users.hamlet) } });
      const b = await fetch(`${copy.url}/user_uploads/${path_id}`, { headers: { authorization: basicAuth({ email: t.users.hamlet.email, apiKey: copyKeys.get(t.users.hamlet.email) as string }) } });
      assert.equal(b.status, a.status, path_id);
      assert.deepEqual(Buffer.from(await b.arrayBuffer()), Buffer.from(await a.arrayBuffer()), path_id);
    }
  });

  it('keeps the avatar, custom emoji and organization icon files', () => {
    // Their URLs are in the /register answers compared above; here the bytes behind them.
    const list = (root: string): string[] =>
      fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name))).sort();
    const src = path.join(t.dataDir, 'uploads');
    const dst = path.join(copyDataDir, 'uploads');
    const files = list(src).filter((f) => /^(avatars|emoji|[0-9]+)\//.test(f));
    assert.ok(files.length >= 5, files.join(' '));
    assert.deepEqual(list(dst), files);
    for (const f of files) assert.deepEqual(fs.readFileSync(path.join(dst, f)), fs.readFileSync(path.join(src, f)), f);
  });
});

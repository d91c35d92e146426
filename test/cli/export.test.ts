// `parley export` (issue 18, item 1): a rich organization built through the real API, exported by the
// real CLI while the server serves (and takes writes), unpacked and checked against the description
// of what Zulip's importer reads (src/export/zulip-format.ts, checked by src/export/zulip-check.ts):
// every table and required field there with its type, every foreign key resolving, the counts equal
// to Parley's, and the mappings (recipients, flags, dates, files) as Zulip's exporter writes them.
// Also: a missing output directory, and an interrupted export leaving nothing at OUT.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { multipart, type Part } from '../helpers/multipart';
import { childEnv, makeTempDirs, ROOT, runCli, SOURCE_CLI } from '../helpers/cli';
import { ZULIP_VERSION } from '../../src/version';
import { ExportChecker } from '../../src/export/zulip-check';
import { huddleHash } from '../../src/export/context';
import { zulipFlags } from '../../src/export/message-files';
import { MESSAGE_CHUNK_SIZE, RECORDS, USER_SETTING_TYPES, TABLES, TABLE_NAMES, ZULIP_USERMESSAGE_FLAGS, type TableName } from '../../src/export/zulip-format';
import { readTarGz } from '../helpers/tarball';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const tmp = makeTempDirs();
let t: TestServer;
let ids: Record<string, number> = {};

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

/** Every kind of object the export carries, made as a client would. */
async function buildOrganization(): Promise<void> {
  const { owner, admin, hamlet, othello, guest, moderator } = t.users;
  const pub = await createChannel(t, owner, 'public', [owner, hamlet, othello, guest]);
  const priv = await createChannel(t, owner, 'secret', [owner, hamlet], { invite_only: true, history_public_to_subscribers: false });
  ids = { pub, priv };
  ids.m1 = await sendToChannel(t, hamlet, pub, 'greetings', 'Hello @**Othello, the Moor of Venice** and everyone');
  ids.m2 = await sendToChannel(t, othello, pub, 'greetings', 'hi *there* https://example.com');
  ids.secret = await sendToChannel(t, owner, priv, 'plans', 'between us');
  ids.dm = await sendDirect(t, hamlet, [othello], 'a direct message');
  ids.group = await sendDirect(t, hamlet, [othello, owner], 'a group DM');
  ids.self = await sendDirect(t, admin, [admin], 'note to self');
  // An upload, linked from a message.
  const up = await multipartCall(hamlet, '/user_uploads', [{ field: 'file', filename: 'notes.txt', type: 'text/plain', data: 'the notes' }]);
  ids.withFile = await sendToChannel(t, hamlet, pub, 'files', `see [notes.txt](${up.url as string})`);
  // Edits with history: content, then the topic.
  await ok(hamlet, 'PATCH', `/messages/${ids.m1}`, { content: 'Hello, edited' });
  await ok(hamlet, 'PATCH', `/messages/${ids.m1}`, { topic: 'welcome' });
  // Reactions: a Unicode emoji and a custom one.
  await multipartCall(owner, '/realm/emoji/parrot', [{ field: 'file', filename: 'parrot.png', type: 'image/png', data: PNG }]);
  await ok(othello, 'POST', `/messages/${ids.m1}/reactions`, { emoji_name: 'smile' });
  await ok(owner, 'POST', `/messages/${ids.m1}/reactions`, { emoji_name: 'parrot', reaction_type: 'realm_emoji' });
  // Flags: starred.
  await ok(othello, 'POST', '/messages/flags', { messages: [ids.m1], op: 'add', flag: 'starred' });
  // A user group with a subgroup.
  const g = await ok(owner, 'POST', '/user_groups/create', { name: 'actors', description: 'on stage', members: [hamlet.id, othello.id] });
  ids.group_id = g.group_id as number;
  await ok(owner, 'POST', '/user_groups/create', { name: 'crew', description: 'behind', members: [moderator.id], subgroups: [ids.group_id] });
  // Custom profile fields and values.
  const f = await ok(owner, 'POST', '/realm/profile_fields', { name: 'Phone', field_type: 1, hint: 'your number' });
  const mentor = await ok(owner, 'POST', '/realm/profile_fields', { name: 'Mentor', field_type: 6 });
  await ok(hamlet, 'PATCH', '/users/me/profile_data', { data: [{ id: f.id, value: '555-1234' }, { id: mentor.id, value: [othello.id] }] });
  // A linkifier, a default channel, a user topic, alert words, a draft, scheduled messages, presence.
  await ok(owner, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' });
  await ok(owner, 'POST', '/default_streams', { stream_id: pub });
  await ok(hamlet, 'POST', '/user_topics', { stream_id: pub, topic: 'greetings', visibility_policy: 1 });
  await ok(hamlet, 'POST', '/users/me/alert_words', { alert_words: ['moor', 'dagger'] });
  await ok(hamlet, 'POST', '/drafts', { drafts: [{ type: 'stream', to: [pub], topic: 'later', content: 'draft text', timestamp: 1700000000 }] });
  const later = Math.floor(Date.now() / 1000) + 86400;
  await ok(hamlet, 'POST', '/scheduled_messages', { type: 'channel', to: pub, topic: 'soon', content: 'scheduled', scheduled_delivery_timestamp: later });
  // A group DM scheduled to a set of people who never talked: its huddle exists only in the export.
  await ok(othello, 'POST', '/scheduled_messages', { type: 'direct', to: [admin.id, moderator.id], content: 'to a new group', scheduled_delivery_timestamp: later });
  await ok(hamlet, 'POST', '/users/me/presence', { status: 'active', new_user_input: true });
  await ok(othello, 'POST', '/users/me/presence', { status: 'idle' });
  // An avatar, the organization's icon, a status, a muted user.
  await multipartCall(hamlet, '/users/me/avatar', [{ field: 'file', filename: 'me.png', type: 'image/png', data: PNG }]);
  await multipartCall(owner, '/realm/icon', [{ field: 'file', filename: 'icon.png', type: 'image/png', data: PNG }]);
  await ok(othello, 'POST', '/users/me/status', { status_text: 'on stage', emoji_name: 'parrot', reaction_type: 'realm_emoji' });
  await ok(hamlet, 'POST', `/users/me/muted_users/${guest.id}`);
  // A saved snippet, a navigation view, a bot's storage.
  await ok(hamlet, 'POST', '/saved_snippets', { title: 'greeting', content: 'Hello!' });
  await ok(hamlet, 'POST', '/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: false, name: 'Alert Words' });
  await ok(t.users.bot, 'PUT', '/bot_storage', { storage: { a: '1', b: '2' } });
  // A deactivated user still appears, inactive.
  await ok(owner, 'DELETE', `/users/${moderator.id}`);
  // Enough channel messages for more than one message file; most of their per-user rows stay implied.
  const many = Array.from({ length: MESSAGE_CHUNK_SIZE + 5 }, (_, i) => i);
  for (let i = 0; i < many.length; i += 50) {
    await Promise.all(many.slice(i, i + 50).map((n) => sendToChannel(t, n % 2 ? hamlet : othello, pub, `bulk ${n % 7}`, `message ${n}`)));
  }
}

const q = <T = number>(sql: string, ...args: unknown[]): T => t.app.db.prepare(sql).pluck().get(...args) as T;

before(async () => {
  t = await startTestServer();
  await buildOrganization();
});

after(async () => {
  await t.close();
  tmp.cleanup();
});

describe('parley export', () => {
  let files: Map<string, Buffer>;
  let json: (name: string) => any;
  const out = () => path.join(tmp.make(), 'org-export.tar.gz');
  let outFile: string;

  before(async () => {
    outFile = out();
    // Writes keep arriving while the export reads: its snapshot must still be consistent.
    let writing = true;
    let sent = 0;
    const writer = (async () => {
      // At most 100, so that the history stays under two message files.
      while (writing && sent < 100) {
        await sendDirect(t, t.users.othello, [t.users.hamlet], `during the export ${sent++}`);
      }
    })();
    const r = await runCli(['export', '--data-dir', t.dataDir, outFile], { timeoutMs: 60_000 });
    writing = false;
    await writer;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^export written to .*org-export\.tar\.gz \(\d+ messages in 2 files, \d+ users, \d+ channels\)\n$/);
    files = await readTarGz(fs.readFileSync(outFile));
    json = (name) => JSON.parse(files.get(`org-export/${name}`)!.toString('utf8'));
  });

  it("has Zulip's layout under one top directory", () => {
    const names = [...files.keys()];
    assert.ok(names.every((n) => n.startsWith('org-export/')), names.join(' '));
    for (const n of ['realm.json', 'attachment.json', 'messages-000001.json', 'messages-000002.json', 'migration_status.json', 'uploads/records.json', 'avatars/records.json', 'emoji/records.json', 'realm_icons/records.json']) {
      assert.ok(files.has(`org-export/${n}`), n);
    }
    assert.ok(!files.has('org-export/messages-000003.json'));
    // stats.json in the shape of Zulip's: rows per table of each file, then the records of each folder.
    const stats = json('stats.json');
    assert.deepEqual(Object.keys(stats), ['attachment', 'messages-000001', 'messages-000002', 'realm', 'uploads_records', 'avatars_records', 'emoji_records', 'realm_icons_records']);
    assert.deepEqual(stats['messages-000001'], { zerver_message: MESSAGE_CHUNK_SIZE, zerver_usermessage: json('messages-000001.json').zerver_usermessage.length });
    assert.equal(stats.realm.zerver_userprofile, json('realm.json').zerver_userprofile.length);
    assert.equal(json('messages-000001.json').zerver_message.length, MESSAGE_CHUNK_SIZE);
    // Nothing but the tarball is left beside it.
    assert.deepEqual(fs.readdirSync(path.dirname(outFile)), ['org-export.tar.gz']);
  });

  it('passes the check against the description of what the importer reads', () => {
    const checker = new ExportChecker();
    for (const [name, bytes] of files) {
      const rel = name.slice('org-export/'.length);
      if (rel === 'realm.json' || rel === 'attachment.json' || /^messages-\d{6}\.json$/.test(rel)) checker.file(rel, JSON.parse(bytes.toString('utf8')));
    }
    for (const folder of Object.keys(RECORDS) as (keyof typeof RECORDS)[]) {
      checker.records(folder, json(`${folder}/records.json`), (p) => files.has(`org-export/${folder}/${p}`));
    }
    assert.deepEqual(checker.finish(), []);
    // Every table of the description appears (the optional ones too: this organization has them all).
    for (const table of TABLE_NAMES) assert.ok(checker.counts[table] !== undefined, table);
  });

  it("holds exactly Parley's rows, table by table", () => {
    const realm = json('realm.json');
    const messageFiles = [...files.keys()].filter((n) => /messages-\d{6}\.json$/.test(n)).sort();
    const all = (table: TableName): any[] =>
      TABLES[table].file === 'messages' ? messageFiles.flatMap((n) => JSON.parse(files.get(n)!.toString('utf8'))[table]) : TABLES[table].file === 'attachment.json' ? json('attachment.json')[table] : realm[table];
    const messages = all('zerver_message');
    const maxId = messages[messages.length - 1].id;
    const crossRealmIds = new Set(realm.zerver_userprofile_crossrealm.map((u: any) => u.id));
    const systemBots = q(`SELECT count(*) FROM user WHERE bot_type IS NOT NULL AND bot_owner_id IS NULL AND (email LIKE 'notification-bot@%' OR email LIKE 'welcome-bot@%')`);
    const users = q('SELECT count(*) FROM user') - systemBots;
    const streams = q('SELECT count(*) FROM stream');
    const huddles = q('SELECT count(*) FROM direct_group g WHERE (SELECT count(*) FROM direct_group_member m WHERE m.group_id = g.id) >= 3') + 1; // + the scheduled one
    const expected: Partial<Record<TableName, number>> = {
      zerver_realm: 1,
      zerver_userprofile: users,
      zerver_userprofile_crossrealm: systemBots,
      zerver_stream: streams,
      zerver_huddle: huddles,
      zerver_recipient: users + streams + huddles,
      // Personal ones, channel ones, and three members for each of the two huddles.
      zerver_subscription: users + q('SELECT count(*) FROM subscription') + 6,
      zerver_message: q('SELECT count(*) FROM message WHERE id <= ?', maxId),
      zerver_usermessage:
        q('SELECT count(*) FROM usermessage WHERE message_id <= ?', maxId) +
        q('SELECT count(*) FROM usermessage_pending p WHERE p.message_id <= ? AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)', maxId) -
        q(`SELECT count(*) FROM usermessage um JOIN user u ON u.id = um.user_id WHERE um.message_id <= ? AND u.bot_type IS NOT NULL AND u.bot_owner_id IS NULL AND u.email LIKE '%-bot@%'`, maxId),
      zerver_reaction: q('SELECT count(*) FROM reaction'),
      zerver_realmemoji: q('SELECT count(*) FROM realm_emoji'),
      zerver_usergroup: q('SELECT count(*) FROM user_group'),
      zerver_namedusergroup: q('SELECT count(*) FROM user_group WHERE named = 1'),
      zerver_usergroupmembership: q('SELECT count(*) FROM user_group_member'),
      zerver_groupgroupmembership: q('SELECT count(*) FROM user_group_subgroup'),
      zerver_customprofilefield: 2,
      zerver_customprofilefieldvalue: 2,
      zerver_realmfilter: 1,
      zerver_defaultstream: 1,
      // The one set above, and the topics Parley followed for their senders (automatically_follow_topics_policy).
      zerver_usertopic: q('SELECT count(*) FROM user_topic'),
      zerver_alertword: 2,
      zerver_scheduledmessage: 2,
      zerver_userpresence: q('SELECT count(*) FROM presence'),
      zerver_userstatus: q('SELECT count(*) FROM user_status'),
      zerver_muteduser: 1,
      zerver_attachment: 1,
      zerver_savedsnippet: 1,
      zerver_navigationview: 1,
      zerver_botstoragedata: 2,
      zerver_service: q('SELECT count(*) FROM bot_service'),
    };
    assert.equal(huddles, 2, 'one group DM sent, one scheduled');
    // The per-user rows are exactly Parley's, stored and implied (the view), with Zulip's flag bits.
    const parleyRows = (
      t.app.db
        .prepare(
          `SELECT user_id, message_id, flags FROM usermessage WHERE message_id <= ?
           UNION ALL
           SELECT p.user_id, p.message_id, 0 FROM usermessage_pending p WHERE p.message_id <= ?
             AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)`,
        )
        .all(maxId, maxId) as { user_id: number; message_id: number; flags: number }[]
    )
      .filter((r) => !crossRealmIds.has(r.user_id))
      .map((r) => `${r.message_id}/${r.user_id}/${zulipFlags(r.flags)}`)
      .sort();
    const exported = all('zerver_usermessage')
      .map((r: any) => `${r.message}/${r.user_profile}/${r.flags_mask}`)
      .sort();
    assert.deepEqual(exported, parleyRows);
    const actual = Object.fromEntries(Object.keys(expected).map((k) => [k, all(k as TableName).length]));
    assert.deepEqual(actual, expected);
    // Drafts are not exported, as Zulip's exporter leaves them out.
    assert.ok(!('zerver_draft' in realm));
    assert.equal(q('SELECT count(*) FROM draft'), 1);
  });

  it("maps ids, recipients, flags, dates and content as Zulip's exporter writes them", () => {
    const realm = json('realm.json');
    const messages = [...files.keys()].filter((n) => /messages-\d{6}\.json$/.test(n)).sort().flatMap((n) => JSON.parse(files.get(n)!.toString('utf8')).zerver_message);
    const ums = [...files.keys()].filter((n) => /messages-\d{6}\.json$/.test(n)).flatMap((n) => JSON.parse(files.get(n)!.toString('utf8')).zerver_usermessage);
    const byId = new Map(messages.map((m: any) => [m.id, m]));
    const recipient = new Map(realm.zerver_recipient.map((r: any) => [r.id, r]));
    const { hamlet, othello, owner, admin, guest } = t.users;

    // Channel message: the channel's recipient, its topic, rendered content and edit history kept.
    const m1 = byId.get(ids.m1) as any;
    const row = t.app.db.prepare('SELECT * FROM message WHERE id = ?').get(ids.m1) as any;
    assert.deepEqual(recipient.get(m1.recipient), { id: m1.recipient, type: 2, type_id: ids.pub });
    assert.equal(m1.subject, 'welcome');
    assert.equal(m1.content, 'Hello, edited');
    assert.equal(m1.rendered_content, row.rendered_content);
    assert.equal(m1.date_sent, row.date_sent);
    assert.equal(typeof m1.last_edit_time, 'number');
    assert.equal(m1.is_channel_message, true);
    const history = JSON.parse(m1.edit_history);
    assert.equal(history.length, 2);
    assert.equal(history[0].prev_topic, 'greetings');
    assert.equal(history[1].prev_content, 'Hello @**Othello, the Moor of Venice** and everyone');
    // Direct messages: the other person's personal recipient; a note to self, one's own; a group, its huddle.
    assert.deepEqual(recipient.get((byId.get(ids.dm) as any).recipient), { id: (byId.get(ids.dm) as any).recipient, type: 1, type_id: othello.id });
    assert.deepEqual(recipient.get((byId.get(ids.self) as any).recipient), { id: (byId.get(ids.self) as any).recipient, type: 1, type_id: admin.id });
    const groupRecipient = recipient.get((byId.get(ids.group) as any).recipient) as any;
    assert.equal(groupRecipient.type, 3);
    const huddle = realm.zerver_huddle.find((h: any) => h.id === groupRecipient.type_id);
    assert.deepEqual(huddle, { id: groupRecipient.type_id, huddle_hash: huddleHash([hamlet.id, othello.id, owner.id]), group_size: 3 });
    assert.equal((byId.get(ids.dm) as any).is_channel_message, false);
    // Each member of the group DM is subscribed to its recipient.
    assert.deepEqual(
      realm.zerver_subscription.filter((s: any) => s.recipient === groupRecipient.id).map((s: any) => s.user_profile).sort((a: number, b: number) => a - b),
      [hamlet.id, othello.id, owner.id].sort((a, b) => a - b),
    );
    // Flags: Zulip's bitfield (starred is bit 1; is_private bit 11).
    const starred = ums.find((u: any) => u.message === ids.m1 && u.user_profile === othello.id);
    assert.ok(realm.zerver_usertopic.some((u: any) => u.user_profile === hamlet.id && u.topic_name === 'greetings' && u.visibility_policy === 1));
    assert.ok(starred.flags_mask & (1 << ZULIP_USERMESSAGE_FLAGS.indexOf('starred')));
    const dmRow = ums.find((u: any) => u.message === ids.dm && u.user_profile === othello.id);
    assert.ok(dmRow.flags_mask & (1 << ZULIP_USERMESSAGE_FLAGS.indexOf('is_private')));
    assert.equal(zulipFlags(512), 2048);
    assert.equal(zulipFlags(128 | 2 | 1), 512 | 2 | 1);
    // The private channel's history is exported (a full export), and the guest has no row of it.
    assert.ok(byId.has(ids.secret));
    assert.ok(!ums.some((u: any) => u.message === ids.secret && u.user_profile === guest.id));
    // The custom emoji reaction names the emoji by id; dates are floats of seconds; no secrets.
    const parrot = realm.zerver_realmemoji.find((e: any) => e.name === 'parrot');
    assert.ok(realm.zerver_reaction.some((r: any) => r.reaction_type === 'realm_emoji' && r.emoji_code === String(parrot.id) && r.emoji_name === 'parrot'));
    const h = realm.zerver_userprofile.find((u: any) => u.id === hamlet.id);
    assert.equal(h.date_joined, q('SELECT date_joined FROM user WHERE id = ?', hamlet.id));
    assert.ok(!('api_key' in h) && !('password' in h));
    // Every personal setting of the description is written (none silently missing from Parley's row).
    for (const [name, type] of Object.entries(USER_SETTING_TYPES)) assert.equal(typeof h[name], type === 'int' ? 'number' : type === 'bool' ? 'boolean' : 'string', name);
    assert.equal(realm.zerver_userprofile.find((u: any) => u.id === t.users.moderator.id).is_active, false);
    assert.equal(realm.zerver_realm[0].date_created, q('SELECT date_created FROM realm'));
    // Zulip's encodings: -1 for unlimited retention, enums as their stored integers.
    assert.equal(realm.zerver_realm[0].message_retention_days, -1);
    assert.equal(realm.zerver_realm[0].message_edit_history_visibility_policy, 1);
    assert.equal(realm.zerver_realm[0].topics_policy, 2);
    assert.ok(realm.zerver_stream.every((s: any) => s.topics_policy === 1));
    assert.ok(!('allow_edit_history' in realm.zerver_realm[0]));
    assert.equal(realm.import_source, 'parley');
    // The importer compares the major version with its own and only warns about unlisted migrations.
    assert.deepEqual(json('migration_status.json'), { zulip_version: ZULIP_VERSION, migrations_by_app: {} });
  });

  it('copies uploads, avatars, custom emoji and the icon, with their records', () => {
    const attachment = json('attachment.json').zerver_attachment[0];
    assert.deepEqual(attachment.messages, [ids.withFile]);
    const uploads = json('uploads/records.json');
    assert.equal(uploads.length, 1);
    assert.equal(uploads[0].s3_path, attachment.path_id);
    assert.equal(files.get(`org-export/uploads/${attachment.path_id}`)!.toString(), 'the notes');
    const avatars = json('avatars/records.json');
    assert.equal(avatars.length, 1);
    assert.equal(avatars[0].user_profile_id, t.users.hamlet.id);
    assert.match(avatars[0].path, /\.original$/);
    assert.deepEqual(files.get(`org-export/avatars/${avatars[0].path}`), PNG);
    const emoji = json('emoji/records.json');
    const parrot = json('realm.json').zerver_realmemoji.find((e: any) => e.name === 'parrot');
    const base = `${parrot.realm}/emoji/images/${parrot.file_name}`;
    assert.deepEqual(
      emoji.map((e: any) => [e.path, e.name, e.file_name]),
      [
        [base, 'parrot', parrot.file_name],
        [`${base}.original`, 'parrot', parrot.file_name],
      ],
    );
    for (const e of emoji) assert.deepEqual(files.get(`org-export/emoji/${e.path}`), PNG);
    const icons = json('realm_icons/records.json');
    assert.deepEqual(icons.map((i: any) => i.path), [`${icons[0].realm_id}/icon.original`, `${icons[0].realm_id}/icon.png`]);
  });
});

describe('parley export: bad output paths and interruptions', () => {
  it('fails clearly when the output directory does not exist, and writes nothing', async () => {
    const dir = tmp.make();
    const target = path.join(dir, 'missing', 'out.tar.gz');
    const r = await runCli(['export', '--data-dir', t.dataDir, target]);
    assert.deepEqual(r, { code: 1, signal: null, stdout: '', stderr: `parley: cannot write ${target}: the directory ${path.join(dir, 'missing')} does not exist\n` });
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('needs exactly one output file', async () => {
    const r = await runCli(['export', '--data-dir', t.dataDir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^parley: export needs exactly one OUT\.tar\.gz\nusage: parley export /);
  });

  /** Starts an export that stops after its first message file, and resolves once it has. */
  function stalledExport(target: string) {
    const [cmd, ...pre] = SOURCE_CLI;
    const child = spawn(cmd, [...pre, 'export', '--data-dir', t.dataDir, target], {
      cwd: ROOT,
      env: childEnv({ PARLEY_EXPORT_TEST_STALL_AFTER: 'messages-000001.json' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    const stalled = new Promise<void>((resolve, reject) => {
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('stalled after messages-000001.json')) resolve();
      });
      void exited.then(() => reject(new Error(`export exited before stalling: ${stderr}`)));
    });
    return { child, stalled, exited };
  }

  it('killed outright, leaves nothing at OUT (only a temporary file no one takes for an export)', async () => {
    const dir = tmp.make();
    const target = path.join(dir, 'out.tar.gz');
    const run = stalledExport(target);
    await run.stalled;
    run.child.kill('SIGKILL');
    assert.deepEqual(await run.exited, { code: null, signal: 'SIGKILL' });
    assert.ok(!fs.existsSync(target));
    for (const f of fs.readdirSync(dir)) assert.match(f, /^\.out\.tar\.gz\.(partial|stage)-/);
  });

  it('interrupted (SIGTERM), removes its temporary files too', async () => {
    const dir = tmp.make();
    const target = path.join(dir, 'out.tar.gz');
    const run = stalledExport(target);
    await run.stalled;
    run.child.kill('SIGTERM');
    assert.deepEqual(await run.exited, { code: 143, signal: null });
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});

// What leaves the box in the exports administrators ask for over the API, beyond the messages (Zulip's
// export.py: Config(limit_to_consenting_users=True), custom_fetch_user_profile,
// custom_fetch_direct_message_groups, custom_process_subscription_in_realm_config): a person's private
// rows (alert words, topic settings, muted people, status, saved snippets, navigation views, a bot's
// storage and configuration) go in only for consenting people, never in a public export; group DMs only
// with a consenting member (none in a public export); the address of a person who shows it to no one is
// never exported unless they consent; and the personal settings of people who did not consent are
// not carried (the importer's defaults stand in for them).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { multipart } from '../helpers/multipart';
import { ExportChecker } from '../../src/export/zulip-check';
import { RECORDS } from '../../src/export/zulip-format';
import { readTarGz } from '../helpers/tarball';
import { until } from '../helpers/wait';

const basic = (u: TestUser) => ({ authorization: 'Basic ' + Buffer.from(`${u.email}:${u.apiKey}`).toString('base64') });

let t: TestServer;
let privateChannel: number;
const tarballFiles: Record<1 | 2, string[]> = { 1: [], 2: [] };
let publicChannel: number;

/** Asks for an export of `type` as the owner, waits for it, downloads and unpacks realm.json and the messages. */
async function exportOf(type: 1 | 2): Promise<{ realm: any; messages: any[]; attachments: any[] }> {
  const res = await t.api(t.users.owner, 'POST', '/export/realm', { export_type: type });
  assert.equal(res.status, 200, res.text);
  const done: any = await until(`export ${res.body.id}`, async () => {
    const list = await t.api(t.users.owner, 'GET', '/export/realm');
    const e = list.body.exports.find((x: any) => x.id === res.body.id);
    return e && !e.pending ? e : undefined;
  });
  assert.equal(done.failed_timestamp, null);
  const bytes = Buffer.from(await (await fetch(done.export_url, { headers: basic(t.users.owner) })).arrayBuffer());
  const files = await readTarGz(bytes, { withoutTopDir: true });
  tarballFiles[type] = [...files.keys()];
  // What is left out leaves nothing dangling: the tarball still passes the check of what Zulip's importer reads.
  const checker = new ExportChecker();
  for (const [name, data] of files) if (name === 'realm.json' || name === 'attachment.json' || /^messages-\d{6}\.json$/.test(name)) checker.file(name, JSON.parse(data.toString()));
  for (const folder of Object.keys(RECORDS) as (keyof typeof RECORDS)[]) {
    checker.records(folder, JSON.parse(files.get(`${folder}/records.json`)!.toString()), (p) => files.has(`${folder}/${p}`));
  }
  assert.deepEqual(checker.finish(), []);
  const messages = [...files.keys()].filter((n) => /^messages-\d{6}\.json$/.test(n)).flatMap((n) => JSON.parse(files.get(n)!.toString()).zerver_message);
  const attachments = JSON.parse(files.get('attachment.json')!.toString()).zerver_attachment;
  return { realm: JSON.parse(files.get('realm.json')!.toString()), messages, attachments };
}

const ok = async (p: Promise<{ status: number; text: string }>) => {
  const res = await p;
  assert.equal(res.status, 200, res.text);
};

before(async () => {
  t = await startTestServer();
  const { owner, hamlet, othello, admin, bot } = t.users;
  publicChannel = await createChannel(t, owner, 'town square', [owner, hamlet, othello]);
  privateChannel = await createChannel(t, hamlet, 'hideout', [hamlet, othello], { invite_only: true });
  await sendToChannel(t, hamlet, privateChannel, 'the secret plan', 'private words');
  await sendToChannel(t, hamlet, publicChannel, 'hello', 'public words');
  await sendDirect(t, hamlet, [othello, admin], 'a group DM without a consenting person');
  await sendDirect(t, hamlet, [othello, owner], 'a group DM with the consenting owner');
  // Uploads linked from a public message, a private-channel message and a DM (each its own file).
  const upload = async (name: string) => {
    const { body, contentType } = multipart([{ field: 'file', filename: name, type: 'text/plain', data: `the ${name}` }]);
    const res = await t.raw('POST', '/api/v1/user_uploads', { headers: { authorization: basic(hamlet).authorization, 'content-type': contentType }, body });
    assert.equal(res.status, 200, res.text);
    return res.body.url as string;
  };
  await sendToChannel(t, hamlet, publicChannel, 'files', `see [public.txt](${await upload('public.txt')})`);
  await sendToChannel(t, hamlet, privateChannel, 'files', `see [private.txt](${await upload('private.txt')})`);
  await sendDirect(t, hamlet, [othello], `see [direct.txt](${await upload('direct.txt')})`);
  // A channel with protected history the consenting owner joins late: only what came after is theirs to read.
  const vault = await createChannel(t, hamlet, 'vault', [hamlet], { invite_only: true, history_public_to_subscribers: false });
  await sendToChannel(t, hamlet, vault, 'vault', 'before the owner came');
  await ok(t.api(hamlet, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], principals: [owner.id] }));
  await sendToChannel(t, hamlet, vault, 'vault', 'after the owner came');
  // Everyone's private rows: the owner's (consenting) and Hamlet's (not).
  for (const u of [owner, hamlet]) {
    await ok(t.api(u, 'POST', '/users/me/alert_words', { alert_words: [`${u.fullName} alert`] }));
    await ok(t.api(u, 'POST', '/user_topics', { stream_id: publicChannel, topic: `${u.fullName} muted topic`, visibility_policy: 1 }));
    await ok(t.api(u, 'POST', `/users/me/muted_users/${othello.id}`));
    await ok(t.api(u, 'POST', '/users/me/status', { status_text: `${u.fullName} status` }));
    await ok(t.api(u, 'POST', '/saved_snippets', { title: `${u.fullName} snippet`, content: 'text' }));
    await ok(t.api(u, 'POST', '/navigation_views', { fragment: 'inbox', is_pinned: true }));
    await ok(t.api(u, 'PATCH', '/settings', { twenty_four_hour_time: true, default_language: 'de' }));
    await ok(
      t.api(u, 'POST', '/users/me/subscriptions/properties', {
        subscription_data: [
          { stream_id: publicChannel, property: 'pin_to_top', value: true },
          { stream_id: publicChannel, property: 'is_muted', value: true },
        ],
      }),
    );
  }
  await ok(t.api(hamlet, 'POST', '/user_topics', { stream_id: privateChannel, topic: 'the secret plan', visibility_policy: 1 }));
  await ok(t.api(bot, 'PUT', '/bot_storage', { storage: { token: 'bot secret' } }));
  // Presence: Hamlet's is seen by everyone; Othello is invisible (presence_enabled off), which the
  // API hides from everyone, administrators included.
  await ok(t.api(othello, 'PATCH', '/settings', { presence_enabled: false }));
  for (const u of [hamlet, othello]) await ok(t.api(u, 'POST', '/users/me/presence', { status: 'active' }));
  // Othello shows their address to no one, and does not consent; the owner consents.
  await ok(t.api(othello, 'PATCH', '/settings', { email_address_visibility: 4 }));
  await ok(t.api(owner, 'PATCH', '/settings', { allow_private_data_export: true }));
  // The organization's own default for new accounts, changed after everyone above was made.
  await ok(t.api(owner, 'PATCH', '/realm/user_settings_defaults', { enter_sends: true }));
});
after(() => t.close());

const usersOf = (realm: any, table: string, field = 'user_profile') => [...new Set(realm[table].map((r: any) => r[field]))].sort();

describe('a public export', () => {
  let realm: any;
  let attachments: any[];
  const realm_attachments = () => attachments.map((a: any) => a.file_name).sort();
  before(async () => {
    ({ realm, attachments } = await exportOf(1));
  });

  it("carries nobody's private rows", () => {
    for (const table of ['zerver_alertword', 'zerver_usertopic', 'zerver_muteduser', 'zerver_userstatus', 'zerver_savedsnippet', 'zerver_navigationview', 'zerver_botstoragedata', 'zerver_botconfigdata', 'zerver_service']) {
      assert.deepEqual(realm[table], [], table);
    }
    assert.ok(!JSON.stringify(realm).includes('the secret plan'));
  });

  it("carries the public message's upload only", () => {
    assert.deepEqual(realm_attachments(), ['public.txt']);
    const uploaded = tarballFiles[1].filter((n) => n.startsWith('uploads/') && n.endsWith('.txt')).map((n) => path.basename(n));
    assert.deepEqual(uploaded, ['public.txt']);
  });

  it('carries no group DM, nor its recipient or subscriptions', () => {
    assert.deepEqual(realm.zerver_huddle, []);
    assert.deepEqual(realm.zerver_recipient.filter((r: any) => r.type === 3), []);
    const recipients = new Set(realm.zerver_recipient.map((r: any) => r.id));
    assert.deepEqual(realm.zerver_subscription.filter((s: any) => !recipients.has(s.recipient)), []);
  });

  it('carries no personal settings nor subscription preferences: the importer defaults stand in', () => {
    const hamlet = realm.zerver_userprofile.find((u: any) => u.id === t.users.hamlet.id);
    assert.equal(hamlet.twenty_four_hour_time, false);
    assert.equal(hamlet.default_language, 'en');
    // The organization's defaults for new accounts (Zulip's RealmUserDefault), not the built-in ones.
    assert.equal(hamlet.enter_sends, true);
    // But for privacy controls: an invisible person stays invisible after the import, and who shows
    // their address to no one keeps that choice.
    const othello = realm.zerver_userprofile.find((u: any) => u.id === t.users.othello.id);
    assert.equal(othello.presence_enabled, false);
    assert.equal(othello.email_address_visibility, 4);
    const streamRecipient = realm.zerver_recipient.find((r: any) => r.type === 2 && r.type_id === publicChannel).id;
    for (const s of realm.zerver_subscription.filter((x: any) => x.recipient === streamRecipient)) {
      assert.equal(s.pin_to_top, false);
      assert.equal(s.is_muted, false);
    }
  });

  it("carries the presence people show, not an invisible person's", () => {
    const who = realm.zerver_userpresence.map((p: any) => p.user_profile);
    assert.ok(who.includes(t.users.hamlet.id));
    assert.ok(!who.includes(t.users.othello.id));
  });

  it('keeps every account usable, but for one whose address is shown to no one (a mirror dummy, as in Zulip)', () => {
    const state = (id: number) => {
      const u = realm.zerver_userprofile.find((x: any) => x.id === id);
      return [u.is_active, u.is_mirror_dummy];
    };
    assert.deepEqual(state(t.users.hamlet.id), [true, false]);
    assert.deepEqual(state(t.users.owner.id), [true, false]);
    assert.deepEqual(state(t.users.othello.id), [false, true]);
  });

  it("keeps the placeholder for an address shown to no one", () => {
    const othello = realm.zerver_userprofile.find((u: any) => u.id === t.users.othello.id);
    assert.notEqual(othello.delivery_email, t.users.othello.email);
    assert.ok(!JSON.stringify(realm).includes(t.users.othello.email));
  });
});

describe('a full export with member consent (the owner alone consents)', () => {
  let realm: any;
  let messages: any[];
  let attachments: any[];
  before(async () => {
    ({ realm, messages, attachments } = await exportOf(2));
  });

  it('carries no upload of a conversation the owner is not in', () => {
    assert.deepEqual(attachments.map((a: any) => a.file_name), ['public.txt']);
    assert.deepEqual(tarballFiles[2].filter((n) => n.startsWith('uploads/') && n.endsWith('.txt')).map((n) => path.basename(n)), ['public.txt']);
  });

  it("carries the consenting owner's private rows only", () => {
    const owner = [t.users.owner.id];
    assert.deepEqual(usersOf(realm, 'zerver_alertword'), owner);
    assert.deepEqual(usersOf(realm, 'zerver_usertopic'), owner);
    assert.deepEqual(usersOf(realm, 'zerver_muteduser'), owner);
    assert.deepEqual(usersOf(realm, 'zerver_userstatus'), owner);
    assert.deepEqual(usersOf(realm, 'zerver_savedsnippet'), owner);
    assert.deepEqual(usersOf(realm, 'zerver_navigationview', 'user'), owner);
    assert.deepEqual(realm.zerver_botstoragedata, []);
    assert.ok(!JSON.stringify(realm).includes('the secret plan'));
  });

  it('carries only the group DMs a consenting person is in', () => {
    const owners = realm.zerver_recipient.filter((r: any) => r.type === 3);
    assert.equal(owners.length, 1);
    assert.deepEqual(realm.zerver_huddle.map((h: any) => h.id), owners.map((r: any) => r.type_id));
    const members = realm.zerver_subscription.filter((s: any) => s.recipient === owners[0].recipient || s.recipient === owners[0].id).map((s: any) => s.user_profile).sort();
    assert.deepEqual(members, [t.users.owner.id, t.users.hamlet.id, t.users.othello.id].sort());
    assert.deepEqual(messages.map((m) => m.content).filter((c) => c.includes('group DM')), ['a group DM with the consenting owner']);
  });

  it('carries of a protected-history channel only what the consenting owner could read (after joining)', () => {
    const vault = messages.map((m) => m.content).filter((c) => c.includes('the owner came'));
    assert.deepEqual(vault, ['after the owner came']);
  });

  it('turns the active people who did not consent into mirror dummies (they sign up again after the import), as Zulip', () => {
    const state = (id: number) => {
      const u = realm.zerver_userprofile.find((x: any) => x.id === id);
      return [u.is_active, u.is_mirror_dummy];
    };
    assert.deepEqual(state(t.users.owner.id), [true, false]);
    for (const who of ['hamlet', 'othello', 'admin', 'bot'] as const) assert.deepEqual(state(t.users[who].id), [false, true], who);
  });

  it('keeps the real address of no one who hides it and did not consent', () => {
    const othello = realm.zerver_userprofile.find((u: any) => u.id === t.users.othello.id);
    assert.notEqual(othello.delivery_email, t.users.othello.email);
    assert.ok(!JSON.stringify(realm).includes(t.users.othello.email));
  });

  it("carries the consenting owner's settings, and not Hamlet's", () => {
    const users = new Map(realm.zerver_userprofile.map((u: any) => [u.id, u]));
    assert.equal((users.get(t.users.owner.id) as any).default_language, 'de');
    assert.equal((users.get(t.users.hamlet.id) as any).default_language, 'en');
    const streamRecipient = realm.zerver_recipient.find((r: any) => r.type === 2 && r.type_id === publicChannel).id;
    const subs = new Map(realm.zerver_subscription.filter((x: any) => x.recipient === streamRecipient).map((s: any) => [s.user_profile, s]));
    assert.equal((subs.get(t.users.owner.id) as any).pin_to_top, true);
    assert.equal((subs.get(t.users.hamlet.id) as any).pin_to_top, false);
  });
});

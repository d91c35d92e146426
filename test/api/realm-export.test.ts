// Data exports over the API (Zulip's zerver/tests/test_realm_export.py): POST/GET /export/realm, DELETE
// /export/realm/{export_id}, GET /export/realm/consents, the realm_export and realm_export_consent
// events, the tarball's download, what public and consent exports leave out, the export running in
// another process while the server answers, and a restart marking an unfinished export failed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createApp } from '../../src/app';
import { EXPORT_STATUS, failInterruptedExports, realmExportsSerialized } from '../../src/actions/realm-export';
import { doCreateUser } from '../../src/actions/users';
import { supportAddress } from '../../src/lib/email';
import { ROLE } from '../../src/lib/roles';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { runCli } from '../helpers/cli';
import { readTarGz } from '../helpers/tarball';
import { until } from '../helpers/wait';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The export `id` as GET /export/realm lists it, once it is no longer pending. */
async function finished(t: TestServer, id: number): Promise<any> {
  return until(`export ${id}`, async () => {
    const res = await t.api(t.users.owner, 'GET', '/export/realm');
    const e = res.body.exports.find((x: any) => x.id === id);
    return e && !e.pending ? e : undefined;
  });
}

const ADMIN_ONLY = err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');

describe('data exports', () => {
  let t: TestServer;
  let publicChannel: number;
  let sharedPrivate: number;
  let protectedPrivate: number;
  const sent: Record<string, number> = {};
  const scheduledBy: Record<string, number> = {};

  before(async () => {
    t = await startTestServer();
    const { owner, hamlet, othello, admin } = t.users;
    publicChannel = await createChannel(t, owner, 'town square', [hamlet, othello]);
    sharedPrivate = await createChannel(t, owner, 'owners lounge', [owner], { invite_only: true });
    protectedPrivate = await createChannel(t, hamlet, 'hamlet hideout', [hamlet, othello], { invite_only: true, history_public_to_subscribers: false });
    sent.public = await sendToChannel(t, hamlet, publicChannel, 'hello', 'a public message');
    sent.sharedPrivate = await sendToChannel(t, owner, sharedPrivate, 'plans', 'owners only');
    sent.protectedPrivate = await sendToChannel(t, hamlet, protectedPrivate, 'secrets', 'hamlet and othello only');
    sent.ownerDm = await sendDirect(t, hamlet, [owner], 'a word with the owner');
    sent.membersDm = await sendDirect(t, hamlet, [othello], 'between members');
    sent.groupDm = await sendDirect(t, admin, [hamlet, othello], 'group chat without the owner');
    const later = Math.floor(Date.now() / 1000) + 86400;
    for (const [name, u, to] of [['hamlet', hamlet, othello], ['othello', othello, hamlet]] as const) {
      const res = await t.api(u, 'POST', '/scheduled_messages', { type: 'direct', to: [to.id], content: 'later', scheduled_delivery_timestamp: later });
      assert.equal(res.status, 200, res.text);
      scheduledBy[name] = res.body.scheduled_message_id;
    }
    // Othello shows their address to no one: a public export keeps their placeholder instead.
    assert.equal((await t.api(othello, 'PATCH', '/settings', { email_address_visibility: 4 })).status, 200);
  });
  after(() => t.close());

  describe('permissions and input', () => {
    for (const who of ['hamlet', 'moderator', 'guest', 'bot'] as const) {
      it(`refuses a ${who} on every route`, async () => {
        const u = t.users[who];
        for (const [method, p] of [
          ['POST', '/export/realm'],
          ['GET', '/export/realm'],
          ['DELETE', '/export/realm/1'],
          ['GET', '/export/realm/consents'],
        ] as const) {
          const res = await t.api(u, method, p);
          assert.equal(res.status, 400, `${method} ${p}`);
          assert.deepEqual(res.body, ADMIN_ONLY);
        }
      });
    }

    it('refuses a deactivated administrator (their key no longer works)', async () => {
      const u = doCreateUser(t.app, { realmId: t.app.realmId(), email: 'retired-admin@example.com', password: null, fullName: 'Retired', role: ROLE.ADMINISTRATOR, botType: null, botOwnerId: null, acting: null });
      t.app.batch.commit();
      const retired: TestUser = { id: u.userId, email: 'retired-admin@example.com', apiKey: u.apiKey, password: '', fullName: 'Retired' };
      assert.equal((await t.api(retired, 'GET', '/export/realm')).status, 200);
      assert.equal((await t.api(t.users.owner, 'DELETE', `/users/${retired.id}`)).status, 200);
      const res = await t.api(retired, 'POST', '/export/realm');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'USER_DEACTIVATED');
      assert.deepEqual((await t.api(t.users.owner, 'GET', '/export/realm')).body.exports, []);
    });

    it('refuses export types other than 1 and 2, and values that are not integers', async () => {
      for (const bad of [0, 3, -1, 2 ** 31]) {
        const res = await t.api(t.users.owner, 'POST', '/export/realm', { export_type: bad });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, err('Invalid export_type: Value error, Not in the list of possible values'));
      }
      for (const bad of ['x', '1.5', '"1"', '[1]', '', String(2 ** 64)]) {
        const res = await t.api(t.users.owner, 'POST', '/export/realm', { export_type: bad });
        assert.equal(res.status, 400, bad);
        assert.equal(res.body.result, 'error', bad);
        assert.match(res.body.msg, /export_type/, bad);
      }
      assert.deepEqual((await t.api(t.users.owner, 'GET', '/export/realm')).body.exports, []);
    });

    it('DELETE of an unknown, huge or malformed id', async () => {
      for (const id of ['0', '999999', '9007199254740993', '99999999999999999999999']) {
        const res = await t.api(t.users.owner, 'DELETE', `/export/realm/${id}`);
        assert.equal(res.status, 400, id);
        assert.deepEqual(res.body, err('Invalid data export ID'), id);
      }
      const res = await t.api(t.users.owner, 'DELETE', '/export/realm/abc');
      assert.equal(res.status, 404);
    });
  });

  describe('GET /export/realm/consents and realm_export_consent', () => {
    it('lists every active person (no bots) with their consent, and tells administrators when it changes', async () => {
      const res = await t.api(t.users.admin, 'GET', '/export/realm/consents');
      assert.equal(res.status, 200, res.text);
      const humans = ['owner', 'admin', 'moderator', 'hamlet', 'othello', 'guest'] as const;
      assert.deepEqual(res.body, { ...SUCCESS, export_consents: humans.map((n) => ({ user_id: t.users[n].id, consented: false })).sort((a, b) => a.user_id - b.user_id) });

      const adminQueue = await registerQueue(t, t.users.admin, ['realm_export_consent']);
      const memberQueue = await registerQueue(t, t.users.othello, ['realm_export_consent']);
      for (const u of [t.users.owner, t.users.hamlet]) {
        assert.equal((await t.api(u, 'PATCH', '/settings', { allow_private_data_export: true })).status, 200);
      }
      assert.deepEqual(await queuedEvents(t, t.users.admin, adminQueue), [
        { type: 'realm_export_consent', user_id: t.users.owner.id, consented: true },
        { type: 'realm_export_consent', user_id: t.users.hamlet.id, consented: true },
      ]);
      assert.deepEqual(await queuedEvents(t, t.users.othello, memberQueue), []);
      const after = await t.api(t.users.owner, 'GET', '/export/realm/consents');
      const consented = after.body.export_consents.filter((c: any) => c.consented).map((c: any) => c.user_id);
      assert.deepEqual(consented, [t.users.owner.id, t.users.hamlet.id].sort((a, b) => a - b));
    });
  });

  describe('a public export, start to download to delete', () => {
    let id: number;
    let listed: any;
    let tarball: Map<string, Buffer>;

    it('answers {id} at once, and administrators hear that it is pending, then done', async () => {
      const ownerQueue = await registerQueue(t, t.users.owner, ['realm_export', 'message']);
      const adminQueue = await registerQueue(t, t.users.admin, ['realm_export']);
      const memberQueue = await registerQueue(t, t.users.hamlet, ['realm_export']);
      const res = await t.api(t.users.owner, 'POST', '/export/realm', { export_type: 1 });
      assert.equal(res.status, 200, res.text);
      id = res.body.id;
      assert.deepEqual(res.body, { ...SUCCESS, id });
      listed = await finished(t, id);
      const exportTime = listed.export_time;
      assert.equal(typeof exportTime, 'number');
      assert.ok(Number.isInteger(exportTime));
      assert.match(listed.export_url, new RegExp(`^${t.url}/user_avatars/exports/${t.app.realmId()}/[A-Za-z0-9_-]{24}/zulip-export-[0-9a-f]{8}\\.tar\\.gz$`));
      assert.deepEqual(listed, {
        id,
        export_time: exportTime,
        acting_user_id: t.users.owner.id,
        export_url: listed.export_url,
        deleted_timestamp: null,
        failed_timestamp: null,
        pending: false,
        export_type: 1,
      });
      const pending = { ...listed, export_url: null, pending: true };
      const events = await queuedEvents(t, t.users.admin, adminQueue);
      assert.deepEqual(events, [
        { type: 'realm_export', exports: [pending] },
        { type: 'realm_export', exports: [listed] },
      ]);
      assert.deepEqual(await queuedEvents(t, t.users.hamlet, memberQueue), []);
      // The DM from Notification Bot, with Zulip's text.
      const ownerEvents = await queuedEvents(t, t.users.owner, ownerQueue);
      const dm = ownerEvents.filter((e) => e.type === 'message').map((e) => e.message);
      assert.equal(dm.length, 1);
      assert.equal(dm[0].sender_full_name, 'Notification Bot');
      assert.equal(dm[0].type, 'private');
      assert.deepEqual(dm[0].display_recipient.map((r: any) => r.id).sort(), [t.users.owner.id, dm[0].sender_id].sort());
      const raw = await t.api(t.users.owner, 'GET', `/messages/${dm[0].id}`, { apply_markdown: false });
      assert.equal(raw.body.message.content, 'Your data export is complete. [View and download exports](/#organization/data-exports-admin).');
      sent.exportDm = dm[0].id;
    });

    it('GET /export/realm lists it with its whole body', async () => {
      const res = await t.api(t.users.admin, 'GET', '/export/realm');
      assert.deepEqual(res.body, { ...SUCCESS, exports: [listed] });
    });

    it('the tarball: administrators may fetch it; anyone else, or another path, may not', async () => {
      const urlPath = new URL(listed.export_url).pathname;
      for (const u of [t.users.owner, t.users.admin]) {
        const res = await fetch(t.url + urlPath, { headers: { authorization: 'Basic ' + Buffer.from(`${u.email}:${u.apiKey}`).toString('base64') } });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-disposition')?.startsWith('attachment'), true);
        const bytes = Buffer.from(await res.arrayBuffer());
        tarball ??= await readTarGz(bytes, { withoutTopDir: true });
      }
      for (const who of ['hamlet', 'moderator', 'guest', 'bot'] as const) {
        const u = t.users[who];
        const res = await fetch(t.url + urlPath, { headers: { authorization: 'Basic ' + Buffer.from(`${u.email}:${u.apiKey}`).toString('base64') } });
        assert.equal(res.status, 403, who);
        assert.equal(await res.text(), '<p>You are not authorized to view this file.</p>');
      }
      const anonymous = await fetch(t.url + urlPath);
      assert.equal(anonymous.status, 401);
      const owner = t.users.owner;
      const auth = { authorization: 'Basic ' + Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64') };
      const parts = urlPath.split('/');
      for (const wrong of [
        urlPath.replace(`/exports/${t.app.realmId()}/`, `/exports/${t.app.realmId() + 1}/`),
        [...parts.slice(0, -2), 'A'.repeat(24), parts[parts.length - 1]].join('/'),
        [...parts.slice(0, -1), 'zulip-export-00000000.tar.gz'].join('/'),
        [...parts.slice(0, -1), '..%2F..%2Fparley.db'].join('/'),
      ]) {
        const res = await fetch(t.url + wrong, { headers: auth });
        assert.equal(res.status, 404, wrong);
      }
      // Kept readable by the server's user only, inside the data directory.
      const dir = path.join(t.dataDir, 'exports', String(t.app.realmId()), parts[parts.length - 2]);
      assert.equal(fs.statSync(path.join(dir, parts[parts.length - 1])).mode & 0o777, 0o600);
      assert.deepEqual(fs.readdirSync(dir), [parts[parts.length - 1]]);
    });

    it('leaves out private channels\' messages and direct messages, and the scheduled messages', async () => {
      const messages = JSON.parse(tarball.get('messages-000001.json')!.toString());
      assert.deepEqual(
        messages.zerver_message.map((m: any) => m.id),
        [sent.public],
      );
      // Every person's rows of the exported messages (a public export has no consent filter on them).
      const holders = messages.zerver_usermessage.map((r: any) => r.user_profile).sort((a: number, b: number) => a - b);
      assert.deepEqual(holders, [t.users.hamlet.id, t.users.othello.id].sort((a, b) => a - b));
      const realm = JSON.parse(tarball.get('realm.json')!.toString());
      assert.deepEqual(realm.zerver_scheduledmessage, []);
      // An address its owner shows no one is replaced by the placeholder; others stay.
      const users = new Map(realm.zerver_userprofile.map((u: any) => [u.id, u]));
      const othello = users.get(t.users.othello.id) as any;
      assert.notEqual(othello.email, t.users.othello.email);
      assert.equal(othello.delivery_email, othello.email);
      assert.equal((users.get(t.users.hamlet.id) as any).delivery_email, t.users.hamlet.email);
      // Every channel is still there, private ones included (only their messages are left out).
      assert.deepEqual(
        realm.zerver_stream.map((s: any) => s.id).sort(),
        [publicChannel, sharedPrivate, protectedPrivate].sort(),
      );
      const stats = JSON.parse(tarball.get('stats.json')!.toString());
      assert.deepEqual(stats['messages-000001'], { zerver_message: 1, zerver_usermessage: 2 });
    });

    it('DELETE removes the file and marks it deleted; a second DELETE is refused', async () => {
      const queue = await registerQueue(t, t.users.admin, ['realm_export']);
      const urlPath = new URL(listed.export_url).pathname;
      const res = await t.api(t.users.admin, 'DELETE', `/export/realm/${id}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, SUCCESS);
      const list = await t.api(t.users.owner, 'GET', '/export/realm');
      const deleted = list.body.exports[0];
      assert.equal(typeof deleted.deleted_timestamp, 'number');
      assert.deepEqual(list.body.exports, [{ ...listed, export_url: null, deleted_timestamp: deleted.deleted_timestamp }]);
      assert.deepEqual(await queuedEvents(t, t.users.admin, queue), [{ type: 'realm_export', exports: list.body.exports }]);
      const owner = t.users.owner;
      const gone = await fetch(t.url + urlPath, { headers: { authorization: 'Basic ' + Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64') } });
      assert.equal(gone.status, 404);
      assert.deepEqual(fs.readdirSync(path.join(t.dataDir, 'exports', String(t.app.realmId()))), []);
      const again = await t.api(t.users.admin, 'DELETE', `/export/realm/${id}`);
      assert.deepEqual(again.body, err('Export already deleted'));
    });
  });

  describe('a full export with member consent', () => {
    it('keeps what consenting people can read, and only their per-user rows', async () => {
      // Owner and Hamlet consented above.
      const res = await t.api(t.users.admin, 'POST', '/export/realm', { export_type: 2 });
      assert.equal(res.status, 200, res.text);
      const done = await finished(t, res.body.id);
      assert.equal(done.export_type, 2);
      assert.equal(done.acting_user_id, t.users.admin.id);
      const admin = t.users.admin;
      const bytes = Buffer.from(
        await (await fetch(done.export_url, { headers: { authorization: 'Basic ' + Buffer.from(`${admin.email}:${admin.apiKey}`).toString('base64') } })).arrayBuffer(),
      );
      const files = await readTarGz(bytes, { withoutTopDir: true });
      const messages = JSON.parse(files.get('messages-000001.json')!.toString());
      // Hamlet (consenting) is in every conversation but the owners' lounge, which the consenting
      // owner reads (shared history): every message goes in.
      const ids = messages.zerver_message.map((m: any) => m.id);
      // and Notification Bot's message to the consenting owner about the first export.
      assert.deepEqual(ids, [sent.public, sent.sharedPrivate, sent.protectedPrivate, sent.ownerDm, sent.membersDm, sent.groupDm, sent.exportDm]);
      const holders = [...new Set(messages.zerver_usermessage.map((r: any) => r.user_profile))].sort();
      assert.deepEqual(holders, [t.users.owner.id, t.users.hamlet.id].sort());
      const realm = JSON.parse(files.get('realm.json')!.toString());
      assert.deepEqual(
        realm.zerver_scheduledmessage.map((s: any) => s.id),
        [scheduledBy.hamlet],
      );
      // Real addresses stay in a consent export, but for those who show theirs to no one and did not
      // consent (Zulip's custom_fetch_user_profile): Othello keeps the placeholder.
      const othello = realm.zerver_userprofile.find((u: any) => u.id === t.users.othello.id);
      assert.equal(othello.delivery_email, othello.email);
      assert.notEqual(othello.delivery_email, t.users.othello.email);
      const hamlet = realm.zerver_userprofile.find((u: any) => u.id === t.users.hamlet.id);
      assert.equal(hamlet.delivery_email, t.users.hamlet.email);
    });

    it('leaves out what no consenting person can read', async () => {
      // Hamlet withdraws: the owner alone consents. The owner reads the lounge (shared history), the
      // public channel, and the DM Hamlet sent them; not Hamlet's hideout, nor the members' DMs.
      assert.equal((await t.api(t.users.hamlet, 'PATCH', '/settings', { allow_private_data_export: false })).status, 200);
      const res = await t.api(t.users.owner, 'POST', '/export/realm', { export_type: 2 });
      assert.equal(res.status, 200, res.text);
      const done = await finished(t, res.body.id);
      const file = path.join(t.dataDir, 'exports', ...new URL(done.export_url).pathname.split('/').slice(3));
      const files = await readTarGz(fs.readFileSync(file), { withoutTopDir: true });
      const messages = JSON.parse(files.get('messages-000001.json')!.toString());
      assert.deepEqual(
        messages.zerver_message.map((m: any) => m.id),
        [sent.public, sent.sharedPrivate, sent.ownerDm, sent.exportDm],
      );
      assert.deepEqual([...new Set(messages.zerver_usermessage.map((r: any) => r.user_profile))], [t.users.owner.id]);
      const realm = JSON.parse(files.get('realm.json')!.toString());
      assert.deepEqual(realm.zerver_scheduledmessage, []);
    });
  });

  describe('refusals before anything starts', () => {
    it('with no consenting owner, a consent export is refused; with no owner address readable by admins, a public one', async () => {
      const email = supportAddress(t.app);
      assert.equal((await t.api(t.users.owner, 'PATCH', '/settings', { allow_private_data_export: false })).status, 200);
      const consent = await t.api(t.users.admin, 'POST', '/export/realm', { export_type: 2 });
      assert.deepEqual(consent.body, err(`Make sure at least one Organization Owner is consenting to the export or contact ${email} for help.`));
      assert.equal((await t.api(t.users.owner, 'PATCH', '/settings', { email_address_visibility: 4 })).status, 200);
      const pub = await t.api(t.users.admin, 'POST', '/export/realm');
      assert.deepEqual(pub.body, err(`Make sure at least one Organization Owner allows other Administrators to see their email address or contact ${email} for help`));
      assert.equal((await t.api(t.users.owner, 'PATCH', '/settings', { email_address_visibility: 3 })).status, 200);
    });

    it('more uploads than Zulip exports over the API: a manual export', async () => {
      const db = t.app.db;
      db.prepare(
        `INSERT INTO attachment (realm_id, owner_id, path_id, file_name, content_type, size, create_time) VALUES (?, ?, 'huge/file', 'huge', 'application/octet-stream', ?, 0)`,
      ).run(t.app.realmId(), t.users.owner.id, 21 * 1024 ** 3);
      try {
        const res = await t.api(t.users.admin, 'POST', '/export/realm');
        assert.deepEqual(res.body, err(`Please request a manual export from ${supportAddress(t.app)}.`));
      } finally {
        db.prepare(`DELETE FROM attachment WHERE path_id = 'huge/file'`).run();
      }
    });

    it('five exports in a week: "Exceeded rate limit."', async () => {
      const db = t.app.db;
      assert.equal(db.prepare('SELECT count(*) FROM realm_export').pluck().get(), 3);
      const add = db.prepare('INSERT INTO realm_export (realm_id, acting_user_id, type, status, date_requested, date_failed) VALUES (?, ?, 1, ?, ?, ?)');
      const now = Date.now() / 1000;
      // One a little over a week old does not count; two recent ones make five.
      add.run(t.app.realmId(), t.users.admin.id, EXPORT_STATUS.FAILED, now - 7 * 86400 - 60, now - 7 * 86400 - 60);
      add.run(t.app.realmId(), t.users.admin.id, EXPORT_STATUS.FAILED, now, now);
      const stillOk = db.prepare('SELECT count(*) FROM realm_export WHERE date_requested >= ?').pluck().get(now - 7 * 86400);
      assert.equal(stillOk, 4);
      add.run(t.app.realmId(), t.users.admin.id, EXPORT_STATUS.FAILED, now, now);
      const nope = await t.api(t.users.admin, 'POST', '/export/realm');
      assert.deepEqual(nope.body, err('Exceeded rate limit.'));
    });
  });

  describe("another organization's export", () => {
    it('is unknown here: DELETE and the download answer as for no export', async () => {
      const db = t.app.db;
      const otherRealm = Number(db.prepare(`INSERT INTO realm (string_id, name, date_created) VALUES ('other', 'Other', 0)`).run().lastInsertRowid);
      const otherUser = Number(
        db.prepare(`INSERT INTO user (realm_id, email, delivery_email, full_name, role, api_key, date_joined) VALUES (?, 'x@other.example', 'x@other.example', 'X', 100, 'k', 0)`).run(otherRealm).lastInsertRowid,
      );
      const path1 = `/user_avatars/exports/${otherRealm}/${'B'.repeat(24)}/zulip-export-11111111.tar.gz`;
      const otherExport = Number(
        db.prepare('INSERT INTO realm_export (realm_id, acting_user_id, type, status, date_requested, export_path) VALUES (?, ?, 1, ?, 0, ?)').run(otherRealm, otherUser, EXPORT_STATUS.SUCCEEDED, path1).lastInsertRowid,
      );
      const res = await t.api(t.users.owner, 'DELETE', `/export/realm/${otherExport}`);
      assert.deepEqual(res.body, err('Invalid data export ID'));
      const owner = t.users.owner;
      const dl = await fetch(t.url + path1, { headers: { authorization: 'Basic ' + Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64') } });
      assert.equal(dl.status, 404);
      assert.ok(!(await t.api(owner, 'GET', '/export/realm')).body.exports.some((e: any) => e.id === otherExport));
    });
  });
});

describe('an export runs in another process', () => {
  let t: TestServer;
  let channel: number;
  before(async () => {
    t = await startTestServer();
    channel = await createChannel(t, t.users.owner, 'busy', [t.users.hamlet]);
    for (let i = 0; i < 3; i++) await sendToChannel(t, t.users.owner, channel, 'busy', `message ${i}`);
  });
  after(() => t.close());

  it('the server answers while it runs; a failure is recorded; a restart marks an unfinished one failed', async () => {
    // The export stops after realm.json and waits (PARLEY_EXPORT_TEST_STALL_AFTER, read by the child).
    process.env.PARLEY_EXPORT_TEST_STALL_AFTER = 'realm.json';
    let id: number;
    try {
      const res = await t.api(t.users.owner, 'POST', '/export/realm');
      assert.equal(res.status, 200, res.text);
      id = res.body.id;
      // The child has written part of the tarball and is waiting: the export is under way.
      const realmDir = path.join(t.dataDir, 'exports', String(t.app.realmId()));
      await until('the partial tarball', () => {
        for (const token of fs.existsSync(realmDir) ? fs.readdirSync(realmDir) : []) {
          for (const f of fs.readdirSync(path.join(realmDir, token))) if (f.includes('.partial-') && fs.statSync(path.join(realmDir, token, f)).size > 0) return true;
        }
        return undefined;
      });
    } finally {
      delete process.env.PARLEY_EXPORT_TEST_STALL_AFTER;
    }
    await sleep(300);
    // The server keeps answering, and writing, while the export runs.
    const me = await t.api(t.users.hamlet, 'GET', '/users/me');
    assert.equal(me.status, 200);
    const msg = await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: channel, topic: 'during', content: 'still here' });
    assert.equal(msg.status, 200, msg.text);
    const during = (await t.api(t.users.owner, 'GET', '/export/realm')).body.exports;
    assert.deepEqual(during.map((e: any) => [e.id, e.pending, e.export_url, e.failed_timestamp]), [[id, true, null, null]]);
    const stillRunning = await t.api(t.users.owner, 'DELETE', `/export/realm/${id}`);
    assert.deepEqual(stillRunning.body, err('Export still in progress'));

    // A restart: this server stops (its export process with it) and another starts on the data dir.
    t.app.shutdown();
    await sleep(200);
    const app2 = createApp({ ...t.app.config }, { logSink: null });
    try {
      failInterruptedExports(app2);
      const [e] = realmExportsSerialized(app2, t.app.realmId());
      assert.equal(typeof e.failed_timestamp, 'number');
      assert.deepEqual(e, { ...during[0], pending: false, failed_timestamp: e.failed_timestamp });
      const row = app2.db.prepare('SELECT status FROM realm_export WHERE id = ?').get(id) as { status: number };
      assert.equal(row.status, EXPORT_STATUS.FAILED);
      // Nothing of it is left in the data directory.
      await until('the export process to remove its files', () => {
        const realmDir = path.join(t.dataDir, 'exports', String(t.app.realmId()));
        return fs.readdirSync(realmDir).length === 0 ? true : undefined;
      });
    } finally {
      app2.close();
    }
  });
});

describe('an export that cannot be written', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  it('is marked failed, the event says so, and DELETE has nothing to delete', async () => {
    // A file where the exports folder should be: the tarball has nowhere to go.
    fs.writeFileSync(path.join(t.dataDir, 'exports'), 'in the way');
    const queue = await registerQueue(t, t.users.owner, ['realm_export']);
    const res = await t.api(t.users.owner, 'POST', '/export/realm');
    assert.equal(res.status, 200, res.text);
    const done = await finished(t, res.body.id);
    assert.equal(typeof done.failed_timestamp, 'number');
    assert.deepEqual(done, {
      id: res.body.id,
      export_time: done.export_time,
      acting_user_id: t.users.owner.id,
      export_url: null,
      deleted_timestamp: null,
      failed_timestamp: done.failed_timestamp,
      pending: false,
      export_type: 1,
    });
    assert.deepEqual(await queuedEvents(t, t.users.owner, queue), [
      { type: 'realm_export', exports: [{ ...done, pending: true, failed_timestamp: null }] },
      { type: 'realm_export', exports: [done] },
    ]);
    const del = await t.api(t.users.owner, 'DELETE', `/export/realm/${res.body.id}`);
    assert.deepEqual(del.body, err('Export failed, nothing to delete'));
  });

  it('a person reactivated: administrators hear their consent again (realm_export_consent)', async () => {
    const { admin, owner, othello, hamlet } = t.users;
    assert.equal((await t.api(othello, 'PATCH', '/settings', { allow_private_data_export: true })).status, 200);
    assert.equal((await t.api(admin, 'DELETE', `/users/${othello.id}`)).status, 200);
    const adminQueue = await registerQueue(t, admin, ['realm_export_consent']);
    const ownerQueue = await registerQueue(t, owner, ['realm_export_consent']);
    const memberQueue = await registerQueue(t, hamlet, ['realm_export_consent']);
    const res = await t.api(admin, 'POST', `/users/${othello.id}/reactivate`);
    assert.equal(res.status, 200, res.text);
    const expected = [{ type: 'realm_export_consent', user_id: othello.id, consented: true }];
    assert.deepEqual(await queuedEvents(t, admin, adminQueue), expected);
    assert.deepEqual(await queuedEvents(t, owner, ownerQueue), expected);
    assert.deepEqual(await queuedEvents(t, hamlet, memberQueue), []);
    // A bot's reactivation says nothing about consent.
    const off = await t.api(admin, 'DELETE', `/bots/${t.users.bot.id}`);
    assert.equal(off.status, 200, off.text);
    const on = await t.api(admin, 'POST', `/users/${t.users.bot.id}/reactivate`);
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(await queuedEvents(t, admin, adminQueue), expected);
  });
});

describe('parley export --export-type', () => {
  it('takes public or consent, and refuses anything else', async () => {
    const r = await runCli(['export', '--data-dir', '/nonexistent', '--export-type', 'everything', '/tmp/x.tar.gz']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^parley: --export-type must be public or consent, not 'everything'\nusage: parley export /);
  });
});

// Who may reach a data export, and how, beyond test/api/realm-export.test.ts: the web app's session
// (the /json routes and the tarball by cookie, as the settings page links it), an administrator bot
// (Zulip's require_realm_admin lets any administrator in, bots included), a person demoted or
// deactivated after the export, and the folders the tarball lives in (the server's user only).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { doCreateUser } from '../../src/actions/users';
import { BOT_TYPE, ROLE } from '../../src/lib/roles';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { err, SUCCESS } from '../helpers/chat';
import { json, webLogin, type WebSession } from '../helpers/web';
import { queuedEvents, registerQueue } from '../helpers/events';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestServer;
let adminBot: TestUser;
let exportUrl: string;
let exportId: number;

const fetchAs = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });

before(async () => {
  t = await startTestServer();
  const b = doCreateUser(t.app, {
    realmId: t.app.realmId(), email: 'admin-bot@example.com', password: null, fullName: 'Admin Bot', role: ROLE.ADMINISTRATOR,
    botType: BOT_TYPE.GENERIC, botOwnerId: t.users.admin.id, acting: null,
  });
  t.app.batch.commit();
  adminBot = { id: b.userId, email: 'admin-bot@example.com', apiKey: b.apiKey, password: '', fullName: 'Admin Bot' };
  await t.api(t.users.owner, 'PATCH', '/settings', { allow_private_data_export: true });
});
after(() => t.close());

describe('an export asked for from the web app', () => {
  let owner: WebSession;

  it('POST and GET /json/export/realm work with the session of an administrator', async () => {
    owner = await webLogin(t, t.users.owner);
    const adminQueue = await registerQueue(t, t.users.admin, ['message']);
    const ownerQueue = await registerQueue(t, t.users.owner, ['message']);
    const res = await json(t, owner, 'POST', '/export/realm', { export_type: 1 });
    assert.equal(res.status, 200, res.text);
    exportId = res.body.id;
    assert.deepEqual(res.body, { ...SUCCESS, id: exportId });
    const end = Date.now() + 60_000;
    for (;;) {
      const list = await json(t, owner, 'GET', '/export/realm');
      const e = list.body.exports.find((x: any) => x.id === exportId);
      if (e && !e.pending) {
        assert.equal(e.failed_timestamp, null);
        exportUrl = e.export_url;
        // Notification Bot tells the one who asked, no other administrator.
        assert.deepEqual(await queuedEvents(t, t.users.admin, adminQueue), []);
        const dms = (await queuedEvents(t, t.users.owner, ownerQueue)).map((x) => [
          x.message.sender_full_name,
          x.message.display_recipient.map((r: any) => r.id).filter((id: number) => id !== x.message.sender_id),
        ]);
        assert.deepEqual(dms, [['Notification Bot', [t.users.owner.id]]]);
        break;
      }
      if (Date.now() > end) throw new Error('export timed out');
      await sleep(100);
    }
  });

  it("refuses a member's session on every route", async () => {
    const hamlet = await webLogin(t, t.users.hamlet);
    for (const [method, p] of [['POST', '/export/realm'], ['GET', '/export/realm'], ['DELETE', `/export/realm/${exportId}`], ['GET', '/export/realm/consents']] as const) {
      const res = await json(t, hamlet, method, p);
      assert.equal(res.status, 400, `${method} ${p}`);
      assert.deepEqual(res.body, err('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'));
    }
  });

  it('the tarball by session cookie: administrators yes, a member or a guest no, no cookie no', async () => {
    const ok = await fetchAs(exportUrl, { cookie: owner.session });
    assert.equal(ok.status, 200);
    assert.equal((await ok.arrayBuffer()).byteLength > 0, true);
    for (const who of ['hamlet', 'guest'] as const) {
      const s = await webLogin(t, t.users[who]);
      const res = await fetchAs(exportUrl, { cookie: s.session });
      assert.equal(res.status, 403, who);
      assert.equal(await res.text(), '<p>You are not authorized to view this file.</p>');
    }
    const none = await fetchAs(exportUrl);
    assert.equal(none.status, 401);
    await none.arrayBuffer();
  });

  it('keeps the tarball in folders only the server can enter', () => {
    const parts = new URL(exportUrl).pathname.split('/').slice(3);
    const exports = path.join(t.dataDir, 'exports');
    for (const dir of [exports, path.join(exports, parts[0]), path.join(exports, parts[0], parts[1])]) {
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700, dir);
    }
    assert.equal(fs.statSync(path.join(exports, ...parts)).mode & 0o777, 0o600);
  });
});

describe('an administrator bot', () => {
  it('may list, fetch and ask for exports, as in Zulip', async () => {
    const list = await t.api(adminBot, 'GET', '/export/realm');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.exports.map((e: any) => e.id), [exportId]);
    const res = await fetchAs(exportUrl, { authorization: 'Basic ' + Buffer.from(`${adminBot.email}:${adminBot.apiKey}`).toString('base64') });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const consents = await t.api(adminBot, 'GET', '/export/realm/consents');
    // Active humans only: the bot is not listed.
    assert.ok(!consents.body.export_consents.some((c: any) => c.user_id === adminBot.id));
  });
});

describe('after the export', () => {
  it('a demoted administrator can no longer fetch it; a deactivated one is not let in', async () => {
    const s = await webLogin(t, t.users.admin);
    assert.equal((await fetchAs(exportUrl, { cookie: s.session })).status, 200);
    const demote = await t.api(t.users.owner, 'PATCH', `/users/${t.users.admin.id}`, { role: ROLE.MEMBER });
    assert.equal(demote.status, 200, demote.text);
    const demoted = await fetchAs(exportUrl, { cookie: s.session });
    assert.equal(demoted.status, 403);
    await demoted.text();
    const restore = await t.api(t.users.owner, 'PATCH', `/users/${t.users.admin.id}`, { role: ROLE.ADMINISTRATOR });
    assert.equal(restore.status, 200, restore.text);
    assert.equal((await t.api(t.users.owner, 'DELETE', `/users/${t.users.admin.id}`)).status, 200);
    const gone = await fetchAs(exportUrl, { authorization: 'Basic ' + Buffer.from(`${t.users.admin.email}:${t.users.admin.apiKey}`).toString('base64') });
    assert.equal(gone.status, 401);
    await gone.text();
    const goneSession = await fetchAs(exportUrl, { cookie: s.session });
    assert.notEqual(goneSession.status, 200);
    await goneSession.text();
  });
});

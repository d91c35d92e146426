// Isolation of uploaded files: who may fetch /user_uploads/... (and its download and temporary-URL
// variants) for files referenced only in a direct message, a private channel (shared or protected
// history), a public channel, or nowhere. Zulip's validate_attachment_request: the uploader; anyone who
// received a message linking it; subscribers who can read a linking channel's history; members (not
// guests) for a public channel. Refusals are the 403 page, never the file; GET /attachments lists only
// one's own uploads.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { doCreateUser } from '../../src/actions/users';
import { BOT_TYPE, ROLE } from '../../src/lib/roles';

let t: TestServer;
let otherBot: TestUser;
let gone: TestUser;
type FileKey = 'dm' | 'shared' | 'protected' | 'public' | 'unlinked' | 'botDm';
type Viewer = 'hamlet' | 'othello' | 'admin' | 'moderator' | 'guest' | 'bot' | 'otherBot';
const VIEWERS: Viewer[] = ['hamlet', 'othello', 'admin', 'moderator', 'guest', 'bot', 'otherBot'];
const viewer = (v: Viewer) => (v === 'otherBot' ? otherBot : t.users[v]);
const files = {} as Record<FileKey, { url: string; content: string }>;
const FORBIDDEN = '<p>You are not authorized to view this file.</p>';

/**
 * Who may read which file. hamlet uploaded all but botDm (uploaded by his bot and sent to hamlet).
 * othello: received the DM; subscribed to "shared" (shared history) after the message, and to
 * "protected" (protected history) after the message. guest: subscribed to "shared" only.
 */
const READABLE: Record<Viewer, FileKey[]> = {
  hamlet: ['dm', 'shared', 'protected', 'public', 'unlinked', 'botDm'],
  othello: ['dm', 'shared', 'public'],
  admin: ['public'],
  moderator: ['public'],
  guest: ['shared'],
  bot: ['public', 'botDm'],
  otherBot: ['public'],
};

async function uploadOne(user: TestUser, filename: string, content: string) {
  const boundary = '----parley' + crypto.randomBytes(8).toString('hex');
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  const res = await t.raw('POST', '/api/v1/user_uploads', {
    headers: { authorization: basicAuth(user), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
  assert.equal(res.status, 200, res.text);
  return { url: res.body.url as string, content };
}

const subscribe = async (user: TestUser, name: string) => {
  const res = await t.api(t.users.owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: [user.id] });
  assert.equal(res.status, 200, res.text);
};

before(async () => {
  t = await startTestServer();
  const u = t.users;
  const realmId = t.app.realmId();
  const b = doCreateUser(t.app, {
    realmId, email: 'othello-bot@example.com', password: null, fullName: "Othello's Bot", role: ROLE.MEMBER,
    botType: BOT_TYPE.GENERIC, botOwnerId: u.othello.id, acting: null,
  });
  otherBot = { id: b.userId, email: 'othello-bot@example.com', apiKey: b.apiKey, password: '', fullName: "Othello's Bot" };
  const g = doCreateUser(t.app, {
    realmId, email: 'emilia@example.com', password: 'correct-horse-battery', fullName: 'Emilia', role: ROLE.MEMBER,
    botType: null, botOwnerId: null, acting: null,
  });
  gone = { id: g.userId, email: 'emilia@example.com', apiKey: g.apiKey, password: '', fullName: 'Emilia' };
  t.app.batch.commit();

  const shared = await createChannel(t, u.hamlet, 'shared', [u.hamlet], { invite_only: true, history_public_to_subscribers: true });
  const prot = await createChannel(t, u.hamlet, 'protected', [u.hamlet], { invite_only: true, history_public_to_subscribers: false });
  const pub = await createChannel(t, u.hamlet, 'public', [u.hamlet]);
  for (const k of ['dm', 'shared', 'protected', 'public', 'unlinked'] as const) files[k] = await uploadOne(u.hamlet, `${k}.txt`, `content of ${k}`);
  files.botDm = await uploadOne(u.bot, 'bot.txt', 'content of bot');
  await sendDirect(t, u.hamlet, [u.othello, gone], `[dm](${files.dm.url})`);
  await sendToChannel(t, u.hamlet, shared, 'files', `[shared](${files.shared.url})`);
  await sendToChannel(t, u.hamlet, prot, 'files', `[protected](${files.protected.url})`);
  await sendToChannel(t, u.hamlet, pub, 'files', `[public](${files.public.url})`);
  await sendDirect(t, u.bot, [u.hamlet], `[bot](${files.botDm.url})`);
  await subscribe(u.othello, 'shared');
  await subscribe(u.othello, 'protected');
  await subscribe(u.guest, 'shared');
  const res = await t.api(u.admin, 'DELETE', `/users/${gone.id}`);
  assert.equal(res.status, 200, res.text);
});
after(() => t.close());

const fetchAs = (user: TestUser, url: string) => t.raw('GET', url, { headers: { authorization: basicAuth(user) } });
const download = (url: string) => url.replace('/user_uploads/', '/user_uploads/download/');

describe('GET /user_uploads/...', () => {
  for (const v of VIEWERS) {
    it(`${v} reads exactly ${READABLE[v].join(', ')}`, async () => {
      for (const key of Object.keys(files) as FileKey[]) {
        for (const url of [files[key].url, download(files[key].url)]) {
          const res = await fetchAs(viewer(v), url);
          if (READABLE[v].includes(key)) {
            assert.equal(res.status, 200, `${v} should read ${url}`);
            assert.equal(res.text, files[key].content);
          } else {
            assert.equal(res.status, 403, `${v} must not read ${url}: ${res.status}`);
            assert.equal(res.text, FORBIDDEN);
          }
        }
      }
    });

    it(`GET /api/v1/user_uploads/... (temporary URL): ${v} gets a link only to what it may read`, async () => {
      for (const key of Object.keys(files) as FileKey[]) {
        const res = await fetchAs(viewer(v), '/api/v1' + files[key].url);
        if (READABLE[v].includes(key)) {
          assert.equal(res.status, 200, res.text);
          const file = await t.raw('GET', res.body.url);
          assert.equal(file.text, files[key].content);
        } else {
          assert.equal(res.status, 403, `${v} must not get a link to ${key}`);
          // Under /api/v1 the refusal is a JSON envelope.
          assert.deepEqual(res.body, { result: 'error', msg: 'You are not authorized to view this file.', code: 'BAD_REQUEST' });
        }
      }
    });
  }

  it('a deactivated user who received the file is refused with 401 USER_DEACTIVATED', async () => {
    for (const url of [files.dm.url, download(files.dm.url), '/api/v1' + files.dm.url]) {
      const res = await fetchAs(gone, url);
      assert.equal(res.status, 401, url);
      assert.deepEqual(res.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
    }
  });

  it('no credentials: 401, never the file', async () => {
    for (const key of Object.keys(files) as FileKey[]) {
      const res = await t.raw('GET', files[key].url);
      assert.equal(res.status, 401);
      assert.ok(!res.text.includes(files[key].content));
    }
  });
});

describe('GET /attachments', () => {
  for (const v of VIEWERS) {
    it(`lists only ${v}'s own uploads`, async () => {
      const res = await t.api(viewer(v), 'GET', '/attachments');
      assert.equal(res.status, 200, res.text);
      const names = res.body.attachments.map((a: { name: string }) => a.name).sort();
      const own = v === 'hamlet' ? ['dm.txt', 'protected.txt', 'public.txt', 'shared.txt', 'unlinked.txt'] : v === 'bot' ? ['bot.txt'] : [];
      assert.deepEqual(names, own);
    });
  }

  it("another user's attachment id answers like a missing one, and deletes nothing", async () => {
    const mine = await t.api(t.users.hamlet, 'GET', '/attachments');
    const id = mine.body.attachments[0].id;
    const res = await t.api(t.users.othello, 'DELETE', `/attachments/${id}`);
    const missing = await t.api(t.users.othello, 'DELETE', '/attachments/999999');
    assert.equal(res.status, missing.status);
    assert.deepEqual(res.body, missing.body);
    assert.equal((await t.api(t.users.hamlet, 'GET', '/attachments')).body.attachments.length, 5);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { multipart } from '../helpers/multipart';
import { createChannel, err, sendDirect, sendToChannel, SUCCESS } from '../helpers/chat';
import { startPushService, type RecordedRequest, type TestPushService } from '../helpers/push-service';
import { decryptForDevice } from '../../src/push/crypto';
import { claimPush } from '../../src/push/remove';
import { pushQueue } from '../../src/push/service';

const NOTIFY = '/api/v1/remotes/push/e2ee/notify';
let t: TestServer;
let svc: TestPushService;
let general: number;

before(async () => {
  svc = await startPushService();
  t = await startTestServer({ configure: (c) => (c.pushService = { url: svc.url, token: 'svc-secret' }) });
  pushQueue(t.app).options.retryBaseMs = 20;
  general = await createChannel(t, t.users.hamlet, 'general', [t.users.hamlet, t.users.othello, t.users.admin]);
});
after(async () => {
  await t.close();
  await svc.close();
});

const newKey = () => Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]);
const tokenId = (token: string) => crypto.createHash('sha256').update(token).digest().subarray(0, 8).toString('base64');
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function newDevice(user: TestUser): Promise<number> {
  const res = await t.api(user, 'POST', '/register_client_device');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['device_id', 'msg', 'result']);
  return res.body.device_id;
}

const tokenFields = (token: string, kind = 'fcm') => ({
  token_kind: kind,
  token_id: tokenId(token),
  bouncer_public_key: b64('bouncer-public-key'),
  encrypted_push_registration: b64(`sealed:${token}`),
});

/** A fully registered device: its id, key and key id. */
async function registerDevice(user: TestUser, token: string) {
  const deviceId = await newDevice(user);
  const key = newKey();
  const pushKeyId = crypto.randomInt(0, 2 ** 32 - 1);
  const res = await t.api(user, 'POST', '/mobile_push/register', {
    device_id: deviceId,
    push_key: key.toString('base64'),
    push_key_id: pushKeyId,
    ...tokenFields(token),
  });
  assert.deepEqual(res.body, SUCCESS);
  return { deviceId, key, pushKeyId, tokenId: tokenId(token) };
}

/** The decrypted payload of the notification for `tokenIdValue` about message `messageId`. */
async function notificationFor(tokenIdValue: string, key: Buffer, match: (p: any) => boolean, ms = 5000): Promise<{ req: any; payload: any }> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const r of svc.requests.filter((x) => x.path === NOTIFY)) {
      for (const req of r.body.push_requests) {
        if (req.token_id !== tokenIdValue) continue;
        let payload: any;
        try {
          payload = JSON.parse(await decryptForDevice(key, req.payload.encrypted_data));
        } catch {
          continue; // another key
        }
        if (match(payload)) return { req, payload };
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no such notification');
}

/** Whether any notification for `tokenIdValue` names message `id` (decryptable with `key`). */
async function noNotification(tokenIdValue: string, key: Buffer, id: number): Promise<void> {
  await new Promise((r) => setTimeout(r, 150));
  await assert.rejects(notificationFor(tokenIdValue, key, (p) => p.message_id === id, 50));
}

describe('without a push service', () => {
  it('POST /mobile_push/register answers PUSH_SERVICE_NOT_CONFIGURED', async () => {
    const bare = await startTestServer();
    try {
      const device = (await bare.api(bare.users.hamlet, 'POST', '/register_client_device')).body.device_id;
      const res = await bare.api(bare.users.hamlet, 'POST', '/mobile_push/register', {
        device_id: device,
        push_key: newKey().toString('base64'),
        push_key_id: 1,
        ...tokenFields('t'),
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, err('Server is not configured to use push notification service.', 'PUSH_SERVICE_NOT_CONFIGURED'));
    } finally {
      await bare.close();
    }
  });
});

describe('POST /mobile_push/register', () => {
  it('validates every rule of a registration', async () => {
    const u = t.users.hamlet;
    const device = await newDevice(u);
    const key = newKey().toString('base64');
    const call = (params: Record<string, unknown>) => t.api(u, 'POST', '/mobile_push/register', { device_id: device, ...params });
    const missing = err('Missing parameters: must provide either all push key fields, all token fields, or both.');
    assert.deepEqual((await call({})).body, missing);
    assert.deepEqual((await call({ push_key: key })).body, missing);
    assert.deepEqual((await call({ push_key: key, push_key_id: 1, token_kind: 'fcm' })).body, missing);
    assert.deepEqual((await call({ push_key: key, push_key_id: 1 })).body, err('No push registration exists to rotate key for.'));
    assert.deepEqual((await call(tokenFields('x'))).body, err('No push registration exists to rotate token for.'));
    const badKeys = [
      Buffer.concat([Buffer.from([0x32]), crypto.randomBytes(32)]).toString('base64'), // unknown cryptosystem
      Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(31)]).toString('base64'), // short
      Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(33)]).toString('base64'), // long
      'not base64!',
    ];
    for (const bad of badKeys) assert.deepEqual((await call({ push_key: bad, push_key_id: 1, ...tokenFields('x') })).body, err('Invalid `push_key`'), bad);
    assert.equal((await call({ push_key: key, push_key_id: 2 ** 32, ...tokenFields('x') })).status, 400);
    assert.equal((await call({ push_key: key, push_key_id: -1, ...tokenFields('x') })).status, 400);
    assert.deepEqual((await call({ push_key: key, push_key_id: 1, ...tokenFields('x'), token_kind: 'gcm' })).body, err('Invalid token_kind'));
    const nine = crypto.randomBytes(9).toString('base64');
    assert.deepEqual((await call({ push_key: key, push_key_id: 1, ...tokenFields('x'), token_id: nine })).body, err('Invalid `token_id`'));
    const othersDevice = await newDevice(t.users.othello);
    const stolen = await t.api(u, 'POST', '/mobile_push/register', { device_id: othersDevice, push_key: key, push_key_id: 1, ...tokenFields('x') });
    assert.deepEqual(stolen.body, err('Invalid `device_id`'));
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/register_client_device')).body, err('This endpoint does not accept bot requests.'));
    // A full registration succeeds, is idempotent, and reaches the service with its credentials.
    assert.deepEqual((await call({ push_key: key, push_key_id: 7, ...tokenFields('first-token') })).body, SUCCESS);
    assert.deepEqual((await call({ push_key: key, push_key_id: 7, ...tokenFields('first-token') })).body, SUCCESS);
    const reg = await svc.waitFor((r) => r.path === '/api/v1/remotes/push/e2ee/register' && r.body.device_id === device);
    assert.equal(reg.authorization, 'Bearer svc-secret');
    assert.deepEqual(reg.body, { user_id: u.id, device_id: device, ...tokenFields('first-token') });
  });

  it('delivers a direct message encrypted with the device key; the service can decrypt nothing, the device everything', async () => {
    const dev = await registerDevice(t.users.hamlet, 'hamlet-phone');
    const id = await sendDirect(t, t.users.othello, [t.users.hamlet], 'hello **there** & <friends>');
    const { req, payload } = await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === id);
    assert.deepEqual(Object.keys(req).sort(), ['fcm_priority', 'payload', 'token_id', 'token_kind']);
    assert.deepEqual(Object.keys(req.payload).sort(), ['encrypted_data', 'push_key_id']);
    assert.equal(req.payload.push_key_id, dev.pushKeyId);
    const raw = Buffer.from(req.payload.encrypted_data, 'base64');
    assert.ok(raw.length > 24 + 16);
    assert.ok(!raw.toString('latin1').includes('friends'));
    const date = (t.app.db.prepare('SELECT date_sent FROM message WHERE id = ?').get(id) as { date_sent: number }).date_sent;
    assert.deepEqual(payload, {
      event: 'message',
      type: 'message',
      trigger: 'direct_message',
      realm_name: 'Test Org',
      realm_url: t.url,
      realm_uri: t.url,
      server: t.url,
      realm_id: t.app.realmId(),
      user_id: t.users.hamlet.id,
      message_id: id,
      sender_id: t.users.othello.id,
      sender_email: t.users.othello.email,
      sender_full_name: 'Othello',
      sender_avatar_url: payload.sender_avatar_url,
      time: date,
      recipient_type: 'direct',
      content: 'hello there & <friends>',
    });
    // The sender's own devices get nothing.
    const mine = await registerDevice(t.users.othello, 'othello-phone');
    const id2 = await sendDirect(t, t.users.othello, [t.users.hamlet], 'again');
    await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === id2);
    await noNotification(mine.tokenId, mine.key, id2);
  });

  it('names an uploaded sender avatar by its absolute URL (the phone has no server to resolve it against)', async () => {
    const dev = await registerDevice(t.users.hamlet, 'hamlet-phone-2');
    const { body, contentType } = multipart([{ field: 'f', filename: 'me.png', type: 'image/png', data: Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') }]);
    const up = await t.raw('POST', '/api/v1/users/me/avatar', { headers: { authorization: basicAuth(t.users.othello), 'content-type': contentType }, body });
    assert.equal(up.status, 200, up.text);
    const id = await sendDirect(t, t.users.othello, [t.users.hamlet], 'with my face');
    const { payload } = await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === id);
    assert.equal(payload.sender_avatar_url, `${t.url}${up.body.avatar_url}`);
    assert.match(payload.sender_avatar_url, /^http:\/\/[^/]+\/user_avatars\/\d+\/[A-Za-z0-9_-]{32}\.png\?version=2$/);
  });

  it('follows the notification settings: mentions, followed topics, channel settings, offline setting', async () => {
    const u = t.users;
    const dev = await registerDevice(u.admin, 'iago-phone');
    const mention = await sendToChannel(t, u.othello, general, 'plans', 'ping @**Iago**');
    const m = await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === mention);
    assert.equal(m.payload.trigger, 'mention');
    assert.equal(m.payload.recipient_type, 'channel');
    assert.equal(m.payload.channel_id, general);
    assert.equal(m.payload.channel_name, 'general');
    assert.equal(m.payload.topic, 'plans');
    assert.equal(m.payload.content, 'ping @Iago');
    // A plain channel message: channel push notifications are off by default.
    const plain = await sendToChannel(t, u.othello, general, 'chatter', 'nothing special');
    await noNotification(dev.tokenId, dev.key, plain);
    // Following the topic turns them on for it.
    t.app.db
      .prepare('INSERT INTO user_topic (user_id, stream_id, topic_key, topic_name, visibility_policy, last_updated) VALUES (?, ?, ?, ?, 3, 0)')
      .run(u.admin.id, general, 'chatter', 'chatter');
    const followed = await sendToChannel(t, u.othello, general, 'chatter', 'now followed');
    assert.equal((await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === followed)).payload.trigger, 'followed_topic');
    // Being mentioned in "plans" made Iago follow it (automatically_follow_topics_where_mentioned).
    const later = await sendToChannel(t, u.othello, general, 'plans', 'more plans');
    assert.equal((await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === later)).payload.trigger, 'followed_topic');
    // The channel's push setting.
    t.app.db.prepare('UPDATE subscription SET push_notifications = 1 WHERE user_id = ? AND stream_id = ?').run(u.admin.id, general);
    const channel = await sendToChannel(t, u.othello, general, 'other', 'channel push');
    assert.equal((await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === channel)).payload.trigger, 'stream');
    // enable_offline_push_notifications off: no push for direct messages.
    t.app.db.prepare('UPDATE user SET enable_offline_push_notifications = 0 WHERE id = ?').run(u.admin.id);
    const dm = await sendDirect(t, u.othello, [u.admin], 'quiet please');
    await noNotification(dev.tokenId, dev.key, dm);
    t.app.db.prepare('UPDATE user SET enable_offline_push_notifications = 1 WHERE id = ?').run(u.admin.id);
  });

  it('rotates the key and the token', async () => {
    const u = t.users;
    const dev = await registerDevice(u.hamlet, 'rotating-phone');
    const key2 = newKey();
    const rot = await t.api(u.hamlet, 'POST', '/mobile_push/register', { device_id: dev.deviceId, push_key: key2.toString('base64'), push_key_id: 42 });
    assert.deepEqual(rot.body, SUCCESS);
    const id = await sendDirect(t, u.othello, [u.hamlet], 'after key rotation');
    const n = await notificationFor(dev.tokenId, key2, (p) => p.message_id === id);
    assert.equal(n.req.payload.push_key_id, 42);
    await assert.rejects(decryptForDevice(dev.key, n.req.payload.encrypted_data));
    const tok = await t.api(u.hamlet, 'POST', '/mobile_push/register', { device_id: dev.deviceId, ...tokenFields('new-token', 'apns') });
    assert.deepEqual(tok.body, SUCCESS);
    const id2 = await sendDirect(t, u.othello, [u.hamlet], 'after token rotation');
    const n2 = await notificationFor(tokenId('new-token'), key2, (p) => p.message_id === id2);
    assert.equal(n2.req.token_kind, 'apns');
    assert.deepEqual(n2.req.http_headers, { apns_priority: 10, apns_push_type: 'alert' });
    assert.deepEqual(n2.req.payload.aps, { 'mutable-content': 1, alert: { title: 'New notification' } });
    await noNotification(dev.tokenId, key2, id2);
  });

  it('removes the legacy registration of the same token', async () => {
    const u = t.users.othello;
    assert.deepEqual((await t.api(u, 'POST', '/users/me/android_gcm_reg_id', { token: 'legacy-fcm-token' })).body, SUCCESS);
    assert.deepEqual((await t.api(u, 'POST', '/users/me/android_gcm_reg_id', { token: 'another-legacy' })).body, SUCCESS);
    await registerDevice(u, 'legacy-fcm-token');
    assert.deepEqual((await t.api(u, 'DELETE', '/users/me/android_gcm_reg_id', { token: 'legacy-fcm-token' })).body, err('Token does not exist'));
    assert.deepEqual((await t.api(u, 'DELETE', '/users/me/android_gcm_reg_id', { token: 'another-legacy' })).body, SUCCESS);
  });

  it('retries with backoff while the service is down, without slowing the send', async () => {
    const dev = await registerDevice(t.users.hamlet, 'flaky-phone');
    await new Promise((r) => setTimeout(r, 100)); // let the registration reach the service first
    svc.failNext(3);
    const start = Date.now();
    const id = await sendDirect(t, t.users.othello, [t.users.hamlet], 'eventually');
    assert.ok(Date.now() - start < 500);
    const n = await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === id);
    assert.equal(n.payload.content, 'eventually');
    assert.ok(pushQueue(t.app).stats.retried >= 3);
  });
});

describe('POST /mobile_push/test_notification', () => {
  it('sends a test notification (event "test", realm_name) to all devices, or to the device with a token', async () => {
    const u = t.users.moderator;
    const dev = await registerDevice(u, 'shiva-phone');
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/test_notification')).body, SUCCESS);
    const n = await notificationFor(dev.tokenId, dev.key, (p) => p.event === 'test');
    assert.equal(n.payload.type, 'test');
    assert.equal(n.payload.realm_name, 'Test Org');
    assert.equal(n.payload.user_id, u.id);
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/test_notification', { token: 'no-such-token' })).body, err('Device not recognized', 'INVALID_PUSH_DEVICE_TOKEN'));
    // A legacy token: known to the server and the service; then only to the server.
    assert.deepEqual((await t.api(u, 'POST', '/users/me/android_gcm_reg_id', { token: 'shiva-legacy' })).body, SUCCESS);
    await svc.waitFor((r) => r.path === '/api/v1/remotes/push/register' && r.body.token === 'shiva-legacy');
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/test_notification', { token: 'shiva-legacy' })).body, SUCCESS);
    const sent = await svc.waitFor((r: RecordedRequest) => r.path === '/api/v1/remotes/push/test_notification' && r.body.token === 'shiva-legacy');
    assert.equal(sent.body.payload.event, 'test');
    assert.equal(sent.body.payload.realm_name, 'Test Org');
    svc.knownTokens.delete('shiva-legacy');
    assert.deepEqual(
      (await t.api(u, 'POST', '/mobile_push/test_notification', { token: 'shiva-legacy' })).body,
      err('Device not recognized by the push bouncer', 'INVALID_REMOTE_PUSH_DEVICE_TOKEN'),
    );
  });
});

describe('legacy token endpoints', () => {
  it('POST/DELETE /users/me/android_gcm_reg_id and /users/me/apns_device_token validate tokens', async () => {
    const u = t.users.hamlet;
    for (const path of ['/users/me/android_gcm_reg_id', '/users/me/apns_device_token']) {
      const extra = path.includes('apns') ? { appid: 'org.zulip.Zulip' } : {};
      assert.deepEqual((await t.api(u, 'POST', path, { token: '', ...extra })).body, err('Empty or invalid length token'));
      assert.deepEqual((await t.api(u, 'POST', path, { token: 'a'.repeat(4097), ...extra })).body, err('Empty or invalid length token'));
      assert.deepEqual((await t.api(u, 'DELETE', path, { token: '' })).body, err('Empty or invalid length token'));
      assert.deepEqual((await t.api(u, 'DELETE', path, { token: 'abcd' })).body, err('Token does not exist'));
    }
    assert.deepEqual((await t.api(u, 'POST', '/users/me/apns_device_token', { token: 'abcde', appid: 'x' })).body, err('Invalid APNS token'));
    assert.equal((await t.api(u, 'POST', '/users/me/apns_device_token', { token: 'abcd' })).body.code, 'REQUEST_VARIABLE_MISSING');
    assert.deepEqual((await t.api(u, 'POST', '/users/me/apns_device_token', { token: 'apple-tokenbb', appid: 'org.zulip.Zulip' })).body, SUCCESS);
    assert.deepEqual((await t.api(u, 'DELETE', '/users/me/apns_device_token', { token: 'apple-tokenbb' })).body, SUCCESS);
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/users/me/android_gcm_reg_id', { token: 'x' })).body, err('This endpoint does not accept bot requests.'));
  });
});

describe('POST /users/me/api_key/regenerate', () => {
  it('replaces the key at once and removes the E2EE push registrations', async () => {
    const u = { ...t.users.guest };
    const dev = await registerDevice(u, 'guest-phone');
    const other = await registerDevice(t.users.othello, 'othello-second');
    const res = await t.api(u, 'POST', '/users/me/api_key/regenerate');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['api_key', 'msg', 'result']);
    assert.match(res.body.api_key, /^[A-Za-z0-9]{32}$/);
    assert.notEqual(res.body.api_key, u.apiKey);
    const old = await t.api(u, 'GET', '/users/me');
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'INVALID_API_KEY');
    const fresh = { ...u, apiKey: res.body.api_key };
    assert.equal((await t.api(fresh, 'GET', '/users/me')).status, 200);
    t.users.guest.apiKey = res.body.api_key;
    const left = t.app.db.prepare('SELECT device_id FROM push_device WHERE user_id = ?').all(u.id);
    assert.deepEqual(left, []);
    assert.ok(t.app.db.prepare('SELECT 1 FROM push_device WHERE device_id = ?').get(other.deviceId));
    const id = await sendDirect(t, t.users.othello, [fresh], 'no push for you');
    await noNotification(dev.tokenId, dev.key, id);
    void basicAuth;
  });
});

describe('remove notifications', () => {
  const removal = (id: number) => (p: any) => p.type === 'remove' && p.message_ids.includes(id);
  const activeFlag = (userId: number, id: number) =>
    ((t.app.db.prepare('SELECT flags FROM usermessage WHERE user_id = ? AND message_id = ?').get(userId, id) as { flags: number }).flags & 1024) !== 0;

  it('POST /messages/flags (read) withdraws the notifications the user got, once, encrypted for the device', async () => {
    const u = t.users.owner;
    const dev = await registerDevice(u, 'desdemona-phone');
    const pushed = await sendDirect(t, t.users.othello, [u], 'read me on the web');
    await notificationFor(dev.tokenId, dev.key, (p) => p.message_id === pushed);
    assert.ok(activeFlag(u.id, pushed));
    const quiet = await sendToChannel(t, t.users.othello, general, 'no push', 'not for Desdemona');
    assert.deepEqual((await t.api(u, 'POST', '/messages/flags', { messages: [pushed], op: 'add', flag: 'read' })).body.result, 'success');
    const { req, payload } = await notificationFor(dev.tokenId, dev.key, removal(pushed));
    assert.deepEqual(payload, {
      event: 'remove',
      type: 'remove',
      message_ids: [pushed],
      zulip_message_ids: String(pushed),
      realm_name: 'Test Org',
      realm_url: t.url,
      realm_uri: t.url,
      server: t.url,
      realm_id: t.app.realmId(),
      user_id: u.id,
    });
    // A silent push: nothing to show.
    assert.deepEqual(Object.keys(req).sort(), ['fcm_priority', 'payload', 'token_id', 'token_kind']);
    assert.equal(req.fcm_priority, 'normal');
    assert.equal(req.payload.push_key_id, dev.pushKeyId);
    assert.ok(!Buffer.from(req.payload.encrypted_data, 'base64').toString('latin1').includes('remove'));
    assert.ok(!activeFlag(u.id, pushed));
    // Unread and read again: no second removal. Reading a message that had no push: none either.
    const count = () => svc.requests.filter((r) => r.path === NOTIFY && r.body.push_requests.some((x: any) => x.token_id === dev.tokenId)).length;
    const before = count();
    await t.api(u, 'POST', '/messages/flags', { messages: [pushed], op: 'remove', flag: 'read' });
    await t.api(u, 'POST', '/messages/flags', { messages: [pushed, quiet], op: 'add', flag: 'read' });
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(count(), before);
  });

  it('mark_all_as_read, mark_topic_as_read and flags/narrow withdraw them too; an APNs device gets a background push', async () => {
    const u = t.users.owner;
    const phone = await registerDevice(u, 'desdemona-tablet');
    const rot = await t.api(u, 'POST', '/mobile_push/register', { device_id: phone.deviceId, ...tokenFields('desdemona-tablet-apns', 'apns') });
    assert.deepEqual(rot.body, SUCCESS);
    const tablet = { ...phone, tokenId: tokenId('desdemona-tablet-apns') };
    t.app.db.prepare('UPDATE subscription SET push_notifications = 1 WHERE user_id = ? AND stream_id = ?').run(u.id, general);
    const owners = await createChannel(t, t.users.othello, 'owners', [t.users.othello, u]);
    t.app.db.prepare('UPDATE subscription SET push_notifications = 1 WHERE user_id = ? AND stream_id = ?').run(u.id, owners);
    const inTopic = await sendToChannel(t, t.users.othello, owners, 'lunch', 'pizza?');
    const dm1 = await sendDirect(t, t.users.othello, [u], 'one');
    const dm2 = await sendDirect(t, t.users.othello, [u], 'two');
    const narrowed = await sendDirect(t, t.users.admin, [u], 'from Iago');
    for (const id of [inTopic, dm1, dm2, narrowed]) await notificationFor(tablet.tokenId, tablet.key, (p) => p.message_id === id);

    assert.equal((await t.api(u, 'POST', '/mark_topic_as_read', { stream_id: owners, topic_name: 'lunch' })).body.result, 'success');
    const topic = await notificationFor(tablet.tokenId, tablet.key, removal(inTopic));
    assert.deepEqual(topic.payload.message_ids, [inTopic]);
    assert.deepEqual(topic.req.http_headers, { apns_priority: 5, apns_push_type: 'background' });
    assert.deepEqual(topic.req.payload.aps, { 'content-available': 1 });

    const narrow = [{ operator: 'dm', operand: [t.users.admin.id] }];
    const res = await t.api(u, 'POST', '/messages/flags/narrow', { anchor: 'newest', num_before: 10, num_after: 0, narrow, op: 'add', flag: 'read' });
    assert.equal(res.body.result, 'success', res.text);
    assert.deepEqual((await notificationFor(tablet.tokenId, tablet.key, removal(narrowed))).payload.message_ids, [narrowed]);

    assert.equal((await t.api(u, 'POST', '/mark_all_as_read')).body.result, 'success');
    const all = await notificationFor(tablet.tokenId, tablet.key, removal(dm1));
    assert.deepEqual(all.payload.message_ids, [dm1, dm2]);
    assert.equal(all.payload.zulip_message_ids, `${dm1},${dm2}`);
    const active = t.app.db.prepare('SELECT count(*) AS n FROM usermessage WHERE user_id = ? AND (flags & 1024) <> 0').get(u.id) as { n: number };
    assert.equal(active.n, 0);
  });

  it('claims a message push only while the message is unread (one read meanwhile gets no push)', async () => {
    const u = t.users.owner;
    const id = await sendDirect(t, t.users.othello, [u], 'read quickly');
    await new Promise((r) => setTimeout(r, 50));
    t.app.db.prepare('UPDATE usermessage SET flags = (flags | 1) & ~1024 WHERE user_id = ? AND message_id = ?').run(u.id, id);
    assert.equal(claimPush(t.app, u.id, id), false);
    assert.ok(!activeFlag(u.id, id));
    t.app.db.prepare('UPDATE usermessage SET flags = flags & ~1 WHERE user_id = ? AND message_id = ?').run(u.id, id);
    assert.equal(claimPush(t.app, u.id, id), true);
    assert.ok(activeFlag(u.id, id));
  });
});

// Logged-in devices (Zulip 12, feature levels 468/470): POST /register_client_device,
// POST /remove_client_device, the `devices` of POST /register, the `device` events, and the E2EE
// test notification (POST /mobile_push/e2ee/test_notification).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { err, SUCCESS } from '../helpers/chat';
import { queuedEvents, registerQueue } from '../helpers/events';
import { startPushService, type TestPushService } from '../helpers/push-service';
import { decryptForDevice } from '../../src/push/crypto';
import { pushQueue } from '../../src/push/service';

const NOTIFY = '/api/v1/remotes/push/e2ee/notify';
let t: TestServer;
let svc: TestPushService;

before(async () => {
  svc = await startPushService();
  t = await startTestServer({ configure: (c) => (c.pushService = { url: svc.url, token: 'svc-secret' }) });
  pushQueue(t.app).options.retryBaseMs = 20;
});
after(async () => {
  await t.close();
  await svc.close();
});

const tokenId = (token: string) => crypto.createHash('sha256').update(token).digest().subarray(0, 8).toString('base64');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const noDevice = err('Invalid `device_id`');
const noActive = err('No active registered push device', 'NO_ACTIVE_PUSH_DEVICE');

async function newDevice(user: TestUser): Promise<number> {
  const res = await t.api(user, 'POST', '/register_client_device');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['device_id', 'msg', 'result']);
  return res.body.device_id;
}

/** Registers `deviceId` for E2EE push with a fresh key; returns the key and its id. */
async function registerPush(user: TestUser, deviceId: number, token: string) {
  const key = Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]);
  const pushKeyId = crypto.randomInt(0, 2 ** 32 - 1);
  const res = await t.api(user, 'POST', '/mobile_push/register', {
    device_id: deviceId,
    push_key: key.toString('base64'),
    push_key_id: pushKeyId,
    token_kind: 'fcm',
    token_id: tokenId(token),
    bouncer_public_key: b64('bouncer-public-key'),
    encrypted_push_registration: b64(`sealed:${token}`),
  });
  assert.deepEqual(res.body, SUCCESS);
  return { key, pushKeyId };
}

async function devicesOf(user: TestUser): Promise<Record<string, unknown>> {
  const res = await t.api(user, 'POST', '/register', { fetch_event_types: ['device'], event_types: ['device'] });
  assert.equal(res.status, 200, res.text);
  assert.ok(!('devices' in (await t.api(user, 'POST', '/register', { fetch_event_types: ['message'] })).body), 'devices only when asked for');
  return res.body.devices;
}

const blank = { push_key_id: null, push_token_id: null, pending_push_token_id: null, push_token_last_updated_timestamp: null, push_registration_error_code: null };

describe('POST /register_client_device and POST /remove_client_device', () => {
  it('announce the device to the user’s clients, and /register lists the devices', async () => {
    const u = t.users.othello;
    const q = await registerQueue(t, u, ['device']);
    const other = await registerQueue(t, t.users.hamlet, ['device']);
    assert.deepEqual(await devicesOf(u), {});
    const a = await newDevice(u);
    const b = await newDevice(u);
    assert.deepEqual(await devicesOf(u), { [a]: blank, [b]: blank });
    assert.deepEqual(await t.api(u, 'POST', '/remove_client_device', { device_id: a }).then((r) => ({ status: r.status, body: r.body })), {
      status: 200,
      body: SUCCESS,
    });
    assert.deepEqual(await devicesOf(u), { [b]: blank });
    assert.deepEqual(await queuedEvents(t, u, q), [
      { type: 'device', op: 'add', device_id: a },
      { type: 'device', op: 'add', device_id: b },
      { type: 'device', op: 'remove', device_id: a },
    ]);
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, other), [], 'other users hear nothing');
  });

  it('never reuses a removed device’s id', async () => {
    const u = t.users.othello;
    const newest = await newDevice(u);
    assert.deepEqual((await t.api(u, 'POST', '/remove_client_device', { device_id: newest })).body, SUCCESS);
    assert.ok((await newDevice(u)) > newest);
  });

  it('removes the device’s E2EE registration with it: no more notifications to it', async () => {
    const u = t.users.moderator;
    const d = await newDevice(u);
    await registerPush(u, d, 'moderator-phone');
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/e2ee/test_notification', { device_id: d })).body, SUCCESS);
    assert.deepEqual((await t.api(u, 'POST', '/remove_client_device', { device_id: d })).body, SUCCESS);
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM push_device WHERE device_id = ?').get(d) as { n: number }).n, 0);
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/e2ee/test_notification', { device_id: d })).body, noActive);
    const key = Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]).toString('base64');
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/register', { device_id: d, push_key: key, push_key_id: 1 })).body, noDevice);
  });

  it('refuses unknown devices and other users’ devices, changing nothing', async () => {
    const hamletDevice = await newDevice(t.users.hamlet);
    const q = await registerQueue(t, t.users.hamlet, ['device']);
    for (const user of [t.users.othello, t.users.guest, t.users.bot, t.users.admin]) {
      const res = await t.api(user, 'POST', '/remove_client_device', { device_id: hamletDevice });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 400, body: noDevice });
    }
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/remove_client_device', { device_id: 999_999 })).body, noDevice);
    assert.deepEqual((await t.api(t.users.hamlet, 'POST', '/remove_client_device', { device_id: -1 })).body, noDevice);
    assert.ok(hamletDevice in (await devicesOf(t.users.hamlet)));
    assert.deepEqual(await queuedEvents(t, t.users.hamlet, q), []);
  });

  it('answers bad input with a 400', async () => {
    const u = t.users.hamlet;
    assert.deepEqual((await t.api(u, 'POST', '/remove_client_device')).body, err("Missing 'device_id' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'device_id' }));
    for (const bad of ['abc', '1.5', '[1]', '99999999999999999999999']) {
      const res = await t.api(u, 'POST', '/remove_client_device', { device_id: bad });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.result, 'error');
    }
    assert.equal((await t.api(null, 'POST', '/remove_client_device', { device_id: 1 })).status, 401);
  });

  it('bots may not register devices', async () => {
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/register_client_device')).body, err('This endpoint does not accept bot requests.'));
  });

  it('a deactivated user can do neither', async () => {
    const s = await startTestServer();
    try {
      const u = s.users.othello;
      const d = (await s.api(u, 'POST', '/register_client_device')).body.device_id;
      assert.deepEqual((await s.api(s.users.admin, 'DELETE', `/users/${u.id}`)).body, SUCCESS);
      for (const [path, params] of [
        ['/register_client_device', {}],
        ['/remove_client_device', { device_id: d }],
      ] as const) {
        const res = await s.api(u, 'POST', path, params);
        assert.deepEqual({ status: res.status, body: res.body }, { status: 401, body: err('Account is deactivated', 'USER_DEACTIVATED') });
      }
    } finally {
      await s.close();
    }
  });
});

/** The queue's events once it holds `n` (the push service answers on a later turn). */
async function eventsWhen(user: TestUser, queueId: string, n: number): Promise<any[]> {
  for (let i = 0; i < 500; i++) {
    const events = await queuedEvents(t, user, queueId);
    if (events.length >= n) return events;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`fewer than ${n} events`);
}

describe('POST /users/me/api_key/regenerate', () => {
  it('removes every device of the user (Zulip FL 492), telling their clients', async () => {
    const s = await startTestServer({ configure: (c) => (c.pushService = { url: svc.url, token: 'svc-secret' }) });
    try {
      const u = s.users.hamlet;
      const other = (await s.api(s.users.othello, 'POST', '/register_client_device')).body.device_id;
      const a = (await s.api(u, 'POST', '/register_client_device')).body.device_id;
      const b = (await s.api(u, 'POST', '/register_client_device')).body.device_id;
      const q = (await s.api(u, 'POST', '/register', { event_types: ['device'], fetch_event_types: [] })).body.queue_id;
      const res = await s.api(u, 'POST', '/users/me/api_key/regenerate');
      assert.equal(res.status, 200, res.text);
      const fresh = { ...u, apiKey: res.body.api_key };
      const events = await s.api(fresh, 'GET', '/events', { queue_id: q, last_event_id: -1, dont_block: true });
      assert.deepEqual(
        events.body.events.map(({ id, ...e }: any) => e),
        [
          { type: 'device', op: 'remove', device_id: a },
          { type: 'device', op: 'remove', device_id: b },
        ],
      );
      assert.deepEqual((await s.api(fresh, 'POST', '/register', { fetch_event_types: ['device'] })).body.devices, {});
      assert.deepEqual(Object.keys((await s.api(s.users.othello, 'POST', '/register', { fetch_event_types: ['device'] })).body.devices), [String(other)]);
    } finally {
      await s.close();
    }
  });
});

describe('device update events and the devices of /register', () => {
  it('report the push key, the token pending, then registered once the push service acknowledges it', async () => {
    const u = t.users.owner;
    const d = await newDevice(u);
    const q = await registerQueue(t, u, ['device']);
    const before = Math.floor(Date.now() / 1000);
    const { pushKeyId } = await registerPush(u, d, 'owner-phone');
    const events = await eventsWhen(u, q, 2);
    const stamp = events[0].push_token_last_updated_timestamp;
    assert.ok(stamp >= before && stamp <= Math.floor(Date.now() / 1000) + 1);
    assert.deepEqual(events, [
      {
        type: 'device',
        op: 'update',
        device_id: d,
        push_key_id: pushKeyId,
        push_token_id: null,
        pending_push_token_id: tokenId('owner-phone'),
        push_token_last_updated_timestamp: stamp,
        push_registration_error_code: null,
      },
      { type: 'device', op: 'update', device_id: d, push_token_id: tokenId('owner-phone'), pending_push_token_id: null },
    ]);
    const registered = {
      push_key_id: pushKeyId,
      push_token_id: tokenId('owner-phone'),
      pending_push_token_id: null,
      push_token_last_updated_timestamp: stamp,
      push_registration_error_code: null,
    };
    assert.deepEqual(await devicesOf(u), { [d]: registered });
    // A key rotation alone says only the new key id.
    const key2 = Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]);
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/register', { device_id: d, push_key: key2.toString('base64'), push_key_id: 7 })).body, SUCCESS);
    assert.deepEqual((await queuedEvents(t, u, q)).slice(2), [{ type: 'device', op: 'update', device_id: d, push_key_id: 7 }]);
    assert.deepEqual(await devicesOf(u), { [d]: { ...registered, push_key_id: 7 } });
  });

  it('report the push service’s refusal of a token, until a new registration', async () => {
    const u = t.users.owner;
    const d = await newDevice(u);
    const q = await registerQueue(t, u, ['device']);
    svc.failNext(1, 400, 'INVALID_BOUNCER_PUBLIC_KEY');
    const { pushKeyId } = await registerPush(u, d, 'owner-tablet');
    const events = await eventsWhen(u, q, 2);
    assert.deepEqual(events[1], { type: 'device', op: 'update', device_id: d, push_registration_error_code: 'INVALID_BOUNCER_PUBLIC_KEY' });
    const stamp = events[0].push_token_last_updated_timestamp;
    assert.deepEqual((await devicesOf(u))[d], {
      push_key_id: pushKeyId,
      push_token_id: null,
      pending_push_token_id: tokenId('owner-tablet'),
      push_token_last_updated_timestamp: stamp,
      push_registration_error_code: 'INVALID_BOUNCER_PUBLIC_KEY',
    });
    // The app registers again (a fresh payload): the error goes, and this time the service takes it.
    await registerPush(u, d, 'owner-tablet');
    const later = (await eventsWhen(u, q, 4)).slice(2);
    assert.equal(later[0].push_registration_error_code, null);
    assert.equal(later[0].pending_push_token_id, tokenId('owner-tablet'));
    assert.deepEqual(later[1], { type: 'device', op: 'update', device_id: d, push_token_id: tokenId('owner-tablet'), pending_push_token_id: null });
    assert.equal(((await devicesOf(u))[d] as any).push_registration_error_code, null);
  });

  it('an answer about a device since removed, or a token since replaced, changes nothing', async () => {
    const u = t.users.owner;
    const d = await newDevice(u);
    svc.failNext(1, 503); // the first registration waits for a retry
    await registerPush(u, d, 'owner-old');
    assert.deepEqual((await t.api(u, 'POST', '/remove_client_device', { device_id: d })).body, SUCCESS);
    await svc.waitFor((r) => r.path === '/api/v1/remotes/push/e2ee/register' && r.body.device_id === d);
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(!(d in (await devicesOf(u))));
    assert.equal((t.app.db.prepare('SELECT count(*) AS n FROM push_device WHERE device_id = ?').get(d) as { n: number }).n, 0);

    // A token acknowledged late, after the app registered another: the newer one stays.
    const e = await newDevice(u);
    svc.failNext(1, 503);
    const { pushKeyId } = await registerPush(u, e, 'owner-first');
    await registerPush(u, e, 'owner-second');
    await svc.waitFor((r) => r.path === '/api/v1/remotes/push/e2ee/register' && r.body.token_id === tokenId('owner-first'));
    await new Promise((r) => setTimeout(r, 50));
    const info = (await devicesOf(u))[e] as any;
    assert.equal(info.push_token_id, tokenId('owner-second'));
    assert.equal(info.pending_push_token_id, null);
    assert.notEqual(info.push_key_id, pushKeyId);
  });
});

describe('POST /mobile_push/e2ee/test_notification', () => {
  async function testNotifications(tokenIdValue: string, key: Buffer): Promise<any[]> {
    await new Promise((r) => setTimeout(r, 100));
    const found: any[] = [];
    for (const r of svc.requests.filter((x) => x.path === NOTIFY)) {
      for (const req of r.body.push_requests) {
        if (req.token_id !== tokenIdValue) continue;
        try {
          found.push({ req, payload: JSON.parse(await decryptForDevice(key, req.payload.encrypted_data)) });
        } catch {
          /* another key */
        }
      }
    }
    return found;
  }

  it('sends a test notification to every registered device, or to the one named', async () => {
    const u = t.users.admin;
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/e2ee/test_notification')).body, noActive);
    const bare = await newDevice(u); // no push registration: not an active device
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/e2ee/test_notification')).body, noActive);
    assert.deepEqual((await t.api(u, 'POST', '/mobile_push/e2ee/test_notification', { device_id: bare })).body, noActive);
    const d1 = await newDevice(u);
    const d2 = await newDevice(u);
    const k1 = await registerPush(u, d1, 'admin-phone-1');
    const k2 = await registerPush(u, d2, 'admin-phone-2');
    const res = await t.api(u, 'POST', '/mobile_push/e2ee/test_notification');
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: SUCCESS });
    const [n1] = await testNotifications(tokenId('admin-phone-1'), k1.key);
    const [n2] = await testNotifications(tokenId('admin-phone-2'), k2.key);
    for (const [n, k] of [
      [n1, k1],
      [n2, k2],
    ] as const) {
      assert.deepEqual(n.req.payload.push_key_id, k.pushKeyId);
      assert.equal(n.req.fcm_priority, 'high');
      assert.deepEqual(n.payload, {
        realm_name: 'Test Org',
        realm_url: t.app.publicUrl,
        realm_uri: t.app.publicUrl,
        server: t.app.publicUrl,
        realm_id: n.payload.realm_id,
        user_id: u.id,
        event: 'test',
        type: 'test',
        time: n.payload.time,
      });
    }
    const onlyOne = await t.api(u, 'POST', '/mobile_push/e2ee/test_notification', { device_id: d2 });
    assert.deepEqual(onlyOne.body, SUCCESS);
    assert.equal((await testNotifications(tokenId('admin-phone-1'), k1.key)).length, 1);
    assert.equal((await testNotifications(tokenId('admin-phone-2'), k2.key)).length, 2);
  });

  it('reports the push service’s failures as Zulip does', async () => {
    const u = t.users.admin; // has registered devices (above)
    const call = () => t.api(u, 'POST', '/mobile_push/e2ee/test_notification').then((r) => ({ status: r.status, body: r.body }));
    const retryLater = { status: 502, body: err('Internal server error on Zulip push notification service, retry later.', 'INTERNAL_SERVER_ERROR_ON_BOUNCER') };
    svc.failNext(1, 503);
    assert.deepEqual(await call(), retryLater);
    svc.failNext(1, 429);
    assert.deepEqual(await call(), retryLater);
    svc.failNext(1, 401);
    assert.deepEqual(await call(), {
      status: 403,
      body: err('Push notification configuration issue on server, contact the server administrator or retry later.', 'ADMIN_ACTION_REQUIRED'),
    });
    assert.deepEqual(await call(), { status: 200, body: SUCCESS });
  });

  it('reports an unreachable push service', async () => {
    const gone = await startPushService();
    await gone.close(); // nothing listens at its address any more
    const s = await startTestServer({ configure: (c) => (c.pushService = { url: gone.url, token: 'x' }) });
    try {
      const u = s.users.hamlet;
      const d = (await s.api(u, 'POST', '/register_client_device')).body.device_id;
      s.app.db
        .prepare(
          `INSERT INTO push_device (device_id, user_id, push_key_id, push_key, token_kind, token_id, bouncer_public_key, encrypted_push_registration, updated, token_updated)
           VALUES (?, ?, 1, ?, 'fcm', ?, 'cGs=', 'cmVn', 1, 1)`,
        )
        .run(d, u.id, Buffer.concat([Buffer.from([0x31]), crypto.randomBytes(32)]), tokenId('x'));
      const res = await s.api(u, 'POST', '/mobile_push/e2ee/test_notification');
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 502, body: err('Network error while connecting to Zulip push notification service.', 'FAILED_TO_CONNECT_BOUNCER') },
      );
    } finally {
      await s.close();
    }
  });

  it('knows no device of another user, and refuses bots and bad input', async () => {
    const other = await newDevice(t.users.hamlet);
    await registerPush(t.users.hamlet, other, 'hamlet-phone');
    assert.deepEqual((await t.api(t.users.guest, 'POST', '/mobile_push/e2ee/test_notification', { device_id: other })).body, noActive);
    assert.deepEqual((await t.api(t.users.bot, 'POST', '/mobile_push/e2ee/test_notification')).body, err('This endpoint does not accept bot requests.'));
    const bad = await t.api(t.users.hamlet, 'POST', '/mobile_push/e2ee/test_notification', { device_id: 'phone' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.result, 'error');
  });

  it('without a push service there is no active device', async () => {
    const s = await startTestServer();
    try {
      assert.deepEqual((await s.api(s.users.hamlet, 'POST', '/mobile_push/e2ee/test_notification')).body, noActive);
    } finally {
      await s.close();
    }
  });
});

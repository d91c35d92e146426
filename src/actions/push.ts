// Mobile push: client devices, E2EE push registrations, legacy tokens, test notifications, and the
// notifications a new message triggers. Registrations are written synchronously; everything that
// talks to the push service goes through the app's delivery queue (src/push/service.ts) after commit.
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { findMessage } from '../lib/messages';
import { FLAG } from '../lib/narrow';
import { findStreamById } from '../lib/streams';
import { canonicalTokenId, DEVICE_COLUMNS, deviceInfo, type DeviceRow } from '../lib/devices';
import { findUserById, isBot, type UserRow } from '../lib/users';
import { encryptForDevice, isBase64, parsePushKey } from '../push/crypto';
import { messagePayload, testPayload, type PushTrigger } from '../push/payload';
import { claimPush } from '../push/remove';
import { postToService, pushQueue, type PostResult } from '../push/service';

/** Zulip's @human_users_only. */
function checkHuman(user: UserRow): void {
  if (isBot(user)) throw errors.notForBots();
}

function checkPushConfigured(app: App): void {
  if (!app.config.pushService) throw errors.pushServiceNotConfigured();
}

/** token_id as clients compute it: base64 of the first 8 bytes of SHA-256(token). */
export const tokenIdOf = (token: string) => crypto.createHash('sha256').update(token, 'utf8').digest().subarray(0, 8).toString('base64');

// ---- devices and E2EE registrations ------------------------------------------------------------------

/** POST /register_client_device: a new device id for the caller, announced to their other clients. */
export function doRegisterClientDevice(app: App, user: UserRow): number {
  checkHuman(user);
  return app.batch.write(() => {
    const id = Number(stmt(app.db, 'INSERT INTO client_device (user_id, created) VALUES (?, ?)').run(user.id, nowSeconds(app.clock)).lastInsertRowid);
    app.batch.onCommit(() => app.events.send({ type: 'device', op: 'add', device_id: id }, [user.id]));
    return id;
  });
}

/**
 * POST /remove_client_device (Zulip's do_remove_device, FL 470; the app calls it at logout): the
 * device and its E2EE registration go. As in Zulip, any user (bots too) may remove a device of their
 * own; another user's device is as unknown as one that never existed.
 */
export function doRemoveClientDevice(app: App, user: UserRow, deviceId: number): void {
  app.batch.write(() => {
    const gone = stmt(app.db, 'DELETE FROM client_device WHERE id = ? AND user_id = ?').run(deviceId, user.id);
    if (gone.changes === 0) throw errors.badRequest('Invalid `device_id`');
    // The foreign key's cascade removes it too; said here so that the row goes even with foreign keys off.
    stmt(app.db, 'DELETE FROM push_device WHERE device_id = ?').run(deviceId);
    app.batch.onCommit(() => app.events.send({ type: 'device', op: 'remove', device_id: deviceId }, [user.id]));
  });
}

export interface PushRegistration {
  deviceId: number;
  pushKeyId?: number;
  pushKey?: string;
  tokenKind?: 'fcm' | 'apns';
  tokenId?: string;
  bouncerPublicKey?: string;
  encryptedPushRegistration?: string;
}

interface PushDeviceRow {
  device_id: number;
  user_id: number;
  push_key_id: number | null;
  push_key: Buffer | null;
  token_kind: string | null;
  token_id: string | null;
  bouncer_public_key: string | null;
  encrypted_push_registration: string | null;
}

/**
 * POST /mobile_push/register: the first registration of a device needs the push key fields and all
 * token fields; afterwards the key fields alone rotate the key and the token fields alone rotate the
 * token. On success, a legacy registration of the same token by the same user is removed.
 */
export function doRegisterPushDevice(app: App, user: UserRow, r: PushRegistration): void {
  checkHuman(user);
  checkPushConfigured(app);
  const keyFields = [r.pushKey, r.pushKeyId];
  const tokenFields = [r.tokenKind, r.tokenId, r.bouncerPublicKey, r.encryptedPushRegistration];
  const allKey = keyFields.every((v) => v !== undefined);
  const anyKey = keyFields.some((v) => v !== undefined);
  const allToken = tokenFields.every((v) => v !== undefined);
  const anyToken = tokenFields.some((v) => v !== undefined);
  if ((anyKey && !allKey) || (anyToken && !allToken) || (!allKey && !allToken)) {
    throw errors.badRequest('Missing parameters: must provide either all push key fields, all token fields, or both.');
  }
  let key: Buffer | null = null;
  if (allKey) {
    key = parsePushKey(r.pushKey as string);
    if (!key) throw errors.badRequest('Invalid `push_key`');
  }
  if (allToken) {
    if (!isBase64(r.tokenId as string) || Buffer.from(r.tokenId as string, 'base64').length !== 8) throw errors.badRequest('Invalid `token_id`');
    if (!isBase64(r.bouncerPublicKey as string)) throw errors.badRequest('Invalid `bouncer_public_key`');
    if (!isBase64(r.encryptedPushRegistration as string)) throw errors.badRequest('Invalid `encrypted_push_registration`');
  }
  app.batch.write(() => {
    const device = stmt(app.db, 'SELECT id FROM client_device WHERE id = ? AND user_id = ?').get(r.deviceId, user.id);
    if (!device) throw errors.badRequest('Invalid `device_id`');
    const existing = stmt(app.db, 'SELECT * FROM push_device WHERE device_id = ?').get(r.deviceId) as PushDeviceRow | undefined;
    const now = nowSeconds(app.clock);
    if (!existing) {
      if (!allToken) throw errors.badRequest('No push registration exists to rotate key for.');
      if (!allKey) throw errors.badRequest('No push registration exists to rotate token for.');
      stmt(
        app.db,
        `INSERT INTO push_device (device_id, user_id, push_key_id, push_key, token_kind, token_id, bouncer_public_key,
           encrypted_push_registration, updated, token_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(r.deviceId, user.id, r.pushKeyId, key, r.tokenKind, r.tokenId, r.bouncerPublicKey, r.encryptedPushRegistration, now, now);
    } else {
      if (allKey) stmt(app.db, 'UPDATE push_device SET push_key_id = ?, push_key = ?, updated = ? WHERE device_id = ?').run(r.pushKeyId, key, now, r.deviceId);
      if (allToken) {
        stmt(
          app.db,
          `UPDATE push_device SET token_kind = ?, token_id = ?, bouncer_public_key = ?, encrypted_push_registration = ?, updated = ?,
             token_updated = CASE WHEN token_id IS ? THEN token_updated ELSE ? END, registration_error = NULL WHERE device_id = ?`,
        ).run(r.tokenKind, r.tokenId, r.bouncerPublicKey, r.encryptedPushRegistration, now, r.tokenId, now, r.deviceId);
      }
    }
    // Zulip's device update event names only what changed: the key, and the token's registration.
    const row = stmt(app.db, `SELECT device_id AS id, ${DEVICE_COLUMNS} FROM push_device WHERE device_id = ?`).get(r.deviceId) as DeviceRow;
    const info = deviceInfo(row);
    const update: Record<string, unknown> = { type: 'device', op: 'update', device_id: r.deviceId };
    if (allKey) update.push_key_id = info.push_key_id;
    if (allToken) {
      update.push_token_id = info.push_token_id;
      update.pending_push_token_id = info.pending_push_token_id;
      update.push_token_last_updated_timestamp = info.push_token_last_updated_timestamp;
      update.push_registration_error_code = info.push_registration_error_code;
    }
    app.batch.onCommit(() => app.events.send(update as { type: string }, [user.id]));
    if (allToken) {
      // zulip-compat (FL 483): the device moved to E2EE; its legacy token registration goes.
      const legacy = stmt(app.db, 'SELECT id, token FROM legacy_push_token WHERE user_id = ?').all(user.id) as { id: number; token: string }[];
      const del = stmt(app.db, 'DELETE FROM legacy_push_token WHERE id = ?');
      for (const l of legacy) if (tokenIdOf(l.token) === r.tokenId) del.run(l.id);
      const body = {
        user_id: user.id,
        device_id: r.deviceId,
        token_id: r.tokenId,
        token_kind: r.tokenKind,
        bouncer_public_key: r.bouncerPublicKey,
        encrypted_push_registration: r.encryptedPushRegistration,
      };
      const tokenId = r.tokenId as string;
      app.batch.onCommit(() =>
        pushQueue(app).enqueue('/api/v1/remotes/push/e2ee/register', body, (result) => settleRegistration(app, user.id, r.deviceId, tokenId, result)),
      );
    }
  });
}

/**
 * The push service's final answer to a token registration (Zulip's register_push_device_to_bouncer
 * worker): acknowledged, the token is the device's registered one; refused, the device carries the
 * service's error code (INVALID_BOUNCER_PUBLIC_KEY, REQUEST_EXPIRED, ...), which tells the app to act.
 * Either way the user's clients hear it. An answer about a token since replaced changes nothing; one
 * that never came (the service unreachable through every retry) leaves the token pending.
 */
function settleRegistration(app: App, userId: number, deviceId: number, tokenId: string, result: PostResult): void {
  if (!result.ok && result.retry) return;
  app.batch.write(() => {
    const row = stmt(app.db, `SELECT device_id AS id, ${DEVICE_COLUMNS} FROM push_device WHERE device_id = ? AND user_id = ?`).get(deviceId, userId) as
      | DeviceRow
      | undefined;
    if (!row || row.token_id !== tokenId) return;
    const event: Record<string, unknown> = { type: 'device', op: 'update', device_id: deviceId };
    if (result.ok) {
      stmt(app.db, 'UPDATE push_device SET registered_token_id = token_id, registration_error = NULL WHERE device_id = ?').run(deviceId);
      event.push_token_id = canonicalTokenId(tokenId);
      event.pending_push_token_id = null;
    } else {
      const code = (result.body as { code?: unknown } | null)?.code;
      const errorCode = typeof code === 'string' && /^[A-Z_]{1,100}$/.test(code) ? code : 'BAD_REQUEST';
      stmt(app.db, 'UPDATE push_device SET registration_error = ? WHERE device_id = ?').run(errorCode, deviceId);
      event.push_registration_error_code = errorCode;
    }
    app.batch.onCommit(() => app.events.send(event as { type: string }, [userId]));
  });
}

/**
 * Removes every device of the user, and so every E2EE push registration (API key regeneration,
 * FL 492: Zulip deletes the Device rows). Runs inside the caller's write; the user's remaining
 * clients hear each device removed.
 */
export function removeUserPushRegistrations(app: App, userId: number): void {
  const ids = (stmt(app.db, 'SELECT id FROM client_device WHERE user_id = ? ORDER BY id').all(userId) as { id: number }[]).map((r) => r.id);
  stmt(app.db, 'DELETE FROM push_device WHERE user_id = ?').run(userId);
  stmt(app.db, 'DELETE FROM client_device WHERE user_id = ?').run(userId);
  if (ids.length > 0) app.batch.onCommit(() => ids.forEach((id) => app.events.send({ type: 'device', op: 'remove', device_id: id }, [userId])));
}

// ---- legacy tokens ---------------------------------------------------------------------------------

export type LegacyKind = 'fcm' | 'apns';

/** Zulip's validate_token: length, and for APNs a token Python's b64decode would take. */
function validateLegacyToken(token: string, kind: LegacyKind): void {
  if (token === '' || token.length > 4096) throw errors.badRequest('Empty or invalid length token');
  if (kind === 'apns') {
    // Python's lenient b64decode drops characters outside the alphabet, then needs whole quanta.
    const kept = token.replace(/[^A-Za-z0-9+/=]/g, '');
    const data = kept.replace(/=+$/, '');
    if (data.includes('=') || data.length % 4 === 1 || kept.length % 4 !== 0) throw errors.badRequest('Invalid APNS token');
  }
}

/** POST /users/me/android_gcm_reg_id, POST /users/me/apns_device_token. */
export function doAddLegacyToken(app: App, user: UserRow, kind: LegacyKind, token: string, appId: string | null): void {
  checkHuman(user);
  validateLegacyToken(token, kind);
  app.batch.write(() => {
    stmt(
      app.db,
      `INSERT INTO legacy_push_token (user_id, kind, token, ios_app_id, updated) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, kind, token) DO UPDATE SET ios_app_id = excluded.ios_app_id, updated = excluded.updated`,
    ).run(user.id, kind, token, appId, nowSeconds(app.clock));
    if (app.config.pushService) {
      const body = { user_id: user.id, token, token_kind: kind, ios_app_id: appId };
      app.batch.onCommit(() => pushQueue(app).enqueue('/api/v1/remotes/push/register', body));
    }
  });
}

/** DELETE /users/me/android_gcm_reg_id, DELETE /users/me/apns_device_token. */
export function doRemoveLegacyToken(app: App, user: UserRow, kind: LegacyKind, token: string): void {
  checkHuman(user);
  validateLegacyToken(token, kind);
  app.batch.write(() => {
    const gone = stmt(app.db, 'DELETE FROM legacy_push_token WHERE user_id = ? AND kind = ? AND token = ?').run(user.id, kind, token);
    if (gone.changes === 0) throw errors.badRequest('Token does not exist');
    if (app.config.pushService) {
      const body = { user_id: user.id, token, token_kind: kind };
      app.batch.onCommit(() => pushQueue(app).enqueue('/api/v1/remotes/push/unregister', body));
    }
  });
}

// ---- test notifications ----------------------------------------------------------------------------

/**
 * POST /mobile_push/test_notification: to the device with `token`, or to all of the user's devices.
 * A token must be one the server knows (INVALID_PUSH_DEVICE_TOKEN) and the service must know it too
 * (INVALID_REMOTE_PUSH_DEVICE_TOKEN), so this waits for the service's answer for legacy tokens.
 */
export async function doSendTestNotification(app: App, user: UserRow, token: string | null): Promise<void> {
  checkHuman(user);
  const legacy = (
    token === null
      ? stmt(app.db, 'SELECT kind, token FROM legacy_push_token WHERE user_id = ?').all(user.id)
      : stmt(app.db, 'SELECT kind, token FROM legacy_push_token WHERE user_id = ? AND token = ?').all(user.id, token)
  ) as { kind: string; token: string }[];
  const e2ee = (
    token === null
      ? stmt(app.db, 'SELECT * FROM push_device WHERE user_id = ? AND push_key IS NOT NULL AND token_id IS NOT NULL').all(user.id)
      : stmt(app.db, 'SELECT * FROM push_device WHERE user_id = ? AND push_key IS NOT NULL AND token_id = ?').all(user.id, tokenIdOf(token))
  ) as PushDeviceRow[];
  if (token !== null && legacy.length === 0 && e2ee.length === 0) throw errors.invalidPushDeviceToken();
  if (!app.config.pushService) return;
  const payload = testPayload(app, user, nowSeconds(app.clock));
  for (const l of legacy) {
    const r = await postToService(app, '/api/v1/remotes/push/test_notification', { user_id: user.id, token: l.token, token_kind: l.kind, payload });
    if (r.ok) continue;
    const code = (r.body as { code?: string } | null)?.code;
    if (code === 'INVALID_REMOTE_PUSH_DEVICE_TOKEN') throw errors.invalidRemotePushDeviceToken();
    if (r.status === null || r.status >= 500) throw errors.badRequest('Network error while connecting to the push notification service.');
    throw errors.badRequest('Error from the push notification service.');
  }
  if (e2ee.length > 0) pushQueue(app).enqueue('/api/v1/remotes/push/e2ee/notify', { push_requests: await encryptAll(e2ee, payload) });
}

/**
 * POST /mobile_push/e2ee/test_notification (FL 420; `device_id` since FL 468): a test notification to
 * the device `deviceId`, or to every device of the user with a registered token. A device without
 * a token registration (or not the user's) counts as none: NO_ACTIVE_PUSH_DEVICE. As in Zulip, the
 * request waits for the push service and reports its failure (unreachable, 5xx or 429: 502; other
 * refusals: 403).
 */
export async function doSendE2eeTestNotification(app: App, user: UserRow, deviceId: number | null): Promise<void> {
  checkHuman(user);
  const devices = (
    deviceId === null
      ? stmt(app.db, 'SELECT * FROM push_device WHERE user_id = ? AND push_key IS NOT NULL AND token_id IS NOT NULL ORDER BY device_id').all(user.id)
      : stmt(app.db, 'SELECT * FROM push_device WHERE user_id = ? AND device_id = ? AND push_key IS NOT NULL AND token_id IS NOT NULL').all(user.id, deviceId)
  ) as PushDeviceRow[];
  if (devices.length === 0) throw errors.noActivePushDevice();
  // Registrations exist only while a push service is configured; one removed from the configuration
  // since has nowhere to deliver.
  if (!app.config.pushService) throw errors.pushServiceNotConfigured();
  const payload = testPayload(app, user, nowSeconds(app.clock));
  const r = await postToService(app, '/api/v1/remotes/push/e2ee/notify', { push_requests: await encryptAll(devices, payload) });
  if (r.ok) return;
  if (r.status === null) throw errors.pushServiceUnreachable();
  // A rate-limited request is one to retry later too.
  if (r.status >= 500 || r.status === 429) throw errors.pushServiceFailed();
  throw errors.pushServiceRefused();
}

async function encryptAll(devices: PushDeviceRow[], payload: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const plaintext = JSON.stringify(payload);
  return Promise.all(
    devices.map(async (d) => ({
      token_id: d.token_id,
      token_kind: d.token_kind,
      ...(d.token_kind === 'apns'
        ? { http_headers: { apns_priority: 10, apns_push_type: 'alert' } }
        : { fcm_priority: 'high' }),
      payload: {
        push_key_id: d.push_key_id,
        encrypted_data: await encryptForDevice(d.push_key as Buffer, plaintext),
        ...(d.token_kind === 'apns' ? { aps: { 'mutable-content': 1, alert: { title: 'New notification' } } } : {}),
      },
    })),
  );
}

// ---- message notifications -------------------------------------------------------------------------

/** A user counts as online (for enable_online_push_notifications) if active this recently. */
const ONLINE_SECONDS = 140;

const MENTION = FLAG.mentioned | FLAG.group_mentioned;
const WILDCARD = FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned;

const on = (v: unknown) => v === 1 || v === true;

/** Why `user` gets a push about this message (Zulip's notification settings), or null. */
function pushTrigger(app: App, user: UserRow, senderId: number, streamId: number | null, topicKey: string, bits: number): PushTrigger | null {
  if (user.id === senderId || isBot(user) || !user.is_active || bits & FLAG.read) return null;
  if (stmt(app.db, 'SELECT 1 FROM muted_user WHERE user_id = ? AND muted_user_id = ?').get(user.id, senderId)) return null;
  const last = stmt(app.db, 'SELECT last_active_time FROM presence WHERE user_id = ?').get(user.id) as { last_active_time: number | null } | undefined;
  const online = last?.last_active_time != null && nowSeconds(app.clock) - last.last_active_time < ONLINE_SECONDS;
  if (online && !on(user.enable_online_push_notifications)) return null;
  const personal = on(user.enable_offline_push_notifications);
  if (streamId === null) return personal ? 'direct_message' : null;
  if (bits & MENTION && personal) return 'mention';
  const sub = stmt(app.db, 'SELECT is_muted, push_notifications, wildcard_mentions_notify FROM subscription WHERE user_id = ? AND stream_id = ? AND active = 1').get(
    user.id,
    streamId,
  ) as { is_muted: number; push_notifications: number | null; wildcard_mentions_notify: number | null } | undefined;
  const topic = stmt(app.db, 'SELECT visibility_policy FROM user_topic WHERE user_id = ? AND stream_id = ? AND topic_key = ?').get(user.id, streamId, topicKey) as
    | { visibility_policy: number }
    | undefined;
  const followed = topic?.visibility_policy === 3;
  const mutedTopic = topic?.visibility_policy === 1 || (sub?.is_muted === 1 && topic?.visibility_policy !== 2 && !followed);
  if (bits & WILDCARD && personal && !mutedTopic) {
    if (on(sub?.wildcard_mentions_notify ?? user.wildcard_mentions_notify)) return bits & FLAG.stream_wildcard_mentioned ? 'stream_wildcard_mention' : 'topic_wildcard_mention';
    if (followed && on(user.enable_followed_topic_wildcard_mentions_notify)) return 'followed_topic';
  }
  if (followed && on(user.enable_followed_topic_push_notifications)) return 'followed_topic';
  if (!mutedTopic && sub && on(sub.push_notifications ?? user.enable_stream_push_notifications)) return 'stream';
  return null;
}

/**
 * After a message is committed: finds the recipients whose settings ask for a push and who have an
 * E2EE device, encrypts a payload per device and queues it. Runs on a later turn so the send
 * itself never waits for it.
 */
export function queueMessagePush(app: App, messageId: number, flags: ReadonlyMap<number, number>): void {
  if (!app.config.pushService) return;
  setImmediate(() => {
    sendMessagePush(app, messageId, flags).catch((err) => console.error('parley: building push notifications failed', err));
  });
}

async function sendMessagePush(app: App, messageId: number, flags: ReadonlyMap<number, number>): Promise<void> {
  const devices = stmt(
    app.db,
    `SELECT * FROM push_device WHERE push_key IS NOT NULL AND token_id IS NOT NULL
       AND user_id IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify([...flags.keys()])) as PushDeviceRow[];
  if (devices.length === 0) return;
  const m = findMessage(app.db, app.realmId(), messageId);
  if (!m) return;
  const sender = findUserById(app.db, m.realm_id, m.sender_id);
  if (!sender) return;
  const stream = m.stream_id === null ? null : findStreamById(app.db, m.realm_id, m.stream_id);
  const directIds = m.stream_id === null ? [...flags.keys()] : null;
  const byUser = new Map<number, PushDeviceRow[]>();
  for (const d of devices) byUser.set(d.user_id, [...(byUser.get(d.user_id) ?? []), d]);
  const requests: Record<string, unknown>[] = [];
  for (const [uid, list] of byUser) {
    const user = findUserById(app.db, m.realm_id, uid);
    if (!user) continue;
    const trigger = pushTrigger(app, user, m.sender_id, m.stream_id, m.topic_key, flags.get(uid) ?? 0);
    if (!trigger || !claimPush(app, uid, m.id)) continue; // marks it for a later remove notification
    requests.push(...(await encryptAll(list, messagePayload(app, user, m, sender, stream, directIds, trigger))));
  }
  if (requests.length > 0) pushQueue(app).enqueue('/api/v1/remotes/push/e2ee/notify', { push_requests: requests });
}

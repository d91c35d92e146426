// Remove notifications (Zulip's handle_remove_push_notification): when a user reads messages that a
// push told their phones about, the phones are told to withdraw those notifications. Which messages
// had a push is the usermessage flag active_mobile_push_notification, set as the push is built
// (claimPush) and cleared once the removal is queued, as Zulip does.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { FLAG } from '../lib/narrow';
import { findUserById } from '../lib/users';
import { materializeUserMessages } from '../lib/user-messages';
import { encryptForDevice } from './crypto';
import { basePayload } from './payload';
import { pushQueue } from './service';

const ACTIVE = FLAG.active_mobile_push_notification;

/**
 * zulip-compat: at most this many ids in one removal (the newest), as Zulip's MAX_APNS_MESSAGE_IDS:
 * APNs payloads are limited to 4 KB. The flag is cleared on all of them anyway.
 */
export const MAX_REMOVE_IDS = 200;

/**
 * Marks that a push about `messageId` goes to `userId`; false when the user has read the message since
 * it was sent (then no push is needed, as in Zulip's handle_push_notification).
 */
export function claimPush(app: App, userId: number, messageId: number): boolean {
  return app.batch.write(() => {
    materializeUserMessages(app.db, userId); // the row is updated in place
    return (
      stmt(app.db, `UPDATE usermessage SET flags = flags | ${ACTIVE} WHERE user_id = ? AND message_id = ? AND (flags & ${FLAG.read}) = 0`).run(userId, messageId)
        .changes > 0
    );
  });
}

/**
 * After `userId` marked messages read (call from the flag change's onCommit): queues a removal to their
 * E2EE devices for those of `messageIds` that had a push, or, with null (mark all as read), for every
 * read message of theirs that had one. Returns at once; the work runs on a later turn.
 */
export function queueRemovePush(app: App, userId: number, messageIds: readonly number[] | null): void {
  if (!app.config.pushService || messageIds?.length === 0) return;
  setImmediate(() => {
    sendRemovePush(app, userId, messageIds).catch((err) => console.error('parley: building a remove notification failed', err));
  });
}

interface DeviceRow {
  token_id: string;
  token_kind: string;
  push_key_id: number;
  push_key: Buffer;
}

async function sendRemovePush(app: App, userId: number, messageIds: readonly number[] | null): Promise<void> {
  // Only written rows carry the push flag (claimPush writes the row): no implied rows to consider.
  const pushed = `(flags & ${ACTIVE}) <> 0 AND (flags & ${FLAG.read}) <> 0`;
  const rows = (
    messageIds === null
      ? stmt(app.db, `SELECT message_id FROM usermessage INDEXED BY usermessage_active_push WHERE user_id = ? AND ${pushed}`).all(userId)
      : stmt(app.db, `SELECT message_id FROM usermessage INDEXED BY usermessage_active_push WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?)) AND ${pushed}`).all(
          userId,
          JSON.stringify(messageIds),
        )
  ) as { message_id: number }[];
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.message_id).sort((a, b) => a - b);
  app.batch.write(() =>
    stmt(app.db, `UPDATE usermessage SET flags = flags & ~${ACTIVE} WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))`).run(
      userId,
      JSON.stringify(ids),
    ),
  );
  const devices = stmt(
    app.db,
    'SELECT token_id, token_kind, push_key_id, push_key FROM push_device WHERE user_id = ? AND push_key IS NOT NULL AND token_id IS NOT NULL',
  ).all(userId) as DeviceRow[];
  const user = findUserById(app.db, app.realmId(), userId);
  if (devices.length === 0 || !user) return;
  const shown = ids.slice(-MAX_REMOVE_IDS);
  // The E2EE format (type, message_ids; /api/mobile-notifications) plus the legacy keys older
  // clients switch on (event, zulip_message_ids as a comma-separated string), like the message payload.
  const plaintext = JSON.stringify({
    ...basePayload(app, user),
    event: 'remove',
    type: 'remove',
    message_ids: shown,
    zulip_message_ids: shown.join(','),
  });
  // Nothing to show: a silent, normal-priority push (APNs background push with content-available).
  const requests = await Promise.all(
    devices.map(async (d) => ({
      token_id: d.token_id,
      token_kind: d.token_kind,
      ...(d.token_kind === 'apns' ? { http_headers: { apns_priority: 5, apns_push_type: 'background' } } : { fcm_priority: 'normal' }),
      payload: {
        push_key_id: d.push_key_id,
        encrypted_data: await encryptForDevice(d.push_key, plaintext),
        ...(d.token_kind === 'apns' ? { aps: { 'content-available': 1 } } : {}),
      },
    })),
  );
  pushQueue(app).enqueue('/api/v1/remotes/push/e2ee/notify', { push_requests: requests });
}

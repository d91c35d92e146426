// Muted users: POST/DELETE /users/me/muted_users/{id}. Muting marks the muted user's messages read
// for the muter (and new ones arrive read: see sendTimeFlags in ./alert-words).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { FLAG } from '../lib/narrow';
import { accessibleUsers } from '../lib/access';
import { accessUserById, type UserRow } from '../lib/users';
import { materializeUserMessages } from '../lib/user-messages';

/** The user's mutes as the muted_users event and register list them. */
export function listMutedUsers(app: App, userId: number): { id: number; timestamp: number }[] {
  return (
    stmt(app.db, 'SELECT muted_user_id, date_muted FROM muted_user WHERE user_id = ? ORDER BY muted_user_id').all(userId) as {
      muted_user_id: number;
      date_muted: number;
    }[]
  ).map((r) => ({ id: r.muted_user_id, timestamp: r.date_muted }));
}

/** Zulip's access_user_by_id_including_cross_realm with bots and deactivated users allowed. */
function accessMuteTarget(app: App, user: UserRow, targetId: number): UserRow {
  const target = accessUserById(app.db, user, targetId, { allowBots: true, allowDeactivated: true, includeCrossRealm: true });
  const access = accessibleUsers(app.db, user);
  if (access && !access.has(target.id)) throw errors.insufficientPermission();
  return target;
}

function notify(app: App, userId: number): void {
  const mutes = listMutedUsers(app, userId);
  app.batch.onCommit(() => app.events.send({ type: 'muted_users', muted_users: mutes }, [userId]));
}

/** POST /users/me/muted_users/{id}. */
export function doMuteUser(app: App, user: UserRow, targetId: number): void {
  if (user.id === targetId) throw errors.badRequest('Cannot mute self');
  app.batch.write(() => {
    const target = accessMuteTarget(app, user, targetId);
    if (stmt(app.db, 'SELECT 1 FROM muted_user WHERE user_id = ? AND muted_user_id = ?').get(user.id, target.id)) {
      throw errors.badRequest('User already muted');
    }
    stmt(app.db, 'INSERT INTO muted_user (user_id, muted_user_id, date_muted) VALUES (?, ?, ?)').run(user.id, target.id, nowSeconds(app.clock));
    // Zulip's do_mark_muted_user_messages_as_read.
    materializeUserMessages(app.db, user.id);
    const unread = (
      stmt(
        app.db,
        `SELECT um.message_id FROM usermessage um INDEXED BY usermessage_unread JOIN message m ON m.id = um.message_id
         WHERE um.user_id = ? AND m.sender_id = ? AND (um.flags & ${FLAG.read}) = 0 ORDER BY um.message_id`,
      ).all(user.id, target.id) as { message_id: number }[]
    ).map((r) => r.message_id);
    if (unread.length > 0) {
      stmt(app.db, `UPDATE usermessage SET flags = flags | ${FLAG.read} WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))`).run(
        user.id,
        JSON.stringify(unread),
      );
      const event = { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: unread, all: false };
      app.batch.onCommit(() => app.events.send(event, [user.id]));
    }
    notify(app, user.id);
  });
}

/** DELETE /users/me/muted_users/{id}. */
export function doUnmuteUser(app: App, user: UserRow, targetId: number): void {
  app.batch.write(() => {
    const target = accessMuteTarget(app, user, targetId);
    const res = stmt(app.db, 'DELETE FROM muted_user WHERE user_id = ? AND muted_user_id = ?').run(user.id, target.id);
    if (res.changes === 0) throw errors.badRequest('User is not muted');
    notify(app, user.id);
  });
}

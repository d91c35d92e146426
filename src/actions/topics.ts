// Topics: listing a channel's topics and deleting a topic in batches within a time budget.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import type { MessageRow } from '../lib/messages';
import { topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { accessStreamById, canAccessStreamContent, canAccessStreamHistory, type StreamRow } from '../lib/streams';
import { findUserById, isAdmin, type UserRow } from '../lib/users';
import { deleteMessages } from './messages';
import { doUpdateUserTopic, VISIBILITY_POLICY } from './user-topics';
import { materializeUserMessages } from '../lib/user-messages';

/** GET /users/me/{stream_id}/topics: newest first, only what the user can read. */
export function listTopics(app: App, user: UserRow, streamId: number, allowEmptyTopicName: boolean): { name: string; max_id: number }[] {
  const s = accessStreamById(app.db, user, streamId, { allowArchived: true });
  // As Zulip: administrators see every channel's metadata, but a topic list is content.
  if (!canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  const realm = getRealmById(app.db, user.realm_id) as RealmRow;
  const history = canAccessStreamHistory(app.db, user, s);
  if (!history) materializeUserMessages(app.db, user.id);
  const rows = history
    ? (stmt(
        app.db,
        `SELECT m.topic AS name, max(m.id) AS max_id FROM message m WHERE m.stream_id = ? GROUP BY m.topic_key ORDER BY max_id DESC`,
      ).all(s.id) as { name: string; max_id: number }[])
    : (stmt(
        app.db,
        `SELECT m.topic AS name, max(m.id) AS max_id FROM usermessage um JOIN message m ON m.id = um.message_id
         WHERE um.user_id = ? AND m.stream_id = ? GROUP BY m.topic_key ORDER BY max_id DESC`,
      ).all(user.id, s.id) as { name: string; max_id: number }[]);
  // The name shown is that of the topic's newest message (topics match case-insensitively).
  return rows.map((r) => {
    const latest = stmt(app.db, 'SELECT topic FROM message WHERE id = ?').get(r.max_id) as { topic: string };
    const name = latest.topic === '' && !allowEmptyTopicName ? realm.empty_topic_display_name : latest.topic;
    return { max_id: r.max_id, name };
  });
}

/**
 * POST /streams/{id}/delete_topic: deletes newest first in batches; stops when the time budget is
 * spent and answers complete: false (the client repeats). Each finished batch stays deleted.
 */
export function doDeleteTopic(app: App, user: UserRow, streamId: number, topicName: string): { complete: boolean } {
  if (!isAdmin(user)) throw errors.adminRequired();
  const s = accessStreamById(app.db, user, streamId, { allowArchived: true });
  if (!canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  // As Zulip: with protected history, only the messages the administrator received can be deleted.
  const onlyOwnRows = !canAccessStreamHistory(app.db, user, s);
  if (onlyOwnRows) materializeUserMessages(app.db, user.id);
  const realm = getRealmById(app.db, user.realm_id) as RealmRow;
  const key = topicName === realm.empty_topic_display_name ? '' : topicKey(topicName);
  const started = Date.now();
  const batchSize = Math.max(1, app.config.deleteTopicBatchSize);
  for (;;) {
    const done = app.batch.write(() => {
      const batch = (
        onlyOwnRows
          ? stmt(
              app.db,
              `SELECT m.* FROM message m JOIN usermessage um ON um.message_id = m.id AND um.user_id = ?
               WHERE m.stream_id = ? AND m.topic_key = ? ORDER BY m.id DESC LIMIT ?`,
            ).all(user.id, s.id, key, batchSize)
          : stmt(app.db, 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? ORDER BY id DESC LIMIT ?').all(s.id, key, batchSize)
      ) as MessageRow[];
      deleteMessages(app, user.realm_id, batch);
      return batch.length < batchSize;
    });
    if (done) break;
    if (Date.now() - started >= app.config.deleteTopicBudgetMs) return { complete: false };
  }
  app.batch.write(() => resetTopicVisibility(app, s, topicName, key));
  return { complete: true };
}

/**
 * After a finished topic deletion, as Zulip's delete_in_topic: the users' visibility policies for the
 * topic go back to inherit (with their user_topic events). With protected history, only for users left
 * with no message of their own in the topic (the deletion covered only the administrator's messages).
 */
function resetTopicVisibility(app: App, s: StreamRow, topicName: string, key: string): void {
  const userIds = (stmt(app.db, 'SELECT user_id FROM user_topic WHERE stream_id = ? AND topic_key = ? ORDER BY user_id').all(s.id, key) as { user_id: number }[]).map(
    (r) => r.user_id,
  );
  for (const userId of userIds) {
    const u = findUserById(app.db, s.realm_id, userId);
    if (!u) continue;
    if (!s.history_public_to_subscribers) {
      materializeUserMessages(app.db, userId);
      const kept = stmt(
        app.db,
        'SELECT 1 FROM usermessage um JOIN message m ON m.id = um.message_id WHERE um.user_id = ? AND m.stream_id = ? AND m.topic_key = ? LIMIT 1',
      ).get(userId, s.id, key);
      if (kept) continue;
    }
    doUpdateUserTopic(app, u, s.id, topicName, VISIBILITY_POLICY.inherit);
  }
}

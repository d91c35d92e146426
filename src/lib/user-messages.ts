// A user's message rows, written or implied. A send writes only the usermessage rows whose flags
// differ from a subscriber's plain unread row; the others are implied by the user's subscriptions and
// cursor (schema.sql, usermessage_cursor). Queries that read or change a user's rows by user first
// write that user's implied rows (materializeUserMessages); lookups of one message read both kinds.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';

/**
 * Writes the user's implied rows by moving their cursor to the newest message, so that queries over
 * usermessage keyed by this user see every row of theirs. Nothing a reader can tell changes (the
 * rows were theirs already), so a read may call it without waiting for its commit, and losing it to a
 * rollback loses nothing. One indexed lookup when there is nothing to write.
 */
export function materializeUserMessages(db: Db, userId: number): void {
  if (stmt(db, 'SELECT 1 FROM usermessage_cursor WHERE user_id = ? AND message_id < (SELECT max(id) FROM message)').get(userId) === undefined) return;
  stmt(db, 'UPDATE usermessage_cursor SET message_id = (SELECT max(id) FROM message) WHERE user_id = ?').run(userId);
}

/** The user's flag bits for one message (0 for an implied row), or null if the message is not theirs. */
export function userMessageFlags(db: Db, userId: number, messageId: number): number | null {
  const row = stmt(db, 'SELECT flags FROM usermessage WHERE user_id = ? AND message_id = ?').get(userId, messageId) as { flags: number } | undefined;
  if (row) return row.flags;
  return stmt(db, 'SELECT 1 FROM usermessage_pending WHERE user_id = ? AND message_id = ?').get(userId, messageId) === undefined ? null : 0;
}

/** The oldest message of a channel topic (by topic key), or null. */
export function firstTopicMessage(db: Db, streamId: number, key: string): number | null {
  return (stmt(db, 'SELECT min(id) AS id FROM message WHERE stream_id = ? AND topic_key = ?').get(streamId, key) as { id: number | null }).id;
}

/**
 * The oldest message of a channel topic the user has (written or implied row), or null. Writes
 * nothing, so a send may ask before its last check.
 */
export function firstReceivedInTopic(db: Db, userId: number, streamId: number, key: string): number | null {
  return (
    stmt(
      db,
      `SELECT min(id) AS id FROM (
         SELECT um.message_id AS id FROM usermessage um JOIN message m ON m.id = um.message_id
         WHERE um.user_id = @user AND m.stream_id = @stream AND m.topic_key = @key
         UNION ALL
         SELECT p.message_id AS id FROM usermessage_pending p JOIN message m ON m.id = p.message_id
         WHERE p.user_id = @user AND m.stream_id = @stream AND m.topic_key = @key)`,
    ).get({ user: userId, stream: streamId, key }) as { id: number | null }
  ).id;
}

/** Every user who has the message, with their flag bits (0 for implied rows). */
export function messageUserRows(db: Db, messageId: number): { user_id: number; flags: number }[] {
  return stmt(
    db,
    `SELECT user_id, flags FROM usermessage WHERE message_id = @id
     UNION ALL
     SELECT p.user_id, 0 FROM usermessage_pending p WHERE p.message_id = @id
       AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)`,
  ).all({ id: messageId }) as { user_id: number; flags: number }[];
}

/**
 * Every user's rows, written and implied, in (user, message) order: the logical content of
 * usermessage, which materializing leaves unchanged (tests compare it).
 */
export const ALL_USER_MESSAGES_SQL = `SELECT user_id, message_id, flags FROM (
  SELECT user_id, message_id, flags FROM usermessage
  UNION ALL
  SELECT p.user_id, p.message_id, 0 FROM usermessage_pending p
  WHERE NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)
) ORDER BY user_id, message_id`;

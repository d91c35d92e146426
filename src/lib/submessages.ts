// Read side of submessages (Zulip's SubMessage): the `submessages` of message objects, fetched for a
// whole page of messages at once, and what a message's widget is.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';

/** A submessage as message objects list it (Zulip's SubMessage.get_raw_db_rows). */
export interface Submessage {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

/** The submessages of the given messages, grouped by message id, each list in id order (one query). */
export function submessagesOf(db: Db, ids: readonly number[]): Map<number, Submessage[]> {
  const out = new Map<number, Submessage[]>();
  if (ids.length === 0) return out;
  const rows = stmt(
    db,
    `SELECT id, message_id, sender_id, msg_type, content FROM submessage
     WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, id`,
  ).all(JSON.stringify(ids)) as Submessage[];
  for (const r of rows) {
    const list = out.get(r.message_id);
    if (list) list.push(r);
    else out.set(r.message_id, [r]);
  }
  return out;
}

/** Zulip's is_widget_message: whether the message has any submessage (its content can no longer be edited). */
export function hasSubmessages(db: Db, messageId: number): boolean {
  return stmt(db, 'SELECT 1 FROM submessage WHERE message_id = ? LIMIT 1').get(messageId) !== undefined;
}

/** How many submessages a message has (bounded per message). */
export function submessageCount(db: Db, messageId: number): number {
  return (stmt(db, 'SELECT count(*) AS n FROM submessage WHERE message_id = ?').get(messageId) as { n: number }).n;
}

/** The characters of all of a message's submessages (SQLite's length() counts characters, as codePoints). */
export function submessagesLength(db: Db, messageId: number): number {
  return (stmt(db, 'SELECT coalesce(sum(length(content)), 0) AS n FROM submessage WHERE message_id = ?').get(messageId) as { n: number }).n;
}

/** Whether the message's sender attached a submessage to it (Zulip's verify_submessage_sender). */
export function senderAttachedSubmessage(db: Db, messageId: number, senderId: number): boolean {
  return stmt(db, 'SELECT 1 FROM submessage WHERE message_id = ? AND sender_id = ? LIMIT 1').get(messageId, senderId) !== undefined;
}

/**
 * Zulip's get_widget_type: the widget_type of the message's first "widget" submessage, or null
 * (none, or content that is not a JSON object naming one).
 */
export function widgetTypeOf(db: Db, messageId: number): string | null {
  const row = stmt(db, "SELECT content FROM submessage WHERE message_id = ? AND msg_type = 'widget' ORDER BY id LIMIT 1").get(messageId) as
    | { content: string }
    | undefined;
  if (!row) return null;
  try {
    const data = JSON.parse(row.content) as unknown;
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
      const type = (data as Record<string, unknown>).widget_type;
      return typeof type === 'string' ? type : null;
    }
  } catch {
    // Zulip: not JSON, no widget
  }
  return null;
}

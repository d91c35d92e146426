// Read side of scheduled messages: the row, the API record (GET /scheduled_messages and the
// scheduled_messages events), and the owner-only lookup.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';

export interface ScheduledMessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  /** 'stream' or 'private'. */
  type: string;
  stream_id: number | null;
  /** JSON list of the recipients other than the sender ([sender] for a message to oneself). */
  recipient_ids: string | null;
  topic: string;
  content: string;
  rendered_content: string;
  scheduled_timestamp: number;
  failed: number;
  failure_message: string | null;
  delivered: number;
  delivered_message_id: number | null;
  read_by_sender: number;
  created: number;
  /** SEND_LATER (1) or REMIND (2). */
  delivery_type: number;
  reminder_target_message_id: number | null;
  reminder_note: string | null;
}

/** Zulip's ScheduledMessage.SEND_LATER and REMIND: reminders share the table, ids and timer, not the lists. */
export const DELIVERY_TYPE = { SEND_LATER: 1, REMIND: 2 } as const;

/** The `to` of a direct scheduled message as stored. */
export function scheduledRecipientIds(row: ScheduledMessageRow): number[] {
  try {
    const parsed = JSON.parse(row.recipient_ids ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((x): x is number => typeof x === 'number') : [];
  } catch {
    return [];
  }
}

/** Zulip's ScheduledMessage.to_dict(): channel messages carry `to` (the channel id) and `topic`; direct ones a list. */
export function formatScheduledMessage(row: ScheduledMessageRow): Record<string, unknown> {
  const out: Record<string, unknown> = { scheduled_message_id: row.id, type: row.type };
  if (row.type === 'stream') {
    out.to = row.stream_id;
    out.topic = row.topic;
  } else {
    out.to = scheduledRecipientIds(row);
  }
  out.content = row.content;
  out.rendered_content = row.rendered_content;
  out.scheduled_delivery_timestamp = row.scheduled_timestamp;
  out.failed = row.failed === 1;
  return out;
}

/** The user's undelivered scheduled messages, soonest first. */
export function listScheduledMessages(db: Db, userId: number): ScheduledMessageRow[] {
  return stmt(db, 'SELECT * FROM scheduled_message WHERE sender_id = ? AND delivered = 0 AND delivery_type = 1 ORDER BY scheduled_timestamp, id').all(userId) as ScheduledMessageRow[];
}

/** The user's own scheduled message (a reminder is not one); 404 "Scheduled message does not exist" for a missing or foreign id alike. */
export function accessScheduledMessage(db: Db, userId: number, id: number): ScheduledMessageRow {
  const row = stmt(db, 'SELECT * FROM scheduled_message WHERE id = ? AND sender_id = ? AND delivery_type = 1').get(id, userId) as ScheduledMessageRow | undefined;
  if (!row) throw errors.notFound('Scheduled message does not exist');
  return row;
}

/** Undelivered, unfailed messages due at `nowSeconds` or earlier, oldest first. */
export function dueScheduledMessages(db: Db, nowSeconds: number, limit = 100): ScheduledMessageRow[] {
  return stmt(db, 'SELECT * FROM scheduled_message WHERE delivered = 0 AND failed = 0 AND scheduled_timestamp <= ? ORDER BY scheduled_timestamp, id LIMIT ?').all(
    nowSeconds,
    limit,
  ) as ScheduledMessageRow[];
}

/** The soonest pending delivery time (UNIX seconds), or null when nothing waits. */
export function nextScheduledTimestamp(db: Db): number | null {
  const row = stmt(db, 'SELECT min(scheduled_timestamp) AS t FROM scheduled_message WHERE delivered = 0 AND failed = 0').get() as { t: number | null };
  return row.t;
}

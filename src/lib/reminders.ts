// Read side of message reminders (Zulip's zerver/lib/reminders.py): a reminder is a scheduled_message
// row with delivery_type REMIND, addressed to its owner. The API record (GET /reminders, /register's
// `reminders`, the reminders add event) and the owner-only lookup.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { DELIVERY_TYPE, scheduledRecipientIds, type ScheduledMessageRow } from './scheduled-messages';

/** Zulip's settings.MAX_REMINDER_NOTE_LENGTH (also /register's max_reminder_note_length). */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

/** Zulip's ScheduledMessage.to_reminder_dict(), keys in its order. */
export function formatReminder(row: ScheduledMessageRow): Record<string, unknown> {
  return {
    reminder_id: row.id,
    to: scheduledRecipientIds(row),
    type: 'private',
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: row.scheduled_timestamp,
    failed: row.failed === 1,
    reminder_target_message_id: row.reminder_target_message_id,
  };
}

/** The user's undelivered reminders (failed ones included, as Zulip lists them), soonest first. */
export function listReminders(db: Db, userId: number): ScheduledMessageRow[] {
  return stmt(db, 'SELECT * FROM scheduled_message WHERE sender_id = ? AND delivered = 0 AND delivery_type = ? ORDER BY scheduled_timestamp, id').all(
    userId,
    DELIVERY_TYPE.REMIND,
  ) as ScheduledMessageRow[];
}

/** The user's own reminder; 404 "Reminder does not exist" for a missing id, another user's, or a scheduled message's alike. */
export function accessReminder(db: Db, userId: number, id: number): ScheduledMessageRow {
  const row = stmt(db, 'SELECT * FROM scheduled_message WHERE id = ? AND sender_id = ? AND delivery_type = ?').get(id, userId, DELIVERY_TYPE.REMIND) as
    | ScheduledMessageRow
    | undefined;
  if (!row) throw errors.notFound('Reminder does not exist');
  return row;
}

// Message reminders (Zulip's zerver/actions/reminders.py and lib/reminders.py): POST /reminders
// schedules a direct message to oneself about a message one can read; at its time Notification Bot
// sends it (actions/scheduled-messages.ts runs the timer for both). A reminder is a scheduled_message
// row with delivery_type REMIND, so it shares their ids, but GET /scheduled_messages never lists it.
// Events `reminders` add/remove go to the owner only.
//
// The text is Zulip's, built again at delivery from the message as it is then (edited, moved), with
// the note; when the owner can no longer read the message (deleted, access lost) the text stored
// when the reminder was made goes out instead, as Zulip's send_reminder does.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { codePoints, prefixCodePoints } from '../http/params';
import { nowSeconds } from '../lib/clock';
import { directRecipients, type MessageRow } from '../lib/messages';
import { formatReminder, accessReminder, MAX_REMINDER_NOTE_LENGTH } from '../lib/reminders';
import { renderMessage } from '../lib/render';
import { DELIVERY_TYPE, type ScheduledMessageRow } from '../lib/scheduled-messages';
import { findStreamById } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';
import { silentMention } from './channel-notices';
import { conversationLinkSyntax, directMessageUrl, streamMessageUrl } from './message-move-notices';
import { accessMessage, doSendMessage, MAX_MESSAGE_LENGTH, normalizeContent } from './messages';
import { armScheduledDelivery } from './scheduled-messages';
import { notificationBot } from './system-bots';

const TRUNCATION_NOTICE = '\n[message truncated]';

/** Zulip's normalize_note_text: trailing whitespace and leading newlines go; then the length bound. */
function normalizeNote(note: string): string {
  const body = note.trimEnd().replace(/^\n+/, '');
  if (codePoints(body) > MAX_REMINDER_NOTE_LENGTH) {
    throw errors.badRequest('Maximum reminder note length: {max_length} characters', { max_length: MAX_REMINDER_NOTE_LENGTH });
  }
  return body;
}

/** Zulip's get_unused_fence: one backtick longer than the longest ``` fence opening a line. */
function unusedFence(content: string): string {
  let length = 3;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1].length + 1);
  return '`'.repeat(length);
}

/** Silent mentions of users, as a list in English ("A", "A and B", "A, B, and C"). */
function mentionsForDisplay(users: { id: number; full_name: string }[]): string {
  const mentions = users.map(silentMention);
  if (mentions.length <= 2) return mentions.join(' and ');
  return `${mentions.slice(0, -1).join(', ')}, and ${mentions[mentions.length - 1]}`;
}


/** Zulip's get_reminder_formatted_content, for a message `user` may read. */
export function reminderContent(app: App, m: MessageRow, note: string | null): string {
  const normalized = note ? normalizeNote(note) : '';
  const sender = findUserById(app.db, m.realm_id, m.sender_id) as UserRow;
  const senderMention = silentMention(sender);
  let content: string;
  let where: string | null;
  let url: string;
  if (m.stream_id !== null) {
    const stream = findStreamById(app.db, m.realm_id, m.stream_id);
    const name = stream?.name ?? '';
    url = streamMessageUrl(app, m.stream_id, name, m.topic, m.id);
    content = normalized ? `You requested a reminder for the following message. Note:\n > ${normalized}` : 'You requested a reminder for the following message.';
    where = `in ${conversationLinkSyntax(m.stream_id, name, m.topic, m.id)}`;
  } else {
    const participants = directRecipients(app.db, m.direct_group_id as number);
    url = directMessageUrl(
      app,
      participants.map((u) => u.id),
      m.id,
    );
    content = normalized
      ? `You requested a reminder for the following direct message. Note:\n > ${normalized}`
      : 'You requested a reminder for the following direct message.';
    const others = participants.filter((u) => u.id !== sender.id);
    where = others.length ? `to ${mentionsForDisplay(others)}` : null;
  }
  content += '\n\n';
  const widget = m.content.startsWith('/poll') ? 'poll' : m.content.startsWith('/todo') ? 'todo list' : null;
  // A note to oneself is told in the second person.
  if (widget) return where ? `${content}${senderMention} [sent](${url}) a ${widget} ${where}.` : `${content}You [sent](${url}) yourself a ${widget}.`;
  content += where ? `${senderMention} [said](${url}) ${where}:\n` : `You [sent](${url}) a note to yourself:\n`;
  // As Zulip, the fence is chosen from the text before the quote.
  const fence = unusedFence(content);
  const room = MAX_MESSAGE_LENGTH - codePoints(`${content}${fence}quote\n\n${fence}`);
  const quoted = codePoints(m.content) > room ? prefixCodePoints(m.content, room - TRUNCATION_NOTICE.length) + TRUNCATION_NOTICE : m.content;
  return `${content}${fence}quote\n${quoted}\n${fence}`;
}

/** POST /reminders: Zulip's schedule_reminder_for_message. */
export function doScheduleReminder(app: App, user: UserRow, messageId: number, deliverAt: number, note: string | undefined): { reminder_id: number } {
  const result = app.batch.write(() => {
    if (deliverAt <= nowSeconds(app.clock)) throw errors.badRequest('Scheduled delivery time must be in the future.');
    const m = accessMessage(app, user, messageId);
    // As check_message for a direct message to oneself: bounded, trimmed, rendered as the user's.
    const content = normalizeContent(reminderContent(app, m, note ?? null));
    const rendered = renderMessage(app, user.realm_id, content, user).html;
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO scheduled_message (realm_id, sender_id, type, stream_id, recipient_ids, topic, content, rendered_content,
           scheduled_timestamp, read_by_sender, created, delivery_type, reminder_target_message_id, reminder_note)
         VALUES (?, ?, 'private', NULL, ?, '', ?, ?, ?, 0, ?, ?, ?, ?)`,
      ).run(
        user.realm_id,
        user.id,
        JSON.stringify([user.id]),
        content,
        rendered,
        deliverAt,
        nowSeconds(app.clock),
        DELIVERY_TYPE.REMIND,
        m.id,
        note ?? '',
      ).lastInsertRowid,
    );
    const record = formatReminder(stmt(app.db, 'SELECT * FROM scheduled_message WHERE id = ?').get(id) as ScheduledMessageRow);
    app.batch.onCommit(() => app.events.send({ type: 'reminders', op: 'add', reminders: [record] }, [user.id]));
    return { reminder_id: id };
  });
  app.batch.afterCommit((ok) => ok && armScheduledDelivery(app));
  return result;
}

function sendRemoveEvent(app: App, row: ScheduledMessageRow): void {
  app.batch.onCommit(() => app.events.send({ type: 'reminders', op: 'remove', reminder_id: row.id }, [row.sender_id]));
}

/** DELETE /reminders/{id}: the owner's undelivered or failed reminder. */
export function doDeleteReminder(app: App, user: UserRow, id: number): void {
  app.batch.write(() => {
    const row = accessReminder(app.db, user.id, id);
    stmt(app.db, 'DELETE FROM scheduled_message WHERE id = ?').run(row.id);
    sendRemoveEvent(app, row);
  });
}

/**
 * Zulip's send_reminder, inside the delivery's write: Notification Bot sends the owner the text built
 * now, or the stored one when the message is out of reach. Throws (a JsonableError) when it cannot be
 * sent; the caller marks the reminder failed.
 */
export function deliverReminder(app: App, owner: UserRow, row: ScheduledMessageRow): void {
  let content = row.content;
  try {
    const m = accessMessage(app, owner, row.reminder_target_message_id as number);
    content = reminderContent(app, m, row.reminder_note);
  } catch (err) {
    if (!(err instanceof JsonableError)) throw err;
  }
  const bot = notificationBot(app, row.realm_id);
  let id: number;
  try {
    id = doSendMessage(app, bot, { to: { kind: 'direct', userIds: [owner.id] }, content, client: 'Internal', system: true }).id;
  } catch (err) {
    // internal_send_private_message swallows the refusal; send_reminder reports this instead.
    if (err instanceof JsonableError) throw errors.badRequest('Reminder could not be sent.');
    throw err;
  }
  stmt(app.db, 'UPDATE scheduled_message SET delivered = 1, delivered_message_id = ? WHERE id = ?').run(id, row.id);
  sendRemoveEvent(app, row);
}

// Typing notifications (POST /typing). Nothing is stored: the event goes out once the (empty) write
// commits, to the users who would receive the message being typed and want typing notifications.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { accessibleUsers, checkSenderCanAccessRecipients, userIdsWhoCannotAccess } from '../lib/access';
import { placeholderEmail } from '../lib/user-emails';
import { accessStreamById, subscriberIds } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';
import { nowSeconds } from '../lib/clock';
import { directRecipients } from '../lib/messages';
import { getRealmById, type RealmRow } from '../lib/realm';
import { accessMessage } from './messages';

export type TypingOp = 'start' | 'stop';

/** Of `ids`, the active users who have receives_typing_notifications on. */
function typingReceivers(app: App, ids: readonly number[]): number[] {
  if (ids.length === 0) return [];
  const rows = stmt(
    app.db,
    'SELECT id FROM user WHERE id IN (SELECT value FROM json_each(?)) AND is_active = 1 AND receives_typing_notifications = 1',
  ).all(JSON.stringify(ids)) as { id: number }[];
  return rows.map((r) => r.id);
}

/**
 * Direct-message typing: `to` are the other participants. As Zulip's check_send_typing_notification,
 * the sender is one of the recipients (listed in the event and, like every recipient, notified when
 * they receive typing notifications: Zulip clients ignore their own).
 */
export function doSendDirectTyping(app: App, sender: UserRow, to: readonly number[], op: TypingOp): void {
  if (to.length === 0) throw errors.badRequest("Empty 'to' list");
  if (!sender.send_private_typing_notifications) throw errors.badRequest('User has disabled typing notifications for direct messages');
  const ids = to.includes(sender.id) ? [...to] : [...to, sender.id];
  const users: UserRow[] = [];
  for (const id of ids) {
    const u = findUserById(app.db, sender.realm_id, id);
    if (!u) throw errors.badRequest('Invalid user ID {id}', { id });
    if (!users.some((x) => x.id === u.id)) users.push(u);
  }
  // Not in Zulip's typing path: Parley refuses what it would refuse to send (check_sender_can_access_recipients),
  // so typing cannot reach, or confirm, a user the sender may not access.
  checkSenderCanAccessRecipients(app.db, sender, users);
  const receivers = typingReceivers(app, users.map((u) => u.id));
  // Not in Zulip: a guest is told the real address only of the participants it may access (the others
  // get their placeholder, as a message's sender_email does); the conversation has no message yet,
  // so it does not make them accessible. Receivers are grouped by whom they may not access.
  const groups = new Map<string, number[]>();
  for (const r of receivers) {
    const access = accessibleUsers(app.db, users.find((u) => u.id === r) as UserRow);
    const key = access === null ? '' : users.filter((u) => !access.has(u.id)).map((u) => u.id).join(',');
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const person = (u: UserRow, hidden: ReadonlySet<number>) => ({ user_id: u.id, email: hidden.has(u.id) ? placeholderEmail(app, u.id) : u.email });
  app.batch.afterCommit((ok) => {
    if (!ok) return;
    for (const [key, ids] of groups) {
      const hidden = new Set(key === '' ? [] : key.split(',').map(Number));
      const event = {
        type: 'typing',
        op,
        message_type: 'direct',
        sender: person(sender, hidden),
        recipients: users.map((u) => person(u, hidden)),
      };
      app.events.send(event, ids);
    }
  });
}

/** Zulip's settings.MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

/** Channel typing: to the channel's subscribers who receive typing notifications (the registry keeps it from clients without stream_typing_notifications). */
export function doSendChannelTyping(app: App, sender: UserRow, streamId: number, topic: string, op: TypingOp): void {
  if (!sender.send_stream_typing_notifications) throw errors.badRequest('User has disabled typing notifications for channel messages');
  const stream = accessStreamById(app.db, sender, streamId);
  const event = { type: 'typing', op, message_type: 'stream', sender: { user_id: sender.id, email: sender.email }, stream_id: stream.id, topic };
  const subscribers = subscriberIds(app.db, stream.id);
  // As Zulip: channels with more subscribers than this get no typing notifications at all (the
  // request still succeeds).
  if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return;
  const receivers = typingReceivers(app, subscribers);
  // Not in Zulip: a guest who may not access the sender (someone typing in a public channel they are
  // not subscribed to) gets the placeholder address, as the message's sender_email will be, not the
  // sender's real one.
  const hidden = new Set(userIdsWhoCannotAccess(app.db, sender, receivers));
  const anonymous = { ...event, sender: { user_id: sender.id, email: placeholderEmail(app, sender.id) } };
  app.batch.afterCommit((ok) => {
    if (!ok) return;
    app.events.send(event, receivers.filter((id) => !hidden.has(id)));
    if (hidden.size > 0) app.events.send(anonymous, [...hidden]);
  });
}

/**
 * POST /messages/{id}/typing: someone is editing their message (Zulip's
 * send_message_edit_notification_backend). Only who may edit the message now may say so (no grace
 * period, unlike the edit itself). The `typing_edit_message` event goes to the channel's subscribers
 * (none past MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) or to the conversation's participants, the
 * editor included, who are active and receive typing notifications.
 */
export function doSendMessageEditTyping(app: App, user: UserRow, messageId: number, op: TypingOp): void {
  const m = accessMessage(app, user, messageId, { modifying: true });
  const realm = getRealmById(app.db, user.realm_id) as RealmRow;
  // validate_user_can_edit_message with edit_limit_buffer 0.
  if (!realm.allow_message_editing) throw errors.badRequest('Your organization has turned off message editing');
  if (m.sender_id !== user.id) throw errors.badRequest("You don't have permission to edit this message");
  const limit = realm.message_content_edit_limit_seconds as number | null;
  if (limit !== null && nowSeconds(app.clock) - m.date_sent > limit) throw errors.badRequest('The time limit for editing this message has passed');
  let event: Record<string, unknown> & { type: string };
  let receivers: number[];
  if (m.stream_id !== null) {
    if (!user.send_stream_typing_notifications) throw errors.badRequest('User has disabled typing notifications for channel messages');
    const subscribers = subscriberIds(app.db, m.stream_id);
    receivers = subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS ? [] : typingReceivers(app, subscribers);
    event = { type: 'typing_edit_message', op, sender_id: user.id, message_id: m.id, recipient: { type: 'channel', channel_id: m.stream_id, topic: m.topic } };
  } else {
    if (!user.send_private_typing_notifications) throw errors.badRequest('User has disabled typing notifications for direct messages');
    // As Zulip: the editor first, then the others (ascending).
    const others = directRecipients(app.db, m.direct_group_id as number)
      .map((u) => u.id)
      .filter((id) => id !== user.id);
    const notified = new Set(typingReceivers(app, [user.id, ...others]));
    receivers = [user.id, ...others].filter((id) => notified.has(id));
    event = { type: 'typing_edit_message', op, sender_id: user.id, message_id: m.id, recipient: { type: 'direct', user_ids: receivers } };
  }
  app.batch.afterCommit((ok) => ok && receivers.length > 0 && app.events.send(event, receivers));
}

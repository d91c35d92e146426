// Scheduled messages: create, edit, delete, and the delivery timer that sends each one at its time
// as its sender (Zulip's zerver/actions/scheduled_messages.py). Events `scheduled_messages`
// add/update/remove go to the sender only.
//
// Delivery: one timer per App (kept in a WeakMap keyed by the App, so tests can run many apps),
// armed for the soonest pending message and re-armed after every run and every change; it waits at
// most MAX_TIMER_MS so that a clock that jumps (or an injected test clock) is noticed. Overdue messages
// (the server was down at their time) go out when the timer starts. A message whose sending fails
// (channel archived, permission lost, recipient deactivated, ...) turns `failed` with the error text
// as failure_message; the sender gets an update event and, since Parley has no notification bot, a
// direct message to themself with Zulip's notification text (see notifyFailure).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { checkSenderCanAccessRecipients } from '../lib/access';
import { getRealmById, type RealmRow } from '../lib/realm';
import { renderMessage } from '../lib/render';
import {
  accessScheduledMessage,
  DELIVERY_TYPE,
  dueScheduledMessages,
  formatScheduledMessage,
  nextScheduledTimestamp,
  scheduledRecipientIds,
  type ScheduledMessageRow,
} from '../lib/scheduled-messages';
import { effectiveTopicsPolicy, findStreamById } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';
import { checkCanSendToChannel, doSendMessage, normalizeContent, normalizeTopic } from './messages';
import { deliverReminder } from './reminders';

export type ScheduledType = 'stream' | 'private';

/** The API's message types mapped to the stored ones. */
export function scheduledType(type: 'direct' | 'private' | 'stream' | 'channel'): ScheduledType {
  return type === 'stream' || type === 'channel' ? 'stream' : 'private';
}

interface Checked {
  type: ScheduledType;
  streamId: number | null;
  recipientIds: number[] | null;
  topic: string;
  content: string;
  rendered: string;
}

/** A channel id from `to`: an integer or a one-element list. */
function channelIdFrom(to: number | number[]): number {
  if (typeof to === 'number') return to;
  if (to.length === 1) return to[0];
  throw errors.badRequest('Invalid data type for channel ID');
}

/**
 * Zulip's check_message for a message sent later: content bounded as sent messages are, the channel
 * or the direct recipients validated now (and again at delivery). `topic` undefined: not given.
 */
function checkScheduled(app: App, sender: UserRow, type: ScheduledType, to: number | number[], topic: string | undefined, rawContent: string): Checked {
  const realm = getRealmById(app.db, sender.realm_id) as RealmRow;
  const content = normalizeContent(rawContent);
  if (type === 'stream') {
    const streamId = channelIdFrom(to);
    const s = findStreamById(app.db, sender.realm_id, streamId);
    if (!s || s.deactivated) throw errors.streamIdMissing(streamId);
    checkCanSendToChannel(app, sender, s);
    if (topic === undefined && realm.mandatory_topics) throw errors.badRequest('Missing topic');
    const t = normalizeTopic(topic ?? '', realm);
    if (t === '' && realm.mandatory_topics) throw errors.badRequest('Topics are required in this organization.');
    const policy = effectiveTopicsPolicy(s, realm);
    if (policy === 'disable_empty_topic' && t === '') throw errors.badRequest('Sending messages to the general chat is not allowed in this channel.');
    if (policy === 'empty_topic_only' && t !== '') throw errors.badRequest('Only the general chat topic is allowed in this channel.');
    return { type, streamId: s.id, recipientIds: null, topic: t, content, rendered: renderMessage(app, sender.realm_id, content, sender).html };
  }
  const ids = [...new Set(typeof to === 'number' ? [to] : to)];
  if (ids.length === 0) throw errors.badRequest('Message must have recipients');
  const users: UserRow[] = [];
  for (const id of ids) {
    const u = findUserById(app.db, sender.realm_id, id);
    if (!u) throw errors.badRequest('Invalid user ID {id}', { id });
    users.push(u);
  }
  // As a send (check_message): access to the recipients first, then their being active.
  checkSenderCanAccessRecipients(app.db, sender, users);
  for (const u of users) if (!u.is_active) throw errors.badRequest("'{email}' is no longer using Zulip.", { email: u.email });
  // As Zulip's get_recipient_ids: the other participants, or the sender alone for a note to self.
  const others = ids.filter((id) => id !== sender.id).sort((a, b) => a - b);
  return {
    type,
    streamId: null,
    recipientIds: others.length ? others : [sender.id],
    topic: '',
    content,
    rendered: renderMessage(app, sender.realm_id, content, sender).html,
  };
}

function loadRow(app: App, id: number): ScheduledMessageRow {
  return stmt(app.db, 'SELECT * FROM scheduled_message WHERE id = ?').get(id) as ScheduledMessageRow;
}

function sendUpdateEvent(app: App, row: ScheduledMessageRow): void {
  const record = formatScheduledMessage(row);
  app.batch.onCommit(() => app.events.send({ type: 'scheduled_messages', op: 'update', scheduled_message: record }, [row.sender_id]));
}

function sendRemoveEvent(app: App, row: ScheduledMessageRow): void {
  app.batch.onCommit(() => app.events.send({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id }, [row.sender_id]));
}

export interface NewScheduledMessage {
  type: 'direct' | 'private' | 'stream' | 'channel';
  to: number | number[];
  topic?: string;
  content: string;
  deliverAt: number;
  readBySender?: boolean;
}

/** POST /scheduled_messages. */
export function doScheduleMessage(app: App, sender: UserRow, req: NewScheduledMessage): { scheduled_message_id: number } {
  const result = app.batch.write(() => {
    if (req.deliverAt <= nowSeconds(app.clock)) throw errors.badRequest('Scheduled delivery time must be in the future.');
    const c = checkScheduled(app, sender, scheduledType(req.type), req.to, req.topic, req.content);
    // zulip-compat: without read_by_sender, a message to oneself stays unread, any other is read.
    const toSelf = c.type === 'private' && c.recipientIds?.length === 1 && c.recipientIds[0] === sender.id;
    const readBySender = req.readBySender ?? !toSelf;
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO scheduled_message (realm_id, sender_id, type, stream_id, recipient_ids, topic, content, rendered_content,
           scheduled_timestamp, read_by_sender, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        sender.realm_id,
        sender.id,
        c.type,
        c.streamId,
        c.recipientIds ? JSON.stringify(c.recipientIds) : null,
        c.topic,
        c.content,
        c.rendered,
        req.deliverAt,
        readBySender ? 1 : 0,
        nowSeconds(app.clock),
      ).lastInsertRowid,
    );
    const record = formatScheduledMessage(loadRow(app, id));
    app.batch.onCommit(() => app.events.send({ type: 'scheduled_messages', op: 'add', scheduled_messages: [record] }, [sender.id]));
    return { scheduled_message_id: id };
  });
  app.batch.afterCommit((ok) => ok && armScheduledDelivery(app));
  return result;
}

export interface ScheduledMessageEdit {
  type?: 'direct' | 'private' | 'stream' | 'channel';
  to?: number | number[];
  topic?: string;
  content?: string;
  deliverAt?: number;
}

/** The empty topic in any of its spellings (a required topic may be none of them). */
function isEmptyTopicSpelling(topic: string, realm: RealmRow): boolean {
  const t = topic.trim();
  return t === '' || t === '(no topic)' || t === realm.empty_topic_display_name;
}

/** PATCH /scheduled_messages/{id}: Zulip's update_scheduled_message_backend and edit_scheduled_message, in their order. */
export function doEditScheduledMessage(app: App, user: UserRow, id: number, edit: ScheduledMessageEdit): void {
  app.batch.write(() => {
    const { type, to, topic, content, deliverAt } = edit;
    if (type === undefined && to === undefined && topic === undefined && content === undefined && deliverAt === undefined) {
      throw errors.badRequest('Nothing to change');
    }
    if (type !== undefined && to === undefined) throw errors.badRequest('Recipient required when updating type of scheduled message.');
    const toChannel = type === 'stream' || type === 'channel';
    if (toChannel && topic === undefined) throw errors.badRequest('Topic required when updating scheduled message type to channel.');
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    // The topic is required here, so none of the empty topic's spellings will do.
    if (toChannel && isEmptyTopicSpelling(topic as string, realm)) {
      throw errors.badRequest('Topic required when updating scheduled message type to channel.');
    }
    if (deliverAt !== undefined && deliverAt <= nowSeconds(app.clock)) throw errors.badRequest('Scheduled delivery time must be in the future.');
    const row = accessScheduledMessage(app.db, user.id, id);
    if (row.delivered) throw errors.badRequest('Scheduled message was already sent');
    if (row.failed && deliverAt === undefined) throw errors.badRequest('Scheduled delivery time must be in the future.');
    if (to !== undefined || content !== undefined || topic !== undefined) {
      const newType = type !== undefined ? scheduledType(type) : (row.type as ScheduledType);
      const newTo = to ?? (row.type === 'stream' ? (row.stream_id as number) : scheduledRecipientIds(row));
      // A type change to direct makes the old channel's id a user id list only when `to` says so (required above).
      const newTopic = newType === 'stream' ? (topic ?? row.topic) : undefined;
      const c = checkScheduled(app, user, newType, newTo, newTopic, content ?? row.content);
      stmt(app.db, 'UPDATE scheduled_message SET type = ?, stream_id = ?, recipient_ids = ?, topic = ?, content = ?, rendered_content = ? WHERE id = ?').run(
        c.type,
        c.streamId,
        c.recipientIds ? JSON.stringify(c.recipientIds) : null,
        c.topic,
        c.content,
        c.rendered,
        row.id,
      );
    }
    if (deliverAt !== undefined) stmt(app.db, 'UPDATE scheduled_message SET scheduled_timestamp = ? WHERE id = ?').run(deliverAt, row.id);
    // Editing a message the server failed to send puts it back in line (the new time is required above).
    if (row.failed) stmt(app.db, 'UPDATE scheduled_message SET failed = 0, failure_message = NULL WHERE id = ?').run(row.id);
    sendUpdateEvent(app, loadRow(app, row.id));
  });
  app.batch.afterCommit((ok) => ok && armScheduledDelivery(app));
}

/** DELETE /scheduled_messages/{id}. */
export function doDeleteScheduledMessage(app: App, user: UserRow, id: number): void {
  app.batch.write(() => {
    const row = accessScheduledMessage(app.db, user.id, id);
    stmt(app.db, 'DELETE FROM scheduled_message WHERE id = ?').run(row.id);
    sendRemoveEvent(app, row);
  });
}

// ---- delivery -------------------------------------------------------------------------------------

/** How late a scheduled message may still be sent (Zulip's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES). */
const LATE_CUTOFF_SECONDS = 10 * 60;

/** Longest the timer sleeps before looking again. */
const MAX_TIMER_MS = 60_000;

interface DeliveryState {
  timer: NodeJS.Timeout | null;
  stopped: boolean;
}

const delivery = new WeakMap<App, DeliveryState>();

/** Starts the delivery timer for `app` (idempotent): sends overdue messages now, then each at its time. Stops with app.shutdown(). */
export function startScheduledDelivery(app: App): void {
  if (delivery.has(app)) return;
  const state: DeliveryState = { timer: null, stopped: false };
  delivery.set(app, state);
  app.onShutdown(() => {
    state.stopped = true;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
  });
  arm(app, state, 0);
}

/** Re-arms the timer after a change to the pending messages (starting it if needed). */
export function armScheduledDelivery(app: App): void {
  const state = delivery.get(app);
  if (!state) return startScheduledDelivery(app);
  if (state.stopped) return;
  const next = nextScheduledTimestamp(app.db);
  if (next === null) return arm(app, state, null);
  arm(app, state, Math.max(0, next * 1000 - app.clock.nowMs()));
}

function arm(app: App, state: DeliveryState, delayMs: number | null): void {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  if (state.stopped || delayMs === null) return;
  state.timer = setTimeout(() => {
    state.timer = null;
    if (state.stopped) return;
    try {
      runDueScheduledMessages(app);
    } catch (err) {
      console.error('parley: scheduled message delivery failed', err);
    }
    armScheduledDelivery(app);
  }, Math.min(delayMs, MAX_TIMER_MS));
  state.timer.unref();
}

/** Sends every message due by the app's clock; returns how many were delivered and how many failed. */
export function runDueScheduledMessages(app: App): { delivered: number; failed: number } {
  const counts = { delivered: 0, failed: 0 };
  for (;;) {
    const due = dueScheduledMessages(app.db, nowSeconds(app.clock));
    if (due.length === 0) break;
    for (const row of due) {
      if (deliverOne(app, row)) counts.delivered++;
      else counts.failed++;
    }
  }
  app.batch.commit();
  return counts;
}

/** Sends one scheduled message as its sender; on failure marks it failed and tells the sender. */
function deliverOne(app: App, row: ScheduledMessageRow): boolean {
  return app.batch.write(() => {
    const sender = findUserById(app.db, row.realm_id, row.sender_id) as UserRow;
    let failure: string;
    try {
      const realm = getRealmById(app.db, row.realm_id) as RealmRow;
      if (realm.deactivated) throw errors.realmDeactivated();
      if (!sender.is_active) throw errors.userDeactivated();
      if (row.delivery_type === DELIVERY_TYPE.REMIND) {
        deliverReminder(app, sender, row);
        return true;
      }
      // As Zulip (SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES): a message more than 10 minutes late by the
      // wall clock (the server was down, or the clock jumped forward) is not sent to surprise its
      // recipients; it fails and its sender is told, and may reschedule it. Reminders go out late.
      if (nowSeconds(app.clock) > row.scheduled_timestamp + LATE_CUTOFF_SECONDS) throw errors.badRequest('Message could not be sent at the scheduled time.');
      const { id } = doSendMessage(app, sender, {
        to: row.type === 'stream' ? { kind: 'channel', streamId: row.stream_id as number, topic: row.topic } : { kind: 'direct', userIds: scheduledRecipientIds(row) },
        content: row.content,
        readBySender: row.read_by_sender === 1,
      });
      stmt(app.db, 'UPDATE scheduled_message SET delivered = 1, delivered_message_id = ? WHERE id = ?').run(id, row.id);
      sendRemoveEvent(app, row);
      return true;
    } catch (err) {
      if (err instanceof JsonableError) {
        failure = err.message;
      } else {
        console.error(`parley: scheduled message ${row.id} could not be sent`, err);
        failure = 'Internal server error';
      }
    }
    stmt(app.db, 'UPDATE scheduled_message SET failed = 1, failure_message = ? WHERE id = ?').run(failure, row.id);
    // As Zulip's try_deliver_one_scheduled_message: a failed reminder gets no event and no notice.
    if (row.delivery_type === DELIVERY_TYPE.REMIND) return false;
    sendUpdateEvent(app, loadRow(app, row.id));
    notifyFailure(app, sender, row, failure);
    return false;
  });
}

/**
 * Zulip has the notification bot send the sender a direct message with this text. Parley has no
 * system bots, so the sender sends it to themself (a note to self, left unread so it is noticed).
 */
function notifyFailure(app: App, sender: UserRow, row: ScheduledMessageRow, failure: string): void {
  const content =
    `The message you scheduled for <time:${new Date(row.scheduled_timestamp * 1000).toISOString()}> was not sent because of the following error:` +
    `\n\n> ${failure}\n\n[View scheduled messages](#scheduled)`;
  try {
    doSendMessage(app, sender, { to: { kind: 'direct', userIds: [sender.id] }, content, readBySender: false, client: 'Internal' });
  } catch (err) {
    // A deactivated sender cannot be told; the failed state in GET /scheduled_messages remains.
    if (!(err instanceof JsonableError)) throw err;
  }
}

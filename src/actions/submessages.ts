// POST /submessage (Zulip's process_submessage and do_add_submessage): a vote, a new poll option or
// task, a strike, a new question or title, attached to a widget message and sent to its holders.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { codePoints, parseJson } from '../http/params';
import { messageRecipientIds, type MessageRow } from '../lib/messages';
import { findStreamById, findSubscription } from '../lib/streams';
import { senderAttachedSubmessage, submessageCount, submessagesLength, widgetTypeOf } from '../lib/submessages';
import { isBot, type UserRow } from '../lib/users';
import { checkPollData, checkTodoData } from '../lib/widgets';
import { accessMessage } from './messages';
import { setVisibilityPolicy, topicPolicy, VISIBILITY_POLICY } from './user-topics';

/** Longest submessage content, in characters (Zulip has no bound; a message's own limit is 10,000). */
export const MAX_SUBMESSAGE_LENGTH = 10_000;
/** Longest msg_type (Zulip's clients send "widget"; Zulip has no bound). */
export const MAX_MSG_TYPE_LENGTH = 100;
/**
 * Most submessages one message may hold (Zulip has no bound). Every fetch of the message lists them
 * all: a poll voted on by a thousand people, each changing their mind a few times, stays well within.
 */
export const MAX_SUBMESSAGES_PER_MESSAGE = 10_000;
/**
 * Most characters all of one message's submessages may hold together (Zulip has no bound). The count
 * alone let anyone who may vote make one message object 100 MB (10,000 × 10,000 characters), sent
 * with every fetch of the message; the most votes a message may hold take under half of this.
 */
export const MAX_SUBMESSAGES_TOTAL_LENGTH = 1_000_000;

// Zulip's AUTOMATICALLY_CHANGE_VISIBILITY_POLICY_ON_PARTICIPATION (automatically_*_policy value).
const ON_PARTICIPATION = 1;

/**
 * Zulip's topic visibility on participation (do_add_submessage): a channel topic a person acts in
 * through a widget becomes followed (or unmuted in a muted channel) when their settings ask for it on
 * participation; the automatic policies only ever make a topic more visible.
 */
function followOnParticipation(app: App, user: UserRow, m: MessageRow): void {
  if (m.stream_id === null || isBot(user)) return;
  if (user.automatically_follow_topics_policy !== ON_PARTICIPATION && user.automatically_unmute_topics_in_muted_streams_policy !== ON_PARTICIPATION) return;
  const sub = findSubscription(app.db, user.id, m.stream_id);
  if (!sub || !sub.active) return;
  let policy: number | null = null;
  if (user.automatically_follow_topics_policy === ON_PARTICIPATION) policy = VISIBILITY_POLICY.followed;
  else if (sub.is_muted === 1 && user.automatically_unmute_topics_in_muted_streams_policy === ON_PARTICIPATION) policy = VISIBILITY_POLICY.unmuted;
  if (policy === null) return;
  const current = topicPolicy(app, user.id, m.stream_id, m.topic);
  if (current === policy || current === VISIBILITY_POLICY.followed) return;
  const stream = findStreamById(app.db, user.realm_id, m.stream_id);
  if (stream) setVisibilityPolicy(app, user, stream, m.topic, policy);
}

/** POST /submessage: checks as Zulip does, stores the submessage, and sends it to the message's holders. */
export function doAddSubmessage(app: App, user: UserRow, messageId: number, msgType: string, content: string): void {
  app.batch.write(() => {
    const m = accessMessage(app, user, messageId, { modifying: true });
    // Zulip's verify_submessage_sender: the message's sender attaches the first submessage (a widget
    // message has it from the start); only then may others.
    if (m.sender_id !== user.id && !senderAttachedSubmessage(app.db, m.id, m.sender_id)) {
      throw errors.badRequest('You cannot attach a submessage to this message.');
    }
    let data: unknown;
    try {
      data = parseJson(content);
    } catch {
      throw errors.badRequest('Invalid json for submessage');
    }
    const widgetType = widgetTypeOf(app.db, m.id);
    const isWidgetAuthor = m.sender_id === user.id;
    if (widgetType === 'poll') checkPollData(data, isWidgetAuthor);
    if (widgetType === 'todo') checkTodoData(data, isWidgetAuthor);
    if (submessageCount(app.db, m.id) >= MAX_SUBMESSAGES_PER_MESSAGE) {
      throw errors.badRequest('This message has too many submessages (limit: {max})', { max: MAX_SUBMESSAGES_PER_MESSAGE });
    }
    if (submessagesLength(app.db, m.id) + codePoints(content) > MAX_SUBMESSAGES_TOTAL_LENGTH) {
      throw errors.badRequest("This message's submessages are too long (limit: {max} characters)", { max: MAX_SUBMESSAGES_TOTAL_LENGTH });
    }
    const id = Number(
      stmt(app.db, 'INSERT INTO submessage (message_id, sender_id, msg_type, content) VALUES (?, ?, ?, ?)').run(m.id, user.id, msgType, content).lastInsertRowid,
    );
    followOnParticipation(app, user, m);
    // As Zulip: to the users who have the message (UserMessage rows, here written or implied), not to
    // everyone who may read it.
    const recipients = messageRecipientIds(app.db, m.id);
    app.batch.onCommit(() =>
      app.events.send({ type: 'submessage', msg_type: msgType, message_id: m.id, submessage_id: id, sender_id: user.id, content }, recipients),
    );
  });
}

// Notification Bot's messages about moved and resolved topics (Zulip's send_message_moved_breadcrumbs
// and maybe_send_resolve_topic_notifications in zerver/actions/message_edit.py): "This topic was moved
// here from …" in the new thread, "This topic was moved to …" in the old one, and "… has marked this
// topic as resolved." when a topic gains or loses the "✔ " prefix. Texts and links are Zulip's, so
// clients and bots that recognise them keep working.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { JsonableError } from '../http/errors';
import type { MessageRow } from '../lib/messages';
import { encodeChannel, encodeHashComponent } from '../lib/url-encoding';
import { topicKey } from '../lib/narrow';
import { canAccessStreamHistory, subscriberIds, type StreamRow } from '../lib/streams';
import { materializeUserMessages } from '../lib/user-messages';
import { findUserById, isBot, type UserRow } from '../lib/users';
import { realmTranslator, silentMention, type Translator } from './channel-notices';
import { deleteMessages, doSendMessage } from './messages';
import { notificationBot } from './system-bots';
import { followersIn, topicPolicies } from './user-topics';

/** Zulip's settings.RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS: an undo this soon deletes the notice instead. */
export const RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60;
/** Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME, used in link texts for the empty topic. */
const EMPTY_TOPIC_FALLBACK_NAME = 'general chat';


// zerver/lib/topic_link_util.py: names with these characters would break #**channel>topic** syntax.
const BREAKS_LINK_SYNTAX = /[`>*&[\]]|\$\$/;
const LINK_TEXT_ESCAPES: Record<string, string> = { '`': '&#96;', '>': '&gt;', '*': '&#42;', '&': '&amp;', $$: '&#36;&#36;', '[': '&#91;', ']': '&#93;' };
const escapeLinkText = (s: string) => s.replace(/[`>*&[\]]|\$\$/g, (c) => LINK_TEXT_ESCAPES[c] ?? c);

/** Zulip's get_stream_topic_link_syntax: #**channel>topic**, or a plain Markdown link when that would break. */
export function streamTopicLinkSyntax(streamId: number, streamName: string, topic: string): string {
  if (BREAKS_LINK_SYNTAX.test(topic) || BREAKS_LINK_SYNTAX.test(streamName)) {
    const link = `#narrow/channel/${encodeChannel(streamId, streamName)}/topic/${encodeHashComponent(topic)}`;
    const text = `#${escapeLinkText(streamName)} > ${escapeLinkText(topic === '' ? EMPTY_TOPIC_FALLBACK_NAME : topic)}`;
    return `[${text}](${link})`;
  }
  return `#**${streamName}>${topic}**`;
}

/**
 * A Markdown link to a message's conversation, "[#channel > topic](#narrow/channel/…/topic/…/with/ID)",
 * as Zulip's reminders write it (names escaped where they would break the link; the empty topic
 * reads "general chat").
 */
export function conversationLinkSyntax(streamId: number, streamName: string, topic: string, messageId: number): string {
  const link = `#narrow/channel/${encodeChannel(streamId, streamName)}/topic/${encodeHashComponent(topic)}/with/${messageId}`;
  return `[#${escapeLinkText(streamName)} > ${escapeLinkText(topic === '' ? EMPTY_TOPIC_FALLBACK_NAME : topic)}](${link})`;
}

/** Zulip's get_message_link_syntax: #**channel>topic@id**, or a plain Markdown link when that would break. */
export function messageLinkSyntax(streamId: number, streamName: string, topic: string, messageId: number): string {
  if (BREAKS_LINK_SYNTAX.test(topic) || BREAKS_LINK_SYNTAX.test(streamName)) {
    const link = `#narrow/channel/${encodeChannel(streamId, streamName)}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
    const text = `#${escapeLinkText(streamName)} > ${escapeLinkText(topic === '' ? EMPTY_TOPIC_FALLBACK_NAME : topic)} @ 💬`;
    return `[${text}](${link})`;
  }
  return `#**${streamName}>${topic}@${messageId}**`;
}

/** Zulip's stream_message_url: the organization's URL, then the message's narrow ("near" link). */
export function streamMessageUrl(app: App, streamId: number, streamName: string, topic: string, messageId: number): string {
  const base = app.publicUrl.replace(/\/+$/, '');
  return `${base}/#narrow/channel/${encodeChannel(streamId, streamName)}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
}

/**
 * Zulip's pm_message_url: the organization's URL, the participants' ids as encode_user_ids writes them
 * (sorted, "-group" from three on), then "near" the message.
 */
export function directMessageUrl(app: App, userIds: readonly number[], messageId: number): string {
  const ids = [...userIds].sort((a, b) => a - b);
  return `${app.publicUrl.replace(/\/+$/, '')}/#narrow/dm/${ids.join(',')}${ids.length >= 3 ? '-group' : ''}/near/${messageId}`;
}

/**
 * Zulip's bulk_access_stream_messages_query(...).exists(): whether `user` can see a message of the
 * topic other than `exclude` (all of the channel's history, or only the messages they received).
 * Asked before posting "This topic was moved …" so the wording never reveals messages the user
 * cannot read.
 */
export function anyVisibleInTopic(app: App, user: UserRow, stream: StreamRow, topic: string, exclude: readonly number[]): boolean {
  const skip = JSON.stringify(exclude);
  if (canAccessStreamHistory(app.db, user, stream)) {
    return (
      stmt(app.db, 'SELECT 1 FROM message WHERE stream_id = ? AND topic_key = ? AND id NOT IN (SELECT value FROM json_each(?)) LIMIT 1').get(
        stream.id,
        topicKey(topic),
        skip,
      ) !== undefined
    );
  }
  materializeUserMessages(app.db, user.id);
  return (
    stmt(
      app.db,
      `SELECT 1 FROM message m JOIN usermessage um ON um.message_id = m.id AND um.user_id = ?
       WHERE m.stream_id = ? AND m.topic_key = ? AND m.id NOT IN (SELECT value FROM json_each(?)) LIMIT 1`,
    ).get(user.id, stream.id, topicKey(topic), skip) !== undefined
  );
}

/** What an edit moved, as do_update_message knows it when it posts its notices. */
export interface MoveNoticeRequest {
  actor: UserRow;
  /** The edited (target) message. */
  message: MessageRow;
  origStream: StreamRow;
  origTopic: string;
  targetStream: StreamRow;
  targetTopic: string;
  changedIds: readonly number[];
  /** Every message of the old topic the actor can see went (change_all, or nothing visible was left). */
  movedAllVisible: boolean;
  contentEdited: boolean;
  topicEdited: boolean;
  streamEdited: boolean;
  topicResolved: boolean;
  topicUnresolved: boolean;
  /** Who followed the old topic; set only when all of it moved (read before the settings moved with it). */
  origFollowers?: ReadonlySet<number>;
  notifyOldThread: boolean;
  notifyNewThread: boolean;
}

/** Posts a Notification Bot message; like Zulip's internal_send_stream_message, a refusal is skipped. */
function postNotice(app: App, actor: UserRow, stream: StreamRow, topic: string, content: string, readBy: readonly number[]): number | null {
  // An archived channel takes no notice (Zulip's access_stream_for_send_message refuses it).
  if (stream.deactivated) return null;
  try {
    return doSendMessage(app, notificationBot(app, actor.realm_id), {
      to: { kind: 'channel', streamId: stream.id, topic },
      content,
      client: 'Internal',
      system: true,
      readBy,
    }).id;
  } catch (err) {
    // zulip-compat: _internal_prep_message logs a refused notice (a topics policy, say) and sends nothing.
    if (err instanceof JsonableError) return null;
    throw err;
  }
}

/**
 * The subscribers who get a resolve notice unread (Zulip's
 * get_unread_user_ids_for_resolved_topic_notifications): those whose resolved_topic_notice_auto_read_policy
 * is "never", and with "except_followed" those following the topic. Bots never.
 */
function resolveNoticeUnreadUsers(app: App, stream: StreamRow, topic: string, knownFollowers: ReadonlySet<number> | undefined): Set<number> {
  const followers = knownFollowers ?? followersIn(topicPolicies(app, stream.id, topic));
  const unread = new Set<number>();
  for (const uid of subscriberIds(app.db, stream.id)) {
    const u = findUserById(app.db, stream.realm_id, uid);
    if (!u || isBot(u)) continue;
    const policy = u.resolved_topic_notice_auto_read_policy;
    if (policy === 'never' || (policy === 'except_followed' && followers.has(uid))) unread.add(uid);
  }
  return unread;
}

const RESOLVED_TEMPLATE = '{user} has marked this topic as resolved.';
const UNRESOLVED_TEMPLATE = '{user} has marked this topic as unresolved.';

/** Whether `content` is a resolve notice as the organization's language words it (any user). */
function isResolveNotice(t: Translator, content: string): boolean {
  return [RESOLVED_TEMPLATE, UNRESOLVED_TEMPLATE].some((template) => {
    const [before, after] = t(template).split('{user}');
    if (after === undefined || !content.startsWith(before) || !content.endsWith(after)) return false;
    return /^@_\*\*.*\|\d+\*\*$/s.test(content.slice(before.length, content.length - after.length));
  });
}

/**
 * Zulip's maybe_delete_previous_resolve_topic_notification: when the topic's newest message is a
 * resolve notice from the last minute, the toggle is an undo, and that notice is deleted instead of
 * a new one being sent.
 */
function deletedPreviousResolveNotice(app: App, req: MoveNoticeRequest, now: number): boolean {
  const last = stmt(app.db, 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? ORDER BY id DESC LIMIT 1').get(
    req.origStream.id,
    topicKey(req.targetTopic),
  ) as MessageRow | undefined;
  if (!last) return false;
  // Parley keeps no message type: a resolve notice is Notification Bot's message in that wording.
  if (last.sender_id !== notificationBot(app, req.actor.realm_id).id || !isResolveNotice(realmTranslator(app, req.actor.realm_id), last.content)) return false;
  if (now - last.date_sent > RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS) return false;
  deleteMessages(app, req.actor.realm_id, [last]);
  return true;
}

/** Zulip's maybe_send_resolve_topic_notifications; returns the notice's id when one was sent. */
function maybeSendResolveNotice(app: App, req: MoveNoticeRequest, now: number): number | null {
  if (!req.topicResolved && !req.topicUnresolved) return null;
  if (deletedPreviousResolveNotice(app, req, now)) return null;
  // The followers of the old topic when all of it moved (read before their settings moved with it).
  const unread = resolveNoticeUnreadUsers(app, req.origStream, req.targetTopic, req.origFollowers);
  const readBy = subscriberIds(app.db, req.origStream.id).filter((uid) => !unread.has(uid));
  // mark_as_read_for_acting_user: the actor has it read whatever their setting.
  if (!readBy.includes(req.actor.id)) readBy.push(req.actor.id);
  // As Zulip: in the organization's language (override_language(realm.default_language)).
  const t = realmTranslator(app, req.actor.realm_id);
  const text = t(req.topicResolved ? RESOLVED_TEMPLATE : UNRESOLVED_TEMPLATE, { user: silentMention(req.actor) });
  return postNotice(app, req.actor, req.origStream, req.targetTopic, text, readBy);
}

/**
 * After an edit that moved messages or toggled a topic's resolved state: the resolve notice, then
 * the new thread's and the old thread's breadcrumbs, as do_update_message sends them. Runs inside
 * the edit's write, after the messages moved.
 */
export function sendMoveNotices(app: App, req: MoveNoticeRequest, now: number): void {
  let resolvedNoticeId: number | null = null;
  if (req.topicEdited && !req.contentEdited && !req.streamEdited) resolvedNoticeId = maybeSendResolveNotice(app, req, now);
  if (!req.topicEdited && !req.streamEdited) return;

  const user = silentMention(req.actor);
  const count = req.changedIds.length;
  // As Zulip's send_message_moved_breadcrumbs: in the organization's language.
  const t = realmTranslator(app, req.actor.realm_id);
  const oldLocation = streamTopicLinkSyntax(req.origStream.id, req.origStream.name, req.origTopic);
  const newLocation = streamTopicLinkSyntax(req.targetStream.id, req.targetStream.name, req.targetTopic);

  let oldThread: string | null = null;
  if (req.notifyOldThread) {
    if (req.movedAllVisible) oldThread = t('This topic was moved to {new_location} by {user}.', { new_location: newLocation, user });
    else if (count === 1) oldThread = t('A message was moved from this topic to {new_location} by {user}.', { new_location: newLocation, user });
    else oldThread = t('{changed_messages_count} messages were moved from this topic to {new_location} by {user}.', { changed_messages_count: count, new_location: newLocation, user });
  }

  // Resolving or unresolving is announced by its own notice, not as a move.
  let newThread: string | null = null;
  if (req.notifyNewThread && (req.streamEdited || (req.topicEdited && !req.topicResolved && !req.topicUnresolved))) {
    // Judged with the actor's own access, so the wording never leaks older messages they cannot read.
    const exclude = resolvedNoticeId === null ? [...req.changedIds] : [...req.changedIds, resolvedNoticeId];
    const preexisting = anyVisibleInTopic(app, req.actor, req.targetStream, req.targetTopic, exclude);
    if (!preexisting && req.movedAllVisible) newThread = t('This topic was moved here from {old_location} by {user}.', { old_location: oldLocation, user });
    else if (count === 1) {
      const link = streamMessageUrl(app, req.targetStream.id, req.targetStream.name, req.targetTopic, req.message.id);
      newThread = t('[A message]({link}) was moved here from {old_location} by {user}.', { link, old_location: oldLocation, user });
    } else newThread = t('{changed_messages_count} messages were moved here from {old_location} by {user}.', { changed_messages_count: count, old_location: oldLocation, user });
  }

  // mark_as_read_for_acting_user: the actor has both read.
  if (newThread !== null) postNotice(app, req.actor, req.targetStream, req.targetTopic, newThread, [req.actor.id]);
  if (oldThread !== null) postNotice(app, req.actor, req.origStream, req.origTopic, oldThread, [req.actor.id]);
}

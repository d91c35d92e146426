// Sending, editing and deleting messages, reactions, and message flags.
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { codePoints } from '../http/params';
import { nowSeconds } from '../lib/clock';
import { checkEmojiReaction, resolveEmojiName } from '../lib/emoji';
import { isUserInGroup, groupMemberIds } from '../lib/groups';
import type { RenderResult } from '../lib/markdown';
import {
  findMessage,
  flagNames,
  formatMessages,
  messageRecipientIds,
  type MessageRow,
} from '../lib/messages';
import { FLAG, messageVisibleTo, topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { renderMessage } from '../lib/render';
import { escapeHtml } from '../lib/html';
import { invalidCharacterPosition } from '../lib/validate';
import {
  canAccessStreamMetadata,
  effectiveTopicsPolicy,
  findStreamById,
  findStreamByName,
  isSubscribed,
  subscriberIds,
  type StreamRow,
} from '../lib/streams';
import { findUserByEmail, findUserById, isAdmin, isBot, isGuest, type UserRow } from '../lib/users';
import { sendTimeFlags } from './alert-words';
import { queueMessagePush } from './push';
import { streamViewers } from './streams';
import { materializeUserMessages } from '../lib/user-messages';
import { realmEmojiLookup } from '../lib/realm-emoji';

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;
const TRUNCATION_NOTICE = '\n[message truncated]';
// Zulip lets anyone mention the whole channel when it is this small.
const WILDCARD_MENTION_THRESHOLD = 15;

export type Addressee =
  | { kind: 'channel'; streamId?: number; streamName?: string; topic: string | undefined }
  | { kind: 'direct'; userIds?: number[]; emails?: string[] };

/** Trims and bounds message content as Zulip does (over-long content is truncated, not refused). */
export function normalizeContent(raw: string): string {
  let content = raw.replace(/\s+$/u, '');
  if (content.trim() === '') throw errors.badRequest('Message must not be empty');
  if (content.includes('\u0000')) throw errors.badRequest('Message must not contain null bytes');
  if (codePoints(content) > MAX_MESSAGE_LENGTH) {
    content = Array.from(content).slice(0, MAX_MESSAGE_LENGTH - TRUNCATION_NOTICE.length).join('') + TRUNCATION_NOTICE;
  }
  return content;
}

/** Trims and bounds a topic; the organization's empty-topic name and "(no topic)" mean "". */
export function normalizeTopic(raw: string, realm: RealmRow): string {
  let topic = raw.trim();
  if (topic === realm.empty_topic_display_name || topic === '(no topic)') return '';
  const position = invalidCharacterPosition(topic);
  if (position) throw errors.badRequest('Invalid character in topic, at position {position}!', { position });
  if (codePoints(topic) > MAX_TOPIC_LENGTH) topic = Array.from(topic).slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...';
  return topic;
}

/** The channel a message goes to, or Zulip's STREAM_DOES_NOT_EXIST. */
function channelForSend(app: App, sender: UserRow, to: Extract<Addressee, { kind: 'channel' }>): StreamRow {
  if (to.streamId !== undefined) {
    const s = findStreamById(app.db, sender.realm_id, to.streamId);
    if (!s || s.deactivated) throw errors.streamIdMissing(to.streamId);
    return s;
  }
  const name = to.streamName ?? '';
  const s = findStreamByName(app.db, sender.realm_id, name);
  if (!s || s.deactivated) {
    throw new JsonableError("Channel '{stream}' does not exist", { code: 'STREAM_DOES_NOT_EXIST', data: { stream: escapeHtml(name) } });
  }
  return s;
}

/** Whether the sender may post to channel `s` (subscription for private channels, the send group). */
export function checkCanSendToChannel(app: App, sender: UserRow, s: StreamRow): void {
  const subscribed = isSubscribed(app.db, sender.id, s.id);
  const botOwnerSubscribed = isBot(sender) && sender.bot_owner_id !== null && isSubscribed(app.db, sender.bot_owner_id, s.id);
  if (!canAccessStreamMetadata(app.db, sender, s) || (s.invite_only && !subscribed && !botOwnerSubscribed) || (isGuest(sender) && !subscribed)) {
    throw errors.badRequest("Not authorized to send to channel '{channel_name}'", { channel_name: s.name });
  }
  if (!isUserInGroup(app.db, sender.id, s.can_send_message_group)) {
    throw errors.badRequest('You do not have permission to post in this channel.');
  }
}

/** Direct-message participants (sender included), validated. */
function directParticipants(app: App, sender: UserRow, to: Extract<Addressee, { kind: 'direct' }>): UserRow[] {
  const users: UserRow[] = [];
  for (const id of to.userIds ?? []) {
    const u = findUserById(app.db, sender.realm_id, id);
    if (!u) throw errors.badRequest('Invalid user ID {id}', { id });
    users.push(u);
  }
  for (const email of to.emails ?? []) {
    const u = findUserByEmail(app.db, sender.realm_id, email);
    if (!u) throw errors.badRequest("Invalid email '{email}'", { email });
    users.push(u);
  }
  if (users.length === 0) throw errors.badRequest('Message must have recipients');
  for (const u of users) if (!u.is_active) throw errors.badRequest("'{email}' is no longer using Zulip.", { email: u.email });
  const all = [sender, ...users];
  return all.filter((u, i) => all.findIndex((x) => x.id === u.id) === i);
}

/** The conversation row for exactly these participants, created on first use. */
function directGroupFor(db: Db, realmId: number, ids: number[]): number {
  const key = [...new Set(ids)].sort((a, b) => a - b).join(',');
  const row = stmt(db, 'SELECT id FROM direct_group WHERE realm_id = ? AND member_key = ?').get(realmId, key) as { id: number } | undefined;
  if (row) return row.id;
  const id = Number(stmt(db, 'INSERT INTO direct_group (realm_id, member_key) VALUES (?, ?)').run(realmId, key).lastInsertRowid);
  const add = stmt(db, 'INSERT INTO direct_group_member (group_id, user_id) VALUES (?, ?)');
  for (const uid of new Set(ids)) add.run(id, uid);
  return id;
}

export interface SendRequest {
  to: Addressee;
  content: string;
  client?: string;
  readBySender?: boolean;
  localId?: string;
  queueId?: string;
  /**
   * A system bot's message (Notification Bot): like Zulip's cross-realm bots it may post in any
   * channel of the organization, whatever the channel's access and posting rules.
   */
  system?: boolean;
  /** Users who have the message already read (Zulip's mark_as_read; the sender is separate: readBySender). */
  readBy?: readonly number[];
}

/** Mention flag bits each recipient gets from the rendered content. */
export function mentionBits(app: App, r: RenderResult, recipients: readonly number[]): Map<number, number> {
  const bits = new Map<number, number>();
  const add = (uid: number, b: number) => bits.set(uid, (bits.get(uid) ?? 0) | b);
  for (const uid of r.mentionedUserIds) add(uid, FLAG.mentioned);
  for (const gid of r.mentionedGroupIds) for (const uid of groupMemberIds(app.db, gid)) add(uid, FLAG.group_mentioned);
  if (r.wildcardChannel) for (const uid of recipients) add(uid, FLAG.stream_wildcard_mentioned);
  if (r.wildcardTopic) for (const uid of recipients) add(uid, FLAG.topic_wildcard_mentioned);
  return bits;
}

/** POST /messages: validates, stores the message and its per-user rows, announces it after commit. */
export function doSendMessage(app: App, sender: UserRow, req: SendRequest): { id: number } {
  // Every check comes before the first change (the direct-message group is created after them), so
  // the send runs without a savepoint: see WriteBatch.write's checksFirst.
  return app.batch.write(() => {
    const realm = getRealmById(app.db, sender.realm_id) as RealmRow;
    const content = normalizeContent(req.content);
    const now = nowSeconds(app.clock);
    let streamId: number | null = null;
    let directGroupId: number | null = null;
    let topic = '';
    let recipients: number[];
    let stream: StreamRow | null = null;
    if (req.to.kind === 'channel') {
      stream = channelForSend(app, sender, req.to);
      if (!req.system) checkCanSendToChannel(app, sender, stream);
      if (req.to.topic === undefined && realm.mandatory_topics) throw errors.badRequest('Missing topic');
      topic = normalizeTopic(req.to.topic ?? '', realm);
      const policy = effectiveTopicsPolicy(stream, realm);
      if (policy === 'disable_empty_topic' && topic === '') {
        throw errors.badRequest('Sending messages to the general chat is not allowed in this channel.');
      }
      if (policy === 'empty_topic_only' && topic !== '') throw errors.badRequest('Only the general chat topic is allowed in this channel.');
      const topicExists = stmt(app.db, 'SELECT 1 FROM message WHERE stream_id = ? AND topic_key = ? LIMIT 1').get(stream.id, topicKey(topic));
      if (!topicExists && !req.system && !isUserInGroup(app.db, sender.id, stream.can_create_topic_group)) {
        throw errors.badRequest('You do not have permission to create new topics in this channel.');
      }
      streamId = stream.id;
      recipients = subscriberIds(app.db, stream.id);
    } else {
      recipients = directParticipants(app, sender, req.to).map((u) => u.id);
    }
    const rendered = renderMessage(app, sender.realm_id, content, sender);
    if ((rendered.wildcardChannel || rendered.wildcardTopic) && stream && !req.system && recipients.length > WILDCARD_MENTION_THRESHOLD) {
      if (!isUserInGroup(app.db, sender.id, realm.can_mention_many_users_group as number)) {
        throw rendered.wildcardChannel
          ? new JsonableError('You do not have permission to use channel wildcard mentions in this channel.', { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' })
          : new JsonableError('You do not have permission to use topic wildcard mentions in this topic.', { code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED' });
      }
    }
    // ---- checks are over: changes from here on ----
    if (stream === null) directGroupId = directGroupFor(app.db, sender.realm_id, recipients);
    // The row as stored, kept for the message event (announced after the commit without reading it back).
    const row: MessageRow = {
      id: 0,
      realm_id: sender.realm_id,
      sender_id: sender.id,
      stream_id: streamId,
      direct_group_id: directGroupId,
      topic,
      topic_key: topicKey(topic),
      content,
      rendered_content: rendered.html,
      date_sent: now,
      last_edit_time: null,
      last_moved_time: null,
      edit_history: null,
      has_link: rendered.hasLink ? 1 : 0,
      has_image: rendered.hasImage ? 1 : 0,
      has_attachment: rendered.hasAttachment ? 1 : 0,
      client: req.client ?? 'API',
    };
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO message (realm_id, sender_id, stream_id, direct_group_id, topic, topic_key, content, rendered_content, date_sent,
           has_link, has_image, has_attachment, client)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        row.realm_id,
        row.sender_id,
        row.stream_id,
        row.direct_group_id,
        row.topic,
        row.topic_key,
        row.content,
        row.rendered_content,
        row.date_sent,
        row.has_link,
        row.has_image,
        row.has_attachment,
        row.client,
      ).lastInsertRowid,
    );
    row.id = id;
    stmt(app.db, 'INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)').run(id, topic, content);
    const mentions = mentionBits(app, rendered, recipients);
    const base = directGroupId !== null ? FLAG.is_private : 0;
    const readBySender = req.readBySender ?? true;
    const all = recipients.includes(sender.id) ? recipients : [...recipients, sender.id];
    if (readBySender) mentions.set(sender.id, (mentions.get(sender.id) ?? 0) | FLAG.read);
    for (const uid of req.readBy ?? []) mentions.set(uid, (mentions.get(uid) ?? 0) | FLAG.read);
    // has_alert_word, and already read for users who muted the sender (src/actions/alert-words.ts).
    for (const [uid, bits] of sendTimeFlags(app, sender, content, all)) mentions.set(uid, (mentions.get(uid) ?? 0) | bits);
    // A channel's subscribers have the message by implication, unread and unflagged (schema.sql,
    // usermessage_cursor): only the rows that differ are written, usually just the sender's. Every
    // participant of a direct message gets a row (is_private).
    const flagsWritten = new Map<number, number>();
    const insertRow = stmt(app.db, 'INSERT INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
    for (const uid of all) {
      const bits = base | (mentions.get(uid) ?? 0);
      flagsWritten.set(uid, bits);
      // The sender may not be subscribed: theirs is always written.
      if (bits !== 0 || stream === null || uid === sender.id) insertRow.run(uid, id, bits);
    }
    linkUploads(app, sender, id, rendered);
    if (stream && stream.first_message_id === null) {
      stmt(app.db, 'UPDATE stream SET first_message_id = ? WHERE id = ?').run(id, stream.id);
    }
    app.batch.onCommit(() => {
      announceMessage(app, row, flagsWritten, { localId: req.localId, queueId: req.queueId, senderId: sender.id });
      queueMessagePush(app, id, flagsWritten); // returns at once; the work runs on a later turn
    });
    return { id };
  }, { checksFirst: true });
}

/** Records which uploads a message references (the uploads issue grants access through these rows). */
function linkUploads(app: App, sender: UserRow, messageId: number, r: RenderResult): void {
  for (const path of r.linkedUploadPaths) {
    const a = stmt(app.db, 'SELECT id FROM attachment WHERE realm_id = ? AND path_id = ? AND owner_id = ?').get(sender.realm_id, path, sender.id) as
      | { id: number }
      | undefined;
    if (a) stmt(app.db, 'INSERT OR IGNORE INTO attachment_message (attachment_id, message_id) VALUES (?, ?)').run(a.id, messageId);
  }
}

/** Sends the message event to every recipient with their own flags. */
function announceMessage(
  app: App,
  m: MessageRow,
  flags: Map<number, number>,
  echo: { localId?: string; queueId?: string; senderId: number },
): void {
  const [message] = formatMessages(app.db, [m], { applyMarkdown: true, clientGravatar: false, fresh: true });
  const flagsByUser: Record<number, string[]> = {};
  // Most recipients share the same flags: name each distinct bit set once.
  const names = new Map<number, string[]>();
  for (const [uid, bits] of flags) {
    let list = names.get(bits);
    if (!list) names.set(bits, (list = flagNames(bits)));
    flagsByUser[uid] = list;
  }
  const event: Record<string, unknown> = { type: 'message', message, flags_by_user: flagsByUser, raw_content: m.content };
  if (m.stream_id !== null) {
    const s = findStreamById(app.db, m.realm_id, m.stream_id);
    if (s && !s.invite_only) event.public_stream_realm_id = m.realm_id;
  }
  if (echo.localId !== undefined && echo.queueId !== undefined) {
    event.local_message_id = echo.localId;
    event.sender_queue_id = echo.queueId;
  }
  app.events.send(event as { type: string }, [...flags.keys()]);
}

/** A message the user can read, or Zulip's "Invalid message(s)". */
export function accessMessage(app: App, user: UserRow, id: number): MessageRow {
  const m = findMessage(app.db, user.realm_id, id);
  if (!m || !messageVisibleTo(app.db, user, id)) throw errors.badRequest('Invalid message(s)');
  return m;
}

// ---- reactions -------------------------------------------------------------------------------------

export interface ReactionSpec {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** Zulip's emoji checks for adding a reaction: the name decides the code and type unless both are given. */
function resolveEmoji(app: App, realmId: number, spec: ReactionSpec): { name: string; code: string; type: string } {
  const name = spec.emojiName ?? '';
  const realmEmoji = realmEmojiLookup(app.db, realmId);
  const problem = checkEmojiReaction(name, spec.emojiCode ?? null, spec.reactionType ?? null, realmEmoji);
  if (problem) throw errors.badRequest(problem);
  if (spec.emojiCode !== undefined && spec.reactionType !== undefined) return { name, code: spec.emojiCode, type: spec.reactionType };
  const found = resolveEmojiName(name, realmEmoji) as { code: string; reaction_type: string };
  return { name, code: spec.emojiCode ?? found.code, type: spec.reactionType ?? found.reaction_type };
}

/** Adds or removes a reaction; the event goes to everyone holding the message. */
export function doReaction(app: App, user: UserRow, messageId: number, spec: ReactionSpec, op: 'add' | 'remove'): void {
  app.batch.write(() => {
    accessMessage(app, user, messageId);
    let emoji: { name: string; code: string; type: string };
    if (op === 'remove') {
      if (spec.emojiName === undefined && spec.emojiCode === undefined) {
        throw errors.badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
      }
      const row = stmt(
        app.db,
        `SELECT emoji_name, emoji_code, reaction_type FROM reaction WHERE message_id = ? AND user_id = ? AND reaction_type = ?
           AND (emoji_code = ? OR (? IS NULL AND emoji_name = ?))`,
      ).get(messageId, user.id, spec.reactionType ?? 'unicode_emoji', spec.emojiCode ?? null, spec.emojiCode ?? null, spec.emojiName ?? null) as
        | { emoji_name: string; emoji_code: string; reaction_type: string }
        | undefined;
      if (!row) throw new JsonableError("Reaction doesn't exist.", { code: 'REACTION_DOES_NOT_EXIST' });
      emoji = { name: row.emoji_name, code: row.emoji_code, type: row.reaction_type };
      stmt(app.db, 'DELETE FROM reaction WHERE message_id = ? AND user_id = ? AND reaction_type = ? AND emoji_code = ?').run(messageId, user.id, emoji.type, emoji.code);
    } else {
      emoji = resolveEmoji(app, user.realm_id, spec);
      const exists = stmt(app.db, 'SELECT 1 FROM reaction WHERE message_id = ? AND user_id = ? AND reaction_type = ? AND emoji_code = ?').get(
        messageId,
        user.id,
        emoji.type,
        emoji.code,
      );
      if (exists) throw new JsonableError('Reaction already exists.', { code: 'REACTION_ALREADY_EXISTS' });
      // Reacting to a message the user never received gives them a (historical) row, as in Zulip
      // (their implied rows written first: an implied row is one they received).
      materializeUserMessages(app.db, user.id);
      stmt(app.db, 'INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)').run(user.id, messageId, FLAG.read | FLAG.historical);
      stmt(app.db, 'INSERT INTO reaction (message_id, user_id, emoji_name, emoji_code, reaction_type) VALUES (?, ?, ?, ?, ?)').run(
        messageId,
        user.id,
        emoji.name,
        emoji.code,
        emoji.type,
      );
    }
    app.batch.onCommit(() =>
      app.events.send(
        {
          type: 'reaction',
          op,
          user_id: user.id,
          user: { user_id: user.id, email: user.email, full_name: user.full_name },
          message_id: messageId,
          emoji_name: emoji.name,
          emoji_code: emoji.code,
          reaction_type: emoji.type,
        },
        messageRecipientIds(app.db, messageId),
      ),
    );
  });
}

// ---- deletion ----------------------------------------------------------------------------------------

/** Whether `user` may delete message `m` (own messages by the delete-own groups and time limit; any by the delete-any groups). */
function canDeleteMessage(app: App, user: UserRow, m: MessageRow, realm: RealmRow): boolean {
  const stream = m.stream_id !== null ? findStreamById(app.db, user.realm_id, m.stream_id) : null;
  if (isUserInGroup(app.db, user.id, realm.can_delete_any_message_group as number)) return true;
  if (stream && isUserInGroup(app.db, user.id, stream.can_delete_any_message_group)) return true;
  // Own messages include those sent by the user's bots.
  const sender = findUserById(app.db, user.realm_id, m.sender_id) as UserRow;
  if (m.sender_id !== user.id && !(isBot(sender) && sender.bot_owner_id === user.id)) return false;
  const own = isUserInGroup(app.db, user.id, realm.can_delete_own_message_group as number) || (stream !== null && isUserInGroup(app.db, user.id, stream.can_delete_own_message_group));
  if (!own) return false;
  const limit = realm.message_content_delete_limit_seconds as number | null;
  if (limit !== null && nowSeconds(app.clock) - m.date_sent > limit && !isAdmin(user)) {
    throw errors.badRequest('The time limit for deleting this message has passed');
  }
  return true;
}

/** Deletes messages (rows, reactions, search index) and announces it; used by DELETE and topic deletion. */
export function deleteMessages(app: App, realmId: number, messages: MessageRow[]): void {
  if (messages.length === 0) return;
  const recipientsByMessage = new Map<number, number[]>();
  for (const m of messages) recipientsByMessage.set(m.id, messageRecipientIds(app.db, m.id));
  const touchedStreams = new Set<number>();
  for (const m of messages) {
    stmt(app.db, "INSERT INTO message_fts (message_fts, rowid, topic, content) VALUES ('delete', ?, ?, ?)").run(m.id, m.topic, m.content);
    stmt(app.db, 'DELETE FROM usermessage WHERE message_id = ?').run(m.id);
    stmt(app.db, 'DELETE FROM message WHERE id = ?').run(m.id);
    if (m.stream_id !== null) touchedStreams.add(m.stream_id);
  }
  // Keep first_message_id right: the channel's oldest message may be gone.
  const changedStreams: number[] = [];
  for (const sid of touchedStreams) {
    const oldest = stmt(app.db, 'SELECT min(id) AS id FROM message WHERE stream_id = ?').get(sid) as { id: number | null };
    const s = findStreamById(app.db, realmId, sid) as StreamRow;
    if (s.first_message_id !== oldest.id) {
      stmt(app.db, 'UPDATE stream SET first_message_id = ? WHERE id = ?').run(oldest.id, sid);
      changedStreams.push(sid);
    }
  }
  app.batch.onCommit(() => {
    for (const m of messages) {
      const event: Record<string, unknown> =
        m.stream_id !== null
          ? { type: 'delete_message', message_ids: [m.id], message_type: 'stream', stream_id: m.stream_id, topic: m.topic }
          : { type: 'delete_message', message_ids: [m.id], message_type: 'private' };
      app.events.send(event as { type: string }, recipientsByMessage.get(m.id) ?? []);
    }
    for (const sid of changedStreams) {
      const s = findStreamById(app.db, realmId, sid);
      if (!s) continue;
      app.events.send(
        { type: 'stream', op: 'update', property: 'first_message_id', value: s.first_message_id, stream_id: sid, name: s.name },
        streamViewers(app, s),
      );
    }
  });
}

/** DELETE /messages/{id}. */
export function doDeleteMessage(app: App, user: UserRow, id: number): void {
  app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const m = accessMessage(app, user, id);
    if (!canDeleteMessage(app, user, m, realm)) throw errors.badRequest("You don't have permission to delete this message");
    deleteMessages(app, user.realm_id, [m]);
  });
}


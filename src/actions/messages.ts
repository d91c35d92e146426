// Sending, editing and deleting messages, reactions, and message flags.
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { codePoints, prefixCodePoints } from '../http/params';
import { nowSeconds } from '../lib/clock';
import { checkEmojiReaction, resolveEmojiName } from '../lib/emoji';
import { findGroup, isUserInGroup, groupMemberIds } from '../lib/groups';
import type { RenderResult } from '../lib/markdown';
import {
  MAX_TOPIC_LENGTH,
  findMessage,
  insertMessageRow,
  topicHasMessages,
  topicParticipants,
  flagNames,
  formatMessages,
  messageRecipientIds,
  type MessageRow,
} from '../lib/messages';
import { directGroupId, FLAG, messageVisibleTo, topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { renderMessage } from '../lib/render';
import { escapeHtml } from '../lib/html';
import { invalidCharacterPosition } from '../lib/validate';
import {
  canAccessStreamHistory,
  effectiveTopicsPolicy,
  findSubscription,
  findStreamById,
  findStreamByName,
  isSubscribed,
  subscriberIds,
  type StreamRow,
} from '../lib/streams';
import { activeBotOwnerId, findUserByEmail, findUserById, isAdmin, isBot, isGuest, type UserRow } from '../lib/users';
import { checkSenderCanAccessRecipients, userIdsWhoCannotAccess } from '../lib/access';
import { fakeEmailDomain, isEmailPublic } from '../lib/user-emails';
import { sendTimeFlags } from './alert-words';
import { accessGainedByConversation, announceAccessGained } from './user-access';
import { queueOutgoingWebhooks, serviceBotTriggers } from './outgoing-webhooks';
import { queueMessagePush } from './push';
import { checkStreamName, streamViewers } from './streams';
import { claimUploads } from './uploads';
import { setVisibilityPolicy, topicPolicy, VISIBILITY_POLICY } from './user-topics';
import { firstReceivedInTopic, firstTopicMessage, materializeUserMessages } from '../lib/user-messages';
import { realmEmojiLookup } from '../lib/realm-emoji';
import type { Submessage } from '../lib/submessages';
import { widgetSubmessageFor } from '../lib/widgets';

export const MAX_MESSAGE_LENGTH = 10000;
export { MAX_TOPIC_LENGTH };
const TRUNCATION_NOTICE = '\n[message truncated]';
// Zulip lets anyone mention the whole channel when it is this small.
const WILDCARD_MENTION_THRESHOLD = 15;

export type Addressee =
  | { kind: 'channel'; streamId?: number; streamName?: string; topic: string | undefined }
  | { kind: 'direct'; userIds?: number[]; emails?: string[] };

/** Trims and bounds message content as Zulip's normalize_body (over-long content is truncated, not refused). */
export function normalizeContent(raw: string): string {
  // trimEnd strips exactly what /\s+$/u matched (the same whitespace), in linear time: the regular
  // expression retried \s+ from every whitespace character of a run that does not end the text, so a
  // run of 100,000 spaces before one letter took seconds, the whole process waiting.
  let content = raw.trimEnd().replace(/^\n+/, '');
  if (content.trim() === '') throw errors.badRequest('Message must not be empty');
  if (content.includes('\u0000')) throw errors.badRequest('Message must not contain null bytes');
  if (codePoints(content) > MAX_MESSAGE_LENGTH) {
    content = prefixCodePoints(content, MAX_MESSAGE_LENGTH - TRUNCATION_NOTICE.length) + TRUNCATION_NOTICE;
  }
  return content;
}

/** Trims and bounds a topic; the organization's empty-topic name and "(no topic)" mean "". */
export function normalizeTopic(raw: string, realm: RealmRow): string {
  let topic = raw.trim();
  if (topic === realm.empty_topic_display_name || topic === '(no topic)') return '';
  const position = invalidCharacterPosition(topic);
  if (position) throw errors.badRequest('Invalid character in topic, at position {position}!', { position });
  if (codePoints(topic) > MAX_TOPIC_LENGTH) topic = prefixCodePoints(topic, MAX_TOPIC_LENGTH - 3) + '...';
  return topic;
}

/**
 * The channel a message goes to, archived ones included (checkCanSendToChannel refuses those), or
 * Zulip's STREAM_DOES_NOT_EXIST (validate_stream_name_with_pm_notification: the name is trimmed).
 */
function channelForSend(app: App, sender: UserRow, to: Extract<Addressee, { kind: 'channel' }>): StreamRow {
  if (to.streamId !== undefined) {
    const s = findStreamById(app.db, sender.realm_id, to.streamId);
    if (!s) throw errors.streamIdMissing(to.streamId);
    return s;
  }
  const name = checkStreamName(to.streamName ?? '');
  const s = findStreamByName(app.db, sender.realm_id, name);
  if (!s) throw new JsonableError("Channel '{stream}' does not exist", { code: 'STREAM_DOES_NOT_EXIST', data: { stream: escapeHtml(name) } });
  return s;
}

/**
 * Zulip's check_for_can_create_topic_group_violation, for sends and moves: starting a topic needs
 * can_create_topic_group, and a bot may do what its owner may (while the owner is active). The group
 * (cached) is asked first, so the usual send never looks for the topic.
 */
export function checkCanCreateTopic(app: App, user: UserRow, s: StreamRow, topic: string): void {
  if (isUserInGroup(app.db, user.id, s.can_create_topic_group)) return;
  const owner = activeBotOwnerId(app.db, user);
  if (owner !== null && isUserInGroup(app.db, owner, s.can_create_topic_group)) return;
  if (topicHasMessages(app.db, s.id, topic)) return;
  throw errors.badRequest('You do not have permission to create new topics in this channel.');
}

/**
 * Whether the sender may post to channel `s`, as Zulip's access_stream_for_send_message: the
 * channel's can_send_message_group (a bot may use its owner's membership), then access: not archived,
 * and web-public, public to a non-guest, subscribed, or a bot whose owner is subscribed. A bot borrows
 * only an active owner's access (activeBotOwnerId).
 */
export function checkCanSendToChannel(app: App, sender: UserRow, s: StreamRow): void {
  const mayPost = (userId: number) => isUserInGroup(app.db, userId, s.can_send_message_group);
  const owner = activeBotOwnerId(app.db, sender);
  if (!mayPost(sender.id) && !(owner !== null && mayPost(owner))) {
    throw errors.badRequest('You do not have permission to post in this channel.');
  }
  const denied = () => errors.badRequest("Not authorized to send to channel '{channel_name}'", { channel_name: s.name });
  if (s.deactivated) throw denied();
  if (s.is_web_public) return;
  if (!s.invite_only && !isGuest(sender)) return;
  if (isSubscribed(app.db, sender.id, s.id)) return;
  // Bots can send to any channel their owner can.
  if (owner !== null && isSubscribed(app.db, owner, s.id)) return;
  throw denied();
}

/**
 * Zulip's check_can_send_direct_message: bots, and conversations with only bots (or oneself), are
 * free; otherwise someone in the conversation must be in direct_message_permission_group, and a
 * sender outside direct_message_initiator_group may only write in a conversation that has messages.
 */
function checkCanSendDirect(app: App, realm: RealmRow, sender: UserRow, addressees: readonly UserRow[], participantIds: readonly number[]): void {
  if (isBot(sender)) return;
  if (addressees.every((u) => isBot(u) || u.id === sender.id)) return;
  const permission = realm.direct_message_permission_group as number;
  if (!participantIds.some((id) => isUserInGroup(app.db, id, permission))) {
    const nobody = findGroup(app.db, realm.id, permission);
    throw errors.badRequest(
      nobody?.is_system_group && nobody.name === 'role:nobody'
        ? 'Direct messages are disabled in this organization.'
        : 'This conversation does not include any users who can authorize it.',
    );
  }
  if (isUserInGroup(app.db, sender.id, realm.direct_message_initiator_group as number)) return;
  const conversation = directGroupId(app.db, realm.id, [...participantIds]);
  if (!stmt(app.db, 'SELECT 1 FROM message WHERE direct_group_id = ? LIMIT 1').get(conversation)) {
    throw errors.badRequest('You do not have permission to initiate direct message conversations.');
  }
}

/**
 * Who a topic wildcard mention reaches (Zulip's topic_participant_user_ids): the topic's participants
 * and the sender.
 */
export function topicWildcardParticipants(app: App, streamId: number, topic: string, senderId: number): Set<number> {
  return topicParticipants(app.db, streamId, topic).add(senderId);
}

/**
 * Zulip's stream_wildcard_mention_allowed and topic_wildcard_mention_allowed: a wildcard mention in a
 * channel of more than 15 subscribers, or a topic of more than 15 participants, needs
 * can_mention_many_users_group.
 */
export function checkWildcardMentions(app: App, sender: UserRow, realm: RealmRow, r: RenderResult, subscriberCount: number, participants: ReadonlySet<number> | null): void {
  if (!r.wildcardChannel && !r.wildcardTopic) return;
  if (isUserInGroup(app.db, sender.id, realm.can_mention_many_users_group as number)) return;
  if (r.wildcardChannel && subscriberCount > WILDCARD_MENTION_THRESHOLD) {
    throw new JsonableError('You do not have permission to use channel wildcard mentions in this channel.', { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' });
  }
  if (participants && participants.size > WILDCARD_MENTION_THRESHOLD) {
    throw new JsonableError('You do not have permission to use topic wildcard mentions in this topic.', { code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED' });
  }
}

/** Zulip's check_user_group_mention_allowed: each group mentioned needs its can_mention_group. */
export function checkGroupMentions(app: App, sender: UserRow, groupIds: ReadonlySet<number>): void {
  for (const gid of groupIds) {
    const g = stmt(app.db, 'SELECT name, can_mention_group FROM user_group WHERE id = ?').get(gid) as { name: string; can_mention_group: number } | undefined;
    if (g && !isUserInGroup(app.db, sender.id, g.can_mention_group)) {
      throw errors.badRequest("You are not allowed to mention user group '{user_group_name}'.", { user_group_name: g.name });
    }
  }
}

/** The users a direct message is addressed to (as given), validated. */
function directAddressees(app: App, sender: UserRow, to: Extract<Addressee, { kind: 'direct' }>): UserRow[] {
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
  // As Zulip's check_message: access to the recipients before their being active.
  checkSenderCanAccessRecipients(app.db, sender, users);
  for (const u of users) if (!u.is_active) throw errors.badRequest("'{email}' is no longer using Zulip.", { email: u.email });
  return users;
}

/** The conversation row for exactly these participants, created on first use. */
export function directGroupFor(db: Db, realmId: number, ids: number[]): number {
  const existing = directGroupId(db, realmId, ids);
  if (existing) return existing;
  const key = [...new Set(ids)].sort((a, b) => a - b).join(',');
  const id = Number(stmt(db, 'INSERT INTO direct_group (realm_id, member_key) VALUES (?, ?)').run(realmId, key).lastInsertRowid);
  const add = stmt(db, 'INSERT INTO direct_group_member (group_id, user_id) VALUES (?, ?)');
  for (const uid of new Set(ids)) add.run(id, uid);
  return id;
}

// Zulip's Client.default_read_by_sender: messages sent from these (lower-cased) clients, the apps
// people type in, start read for their sender; from anything else (integrations, scripts) unread.
const UI_CLIENTS = new Set(['zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android']);

/** Whether a message sent from `client` is read by its sender unless the request says otherwise. */
export function defaultReadBySender(client: string): boolean {
  const name = client.toLowerCase();
  return UI_CLIENTS.has(name) || name.includes('desktop app');
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

/**
 * Mention flag bits each recipient gets from the rendered content. A topic wildcard mentions the
 * topic's participants only (Zulip's topic_participant_user_ids; `participants`).
 */
export function mentionBits(app: App, r: RenderResult, recipients: readonly number[], participants: ReadonlySet<number> | null = null): Map<number, number> {
  const bits = new Map<number, number>();
  const add = (uid: number, b: number) => bits.set(uid, (bits.get(uid) ?? 0) | b);
  for (const uid of r.mentionedUserIds) add(uid, FLAG.mentioned);
  for (const gid of r.mentionedGroupIds) for (const uid of groupMemberIds(app.db, gid)) add(uid, FLAG.group_mentioned);
  if (r.wildcardChannel) for (const uid of recipients) add(uid, FLAG.stream_wildcard_mentioned);
  if (r.wildcardTopic) for (const uid of recipients) if (participants === null || participants.has(uid)) add(uid, FLAG.topic_wildcard_mentioned);
  return bits;
}

/** POST /messages: validates, stores the message and its per-user rows, announces it after commit. */
export function doSendMessage(app: App, sender: UserRow, req: SendRequest): { id: number; automatic_new_visibility_policy?: number } {
  // Every check comes before the first change (the direct-message group is created after them), so
  // the send runs without a savepoint: see WriteBatch.write's checksFirst.
  return app.batch.write(() => {
    const realm = getRealmById(app.db, sender.realm_id) as RealmRow;
    const content = normalizeContent(req.content);
    const now = nowSeconds(app.clock);
    let streamId: number | null = null;
    let directGroupId: number | null = null;
    // Who newly gains access to whom by this conversation (guests it is sent to; see user-access.ts).
    let gained: Map<number, UserRow[]> | null = null;
    let topic = '';
    let recipients: number[];
    let stream: StreamRow | null = null;
    let addressees: UserRow[] = [];
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
      if (!req.system) checkCanCreateTopic(app, sender, stream, topic);
      streamId = stream.id;
      recipients = subscriberIds(app.db, stream.id);
    } else {
      addressees = directAddressees(app, sender, req.to);
      recipients = [...new Set([sender.id, ...addressees.map((u) => u.id)])];
      if (!req.system) checkCanSendDirect(app, realm, sender, addressees, recipients);
      gained = accessGainedByConversation(app, sender, addressees);
    }
    const rendered = renderMessage(app, sender.realm_id, content, sender);
    const participants = rendered.wildcardTopic && stream ? topicWildcardParticipants(app, stream.id, topic, sender.id) : null;
    if (stream && !req.system) checkWildcardMentions(app, sender, realm, rendered, recipients.length, participants);
    if (!req.system) checkGroupMentions(app, sender, rendered.mentionedGroupIds);
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
    const id = (row.id = insertMessageRow(app.db, row));
    // A /poll or /todo message gets its widget's first submessage in the same write (Zulip's
    // do_widget_post_save_actions); the message event carries it.
    const submessages = addWidgetSubmessage(app, row);
    const mentions = mentionBits(app, rendered, recipients, participants);
    const base = directGroupId !== null ? FLAG.is_private : 0;
    const readBySender = req.readBySender ?? defaultReadBySender(req.client ?? '');
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
    claimUploads(app, sender, id, rendered.linkedUploadPaths);
    if (stream && stream.first_message_id === null) {
      stmt(app.db, 'UPDATE stream SET first_message_id = ? WHERE id = ?').run(id, stream.id);
    }
    const automatic = stream && !req.system ? applyAutomaticVisibility(app, sender, stream, topic, id, rendered.mentionedUserIds, all) : null;
    // Who gets the message from an "Unknown user" is decided inside the write, with its reads: after
    // the commit each read would open a read transaction of its own (~20 µs a send).
    const hiddenFrom = userIdsWhoCannotAccess(app.db, sender, [...flagsWritten.keys()]);
    const serviceBots = serviceBotTriggers(app, sender, stream, recipients, rendered.mentionedUserIds, rendered.mentionedGroupIds, addressees);
    app.batch.onCommit(() => {
      // Before the message, so a guest's client knows its sender (Zulip sends these first too).
      if (gained !== null && gained.size > 0) announceAccessGained(app, gained);
      announceMessage(app, row, flagsWritten, { localId: req.localId, queueId: req.queueId, sender, stream, hiddenFrom, submessages });
      queueMessagePush(app, id, flagsWritten); // returns at once; the work runs on a later turn
      queueOutgoingWebhooks(app, row, serviceBots); // likewise
    });
    return automatic === null ? { id } : { id, automatic_new_visibility_policy: automatic };
  }, { checksFirst: true });
}

/**
 * The first submessage of a /poll or /todo message (sender: the message's sender), written with the
 * message; none for other messages. Returns what the message event lists as its submessages.
 */
function addWidgetSubmessage(app: App, m: MessageRow): Submessage[] {
  const widget = widgetSubmessageFor(m.content);
  if (widget === null) return [];
  const id = Number(
    stmt(app.db, 'INSERT INTO submessage (message_id, sender_id, msg_type, content) VALUES (?, ?, ?, ?)').run(m.id, m.sender_id, widget.msgType, widget.content)
      .lastInsertRowid,
  );
  return [{ id, message_id: m.id, sender_id: m.sender_id, msg_type: widget.msgType, content: widget.content }];
}

// Zulip's automatically_follow_topics_policy / automatically_unmute_topics_in_muted_streams_policy values.
const AUTO = { onParticipation: 1, onSend: 2, onInitiation: 3, never: 4 } as const;

/**
 * Zulip's visibility_policy_for_send_message: the visibility policy the sender's settings give the
 * topic they just wrote in, or null when it would not make the topic more visible. `started`:
 * whether the sender could see no earlier message in the topic.
 */
function visibilityAfterSend(sender: UserRow, current: number, channelMuted: boolean, started: () => boolean): number | null {
  if (current === VISIBILITY_POLICY.followed) return null;
  const follow = sender.automatically_follow_topics_policy as number;
  const unmute = sender.automatically_unmute_topics_in_muted_streams_policy as number;
  if (follow === AUTO.onParticipation || follow === AUTO.onSend) return VISIBILITY_POLICY.followed;
  let policy: number | null = channelMuted && (unmute === AUTO.onParticipation || unmute === AUTO.onSend) ? VISIBILITY_POLICY.unmuted : null;
  // A topic with a policy set cannot be one the sender is starting.
  if (current !== VISIBILITY_POLICY.inherit) return policy !== null && policy === current ? null : policy;
  if (follow === AUTO.onInitiation && started()) return VISIBILITY_POLICY.followed;
  if (channelMuted && unmute === AUTO.onInitiation && started()) policy = VISIBILITY_POLICY.unmuted;
  return policy;
}

/**
 * After a channel message (Zulip's do_send_messages): the sender's topic visibility from their
 * automatic follow/unmute settings, and a follow for mentioned people who asked for it
 * (automatically_follow_topics_where_mentioned) unless they muted or follow the topic already.
 * Returns the sender's new policy, for the reply's automatic_new_visibility_policy.
 */
function applyAutomaticVisibility(app: App, sender: UserRow, stream: StreamRow, topic: string, messageId: number, mentioned: ReadonlySet<number>, recipients: readonly number[]): number | null {
  const key = topicKey(topic);
  let chosen: number | null = null;
  if (!isBot(sender) && !(sender.automatically_follow_topics_policy === AUTO.never && sender.automatically_unmute_topics_in_muted_streams_policy === AUTO.never)) {
    const current = topicPolicy(app, sender.id, stream.id, topic);
    const channelMuted = findSubscription(app.db, sender.id, stream.id)?.is_muted === 1;
    // Started: the first message of the topic the sender can see (with protected history, of their
    // own rows) is this one, the newest message there is.
    const started = () =>
      (canAccessStreamHistory(app.db, sender, stream) ? firstTopicMessage(app.db, stream.id, key) : firstReceivedInTopic(app.db, sender.id, stream.id, key)) === messageId;
    chosen = visibilityAfterSend(sender, current, channelMuted, started);
    if (chosen !== null) setVisibilityPolicy(app, sender, stream, topic, chosen);
  }
  // Most messages mention nobody: no set of the recipients (50 entries for 50 subscribers) for them.
  if (mentioned.size === 0) return chosen;
  const recipientSet = new Set(recipients);
  for (const uid of mentioned) {
    if (!recipientSet.has(uid)) continue;
    // Two columns decide; the whole row (85 columns, some 40 µs to build) is read only for a follow.
    const m = stmt(app.db, 'SELECT bot_type, automatically_follow_topics_where_mentioned AS follow FROM user WHERE realm_id = ? AND id = ?').get(sender.realm_id, uid) as
      | { bot_type: number | null; follow: number }
      | undefined;
    if (!m || m.bot_type !== null || !m.follow) continue;
    const current = topicPolicy(app, uid, stream.id, topic);
    if (current === VISIBILITY_POLICY.muted || current === VISIBILITY_POLICY.followed) continue;
    setVisibilityPolicy(app, findUserById(app.db, sender.realm_id, uid) as UserRow, stream, topic, VISIBILITY_POLICY.followed);
  }
  return chosen;
}

/** Sends the message event to every recipient with their own flags. */
function announceMessage(
  app: App,
  m: MessageRow,
  flags: Map<number, number>,
  echo: { localId?: string; queueId?: string; sender: UserRow; stream: StreamRow | null; hiddenFrom: readonly number[]; submessages: readonly Submessage[] },
): void {
  const fresh = { applyMarkdown: true, clientGravatar: false, fresh: true, freshSubmessages: echo.submessages };
  const [message] = formatMessages(app.db, [m], fresh);
  const flagsByUser: Record<number, string[]> = {};
  // Most recipients share the same flags: name each distinct bit set once.
  const names = new Map<number, string[]>();
  for (const [uid, bits] of flags) {
    let list = names.get(bits);
    if (!list) names.set(bits, (list = flagNames(bits)));
    flagsByUser[uid] = list;
  }
  const event: Record<string, unknown> = { type: 'message', message, flags_by_user: flagsByUser, raw_content: m.content };
  if (!isEmailPublic(echo.sender)) event.sender_email_hidden = true;
  if (echo.stream && !echo.stream.invite_only) event.public_stream_realm_id = m.realm_id;
  if (echo.localId !== undefined && echo.queueId !== undefined) {
    event.local_message_id = echo.localId;
    event.sender_queue_id = echo.queueId;
  }
  const recipients = [...flags.keys()];
  // Recipients who may not access the sender (a guest in a channel the sender posts to without being
  // subscribed) get the message from an "Unknown user", as Zulip's do_send_messages sends them.
  const hidden = new Set(echo.hiddenFrom);
  app.events.send(event as { type: string }, hidden.size ? recipients.filter((id) => !hidden.has(id)) : recipients);
  if (hidden.size) {
    const [anonymous] = formatMessages(app.db, [m], { ...fresh, senderAccess: { accessible: new Set(), domain: fakeEmailDomain(app) } });
    app.events.send({ type: 'message', message: anonymous, flags_by_user: flagsByUser, raw_content: m.content }, [...hidden]);
  }
}

/** A message the user can read, or Zulip's "Invalid message(s)". */
export function accessMessage(app: App, user: UserRow, id: number, opts: { modifying?: boolean } = {}): MessageRow {
  const m = findMessage(app.db, user.realm_id, id);
  if (!m || !messageVisibleTo(app.db, user, id)) throw errors.badRequest('Invalid message(s)');
  // As Zulip's has_message_access(is_modifying_message=True): an archived channel's messages can be
  // read, not edited, moved, deleted or reacted to.
  if (opts.modifying && m.stream_id !== null && findStreamById(app.db, m.realm_id, m.stream_id)?.deactivated) throw errors.badRequest('Invalid message(s)');
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
    accessMessage(app, user, messageId, { modifying: true });
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
          // zulip-compat: Zulip still adds the deprecated `user` object (email, full_name); it names the
          // reacting user to every holder of the message, guests who may not access them included, so
          // Parley sends user_id only, as Zulip's message reactions do (clients use user_id since FL 2).
          user_id: user.id,
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

/**
 * Removes messages without a word to anyone: the search index entry, the per-user rows and the message
 * (reactions and attachment links go with it, ON DELETE CASCADE). The retention job's deletion, and
 * deleteMessages' first step.
 */
export function removeMessageRows(app: App, messages: readonly MessageRow[]): void {
  for (const m of messages) {
    stmt(app.db, "INSERT INTO message_fts (message_fts, rowid, topic, content) VALUES ('delete', ?, ?, ?)").run(m.id, m.topic, m.content);
    stmt(app.db, 'DELETE FROM usermessage WHERE message_id = ?').run(m.id);
    stmt(app.db, 'DELETE FROM message WHERE id = ?').run(m.id);
  }
}

/** Deletes messages (rows, reactions, search index) and announces it; used by DELETE and topic deletion. */
export function deleteMessages(app: App, realmId: number, messages: MessageRow[]): void {
  if (messages.length === 0) return;
  const recipientsByMessage = new Map<number, number[]>();
  for (const m of messages) recipientsByMessage.set(m.id, messageRecipientIds(app.db, m.id));
  removeMessageRows(app, messages);
  const touchedStreams = new Set<number>();
  for (const m of messages) if (m.stream_id !== null) touchedStreams.add(m.stream_id);
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
    const m = accessMessage(app, user, id, { modifying: true });
    if (!canDeleteMessage(app, user, m, realm)) throw errors.badRequest("You don't have permission to delete this message");
    deleteMessages(app, user.realm_id, [m]);
  });
}


// PATCH /messages/{id}: edit content, rename the topic, or move messages to another channel, for one
// message, it and later ones in its topic, or the whole topic (propagate_mode). Zulip's
// check_update_message / do_update_message (zerver/actions/message_edit.py), in its order of checks.
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { isUserInGroup } from '../lib/groups';
import { realmTopicLinks } from '../lib/linkifiers';
import type { RenderResult } from '../lib/markdown';
import { flagNames, messageRecipientIds, RESOLVED_TOPIC_PREFIX, topicHasMessages, type MessageRow } from '../lib/messages';
import { FLAG, MENTION_FLAGS, topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { renderMessage } from '../lib/render';
import {
  accessStreamById,
  canAccessStreamContent,
  canAccessStreamHistory,
  canAdministerChannel,
  effectiveTopicsPolicy,
  findStreamById,
  subscriberIds,
  type StreamRow,
} from '../lib/streams';
import { materializeUserMessages, messageUserRows } from '../lib/user-messages';
import { findUserById, isAdmin, isBot, isGuest, type UserRow } from '../lib/users';
import { sendTimeFlags } from './alert-words';
import { anyVisibleInTopic, sendMoveNotices } from './message-move-notices';
import { updateMessageUploads } from './uploads';
import { moveTopicVisibility } from './user-topics';
import { hasSubmessages } from '../lib/submessages';
import { accessMessage, checkCanCreateTopic, checkGroupMentions, checkWildcardMentions, mentionBits, normalizeContent, normalizeTopic, topicWildcardParticipants } from './messages';

export interface EditRequest {
  content?: string;
  topic?: string;
  streamId?: number;
  propagateMode: 'change_one' | 'change_later' | 'change_all';
  prevContentSha256?: string;
  /** Notification Bot's "moved to …" message in the old thread (Zulip's default: false). */
  sendNotificationToOldThread?: boolean;
  /** Notification Bot's "moved here from …" message in the new thread (Zulip's default: true). */
  sendNotificationToNewThread?: boolean;
}

/**
 * Zulip's edit_limit_buffer / message_move_limit_buffer: the web client lets an edit start up to 15
 * seconds past a limit, and the request may take a while to arrive.
 */
const EDIT_LIMIT_BUFFER_SECONDS = 20;
/** The flag bits an edit's rendering decides (Zulip's update_user_message_flags). */
const CONTENT_FLAG_BITS = MENTION_FLAGS | FLAG.has_alert_word;

// Zulip's UserProfile.is_moderator as check_update_message uses it: administrators and owners too.
const isModerator = (u: UserRow) => u.role <= 300;

/** Zulip's can_move_messages_within_channel. */
function canMoveWithinChannel(app: App, user: UserRow, s: StreamRow): boolean {
  return canAdministerChannel(app.db, user, s) || isUserInGroup(app.db, user.id, s.can_move_messages_within_channel_group);
}

/** Zulip's can_edit_topic: the organization's permission, or the channel's in either channel. */
function canEditTopic(app: App, user: UserRow, realm: RealmRow, orig: StreamRow, target: StreamRow): boolean {
  if (isUserInGroup(app.db, user.id, realm.can_move_messages_between_topics_group as number)) return true;
  return canMoveWithinChannel(app, user, orig) || (orig.id !== target.id && canMoveWithinChannel(app, user, target));
}

/** Zulip's can_resolve_topics. */
function canResolveTopics(app: App, user: UserRow, realm: RealmRow, orig: StreamRow, target: StreamRow): boolean {
  if (isUserInGroup(app.db, user.id, realm.can_resolve_topics_group as number)) return true;
  if (isUserInGroup(app.db, user.id, orig.can_resolve_topics_group)) return true;
  return orig.id !== target.id && isUserInGroup(app.db, user.id, target.can_resolve_topics_group);
}

/** Zulip's can_move_messages_out_of_channel. */
function canMoveOutOfChannel(app: App, user: UserRow, realm: RealmRow, s: StreamRow): boolean {
  if (isAdmin(user)) return true;
  if (isUserInGroup(app.db, user.id, realm.can_move_messages_between_channels_group as number)) return true;
  return canAdministerChannel(app.db, user, s) || isUserInGroup(app.db, user.id, s.can_move_messages_out_of_channel_group);
}

/**
 * Zulip's access_stream_by_id_for_message: the target channel must exist, be active, and its content
 * be readable by the user; otherwise "Invalid channel ID", which never tells whether it exists.
 */
function accessTargetStream(app: App, user: UserRow, id: number): StreamRow {
  const s = accessStreamById(app.db, user, id);
  if (!canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  return s;
}

/** The messages of a channel topic the user received (written or implied rows), oldest first. */
function receivedInTopic(app: App, user: UserRow, streamId: number, key: string): { id: number; date_sent: number }[] {
  materializeUserMessages(app.db, user.id);
  return stmt(
    app.db,
    `SELECT m.id, m.date_sent FROM usermessage um JOIN message m ON m.id = um.message_id
     WHERE um.user_id = ? AND m.stream_id = ? AND m.topic_key = ? ORDER BY m.date_sent, m.id`,
  ).all(user.id, streamId, key) as { id: number; date_sent: number }[];
}

/** Users with a subscription to the channel (deactivated users included, as Zulip counts them): active ones only, or ever. */
function subscribedUserIds(app: App, streamId: number, which: 'active' | 'ever'): Set<number> {
  const sql = which === 'active' ? 'SELECT user_id FROM subscription WHERE stream_id = ? AND active = 1' : 'SELECT user_id FROM subscription WHERE stream_id = ?';
  return new Set((stmt(app.db, sql).all(streamId) as { user_id: number }[]).map((r) => r.user_id));
}

/**
 * Zulip's check_time_limit_for_change_all_propagate_mode: someone outside the moderators who moves a
 * whole topic must be within the time limit for every message of it they can see; otherwise the
 * error says how many of the newest they may move.
 */
function checkChangeAllTimeLimit(app: App, user: UserRow, realm: RealmRow, m: MessageRow, stream: StreamRow, topicEdited: boolean, streamEdited: boolean, now: number): void {
  const deadlines: number[] = [];
  const topicLimit = realm.move_messages_within_stream_limit_seconds as number | null;
  const streamLimit = realm.move_messages_between_streams_limit_seconds as number | null;
  if (topicEdited && topicLimit !== null) deadlines.push(topicLimit + EDIT_LIMIT_BUFFER_SECONDS);
  if (streamEdited && streamLimit !== null) deadlines.push(streamLimit + EDIT_LIMIT_BUFFER_SECONDS);
  if (deadlines.length === 0) return;
  const oldestAllowed = now - Math.min(...deadlines);
  // Only the part of the topic the user received counts without access to the channel's history.
  const rows = canAccessStreamHistory(app.db, user, stream)
    ? (stmt(app.db, 'SELECT id, date_sent FROM message WHERE stream_id = ? AND topic_key = ? ORDER BY id').all(stream.id, m.topic_key) as { id: number; date_sent: number }[])
    : receivedInTopic(app, user, stream.id, m.topic_key);
  const allowed = rows.filter((r) => r.date_sent > oldestAllowed);
  if (allowed.length === rows.length) return;
  throw new JsonableError('You only have permission to move the {total_messages_allowed_to_move}/{total_messages_in_topic} most recent messages in this topic.', {
    code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    data: {
      first_message_id_allowed_to_move: allowed.length > 0 ? allowed[0].id : null,
      total_messages_in_topic: rows.length,
      total_messages_allowed_to_move: allowed.length,
    },
  });
}

/**
 * The messages a topic or channel change applies to. Moving to another channel takes only the
 * messages the user can read (Zulip's update_messages_for_topic_edit), so it never carries off
 * messages of a protected history they did not receive.
 */
function affectedMessages(app: App, user: UserRow, m: MessageRow, stream: StreamRow, mode: EditRequest['propagateMode'], streamEdited: boolean): MessageRow[] {
  if (mode === 'change_one') return [m];
  let rows =
    mode === 'change_all'
      ? (stmt(app.db, 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? ORDER BY id').all(stream.id, m.topic_key) as MessageRow[])
      : (stmt(app.db, 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? AND id >= ? ORDER BY id').all(stream.id, m.topic_key, m.id) as MessageRow[]);
  if (streamEdited && !canAccessStreamHistory(app.db, user, stream)) {
    const mine = new Set(receivedInTopic(app, user, stream.id, m.topic_key).map((r) => r.id));
    rows = rows.filter((r) => r.id === m.id || mine.has(r.id));
  }
  return rows;
}

/**
 * Zulip's update_user_message_flags after a content edit: every user holding the message (written
 * or implied row) gets the mention, wildcard, group-mention and alert-word bits of the new rendering;
 * other bits stay. A changed row is written, so an implied row becomes a real one when it gains a bit.
 */
function updateContentFlags(app: App, sender: UserRow, m: MessageRow, content: string, rendered: RenderResult, topicForParticipants: string): void {
  const rows = messageUserRows(app.db, m.id);
  const holders = rows.map((r) => r.user_id);
  // The topic wildcard marks only the topic's participants (and the sender), as get_recipient_info does.
  const participants = rendered.wildcardTopic && m.stream_id !== null ? topicWildcardParticipants(app, m.stream_id, topicForParticipants, m.sender_id) : null;
  const bits = mentionBits(app, rendered, holders, participants);
  // Only has_alert_word: the muted-sender read bit belongs to the send.
  for (const [uid, b] of sendTimeFlags(app, sender, content, holders)) bits.set(uid, (bits.get(uid) ?? 0) | (b & FLAG.has_alert_word));
  const write = stmt(
    app.db,
    'INSERT INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?) ON CONFLICT (user_id, message_id) DO UPDATE SET flags = excluded.flags',
  );
  for (const r of rows) {
    const flags = (r.flags & ~CONTENT_FLAG_BITS) | ((bits.get(r.user_id) ?? 0) & CONTENT_FLAG_BITS);
    if (flags !== r.flags) write.run(r.user_id, m.id, flags);
  }
}


/** The topic the client asked for, with Zulip's spellings of the empty topic taken as "". */
function requestedTopic(raw: string, realm: RealmRow): string {
  const topic = raw.trim();
  return topic === realm.empty_topic_display_name || topic === '(no topic)' ? '' : topic;
}

/** Edits a message; returns Zulip's success keys. */
export function doEditMessage(app: App, user: UserRow, id: number, req: EditRequest): Record<string, unknown> {
  return app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const m = accessMessage(app, user, id, { modifying: true });
    const now = nowSeconds(app.clock);
    const stream = m.stream_id !== null ? (findStreamById(app.db, user.realm_id, m.stream_id) as StreamRow) : null;

    // validate_user_can_edit_message
    if (req.content !== undefined) {
      if (!realm.allow_message_editing) throw errors.badRequest('Your organization has turned off message editing');
      if (m.sender_id !== user.id) throw errors.badRequest("You don't have permission to edit this message");
      const limit = realm.message_content_edit_limit_seconds as number | null;
      if (limit !== null && now - m.date_sent > limit + EDIT_LIMIT_BUFFER_SECONDS) throw errors.badRequest('The time limit for editing this message has passed');
    }

    // An unchanged topic, or the message's own channel, asks for nothing (Zulip: topic_name = None).
    let topicArg = req.topic !== undefined ? requestedTopic(req.topic, realm) : undefined;
    if (topicArg !== undefined && topicArg === m.topic) topicArg = undefined;
    const streamArg = req.streamId !== undefined && !(stream && req.streamId === stream.id) ? req.streamId : undefined;

    // validate_message_edit_payload
    if (req.content === undefined && topicArg === undefined && streamArg === undefined) throw errors.badRequest('Nothing to change');
    if (!stream) {
      if (streamArg !== undefined) throw errors.badRequest('Direct messages cannot be moved to channels.');
      if (topicArg !== undefined) throw errors.badRequest('Direct messages cannot have topics.');
    }
    if (req.propagateMode !== 'change_one' && topicArg === undefined && streamArg === undefined) {
      throw errors.badRequest('Invalid propagate_mode without topic edit');
    }
    if (topicArg !== undefined && (topicArg === RESOLVED_TOPIC_PREFIX.trim() || topicArg === `${RESOLVED_TOPIC_PREFIX}${realm.empty_topic_display_name}` || topicArg === `${RESOLVED_TOPIC_PREFIX}general chat`)) {
      throw errors.badRequest('General chat cannot be marked as resolved');
    }
    // check_stream_topic, then truncation (build_message_edit_request).
    const newTopic = topicArg !== undefined ? normalizeTopic(topicArg, realm) : undefined;
    if (streamArg !== undefined && req.content !== undefined) throw errors.badRequest('Cannot change message content while changing channel');
    if (req.content !== undefined && hasSubmessages(app.db, m.id)) throw errors.badRequest('Widgets cannot be edited.');
    // Checked on every edit, not only content edits, so the parameter means one thing.
    if (req.prevContentSha256 !== undefined && crypto.createHash('sha256').update(m.content).digest('hex') !== req.prevContentSha256) {
      throw new JsonableError("'{field_name}' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH', vars: { field_name: 'prev_content_sha256' } });
    }

    // build_message_edit_request
    let newContent: string | undefined;
    if (req.content !== undefined) newContent = req.content.trim() === '' ? '(deleted)' : normalizeContent(req.content);
    const origTopic = m.topic;
    const topicEdited = newTopic !== undefined;
    const topicResolved =
      topicEdited && newTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !origTopic.startsWith(RESOLVED_TOPIC_PREFIX) && topicArg!.slice(RESOLVED_TOPIC_PREFIX.length) === origTopic;
    const topicUnresolved =
      topicEdited && origTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !newTopic.startsWith(RESOLVED_TOPIC_PREFIX) && origTopic.replace(/^[✔ ]+/u, '') === newTopic;
    const streamEdited = streamArg !== undefined;
    const target = stream && streamEdited ? accessTargetStream(app, user, streamArg) : stream;
    const targetTopic = newTopic ?? origTopic;
    // Messages change topic or channel (only channel messages can: checked above).
    const moved = stream !== null && target !== null && (topicEdited || streamEdited);
    if (stream && target) {
      const policy = effectiveTopicsPolicy(target, realm);
      if (targetTopic === '' && (topicEdited || streamEdited) && policy === 'disable_empty_topic') {
        throw errors.badRequest('Sending messages to the general chat is not allowed in this channel.');
      }
      if (policy === 'empty_topic_only' && targetTopic !== '') throw errors.badRequest('Only the general chat topic is allowed in this channel.');

      if (topicEdited) {
        if (topicResolved || topicUnresolved) {
          if (!canResolveTopics(app, user, realm, stream, target)) throw errors.badRequest("You don't have permission to resolve topics in this channel.");
        } else {
          if (!canEditTopic(app, user, realm, stream, target)) throw errors.badRequest("You don't have permission to edit this message");
          const limit = realm.move_messages_within_stream_limit_seconds as number | null;
          if (limit !== null && !isModerator(user) && now - m.date_sent > limit + EDIT_LIMIT_BUFFER_SECONDS) {
            throw errors.badRequest("The time limit for editing this message's topic has passed.");
          }
        }
      }
    }

    let rendered: RenderResult | undefined;
    if (newContent !== undefined) {
      rendered = renderMessage(app, user.realm_id, newContent, user);
      if (m.stream_id !== null) {
        const participants = rendered.wildcardTopic ? topicWildcardParticipants(app, m.stream_id, m.topic, m.sender_id) : null;
        checkWildcardMentions(app, user, realm, rendered, subscriberIds(app.db, m.stream_id).length, participants);
      }
      checkGroupMentions(app, user, rendered.mentionedGroupIds);
    }

    if (stream && target) {
      if (streamEdited) {
        if (!canMoveOutOfChannel(app, user, realm, stream)) throw errors.badRequest("You don't have permission to move this message");
        // check_stream_access_based_on_can_send_message_group (access was checked above).
        if (!isUserInGroup(app.db, user.id, target.can_send_message_group)) throw errors.badRequest('You do not have permission to post in this channel.');
        const limit = realm.move_messages_between_streams_limit_seconds as number | null;
        if (limit !== null && !isModerator(user) && now - m.date_sent > limit + EDIT_LIMIT_BUFFER_SECONDS) {
          throw errors.badRequest("The time limit for editing this message's channel has passed");
        }
      }
      if (req.propagateMode === 'change_all' && !isModerator(user) && moved && !topicResolved && !topicUnresolved) {
        checkChangeAllTimeLimit(app, user, realm, m, stream, topicEdited, streamEdited, now);
      }
      if (moved && !topicResolved && !topicUnresolved) checkCanCreateTopic(app, user, target, targetTopic);
    }

    // ---- do_update_message ----
    if (newContent !== undefined && rendered) {
      // Before the move, as update_message_content: a topic wildcard reaches the participants the
      // target topic has before this edit.
      updateContentFlags(app, user, m, newContent, rendered, targetTopic);
    }
    const newStream = streamEdited ? target : null;
    // Whether the destination topic had messages before this move (Zulip's target_topic_has_messages).
    const targetHadMessages = moved && topicHasMessages(app.db, target.id, targetTopic);
    const affected = moved ? affectedMessages(app, user, m, stream, req.propagateMode, streamEdited) : [m];
    for (const msg of affected) {
      const history = msg.edit_history ? (JSON.parse(msg.edit_history) as Record<string, unknown>[]) : [];
      const entry: Record<string, unknown> = { user_id: user.id, timestamp: now };
      const isTarget = msg.id === m.id;
      if (isTarget && newContent !== undefined) {
        entry.prev_content = msg.content;
        entry.prev_rendered_content = msg.rendered_content;
        entry.prev_rendered_content_version = 1;
      }
      if (newStream && stream) {
        entry.prev_stream = stream.id;
        entry.stream = newStream.id;
      }
      // As Zulip, every moved message records the target message's old topic.
      if (topicEdited) {
        entry.prev_topic = origTopic;
        entry.topic = newTopic;
      }
      history.unshift(entry);
      const topic = newTopic ?? msg.topic;
      const content = isTarget && newContent !== undefined ? newContent : msg.content;
      stmt(app.db, "INSERT INTO message_fts (message_fts, rowid, topic, content) VALUES ('delete', ?, ?, ?)").run(msg.id, msg.topic, msg.content);
      stmt(
        app.db,
        `UPDATE message SET content = ?, rendered_content = ?, topic = ?, topic_key = ?, stream_id = ?, edit_history = ?,
           last_edit_time = CASE WHEN ? THEN ? ELSE last_edit_time END,
           last_moved_time = CASE WHEN ? THEN ? ELSE last_moved_time END,
           has_link = ?, has_image = ?, has_attachment = ?
         WHERE id = ?`,
      ).run(
        content,
        isTarget && rendered ? rendered.html : msg.rendered_content,
        topic,
        topicKey(topic),
        newStream ? newStream.id : msg.stream_id,
        JSON.stringify(history),
        isTarget && newContent !== undefined ? 1 : 0,
        now,
        topicEdited || streamEdited ? 1 : 0,
        now,
        isTarget && rendered ? (rendered.hasLink ? 1 : 0) : msg.has_link,
        isTarget && rendered ? (rendered.hasImage ? 1 : 0) : msg.has_image,
        isTarget && rendered ? (rendered.hasAttachment ? 1 : 0) : msg.has_attachment,
        msg.id,
      );
      stmt(app.db, 'INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)').run(msg.id, topic, content);
    }
    // The uploads the new content references (only the sender edits content, so they are the owner).
    const detachedUploads = rendered ? updateMessageUploads(app, user, m.id, rendered.linkedUploadPaths) : [];

    // Moving to another channel, as Zulip's do_update_message: everyone ever subscribed to the old
    // channel (active or not) who is not subscribed to the new one loses their rows; those who cannot
    // read the new channel at all (its guests, or everyone for a private target) hear a deletion. With
    // protected history in the new channel, all its subscribers get read rows (existing rows stay);
    // with shared history they read the messages as history, like any older message. Subscribers
    // here include deactivated users, as Zulip's. Every row is a written one by now: changing a
    // message's channel first wrote the implied rows of both channels' subscribers (schema.sql,
    // trigger message_move_cursor).
    const losingAccess: number[] = [];
    if (newStream && stream) {
      const newSubs = subscribedUserIds(app, newStream.id, 'active');
      const losing = [...subscribedUserIds(app, stream.id, 'ever')].filter((uid) => !newSubs.has(uid));
      for (const uid of losing) {
        const u = findUserById(app.db, user.realm_id, uid);
        if (u && (newStream.invite_only === 1 || isGuest(u))) losingAccess.push(uid);
      }
      const gaining = newStream.history_public_to_subscribers === 1 ? [] : [...newSubs];
      const drop = stmt(app.db, 'DELETE FROM usermessage WHERE user_id = ? AND message_id = ?');
      const gain = stmt(app.db, 'INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
      for (const msg of affected) {
        for (const uid of losing) drop.run(uid, msg.id);
        for (const uid of gaining) gain.run(uid, msg.id, FLAG.read);
      }
      if (newStream.first_message_id === null || affected[0].id < newStream.first_message_id) {
        stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE stream_id = ?) WHERE id = ?').run(newStream.id, newStream.id);
      }
      stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE stream_id = ?) WHERE id = ?').run(stream.id, stream.id);
    }

    const ids = affected.map((x) => x.id);
    const newTopicLinks = topicEdited && newTopic !== '' ? realmTopicLinks(app.db, user.realm_id)(newTopic) : [];
    // Who hears the update, as Zulip: the target message's row holders with their flags as they are
    // now (after the content's new mentions); and when the old channel's history is shared, the
    // (new) channel's subscribers and the old channel's who are not in the new one, as read, except
    // those told the messages are gone and the new channel's guests who were not in the old one.
    const rows = messageUserRows(app.db, m.id);
    const flagsByUser: Record<number, string[]> = Object.fromEntries(rows.map((r) => [r.user_id, flagNames(r.flags)]));
    if (stream && target && stream.history_public_to_subscribers === 1) {
      const gone = new Set(losingAccess);
      const audience = new Set(subscriberIds(app.db, target.id));
      if (newStream) {
        const oldSubs = subscribedUserIds(app, stream.id, 'active');
        for (const uid of audience) if (!oldSubs.has(uid) && isGuest(findUserById(app.db, user.realm_id, uid) as UserRow)) audience.delete(uid);
        for (const uid of subscriberIds(app.db, stream.id)) audience.add(uid);
      }
      for (const uid of audience) if (!(uid in flagsByUser) && !gone.has(uid)) flagsByUser[uid] = ['read'];
    }
    // Beyond Zulip, holders of the other moved messages hear it too (a later subscriber of a channel
    // with protected history may hold rows for some of them only).
    const recipients = new Set<number>(Object.keys(flagsByUser).map(Number));
    for (const id2 of ids) if (id2 !== m.id) for (const uid of messageRecipientIds(app.db, id2)) recipients.add(uid);
    // A partial move counts as the whole topic when nothing the user can see is left behind; then
    // users' follow and mute settings move with it (before the update event, as Zulip sends them).
    const movedAllVisible = moved && (req.propagateMode === 'change_all' || !anyVisibleInTopic(app, user, stream, origTopic, []));
    const origFollowers = movedAllVisible
      ? moveTopicVisibility(app, { origStream: stream, origTopic, targetStream: target, targetTopic, targetHadMessages, losingAccess: new Set(losingAccess) })
      : undefined;
    app.batch.onCommit(() => {
      const event: Record<string, unknown> = {
        type: 'update_message',
        user_id: user.id,
        edit_timestamp: now,
        message_id: m.id,
        message_ids: ids,
        rendering_only: false,
        flags_by_user: flagsByUser,
      };
      if (newContent !== undefined && rendered) {
        Object.assign(event, {
          orig_content: m.content,
          orig_rendered_content: m.rendered_content,
          content: newContent,
          rendered_content: rendered.html,
          is_me_message: /^\/me( |$)/.test(newContent),
        });
      }
      if (stream) {
        Object.assign(event, { stream_name: stream.name, stream_id: stream.id });
        if (topicEdited || newStream) {
          Object.assign(event, { propagate_mode: req.propagateMode, orig_subject: origTopic });
          // As Zulip: subject and topic_links only when the topic changed.
          if (topicEdited) Object.assign(event, { subject: newTopic, topic_links: newTopicLinks });
          if (newStream) event.new_stream_id = newStream.id;
        }
      }
      app.events.send(event as { type: string }, [...recipients]);
      if (losingAccess.length) {
        app.events.send({ type: 'delete_message', message_ids: ids, message_type: 'stream', stream_id: stream?.id, topic: origTopic }, losingAccess);
      }
    });

    // Notification Bot's notices go out after the update_message event, as in Zulip.
    if (moved) {
      sendMoveNotices(
        app,
        {
          actor: user,
          message: m,
          origStream: stream,
          origTopic,
          targetStream: target,
          targetTopic,
          changedIds: ids,
          movedAllVisible,
          origFollowers,
          contentEdited: newContent !== undefined,
          topicEdited,
          streamEdited,
          topicResolved,
          topicUnresolved,
          notifyOldThread: req.sendNotificationToOldThread ?? false,
          notifyNewThread: req.sendNotificationToNewThread ?? true,
        },
        now,
      );
    }
    return { detached_uploads: detachedUploads };
  });
}

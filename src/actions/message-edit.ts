// PATCH /messages/{id}: edit content, rename the topic, or move messages to another channel, for one
// message, it and later ones in its topic, or the whole topic (propagate_mode).
import crypto from 'node:crypto';
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { isUserInGroup } from '../lib/groups';
import { flagNames, messageRecipientIds, type MessageRow } from '../lib/messages';
import { messageUserRows } from '../lib/user-messages';
import { FLAG, topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { renderMessage } from '../lib/render';
import { canAccessStreamHistory, findStreamById, subscriberIds, type StreamRow } from '../lib/streams';
import { findUserById, isAdmin, type UserRow } from '../lib/users';
import { accessMessage, checkCanSendToChannel, normalizeContent, normalizeTopic } from './messages';

export interface EditRequest {
  content?: string;
  topic?: string;
  streamId?: number;
  propagateMode: 'change_one' | 'change_later' | 'change_all';
  prevContentSha256?: string;
}

const isModerator = (u: UserRow) => u.role <= 300;

/** The messages a topic or channel change applies to. */
function affectedMessages(app: App, m: MessageRow, mode: EditRequest['propagateMode']): MessageRow[] {
  if (mode === 'change_one' || m.stream_id === null) return [m];
  const sql =
    mode === 'change_all'
      ? 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? ORDER BY id'
      : 'SELECT * FROM message WHERE stream_id = ? AND topic_key = ? AND id >= ? ORDER BY id';
  const args: unknown[] = mode === 'change_all' ? [m.stream_id, m.topic_key] : [m.stream_id, m.topic_key, m.id];
  return stmt(app.db, sql).all(...args) as MessageRow[];
}

/** Edits a message; returns Zulip's success keys. */
export function doEditMessage(app: App, user: UserRow, id: number, req: EditRequest): Record<string, unknown> {
  return app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const m = accessMessage(app, user, id);
    if (req.content === undefined && req.topic === undefined && req.streamId === undefined) throw errors.badRequest('Nothing to change');
    const now = nowSeconds(app.clock);
    const stream = m.stream_id !== null ? (findStreamById(app.db, user.realm_id, m.stream_id) as StreamRow) : null;

    let newContent: string | undefined;
    let rendered: ReturnType<typeof renderMessage> | undefined;
    if (req.content !== undefined) {
      if (m.sender_id !== user.id) throw errors.badRequest("You don't have permission to edit this message");
      if (!realm.allow_message_editing) throw errors.badRequest('Your organization has turned off message editing');
      const limit = realm.message_content_edit_limit_seconds as number | null;
      if (limit !== null && now - m.date_sent > limit) throw errors.badRequest('The time limit for editing this message has passed');
      if (req.prevContentSha256 !== undefined) {
        const sha = crypto.createHash('sha256').update(m.content).digest('hex');
        if (sha !== req.prevContentSha256) {
          throw new JsonableError("'{field_name}' value does not match the expected value.", {
            code: 'EXPECTATION_MISMATCH',
            vars: { field_name: 'prev_content_sha256' },
          });
        }
      }
      // zulip-compat: an edit to empty content deletes the text but keeps the message.
      newContent = req.content.trim() === '' ? '(deleted)' : normalizeContent(req.content);
      rendered = renderMessage(app, user.realm_id, newContent, user);
    }

    let newTopic: string | undefined;
    let newStream: StreamRow | null = null;
    if (req.topic !== undefined || req.streamId !== undefined) {
      if (!stream) throw errors.badRequest('Direct messages cannot be moved to channels.');
      if (req.topic !== undefined) {
        newTopic = normalizeTopic(req.topic, realm);
        const mayMove =
          isUserInGroup(app.db, user.id, realm.can_move_messages_between_topics_group as number) ||
          isUserInGroup(app.db, user.id, stream.can_move_messages_within_channel_group);
        if (!mayMove && m.sender_id !== user.id) throw errors.badRequest("You don't have permission to edit this message");
        const limit = realm.move_messages_within_stream_limit_seconds as number | null;
        if (!isModerator(user) && limit !== null && now - m.date_sent > limit) {
          throw errors.badRequest('The time limit for editing this message\'s topic has passed.');
        }
      }
      if (req.streamId !== undefined && req.streamId !== stream.id) {
        const target = findStreamById(app.db, user.realm_id, req.streamId);
        if (!target || target.deactivated) throw errors.badRequest('Invalid channel ID');
        const mayMove =
          isUserInGroup(app.db, user.id, realm.can_move_messages_between_channels_group as number) ||
          isUserInGroup(app.db, user.id, stream.can_move_messages_out_of_channel_group);
        if (!mayMove) throw errors.badRequest("You don't have permission to move this message");
        checkCanSendToChannel(app, user, target);
        if (req.content !== undefined) throw errors.badRequest('Cannot change message content while changing channel');
        newStream = target;
      }
    }

    const affected = newTopic !== undefined || newStream ? affectedMessages(app, m, req.propagateMode) : [m];
    const origTopic = m.topic;
    for (const msg of affected) {
      const history = msg.edit_history ? (JSON.parse(msg.edit_history) as Record<string, unknown>[]) : [];
      const entry: Record<string, unknown> = { user_id: user.id, timestamp: now };
      if (msg.id === m.id && newContent !== undefined) {
        entry.prev_content = msg.content;
        entry.prev_rendered_content = msg.rendered_content;
        entry.prev_rendered_content_version = 1;
      }
      if (newTopic !== undefined && newTopic !== msg.topic) {
        entry.prev_topic = msg.topic;
        entry.topic = newTopic;
      }
      if (newStream) {
        entry.prev_stream = msg.stream_id;
        entry.stream = newStream.id;
      }
      if (Object.keys(entry).length > 2) history.unshift(entry);
      const topic = newTopic ?? msg.topic;
      const content = msg.id === m.id && newContent !== undefined ? newContent : msg.content;
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
        msg.id === m.id && rendered ? rendered.html : msg.rendered_content,
        topic,
        topicKey(topic),
        newStream ? newStream.id : msg.stream_id,
        JSON.stringify(history),
        msg.id === m.id && newContent !== undefined ? 1 : 0,
        now,
        newTopic !== undefined || newStream ? 1 : 0,
        now,
        msg.id === m.id && rendered ? (rendered.hasLink ? 1 : 0) : msg.has_link,
        msg.id === m.id && rendered ? (rendered.hasImage ? 1 : 0) : msg.has_image,
        msg.id === m.id && rendered ? (rendered.hasAttachment ? 1 : 0) : msg.has_attachment,
        msg.id,
      );
      stmt(app.db, 'INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)').run(msg.id, topic, content);
    }

    // Moving to another channel: its subscribers gain rows (as read); users who can no longer see the
    // messages lose theirs. Every row is a written one by now: changing a message's channel first
    // wrote the implied rows of both channels' subscribers (schema.sql, trigger message_move_cursor).
    const losing = new Set<number>();
    if (newStream && stream) {
      const subs = new Set(subscriberIds(app.db, newStream.id));
      for (const msg of affected) {
        for (const r of stmt(app.db, 'SELECT user_id FROM usermessage WHERE message_id = ?').all(msg.id) as { user_id: number }[]) {
          const u = findUserById(app.db, user.realm_id, r.user_id) as UserRow;
          if (!subs.has(r.user_id) && !canAccessStreamHistory(app.db, u, newStream) && !isAdmin(u) && r.user_id !== msg.sender_id) {
            stmt(app.db, 'DELETE FROM usermessage WHERE user_id = ? AND message_id = ?').run(r.user_id, msg.id);
            losing.add(r.user_id);
          }
        }
        for (const uid of subs) stmt(app.db, 'INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)').run(uid, msg.id, FLAG.read);
      }
      if (newStream.first_message_id === null || affected[0].id < newStream.first_message_id) {
        stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE stream_id = ?) WHERE id = ?').run(newStream.id, newStream.id);
      }
      stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message WHERE stream_id = ?) WHERE id = ?').run(stream.id, stream.id);
    }

    const ids = affected.map((x) => x.id);
    app.batch.onCommit(() => {
      const rows = messageUserRows(app.db, m.id);
      const event: Record<string, unknown> = {
        type: 'update_message',
        user_id: user.id,
        edit_timestamp: now,
        message_id: m.id,
        message_ids: ids,
        rendering_only: false,
        flags_by_user: Object.fromEntries(rows.map((r) => [r.user_id, flagNames(r.flags)])),
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
        if (newTopic !== undefined || newStream) {
          Object.assign(event, { propagate_mode: req.propagateMode, orig_subject: origTopic, topic_links: [] });
          if (newTopic !== undefined) event.subject = newTopic;
          if (newStream) event.new_stream_id = newStream.id;
        }
      }
      const recipients = new Set<number>(rows.map((r) => r.user_id));
      for (const id2 of ids) for (const uid of messageRecipientIds(app.db, id2)) recipients.add(uid);
      app.events.send(event as { type: string }, [...recipients]);
      if (losing.size) {
        app.events.send({ type: 'delete_message', message_ids: ids, message_type: 'stream', stream_id: stream?.id, topic: origTopic }, [...losing]);
      }
    });
    return { detached_uploads: [] };
  });
}

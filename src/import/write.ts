// Writing imported history straight into the tables, for every importer (Slack's now, Zulip's next):
// messages with their date, rendering and per-user rows, reactions, attachments. No checks of who may
// post where (the history already happened) and no events (no server is running: `parley import`
// works on a stopped server, into a staging directory).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { STREAM_COLORS } from '../actions/subscriptions';
import { FLAG, topicKey } from '../lib/narrow';
import { renderMessage } from '../lib/render';
import { insertMessageRow } from '../lib/messages';

/** Zulip's client for imported messages (import_util.DATA_IMPORT_CLIENTS). */
export const IMPORT_CLIENT = 'ZulipDataImport';

export interface ImportedMessage {
  senderId: number;
  streamId: number | null;
  directGroupId: number | null;
  topic: string;
  content: string;
  dateSent: number;
  /** Who gets a per-user row: the channel's subscribers, or the conversation's members. */
  recipients: readonly number[];
  /** Users the importer saw mentioned (flag "mentioned" on their rows). */
  mentionedUserIds: readonly number[];
  /** Set from what the importer knows beside the Markdown (files it attached or linked). */
  hasLink?: boolean;
  hasImage?: boolean;
  hasAttachment?: boolean;
  /** Attachment rows (already inserted) this message links to. */
  attachmentIds?: readonly number[];
}

/**
 * Inserts one message, rendered by Parley's renderer, and a row for each recipient: read (imported
 * history starts read, as Zulip's build_user_message has it), mentioned, is_private for direct
 * messages. Returns the message id. The caller runs it inside a write and advances the cursors at
 * the end (finishImportedMessages).
 */
export function insertImportedMessage(app: App, realmId: number, m: ImportedMessage): number {
  const rendered = renderMessage(app, realmId, m.content);
  const id = insertMessageRow(app.db, {
    realm_id: realmId,
    sender_id: m.senderId,
    stream_id: m.streamId,
    direct_group_id: m.directGroupId,
    topic: m.topic,
    topic_key: topicKey(m.topic),
    content: m.content,
    rendered_content: rendered.html,
    date_sent: m.dateSent,
    has_link: rendered.hasLink || m.hasLink ? 1 : 0,
    has_image: rendered.hasImage || m.hasImage ? 1 : 0,
    has_attachment: rendered.hasAttachment || m.hasAttachment ? 1 : 0,
    client: IMPORT_CLIENT,
  });
  const base = FLAG.read | (m.directGroupId !== null ? FLAG.is_private : 0);
  const mentioned = new Set(m.mentionedUserIds);
  const insertRow = stmt(app.db, 'INSERT OR IGNORE INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
  for (const uid of new Set(m.recipients)) insertRow.run(uid, id, base | (mentioned.has(uid) ? FLAG.mentioned : 0));
  const claim = stmt(app.db, 'INSERT OR IGNORE INTO attachment_message (attachment_id, message_id) VALUES (?, ?)');
  for (const a of m.attachmentIds ?? []) claim.run(a, id);
  return id;
}

/** Adds a reaction unless the same user already gave the same emoji to the message. */
export function insertImportedReaction(app: App, r: { messageId: number; userId: number; emojiName: string; emojiCode: string; reactionType?: string }): boolean {
  return (
    stmt(app.db, 'INSERT OR IGNORE INTO reaction (message_id, user_id, emoji_name, emoji_code, reaction_type) VALUES (?, ?, ?, ?, ?)').run(
      r.messageId,
      r.userId,
      r.emojiName,
      r.emojiCode,
      r.reactionType ?? 'unicode_emoji',
    ).changes > 0
  );
}

/** An attachment row for a file already placed in the uploads store at `pathId`. */
export function insertImportedAttachment(app: App, a: { realmId: number; ownerId: number; pathId: string; fileName: string; contentType: string | null; size: number; createTime: number }): number {
  // Zulip's build_attachment: imported files are visible to the whole organization's members who can see the message.
  return Number(
    stmt(
      app.db,
      `INSERT INTO attachment (realm_id, owner_id, path_id, file_name, content_type, size, create_time, is_realm_public)
       VALUES (?, ?, ?, ?, ?, ?, ?, 1)`,
    ).run(a.realmId, a.ownerId, a.pathId, a.fileName, a.contentType, a.size, a.createTime).lastInsertRowid,
  );
}

/** Subscribes users to a channel, each with the next color of Zulip's palette for them. */
export function insertImportedSubscriptions(app: App, streamId: number, userIds: Iterable<number>): void {
  const count = stmt(app.db, 'SELECT count(*) AS n FROM subscription WHERE user_id = ?');
  const insert = stmt(app.db, 'INSERT OR IGNORE INTO subscription (user_id, stream_id, color) VALUES (?, ?, ?)');
  for (const uid of new Set(userIds)) {
    const n = (count.get(uid) as { n: number }).n;
    insert.run(uid, streamId, STREAM_COLORS[n % STREAM_COLORS.length]);
  }
}

/**
 * After the last message: each channel's first message, and every user's usermessage cursor moved to
 * the newest message (imported rows are all written, so nothing is left implied: schema.sql).
 */
export function finishImportedMessages(app: App, realmId: number): void {
  stmt(app.db, 'UPDATE stream SET first_message_id = (SELECT min(id) FROM message m WHERE m.stream_id = stream.id) WHERE realm_id = ?').run(realmId);
  stmt(app.db, 'UPDATE usermessage_cursor SET message_id = (SELECT coalesce(max(id), 0) FROM message) WHERE message_id < (SELECT coalesce(max(id), 0) FROM message)').run();
}

// Read side of messages: loading rows, the per-user flag list, and the message objects Zulip clients
// expect (GET /messages, GET /messages/{id}, message events).
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { FLAG, topicKey } from './narrow';
import { messageUserRows } from './user-messages';
import { getRealmById, type RealmRow } from './realm';
import { realmEditHistoryPolicy, type EditHistoryVisibilityPolicy } from './realm-settings';
import { codePoints } from '../http/params';

/** Zulip's RESOLVED_TOPIC_PREFIX. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';
/** Zulip's max_topic_length, in code points. */
export const MAX_TOPIC_LENGTH = 60;
import { realmTopicLinks, type TopicLink } from './linkifiers';
import { avatarUrl, type UserRow } from './users';
import { mayClientComputeAvatar } from './user-emails';
import { UNKNOWN_USER_AVATAR_URL, UNKNOWN_USER_NAME } from './access';
import { submessagesOf, type Submessage } from './submessages';

export interface MessageRow {
  id: number;
  realm_id: number;
  sender_id: number;
  stream_id: number | null;
  direct_group_id: number | null;
  topic: string;
  topic_key: string;
  content: string;
  rendered_content: string;
  date_sent: number;
  last_edit_time: number | null;
  last_moved_time: number | null;
  edit_history: string | null;
  has_link: number;
  has_image: number;
  has_attachment: number;
  client: string;
}

/** The columns a new message is stored with: a row as MessageRow has it, before it was ever edited or moved. */
export type NewMessageRow = Omit<MessageRow, 'id' | 'last_edit_time' | 'last_moved_time' | 'edit_history'>;

/**
 * What an import keeps of a message's past: its id (Zulip's, so links into the history keep working)
 * and its edits. A new message has none of these.
 */
export interface KeptMessageHistory {
  id: number;
  last_edit_time: number | null;
  last_moved_time: number | null;
  edit_history: string | null;
}

/** Stores a new message (or, for an import, one with `kept` history) and its search-index entry; returns its id. */
export function insertMessageRow(db: Db, row: NewMessageRow, kept?: KeptMessageHistory): number {
  const id = Number(
    stmt(
      db,
      `INSERT INTO message (id, realm_id, sender_id, stream_id, direct_group_id, topic, topic_key, content, rendered_content, date_sent,
         has_link, has_image, has_attachment, client, last_edit_time, last_moved_time, edit_history)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      kept?.id ?? null,
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
      kept?.last_edit_time ?? null,
      kept?.last_moved_time ?? null,
      kept?.edit_history ?? null,
    ).lastInsertRowid,
  );
  stmt(db, 'INSERT INTO message_fts (rowid, topic, content) VALUES (?, ?, ?)').run(id, row.topic, row.content);
  return id;
}

// Offsets keep channel and conversation recipient ids apart (clients use recipient_id to group).
const DIRECT_RECIPIENT_BASE = 1_000_000_000;

export function findMessage(db: Db, realmId: number, id: number): MessageRow | null {
  return (stmt(db, 'SELECT * FROM message WHERE realm_id = ? AND id = ?').get(realmId, id) as MessageRow | undefined) ?? null;
}

/** Flag names as the API lists them, from the stored bits (null: the user has no row: historical). */
export function flagNames(bits: number | null): string[] {
  if (bits === null) return ['read', 'historical'];
  const out: string[] = [];
  if (bits & FLAG.read) out.push('read');
  if (bits & FLAG.starred) out.push('starred');
  if (bits & FLAG.collapsed) out.push('collapsed');
  if (bits & (FLAG.mentioned | FLAG.group_mentioned)) out.push('mentioned');
  if (bits & FLAG.stream_wildcard_mentioned) out.push('stream_wildcard_mentioned');
  if (bits & FLAG.topic_wildcard_mentioned) out.push('topic_wildcard_mentioned');
  // zulip-compat: the legacy name still reaches older clients for either kind of wildcard mention.
  if (bits & (FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned)) out.push('wildcard_mentioned');
  if (bits & FLAG.has_alert_word) out.push('has_alert_word');
  if (bits & FLAG.historical) out.push('historical');
  return out;
}

interface SenderInfo {
  id: number;
  realm_id: number;
  avatar_file: string | null;
  email: string;
  full_name: string;
  avatar_source: string;
  avatar_version: number;
  delivery_email: string;
  email_address_visibility: number;
  bot_type: number | null;
}

export interface FormatOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /**
   * Whether the client takes "" as a topic (allow_empty_topic_name); otherwise the empty topic, in
   * the message and its edit history, reads as the organization's empty-topic display name. Default true.
   */
  allowEmptyTopicName?: boolean;
  /**
   * The messages were just sent: they cannot have reactions yet, and their submessages (a widget's
   * first one, written with the message) are the ones given here (spares the queries).
   */
  fresh?: boolean;
  freshSubmessages?: readonly Submessage[];
  /**
   * The users the viewer may access (accessibleUsers; null: everyone) and the placeholder domain: a
   * sender outside them reads as "Unknown user" with a placeholder address and avatar (Zulip's
   * finalize_payload with can_access_sender false). Omitted: every sender is shown.
   */
  senderAccess?: { accessible: ReadonlySet<number> | null; domain: string };
}

/** Participants of a direct-message conversation, as display_recipient lists them. */
export function directRecipients(db: Db, groupId: number): { id: number; email: string; full_name: string; is_mirror_dummy: boolean }[] {
  return (
    stmt(
      db,
      'SELECT u.id, u.email, u.full_name FROM direct_group_member g JOIN user u ON u.id = g.user_id WHERE g.group_id = ? ORDER BY u.id',
    ).all(groupId) as { id: number; email: string; full_name: string }[]
  ).map((u) => ({ ...u, is_mirror_dummy: false }));
}

/**
 * Reactions of the given messages, grouped by message id (reaction is WITHOUT ROWID: a stable key order).
 * The reacting user is named by id only, as current Zulip does (ReactionDict): the legacy `user` object
 * carried an email and name to everyone holding the message, including guests who may not access them.
 */
function reactionsOf(db: Db, ids: number[]): Map<number, Record<string, unknown>[]> {
  const out = new Map<number, Record<string, unknown>[]>();
  if (ids.length === 0) return out;
  const rows = stmt(
    db,
    `SELECT r.message_id, r.user_id, r.emoji_name, r.emoji_code, r.reaction_type
     FROM reaction r WHERE r.message_id IN (SELECT value FROM json_each(?))
     ORDER BY r.id`,
  ).all(JSON.stringify(ids)) as { message_id: number; user_id: number; emoji_name: string; emoji_code: string; reaction_type: string }[];
  for (const r of rows) {
    const list = out.get(r.message_id) ?? [];
    list.push({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: r.user_id });
    out.set(r.message_id, list);
  }
  return out;
}

/** Loads message rows by id (any order in, ascending id out). */
export function loadMessages(db: Db, ids: number[]): MessageRow[] {
  if (ids.length === 0) return [];
  return stmt(db, 'SELECT * FROM message WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id').all(JSON.stringify(ids)) as MessageRow[];
}

type EditHistoryEntry = Record<string, unknown> & { timestamp: number; topic?: string; prev_topic?: string };

/** Zulip's topic_resolve_toggled: whether an edit only added or removed the resolved prefix. */
function topicResolveToggled(topic: string, prev: string): boolean {
  const resolved = (t: string) => t.startsWith(RESOLVED_TOPIC_PREFIX);
  if (resolved(prev) && !resolved(topic)) return prev.slice(RESOLVED_TOPIC_PREFIX.length) === topic;
  if (resolved(topic) && !resolved(prev)) {
    if (codePoints(prev) <= MAX_TOPIC_LENGTH - RESOLVED_TOPIC_PREFIX.length) return topic.slice(RESOLVED_TOPIC_PREFIX.length) === prev;
    // Resolving may have truncated the topic ("...").
    if (topic.endsWith('...')) return prev.startsWith(topic.slice(RESOLVED_TOPIC_PREFIX.length, -3));
  }
  return false;
}

/**
 * Zulip's visible_edit_history_for_message (for the message objects and GET /messages/{id}/history):
 * with the "moves" policy only topic and channel moves are shown; an entry that also changed the
 * content keeps its move without the content keys, and one that only changed the content is left out.
 */
export function visibleEditHistory<T extends Record<string, unknown>>(policy: EditHistoryVisibilityPolicy, entries: T[]): T[] {
  if (policy !== 'moves') return entries;
  const visible: T[] = [];
  for (const item of entries) {
    if (!('prev_content' in item)) visible.push(item);
    else if ('prev_topic' in item) {
      const { prev_content: _c, prev_rendered_content: _r, content_html_diff: _d, ...move } = item;
      visible.push(move as unknown as T);
    }
  }
  return visible;
}

/**
 * Sets the edit-history keys of a message object, as Zulip's messages_for_ids: last_edit_timestamp and
 * last_moved_timestamp recomputed from the history (resolving a topic is not a move), and the
 * history itself as the organization's message_edit_history_visibility_policy shows it: all of it,
 * only moves (content dropped from edits that also moved), or none.
 */
function setEditHistoryFields(out: Record<string, unknown>, history: EditHistoryEntry[], realm: RealmRow | null, emptyTopicName: string | null): void {
  let lastMoved = 0;
  let lastEdit = 0;
  for (const item of history) {
    if ('prev_stream' in item) lastMoved = Math.max(lastMoved, item.timestamp);
    else if (item.prev_topic !== undefined && !topicResolveToggled(item.topic ?? '', item.prev_topic)) lastMoved = Math.max(lastMoved, item.timestamp);
    if ('prev_content' in item) lastEdit = Math.max(lastEdit, item.timestamp);
  }
  if (lastMoved !== 0) out.last_moved_timestamp = lastMoved;
  if (lastEdit !== 0) out.last_edit_timestamp = lastEdit;
  else delete out.last_edit_timestamp;
  const policy = realm ? realmEditHistoryPolicy(realm) : 'all';
  if (policy === 'none') return;
  const visible = visibleEditHistory(policy, history);
  if (emptyTopicName !== null) {
    for (const item of visible) {
      if (item.topic === '') item.topic = emptyTopicName;
      if (item.prev_topic === '') item.prev_topic = emptyTopicName;
    }
  }
  out.edit_history = visible;
}

/** Message objects without per-user flags (events add flags per recipient). */
export function formatMessages(db: Db, rows: MessageRow[], opts: FormatOptions): Record<string, unknown>[] {
  const reactions = opts.fresh ? new Map<number, Record<string, unknown>[]>() : reactionsOf(db, rows.map((r) => r.id));
  let submessages: Map<number, Submessage[]>;
  if (opts.fresh) {
    submessages = new Map();
    for (const sm of opts.freshSubmessages ?? []) submessages.set(sm.message_id, [...(submessages.get(sm.message_id) ?? []), sm]);
  } else {
    submessages = submessagesOf(db, rows.map((r) => r.id));
  }
  const senders = new Map<number, SenderInfo>();
  const streamNames = new Map<number, string>();
  const recipients = new Map<number, ReturnType<typeof directRecipients>>();
  const realmStr = new Map<number, string>();
  const linkers = new Map<number, (topic: string) => readonly TopicLink[]>();
  // Zulip's topic_links, looked up (realmTopicLinks keeps each topic's, computed when it was written).
  const topicLinksFor = (realmId: number, topic: string) => {
    let linker = linkers.get(realmId);
    if (!linker) {
      linker = realmTopicLinks(db, realmId);
      linkers.set(realmId, linker);
    }
    return linker(topic);
  };
  return rows.map((m) => {
    let sender = senders.get(m.sender_id);
    if (!sender) {
      sender = stmt(db, 'SELECT id, realm_id, email, full_name, avatar_source, avatar_version, avatar_file, delivery_email, email_address_visibility, bot_type FROM user WHERE id = ?').get(
        m.sender_id,
      ) as SenderInfo;
      senders.set(m.sender_id, sender);
    }
    let realm = realmStr.get(m.realm_id);
    if (realm === undefined) {
      realm = (stmt(db, 'SELECT string_id FROM realm WHERE id = ?').get(m.realm_id) as { string_id: string }).string_id;
      realmStr.set(m.realm_id, realm);
    }
    const out: Record<string, unknown> = {
      id: m.id,
      sender_id: m.sender_id,
      content: opts.applyMarkdown ? m.rendered_content : m.content,
      recipient_id: m.stream_id !== null ? m.stream_id : DIRECT_RECIPIENT_BASE + (m.direct_group_id as number),
      timestamp: m.date_sent,
      client: m.client,
      subject: m.topic,
      topic_links: m.stream_id !== null && m.topic !== '' ? topicLinksFor(m.realm_id, m.topic) : [],
      is_me_message: /^\/me( |$)/.test(m.content),
      reactions: reactions.get(m.id) ?? [],
      submessages: submessages.get(m.id) ?? [],
      sender_full_name: sender.full_name,
      sender_email: sender.email,
      sender_realm_str: realm,
      // A sender who hides their address gets the URL sent even to client_gravatar clients (Zulip's finalize_payload).
      avatar_url:
        opts.clientGravatar && mayClientComputeAvatar(sender) ? null : avatarUrl(sender),
      content_type: opts.applyMarkdown ? 'text/html' : 'text/x-markdown',
    };
    if (m.stream_id !== null) {
      let name = streamNames.get(m.stream_id);
      if (name === undefined) {
        name = (stmt(db, 'SELECT name FROM stream WHERE id = ?').get(m.stream_id) as { name: string }).name;
        streamNames.set(m.stream_id, name);
      }
      out.type = 'stream';
      out.stream_id = m.stream_id;
      out.display_recipient = name;
    } else {
      let list = recipients.get(m.direct_group_id as number);
      if (!list) {
        list = directRecipients(db, m.direct_group_id as number);
        recipients.set(m.direct_group_id as number, list);
      }
      out.type = 'private';
      out.display_recipient = list;
    }
    const access = opts.senderAccess;
    if (access && access.accessible !== null && !access.accessible.has(m.sender_id)) {
      out.sender_full_name = UNKNOWN_USER_NAME;
      out.sender_email = `user${m.sender_id}@${access.domain}`;
      out.avatar_url = UNKNOWN_USER_AVATAR_URL;
    }
    // Recomputed from the edit history when there is one (setEditHistoryFields), as Zulip does.
    if (m.last_edit_time !== null) out.last_edit_timestamp = m.last_edit_time;
    const realmRow = getRealmById(db, m.realm_id);
    const emptyTopicName = opts.allowEmptyTopicName === false ? (realmRow?.empty_topic_display_name ?? 'general chat') : null;
    if (m.edit_history) setEditHistoryFields(out, JSON.parse(m.edit_history) as EditHistoryEntry[], realmRow, emptyTopicName);
    if (emptyTopicName !== null && m.stream_id !== null && m.topic === '') out.subject = emptyTopicName;
    return out;
  });
}

/** Ids of the users who have the message, written or implied (who hear about edits, reactions, deletions). */
export function messageRecipientIds(db: Db, messageId: number): number[] {
  return messageUserRows(db, messageId).map((r) => r.user_id);
}

/** Whether a channel's topic has any message (Zulip's messages_for_topic(...).exists()). */
export function topicHasMessages(db: Db, streamId: number, topic: string): boolean {
  return stmt(db, 'SELECT 1 FROM message WHERE stream_id = ? AND topic_key = ? LIMIT 1').get(streamId, topicKey(topic)) !== undefined;
}

/** Zulip's participants_for_topic: who sent or reacted to a message of a channel's topic. */
export function topicParticipants(db: Db, streamId: number, topic: string): Set<number> {
  const rows = stmt(
    db,
    `SELECT sender_id AS id FROM message WHERE stream_id = @stream AND topic_key = @key
     UNION SELECT r.user_id FROM reaction r JOIN message m ON m.id = r.message_id WHERE m.stream_id = @stream AND m.topic_key = @key`,
  ).all({ stream: streamId, key: topicKey(topic) }) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

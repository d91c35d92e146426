// Bulk read marking (all, channel, topic), a message's edit history and its read receipts.
import type { App } from '../app';
import type { ParleyEvent } from '../events/bus';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { FLAG, topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { realmEditHistoryPolicy, realmExtraSetting, type EditHistoryVisibilityPolicy } from '../lib/realm-settings';
import { accessStreamById, canAccessStreamContent, type StreamRow } from '../lib/streams';
import type { UserRow } from '../lib/users';
import { visibleEditHistory } from '../lib/messages';
import { queueRemovePush } from '../push/remove';
import { accessMessage } from './messages';
import { materializeUserMessages } from '../lib/user-messages';

/** Zulip marks read in batches of this many rows, newest first. */
export const MARK_READ_BATCH = 2000;
/** Zulip's view gives up after this long and answers `complete: false`; the client repeats. */
const MARK_ALL_TIMEOUT_MS = 50_000;

function readEvent(messages: number[], all: boolean): ParleyEvent {
  return { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages, all };
}

/** Sets the read flag on these rows of the user. */
function markRowsRead(app: App, userId: number, ids: number[]): void {
  stmt(app.db, `UPDATE usermessage SET flags = flags | ${FLAG.read} WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))`).run(
    userId,
    JSON.stringify(ids),
  );
}

/**
 * POST /mark_all_as_read: every unread row of the user, in batches, newest first. One event with
 * `all: true` and no ids (as Zulip: the client reloads its unread state).
 */
export function doMarkAllAsRead(app: App, user: UserRow, timeoutMs = MARK_ALL_TIMEOUT_MS): { complete: boolean; count: number } {
  return app.batch.write(() => {
    materializeUserMessages(app.db, user.id);
    const started = Date.now();
    const next = stmt(
      app.db,
      `SELECT message_id FROM usermessage INDEXED BY usermessage_unread WHERE user_id = ? AND (flags & ${FLAG.read}) = 0 ORDER BY message_id DESC LIMIT ${MARK_READ_BATCH}`,
    );
    let count = 0;
    let complete = true;
    for (;;) {
      if (Date.now() - started >= timeoutMs) {
        complete = false;
        break;
      }
      const ids = (next.all(user.id) as { message_id: number }[]).map((r) => r.message_id);
      if (ids.length) markRowsRead(app, user.id, ids);
      count += ids.length;
      if (ids.length < MARK_READ_BATCH) break;
    }
    // zulip-compat: Zulip sends the event only when the work finished (a timed-out request sends none).
    if (complete) app.batch.onCommit(() => app.events.send(readEvent([], true), [user.id]));
    if (count > 0) app.batch.onCommit(() => queueRemovePush(app, user.id, null));
    return { complete, count };
  });
}

/** Zulip's access_stream_by_id (content access required): "Invalid channel ID" otherwise. */
function accessStreamContent(app: App, user: UserRow, streamId: number): StreamRow {
  const s = accessStreamById(app.db, user, streamId);
  if (!canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  return s;
}

/** The name a client sent for a topic: the organization's empty-topic display name means "". */
export function topicFromClient(realm: RealmRow, topic: string): string {
  return topic === realm.empty_topic_display_name ? '' : topic;
}

/**
 * POST /mark_stream_as_read and /mark_topic_as_read: the user's unread rows in the channel (or one
 * topic of it); the event lists the ids. A topic the user has no message in is "No such topic".
 */
export function doMarkChannelAsRead(app: App, user: UserRow, streamId: number, topic?: string): { count: number } {
  return app.batch.write(() => {
    const s = accessStreamContent(app, user, streamId);
    materializeUserMessages(app.db, user.id);
    let topicName: string | undefined;
    if (topic !== undefined) {
      topicName = topicFromClient(getRealmById(app.db, user.realm_id) as RealmRow, topic);
      const exists = stmt(
        app.db,
        `SELECT 1 FROM usermessage um JOIN message m ON m.id = um.message_id
         WHERE um.user_id = ? AND m.stream_id = ? AND m.topic_key = ? LIMIT 1`,
      ).get(user.id, s.id, topicKey(topicName));
      if (!exists) throw errors.badRequest("No such topic '{topic}'", { topic: topicName });
    }
    const ids = (
      stmt(
        app.db,
        `SELECT um.message_id FROM usermessage um INDEXED BY usermessage_unread JOIN message m ON m.id = um.message_id
         WHERE um.user_id = ? AND (um.flags & ${FLAG.read}) = 0 AND m.stream_id = ? AND (? IS NULL OR m.topic_key = ?)
         ORDER BY um.message_id`,
      ).all(user.id, s.id, topicName === undefined ? null : topicKey(topicName), topicName === undefined ? null : topicKey(topicName)) as {
        message_id: number;
      }[]
    ).map((r) => r.message_id);
    if (ids.length === 0) return { count: 0 };
    for (let i = 0; i < ids.length; i += MARK_READ_BATCH) markRowsRead(app, user.id, ids.slice(i, i + MARK_READ_BATCH));
    app.batch.onCommit(() => app.events.send(readEvent(ids, false), [user.id]));
    app.batch.onCommit(() => queueRemovePush(app, user.id, ids));
    return { count: ids.length };
  });
}

// ---- edit history ------------------------------------------------------------------------------------

interface StoredEdit {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

/**
 * GET /messages/{id}/history: Zulip's fill_edit_history_entries. Each snapshot holds the topic and
 * content right after its edit plus what changed; the original version comes first.
 */
export function messageEditHistory(app: App, user: UserRow, messageId: number, allowEmptyTopicName: boolean): Record<string, unknown>[] {
  const realm = getRealmById(app.db, user.realm_id) as RealmRow;
  const policy = realmEditHistoryPolicy(realm);
  if (policy === 'none') throw errors.badRequest('Message edit history is disabled in this organization');
  const m = accessMessage(app, user, messageId);
  const stored = m.edit_history ? (JSON.parse(m.edit_history) as StoredEdit[]) : [];
  const showTopic = (t: string) => (t === '' && !allowEmptyTopicName && m.stream_id !== null ? realm.empty_topic_display_name : t);
  let content = m.content;
  let rendered = m.rendered_content;
  let topic = m.topic;
  const out: Record<string, unknown>[] = [];
  for (const e of stored) {
    const entry: Record<string, unknown> = { content, rendered_content: rendered, timestamp: e.timestamp, topic: showTopic(topic), user_id: e.user_id ?? null };
    if (e.prev_topic !== undefined) {
      topic = e.prev_topic;
      entry.prev_topic = showTopic(topic);
    }
    if (e.prev_content !== undefined) {
      entry.prev_content = e.prev_content;
      entry.prev_rendered_content = e.prev_rendered_content ?? '';
      entry.content_html_diff = htmlDiff(e.prev_rendered_content ?? '', rendered);
      content = e.prev_content;
      rendered = e.prev_rendered_content ?? '';
    }
    if (e.prev_stream !== undefined) {
      entry.prev_stream = e.prev_stream;
      entry.stream = e.stream;
    }
    out.push(entry);
  }
  out.push({ content, rendered_content: rendered, timestamp: m.date_sent, topic: showTopic(topic), user_id: m.sender_id });
  return visibleEditHistory(policy, out).reverse();
}

// Beyond this many tokens per side the diff marks the whole text as replaced (the LCS table is n×m).
const DIFF_TOKEN_LIMIT = 1500;

/**
 * Zulip's highlight_html_differences, simplified: a word-level diff of the text between tags; words
 * only in the new version are wrapped in highlight_text_inserted, words only in the old one in
 * highlight_text_deleted. Tags are kept from the new version.
 */
export function htmlDiff(before: string, after: string): string {
  const tokenize = (html: string) => html.match(/<[^>]*>|[^<\s]+|\s+/g) ?? [];
  const a = tokenize(before);
  const b = tokenize(after);
  const isTag = (t: string) => t.startsWith('<');
  const ins = (t: string) => (isTag(t) || /^\s+$/.test(t) ? t : `<span class="highlight_text_inserted">${t}</span>`);
  // Deleted tags go (the new markup wins); deleted whitespace stays, so words do not run together.
  const del = (t: string) => (isTag(t) ? '' : /^\s+$/.test(t) ? t : `<span class="highlight_text_deleted">${t}</span>`);
  if (a.length > DIFF_TOKEN_LIMIT || b.length > DIFF_TOKEN_LIMIT) {
    return a.map(del).join('') + b.map(ins).join('');
  }
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs: Uint16Array[] = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  let out = '';
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out += b[j];
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out += del(a[i++]);
    else out += ins(b[j++]);
  }
  while (i < a.length) out += del(a[i++]);
  while (j < b.length) out += ins(b[j++]);
  return out;
}

// ---- read receipts -----------------------------------------------------------------------------------

/**
 * GET /messages/{id}/read_receipts, Zulip's rules: active users with the read flag who send read
 * receipts, never the sender, neither users who muted the requester nor users the requester muted.
 * Bots count; the historical flag is not filtered.
 */
export function readReceipts(app: App, user: UserRow, messageId: number): number[] {
  const m = accessMessage(app, user, messageId);
  // As Zulip: the message is checked first, then the organization setting.
  if (!realmExtraSetting(getRealmById(app.db, user.realm_id), 'enable_read_receipts')) {
    throw errors.badRequest('Read receipts are disabled in this organization.');
  }
  // Only written rows can have the read flag (implied rows are unread).
  return (
    stmt(
      app.db,
      `SELECT um.user_id FROM usermessage um JOIN user u ON u.id = um.user_id
       WHERE um.message_id = ? AND (um.flags & ${FLAG.read}) <> 0 AND u.is_active = 1 AND u.send_read_receipts = 1 AND um.user_id <> ?
         AND NOT EXISTS (SELECT 1 FROM muted_user mu WHERE mu.user_id = um.user_id AND mu.muted_user_id = ?)
         AND NOT EXISTS (SELECT 1 FROM muted_user mu WHERE mu.user_id = ? AND mu.muted_user_id = um.user_id)
       ORDER BY um.user_id`,
    ).all(m.id, m.sender_id, user.id, user.id) as { user_id: number }[]
  ).map((r) => r.user_id);
}

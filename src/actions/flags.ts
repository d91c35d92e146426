// Message flags set by the user (read, starred, collapsed): POST /messages/flags and the pieces
// POST /messages/flags/narrow shares (src/actions/flags-narrow.ts), with their events.
import type { App } from '../app';
import type { ParleyEvent } from '../events/bus';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { FLAG, MENTION_FLAGS, messageVisibleTo, unreadDetails } from '../lib/narrow';
import { materializeUserMessages } from '../lib/user-messages';
import type { UserRow } from '../lib/users';
import { queueRemovePush } from '../push/remove';

const EDITABLE_FLAGS: Record<string, number> = { read: FLAG.read, starred: FLAG.starred, collapsed: FLAG.collapsed };
const NON_EDITABLE = ['has_alert_word', 'mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'group_mentioned', 'historical', 'force_expand', 'force_collapse', 'wildcard_mentioned'];

/** The bit of an editable flag, or Zulip's error for an unknown or read-only one. */
export function editableFlag(flag: string): number {
  if (Object.hasOwn(EDITABLE_FLAGS, flag)) return EDITABLE_FLAGS[flag];
  if (NON_EDITABLE.includes(flag)) throw errors.badRequest("Flag not editable: '{flag}'", { flag });
  throw errors.badRequest("Invalid flag: '{flag}'", { flag });
}

/** The flag operation, checked after the flag as Zulip's do_update_message_flags does. */
export function flagOperation(op: string): 'add' | 'remove' {
  if (op !== 'add' && op !== 'remove') throw errors.badRequest("Invalid message flag operation: '{operation}'", { operation: op });
  return op;
}

// Zulip's DEFAULT_HISTORICAL_FLAGS: what a message the user has no row for counts as.
const DEFAULT_HISTORICAL_FLAGS = FLAG.read | FLAG.historical;

/**
 * Sets or clears a flag on the given messages, as Zulip's do_update_message_flags: a message without a
 * row counts as read and historical, and ids whose flag already has the wanted value are dropped first.
 * Only a change to a message without a row (starring it, marking it unread) checks that the user can
 * read it ("Invalid message(s)") and writes its historical row: marking read never creates rows.
 * Returns the ids whose flag changed.
 */
function applyFlag(app: App, user: UserRow, ids: number[], flag: string, op: 'add' | 'remove'): number[] {
  const bit = editableFlag(flag);
  const target = op === 'add' ? bit : 0;
  // The user's rows are written out first (implied ones included), so that one statement reads the
  // flags of every id and one updates them: up to 5000 ids, a few statements per id took ~50 ms.
  materializeUserMessages(app.db, user.id);
  const unique = [...new Set(ids)];
  const rows = stmt(app.db, 'SELECT message_id, flags FROM usermessage WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))').all(
    user.id,
    JSON.stringify(unique),
  ) as { message_id: number; flags: number }[];
  const have = new Map(rows.map((r) => [r.message_id, r.flags]));
  const current = new Map(unique.map((id) => [id, have.get(id) ?? null]));
  const changed = [...current].filter(([, flags]) => ((flags ?? DEFAULT_HISTORICAL_FLAGS) & bit) !== target).map(([id]) => id);
  const historical = changed.filter((id) => current.get(id) === null);
  if (historical.some((id) => !messageVisibleTo(app.db, user, id))) throw errors.badRequest('Invalid message(s)');
  if (changed.length === 0) return changed;
  const insert = stmt(app.db, 'INSERT INTO usermessage (user_id, message_id, flags) VALUES (?, ?, ?)');
  for (const id of historical) insert.run(user.id, id, (DEFAULT_HISTORICAL_FLAGS & ~bit) | target);
  const withRows = changed.filter((id) => current.get(id) !== null);
  stmt(app.db, 'UPDATE usermessage SET flags = (flags & ~?) | ? WHERE user_id = ? AND message_id IN (SELECT value FROM json_each(?))').run(
    bit,
    target,
    user.id,
    JSON.stringify(withRows),
  );
  return changed;
}

/** The update_message_flags event for one user. */
function flagsEvent(app: App, user: UserRow, ids: number[], flag: string, op: 'add' | 'remove'): ParleyEvent {
  const event: ParleyEvent = { type: 'update_message_flags', op, operation: op, flag, messages: ids, all: false };
  if (flag === 'read' && op === 'remove') {
    const details: Record<string, unknown> = {};
    // One statement for all the messages (the rows are written by now: applyFlag materialised them).
    const others = new Map<number, number[]>();
    const byId = new Map(unreadDetails(app.db, user.id, user.realm_id, ids).map((m) => [m.id, m]));
    for (const id of ids) {
      const m = byId.get(id);
      if (!m) continue;
      const d: Record<string, unknown> = {};
      if (m.stream_id !== null) {
        d.type = 'stream';
        d.stream_id = m.stream_id;
        d.topic = m.topic;
        // As Zulip's get_raw_unread_data (is_row_muted): neither a muted topic nor in a muted channel
        // (unless the topic is unmuted or followed).
        d.unmuted_stream_msg = m.muted !== 1;
      } else {
        d.type = 'private';
        const group = m.direct_group_id as number;
        if (!others.has(group)) {
          const rows = stmt(app.db, 'SELECT user_id FROM direct_group_member WHERE group_id = ? AND user_id <> ? ORDER BY user_id').all(group, user.id) as { user_id: number }[];
          others.set(group, rows.map((r) => r.user_id));
        }
        d.user_ids = others.get(group);
      }
      if ((m.flags ?? 0) & MENTION_FLAGS) d.mentioned = true;
      details[m.id] = d;
    }
    event.message_details = details;
  }
  return event;
}

/**
 * Zulip's invariant: unread channel messages are in channels the user is subscribed to. Splits ids into
 * those that may be marked unread and the (sorted) channels whose messages were skipped.
 */
function skipUnsubscribedForUnread(app: App, user: UserRow, ids: number[]): { keep: number[]; ignoredChannels: number[] } {
  const skipped = new Set<number>();
  const keep: number[] = [];
  const rows = stmt(
    app.db,
    `SELECT m.id, m.stream_id, (SELECT active FROM subscription s WHERE s.user_id = ? AND s.stream_id = m.stream_id) AS active
     FROM message m WHERE m.realm_id = ? AND m.id IN (SELECT value FROM json_each(?))`,
  ).all(user.id, user.realm_id, JSON.stringify(ids)) as { id: number; stream_id: number | null; active: number | null }[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of ids) {
    const m = byId.get(id);
    if (m && m.stream_id !== null && m.active !== 1) skipped.add(m.stream_id);
    else keep.push(id);
  }
  return { keep, ignoredChannels: [...skipped].sort((a, b) => a - b) };
}

/**
 * Zulip's do_update_message_flags, for both endpoints: marking unread skips channels the user left
 * (their ids come back), the flag is applied, and after the commit the event goes out (even when
 * nothing changed) and read messages withdraw their push notifications.
 */
export function updateFlags(app: App, user: UserRow, ids: number[], flag: string, op: 'add' | 'remove'): { changed: number[]; ignoredChannels?: number[] } {
  const markUnread = flag === 'read' && op === 'remove';
  const { keep, ignoredChannels } = markUnread ? skipUnsubscribedForUnread(app, user, ids) : { keep: ids, ignoredChannels: [] };
  const changed = applyFlag(app, user, keep, flag, op);
  app.batch.onCommit(() => app.events.send(flagsEvent(app, user, changed, flag, op), [user.id]));
  if (flag === 'read' && op === 'add') app.batch.onCommit(() => queueRemovePush(app, user.id, changed));
  return markUnread ? { changed, ignoredChannels } : { changed };
}

/** POST /messages/flags: the changed ids, and for read/remove the channels skipped (see above). */
export function doUpdateFlags(app: App, user: UserRow, ids: number[], flag: string, operation: string): { changed: number[]; ignoredChannels?: number[] } {
  return app.batch.write(() => {
    editableFlag(flag);
    return updateFlags(app, user, ids, flag, flagOperation(operation));
  });
}


// GET /messages and GET /messages/matches_narrow: anchors, windows around them, and search highlights.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { flagNames, formatMessages, loadMessages, type MessageRow } from './messages';
import { senderAccessFor } from './access';
import { escapeHtml } from './html';
import { fromClause, idColumn, narrowToSql, FLAG, type NarrowSql, type NarrowTerm } from './narrow';
import { stem, TOKEN } from './search';
import type { UserRow } from './users';

export type Anchor = number | 'newest' | 'oldest' | 'first_unread';

// Zulip's LARGER_THAN_MAX_MESSAGE_ID: the resolved anchor of "newest".
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/** Parses an anchor parameter: newest, oldest, first_unread, or a message id (negative reads as 0). */
export function parseAnchor(raw: string): Anchor {
  if (raw === 'newest' || raw === 'oldest' || raw === 'first_unread') return raw;
  if (!/^-?[0-9]+$/.test(raw.trim())) throw errors.badRequest('Invalid anchor');
  const n = Number(raw.trim());
  return Math.min(Math.max(n, 0), LARGER_THAN_MAX_MESSAGE_ID);
}

function whereOf(n: NarrowSql): string {
  return n.where.join(' AND ');
}

/**
 * The query for the oldest unread message in the narrow that is not muted (as Zulip's
 * find_first_unread_anchor); binds the user id, the narrow's params and its unmuted params
 * (firstUnreadParams). A search walks the full-text matches oldest first and stops at the first
 * unread one (min() would read every match first); otherwise the user's unread rows are walked oldest
 * first, along the partial index the condition is written as (schema.sql, usermessage_unread).
 */
export function firstUnreadSql(n: NarrowSql): string {
  const userBase: NarrowSql =
    n.order === 'message_fts.rowid' ? { ...n, base: 'user' } : { ...n, base: 'user', order: 'um.message_id', userIndex: 'usermessage_unread' };
  return `SELECT m.id AS id FROM ${fromClause(userBase)} WHERE ${whereOf(n)} AND (um.flags & ${FLAG.read}) = 0 AND ${n.unmuted.cond} ORDER BY ${idColumn(userBase)} ASC LIMIT 1`;
}

/** What firstUnreadSql binds. */
export const firstUnreadParams = (n: NarrowSql, userId: number): unknown[] => [userId, ...n.params, ...n.unmuted.params];

/** The oldest unread message in the narrow, or null. */
function firstUnread(app: App, user: UserRow, n: NarrowSql): number | null {
  const row = stmt(app.db, firstUnreadSql(n)).get(...firstUnreadParams(n, user.id)) as { id: number | null } | undefined;
  return row?.id ?? null;
}

/**
 * The query for a window's side: ids and flag bits of the messages before the anchor (newest first)
 * or after it (oldest first, the anchor too when `inclusive`); binds the user id, the narrow's params,
 * the anchor and the limit. The SQL text depends only on the narrow's shape, so the statement cache
 * serves it.
 */
export function windowSql(n: NarrowSql, side: 'before' | 'after', inclusive = false): string {
  const idCol = idColumn(n);
  const cmp = side === 'before' ? '<' : inclusive ? '>=' : '>';
  return `SELECT m.id AS id, um.flags AS flags FROM ${fromClause(n)} WHERE ${whereOf(n)} AND ${idCol} ${cmp} ? ORDER BY ${idCol} ${side === 'before' ? 'DESC' : 'ASC'} LIMIT ?`;
}

export function resolveAnchor(app: App, user: UserRow, n: NarrowSql, anchor: Anchor): number {
  if (anchor === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (anchor === 'oldest') return 0;
  if (anchor === 'first_unread') return firstUnread(app, user, n) ?? LARGER_THAN_MAX_MESSAGE_ID;
  return anchor;
}

export interface WindowResult {
  rows: { id: number; flags: number | null }[];
  anchor: number;
  foundAnchor: boolean;
  foundOldest: boolean;
  foundNewest: boolean;
}

/** The ids (and the user's flag bits) of up to numBefore + anchor + numAfter messages in the narrow. */
export function messageWindow(
  app: App,
  user: UserRow,
  n: NarrowSql,
  anchorIn: Anchor,
  includeAnchor: boolean,
  numBefore: number,
  numAfter: number,
): WindowResult {
  const anchor = resolveAnchor(app, user, n, anchorIn);
  const before =
    numBefore > 0 ? (stmt(app.db, windowSql(n, 'before')).all(user.id, ...n.params, anchor, numBefore) as { id: number; flags: number | null }[]) : [];
  // Nothing lies after "newest": skip the query. (It is not free: FTS5 honours a lower rowid bound by
  // walking each term's document list up to it, ~50 ms for a word in every message.)
  const afterLimit = anchor >= LARGER_THAN_MAX_MESSAGE_ID ? 0 : numAfter + (includeAnchor ? 1 : 0);
  const after =
    afterLimit > 0
      ? (stmt(app.db, windowSql(n, 'after', includeAnchor)).all(user.id, ...n.params, anchor, afterLimit) as { id: number; flags: number | null }[])
      : [];
  // As Zulip's post_process_limited_query: the extra row fetched for the anchor slot is dropped when
  // the anchor itself is not in the narrow, so at most numAfter rows follow it.
  const anchorRows = includeAnchor ? after.filter((r) => r.id === anchor) : [];
  const afterRows = after.filter((r) => r.id > anchor).slice(0, numAfter);
  return {
    rows: [...before.reverse(), ...anchorRows, ...afterRows],
    anchor,
    foundAnchor: anchorRows.length === 1,
    foundOldest: anchor === 0 || before.length < numBefore,
    foundNewest: anchor >= LARGER_THAN_MAX_MESSAGE_ID || afterRows.length < numAfter,
  };
}

/**
 * Wraps Zulip's highlight span around each word of the HTML's text whose stem is one of `stems` (as
 * ts_headline marks the words a search matched: "running" for "runs", never a stop word). Tags and
 * character references (&lt;, &#39;) are never looked into.
 */
export function highlight(html: string, stems: string[]): string {
  if (stems.length === 0) return html;
  let matches = matchCache.get(stems);
  if (!matches) matchCache.set(stems, (matches = { wanted: new Set(stems), seen: new Map() }));
  const { wanted, seen } = matches;
  const isMatch = (w: string) => {
    let hit = seen.get(w);
    if (hit === undefined) seen.set(w, (hit = wanted.has(stem(w))));
    return hit;
  };
  return html.replace(MARKUP_OR_TOKEN, (w, markup: string | undefined) => (markup === undefined && isMatch(w) ? `<span class="highlight">${w}</span>` : w));
}

/** A tag or a character reference (left as it is), else a word of text (TOKEN). */
const MARKUP_OR_TOKEN = new RegExp(`(<[^>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);)|${TOKEN.source}`, 'gu');

/**
 * Whether each word seen so far matched, per list of stems: a window highlights all its messages with
 * one list (NarrowSql.searchTerms), so each distinct word is stemmed once (a few µs each).
 */
const matchCache = new WeakMap<string[], { wanted: Set<string>; seen: Map<string, boolean> }>();

export interface FetchOptions {
  anchor?: Anchor;
  includeAnchor?: boolean;
  numBefore?: number;
  numAfter?: number;
  messageIds?: number[];
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** Whether the client takes "" as a topic name; otherwise it reads the realm's empty_topic_display_name. */
  allowEmptyTopicName: boolean;
}

/** GET /messages. */
export function fetchMessages(app: App, user: UserRow, terms: NarrowTerm[], opts: FetchOptions): Record<string, unknown> {
  const n = narrowToSql(app.db, user, terms);
  let rows: { id: number; flags: number | null }[];
  let extra: Record<string, unknown>;
  if (opts.messageIds) {
    // Only the user's own rows, unless the narrow names a channel whose history they can read (the
    // 'channel' base), as Zulip's ok_to_include_history.
    rows = stmt(app.db, `SELECT m.id AS id, um.flags AS flags FROM ${fromClause(n)} WHERE ${whereOf(n)} AND m.id IN (SELECT value FROM json_each(?)) ORDER BY m.id`)
      .all(user.id, ...n.params, JSON.stringify(opts.messageIds)) as { id: number; flags: number | null }[];
    // zulip-compat: no anchor; the found_* keys are false.
    extra = { found_anchor: false, found_oldest: false, found_newest: false, history_limited: false };
  } else {
    const w = messageWindow(app, user, n, opts.anchor ?? 'newest', opts.includeAnchor ?? true, opts.numBefore ?? 0, opts.numAfter ?? 0);
    rows = w.rows;
    extra = { anchor: w.anchor, found_anchor: w.foundAnchor, found_oldest: w.foundOldest, found_newest: w.foundNewest, history_limited: false };
  }
  const loaded = new Map(loadMessages(app.db, rows.map((r) => r.id)).map((m) => [m.id, m]));
  const ordered = rows.map((r) => loaded.get(r.id)).filter((m): m is MessageRow => m !== undefined);
  const formatted = formatMessages(app.db, ordered, {
    applyMarkdown: opts.applyMarkdown,
    clientGravatar: opts.clientGravatar,
    allowEmptyTopicName: opts.allowEmptyTopicName,
    senderAccess: senderAccessFor(app, user),
  });
  formatted.forEach((msg, i) => {
    msg.flags = flagNames(rows[i].flags);
    if (n.searchTerms.length) {
      msg.match_content = highlight(ordered[i].rendered_content, n.searchTerms);
      msg.match_subject = highlight(escapeHtml(ordered[i].topic), n.searchTerms);
    }
  });
  return { messages: formatted, ...extra };
}

/** GET /messages/matches_narrow: which of the user's received messages match, with highlights. */
export function matchesNarrow(app: App, user: UserRow, ids: number[], terms: NarrowTerm[]): Record<string, unknown> {
  const n: NarrowSql = { ...narrowToSql(app.db, user, terms), base: 'user' };
  const rows = stmt(app.db, `SELECT m.id AS id FROM ${fromClause(n)} WHERE ${whereOf(n)} AND m.id IN (SELECT value FROM json_each(?)) ORDER BY m.id`)
    .all(user.id, ...n.params, JSON.stringify(ids)) as { id: number }[];
  const out: Record<string, unknown> = {};
  for (const m of loadMessages(app.db, rows.map((r) => r.id))) {
    out[m.id] = { match_content: highlight(m.rendered_content, n.searchTerms), match_subject: highlight(escapeHtml(m.topic), n.searchTerms) };
  }
  return out;
}

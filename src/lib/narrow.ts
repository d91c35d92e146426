// Narrows: parsing Zulip's two forms ({operator, operand, negated} objects and legacy [operator,
// operand] pairs) and translating them to SQL over indexed columns, never filtering in JavaScript.
// The query has two shapes: the user's own message rows (usermessage ⋈ message), or, when the narrow
// names one channel whose history the user may read, the channel's messages with the user's rows
// LEFT JOINed (messages they did not receive show as "historical").
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { checkListLength, MAX_JSON_LIST_ITEMS } from '../http/params';
import { getRealmById } from './realm';
import { canAccessStreamHistory, findStreamById, findStreamByName, type StreamRow } from './streams';
import { findUserByEmail, findUserById, isGuest, type UserRow } from './users';
import { materializeUserMessages, userMessageFlags } from './user-messages';
import { ftsQuery, parseSearch, stem } from './search';

export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

export const FLAG = {
  read: 1,
  starred: 2,
  collapsed: 4,
  mentioned: 8,
  stream_wildcard_mentioned: 16,
  topic_wildcard_mentioned: 32,
  group_mentioned: 64,
  has_alert_word: 128,
  historical: 256,
  is_private: 512,
  active_mobile_push_notification: 1024,
} as const;
export const MENTION_FLAGS = FLAG.mentioned | FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned | FLAG.group_mentioned;

/**
 * Zulip's muting (is:muted, and what in:home leaves out): a muted topic, or a topic of a channel the
 * user is subscribed to and has muted, unless they unmuted or followed the topic. Direct messages are
 * never muted. Binds the user id 3 times.
 */
const MUTED_CONDITION = `coalesce(
  (m.stream_id IN (SELECT stream_id FROM subscription WHERE user_id = ? AND active = 1 AND is_muted = 1)
    AND NOT EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy IN (2, 3)))
  OR EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 1), 0)`;

const badNarrow = (desc: string) => new JsonableError('Invalid narrow operator: {desc}', { code: 'BAD_NARROW', vars: { desc } });

const ALIASES: Record<string, string> = {
  stream: 'channel',
  streams: 'channels',
  subject: 'topic',
  'pm-with': 'dm',
  pm_with: 'dm',
  'group-pm-with': 'group-pm-with',
  group_pm_with: 'group-pm-with',
};

// Zulip's NarrowParameter.validate_terms, by the operator as sent (so pm_with, unlike pm-with, takes
// only a string): operands that may be an id, or a list of ids; every other operand is a string.
const ID_OPERANDS = new Set(['channel', 'stream', 'id', 'sender', 'group-pm-with', 'dm-including', 'with', 'mentions']);
const ID_LIST_OPERANDS = new Set(['dm', 'pm-with']);

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** Zulip's operand validators (check_string_or_int and the like): their plain texts, BAD_REQUEST. */
function checkOperand(operator: string, operand: unknown): void {
  const name = { var_name: 'operand' };
  if (ID_OPERANDS.has(operator)) {
    if (typeof operand !== 'string' && !isInt(operand)) throw errors.badRequest('{var_name} is not a string or integer', name);
  } else if (ID_LIST_OPERANDS.has(operator)) {
    if (typeof operand === 'string') return;
    if (!Array.isArray(operand)) throw errors.badRequest('{var_name} is not a string or an integer list', name);
    operand.forEach((x, i) => {
      if (!isInt(x)) throw errors.badRequest('{var_name} is not an integer', { var_name: `operand[${i}]` });
    });
  } else {
    if (typeof operand !== 'string') throw errors.badRequest('{var_name} is not a string', name);
    if (operator === 'search' && operand.trim() === '') throw errors.badRequest('{item} cannot be blank.', { item: 'operand' });
  }
}

/**
 * Most terms in one narrow. Zulip has no limit; each term is a condition in one SQL statement, and
 * SQLite refuses an expression tree deeper than 1000 (a 500 before this bound). Clients build narrows
 * of a few terms; 100 leaves room for any hand-made search.
 */
export const MAX_NARROW_TERMS = 100;

/**
 * Most words and "quoted phrases" the search terms of one narrow may hold (a term's repeats count
 * once, and are searched for once). Zulip has no limit. Every word is ANDed into one full-text query, whose cost in SQLite grows with
 * the square of its words (20,000 took 0.4 s, 300,000 some 300 s, every request waiting), and
 * every phrase is a condition of the statement (past about 1000, SQLite refused it: a 500). A
 * sentence pasted into the search box has a few dozen.
 */
export const MAX_SEARCH_WORDS = 100;

/**
 * Validates a decoded narrow (list of objects or pairs) into terms with canonical operator names.
 * Unknown operators pass: as in Zulip, they are BAD_NARROW when the narrow is built (narrowToSql),
 * after every element's shape and operand type were checked here.
 */
export function parseNarrow(raw: unknown, varName = 'narrow'): NarrowTerm[] {
  if (raw === null || raw === undefined) return [];
  if (!Array.isArray(raw)) throw errors.badRequest('{var_name} is not a list', { var_name: varName });
  checkListLength(raw, varName, MAX_NARROW_TERMS);
  return raw.map((el, i) => {
    const bad = (why: string) => errors.badRequest('Invalid {var_name}[{i}]: Value error, {why}', { var_name: varName, i, why });
    let operator: unknown;
    let operand: unknown;
    let negated = false;
    if (Array.isArray(el)) {
      if (el.length !== 2 || typeof el[0] !== 'string' || typeof el[1] !== 'string') throw bad('element is not a string pair');
      [operator, operand] = el;
    } else if (el !== null && typeof el === 'object') {
      const o = el as Record<string, unknown>;
      // As Zulip's NarrowParameter.convert_term: the operand is looked for first, and null is missing.
      if (o.operand === undefined || o.operand === null) throw bad('operand is missing');
      if (o.operator === undefined || o.operator === null) throw bad('operator is missing');
      operator = o.operator;
      operand = o.operand;
      if (typeof operator !== 'string') throw bad('operator is not a string');
      if ('negated' in o) {
        if (typeof o.negated !== 'boolean') throw bad('negated is not a boolean');
        negated = o.negated;
      }
    } else {
      throw bad('dict or list required');
    }
    checkOperand(operator as string, operand);
    return { operator: Object.hasOwn(ALIASES, operator as string) ? ALIASES[operator as string] : (operator as string), operand, negated };
  });
}

export interface NarrowSql {
  /** 'user': FROM usermessage um JOIN message m; 'channel': FROM message m LEFT JOIN usermessage um. */
  base: 'user' | 'channel';
  where: string[];
  params: unknown[];
  /** Stems of the search words (see stem), for highlighting. */
  searchTerms: string[];
  /**
   * What the first unread anchor leaves out, as Zulip's exclude_muting_conditions: muted messages, or
   * when the narrow names a channel only that channel's muted topics. Its params follow the narrow's.
   */
  unmuted: { cond: string; params: unknown[] };
  /** Whether the narrow has a positive search: the FROM clause starts at message_fts (a MATCH term). */
  fts: boolean;
  /**
   * The column windows order by (and compare the anchor with). All three are the message id, but
   * SQLite reads rows in order, and stops after the window, only along an index on the column named:
   * it does not carry an order across a join's equality, and sorts everything that matches otherwise.
   * - 'message_fts.rowid': the full-text index drives (a search): FTS5 returns the newest matches first
   *   instead of producing every match.
   * - 'um.message_id': the user's rows drive, along usermessage's key or the partial index in
   *   userIndex (the user's whole history, in:home, is:starred, is:unread, ...).
   * - 'm.id': the message indexes drive (a channel, a conversation, a sender).
   */
  order: 'm.id' | 'um.message_id' | 'message_fts.rowid';
  /**
   * The partial index on usermessage that drives a query over the user's rows (INDEXED BY): without
   * statistics SQLite prefers the primary key, which would read every row of the user's to find the
   * few starred or unread ones.
   */
  userIndex?: string;
}

/** The SQL FROM clause for a narrow; `?` is the user's id. */
export function fromClause(n: NarrowSql): string {
  // CROSS JOIN keeps the full-text index the outer loop when it drives (SQLite otherwise may start from
  // the user's rows, reached through the join's equalities, and sort).
  const join = n.order === 'message_fts.rowid' ? 'CROSS JOIN' : 'JOIN';
  const start = n.fts ? `message_fts ${join} message m ON m.id = message_fts.rowid` : 'message m';
  return n.base === 'user'
    ? `${start} ${join} usermessage um${n.userIndex ? ` INDEXED BY ${n.userIndex}` : ''} ON um.message_id = m.id AND um.user_id = ?`
    : `${start} LEFT JOIN usermessage um ON um.message_id = m.id AND um.user_id = ?`;
}

/** The column that orders a narrow's messages (see NarrowSql.order). */
export const idColumn = (n: NarrowSql) => n.order;

/**
 * The partial indexes on usermessage (schema.sql) a positive term can be answered by, most selective
 * first (a narrow may name several). Starred and mentioned rows are few enough to drive even a search.
 */
const USER_INDEXES = ['usermessage_starred', 'usermessage_mentioned', 'usermessage_private', 'usermessage_unread'] as const;
const FEW_ROWS: ReadonlySet<string> = new Set(['usermessage_starred', 'usermessage_mentioned']);
/** Operators whose positive term an index on message answers in id order. */
const MESSAGE_INDEXED = new Set(['channel', 'sender', 'dm', 'id']);

/** A user named by id or (for a string) by email, as Zulip's narrow operators take them, or null. */
function lookupUser(db: Db, user: UserRow, operand: unknown): UserRow | null {
  // zulip-compat: a string is always an email, even when it is all digits.
  return typeof operand === 'number' ? findUserById(db, user.realm_id, operand) : findUserByEmail(db, user.realm_id, String(operand).trim());
}

/** lookupUser, or BAD_NARROW for an unknown user. */
function resolveUser(db: Db, user: UserRow, operand: unknown): UserRow {
  const u = lookupUser(db, user, operand);
  if (!u) throw badNarrow(`unknown user ${String(operand)}`);
  return u;
}

/** The channel named by id or (for a string) by name, or null. */
function lookupStream(db: Db, user: UserRow, operand: unknown): StreamRow | null {
  // zulip-compat: a string is always a name (get_stream_by_narrow_operand_access_unchecked).
  return typeof operand === 'number' ? findStreamById(db, user.realm_id, operand) : findStreamByName(db, user.realm_id, String(operand));
}

function resolveStream(db: Db, user: UserRow, operand: unknown): StreamRow {
  const s = lookupStream(db, user, operand);
  if (!s) throw badNarrow(`unknown channel ${String(operand)}`);
  return s;
}

/** The direct_group id for exactly `ids` (sorted, unique), or 0 when that conversation never existed. */
export function directGroupId(db: Db, realmId: number, ids: number[]): number {
  const key = [...new Set(ids)].sort((a, b) => a - b).join(',');
  const row = stmt(db, 'SELECT id FROM direct_group WHERE realm_id = ? AND member_key = ?').get(realmId, key) as { id: number } | undefined;
  return row?.id ?? 0;
}

/** Case-folded topic key used by the topic index; the organization's empty-topic name means "". */
export function topicKey(topic: string): string {
  return topic.toLowerCase();
}

/** Zulip's ILIKE '%phrase%' on the content or the topic (SQLite's LIKE folds ASCII case only); binds the pattern twice. */
const PHRASE_CONDITION = "(m.content LIKE ? ESCAPE '\\' OR m.topic LIKE ? ESCAPE '\\')";
const likePattern = (phrase: string) => `%${phrase.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A condition no message meets. Not the constant 0, which SQLite folds into the plan, and then finds
 * none for a query that names a partial index (INDEXED BY); `+` keeps the message key out of it.
 */
const NOTHING = '+m.id < 0';

/** Translates terms to SQL conditions for `user`. Throws BAD_NARROW for contradictions and unknowns. */
export function narrowToSql(db: Db, user: UserRow, terms: NarrowTerm[]): NarrowSql {
  const where: string[] = [];
  const params: unknown[] = [];
  const searchTerms: string[] = [];
  const ftsWords: string[] = [];
  // Partial indexes on usermessage whose condition a positive term is written as.
  const userIndexes = new Set<string>();
  const realm = getRealmById(db, user.realm_id);
  const emptyTopicName = realm?.empty_topic_display_name ?? 'general chat';
  let searchWords = 0;

  // 'with' is replaced by the conversation of that message, if the user can see it.
  const withTerms = terms.filter((t) => t.operator === 'with');
  if (withTerms.length > 1) throw new JsonableError('Invalid narrow operator combination: {desc}', { code: 'BAD_NARROW', vars: { desc: "Duplicate 'with' operators." } });
  if (withTerms.length === 1) {
    const id = Number(withTerms[0].operand);
    if (!Number.isInteger(id)) throw badNarrow("Invalid 'with' operator");
    terms = terms.filter((t) => t.operator !== 'with');
    const m = stmt(db, 'SELECT stream_id, topic, direct_group_id FROM message WHERE id = ? AND realm_id = ?').get(id, user.realm_id) as
      | { stream_id: number | null; topic: string; direct_group_id: number | null }
      | undefined;
    if (!m || !messageVisibleTo(db, user, id)) {
      // As Zulip: an unreadable 'with' is dropped only when the rest already names a conversation.
      const names = (op: string) => terms.some((t) => t.operator === op && !t.negated);
      if (!((names('channel') && names('topic')) || names('dm'))) throw badNarrow("Invalid 'with' operator");
    } else {
      terms = terms.filter((t) => !['channel', 'topic', 'dm'].includes(t.operator));
      if (m.stream_id !== null) {
        terms.push({ operator: 'channel', operand: m.stream_id, negated: false }, { operator: 'topic', operand: m.topic, negated: false });
      } else {
        const members = (stmt(db, 'SELECT user_id FROM direct_group_member WHERE group_id = ?').all(m.direct_group_id) as { user_id: number }[]).map((r) => r.user_id);
        terms.push({ operator: 'dm', operand: members, negated: false });
      }
    }
  }

  const positive = terms.filter((t) => !t.negated);

  // Shared history, as Zulip's ok_to_include_history: one named channel whose history the user can
  // read, and no 'is:' term other than is:resolved (negated or not: the flags are the user's rows').
  // An unknown channel is refused below, in the order of the terms.
  const flagIs = terms.some((t) => t.operator === 'is' && t.operand !== 'resolved');
  let base: 'user' | 'channel' = 'user';
  const channelTerm = positive.find((t) => t.operator === 'channel');
  if (channelTerm && !flagIs) {
    const s = lookupStream(db, user, channelTerm.operand);
    if (s && canAccessStreamHistory(db, user, s)) base = 'channel';
  }
  const channelsTerm = positive.find((t) => t.operator === 'channels');
  if (!channelTerm && channelsTerm && !flagIs && channelsTerm.operand === 'public' && !isGuest(user)) base = 'channel';

  // Zulip's check_not_both_channel_and_dm_narrow: a positive channel, channels or topic term (or a
  // negated is:dm) with a positive is:dm, dm, dm-including or group-pm-with term.
  const sides = { channel: false, dm: false };
  const side = (which: 'channel' | 'dm') => {
    sides[which] = true;
    if (sides.channel && sides.dm) throw badNarrow('No message can be both a channel message and direct message');
  };

  for (const t of terms) {
    let cond: string;
    const p: unknown[] = [];
    switch (t.operator) {
      case 'channel': {
        if (!t.negated) side('channel');
        const s = resolveStream(db, user, t.operand);
        cond = 'm.stream_id = ?';
        p.push(s.id);
        break;
      }
      case 'channels': {
        if (!t.negated) side('channel');
        // `+`: not through message_stream, whose one range per channel would need a sort to merge;
        // the messages are read newest first and checked.
        if (t.operand === 'public') cond = '+m.stream_id IN (SELECT id FROM stream WHERE realm_id = ? AND invite_only = 0)';
        else if (t.operand === 'web-public') cond = '+m.stream_id IN (SELECT id FROM stream WHERE realm_id = ? AND is_web_public = 1)';
        else throw badNarrow(`unknown channels operand ${String(t.operand)}`);
        p.push(user.realm_id);
        break;
      }
      case 'topic': {
        if (!t.negated) side('channel');
        const topic = String(t.operand);
        const key = topic === emptyTopicName ? '' : topicKey(topic);
        cond = 'm.stream_id IS NOT NULL AND m.topic_key = ?';
        p.push(key);
        break;
      }
      case 'sender':
        cond = 'm.sender_id = ?';
        p.push(resolveUser(db, user, t.operand).id);
        break;
      case 'dm': {
        if (!t.negated) side('dm');
        // zulip-compat: a string is a comma-separated list of emails, split as it is (an empty entry is
        // an unknown user); an empty list matches nothing.
        const raw = t.operand;
        const listed: unknown[] = Array.isArray(raw) ? raw : String(raw).split(',');
        // A string's list is as long as a JSON one may be, and each person is looked up once: 400,000
        // copies of one address in 9 MB took 12 s, one lookup each.
        checkListLength(listed, 'operand', MAX_JSON_LIST_ITEMS);
        const users: UserRow[] = [];
        for (const x of new Set(listed.map((x) => (typeof x === 'string' ? x.trim() : x)))) {
          const u = lookupUser(db, user, x);
          if (u === null) throw badNarrow(`unknown user in ${Array.isArray(raw) ? `[${raw.join(', ')}]` : String(raw)}`);
          users.push(u);
        }
        cond = 'm.direct_group_id = ?';
        p.push(users.length === 0 ? 0 : directGroupId(db, user.realm_id, [...users.map((u) => u.id), user.id]));
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        if (!t.negated) side('dm');
        const other = resolveUser(db, user, t.operand);
        cond =
          t.operator === 'dm-including'
            ? 'm.direct_group_id IN (SELECT group_id FROM direct_group_member WHERE user_id = ?)'
            : `m.direct_group_id IN (SELECT g.group_id FROM direct_group_member g WHERE g.user_id = ?
                  AND (SELECT count(*) FROM direct_group_member c WHERE c.group_id = g.group_id) > 2)`;
        p.push(other.id);
        // Several conversations: the user's direct-message rows (all is_private) give them in order.
        if (!t.negated && base === 'user') {
          cond = `(um.flags & ${FLAG.is_private}) <> 0 AND ${cond}`;
          userIndexes.add('usermessage_private');
        }
        break;
      }
      case 'is': {
        // A flag term puts the query on the user's rows (base 'user', an inner join: flagIs above), where
        // a positive one is written exactly as the partial index it can use (schema.sql).
        const flagSet = (bits: number) => `(um.flags & ${bits}) <> 0`;
        const indexed = (index: string) => !t.negated && userIndexes.add(index);
        switch (t.operand) {
          case 'dm':
          case 'private':
            // zulip-compat: not is:dm counts as a channel term.
            side(t.negated ? 'channel' : 'dm');
            // Every row of a direct message has is_private.
            cond = t.negated ? 'm.direct_group_id IS NOT NULL' : `(um.flags & ${FLAG.is_private}) <> 0`;
            indexed('usermessage_private');
            break;
          case 'starred':
            cond = flagSet(FLAG.starred);
            indexed('usermessage_starred');
            break;
          case 'unread':
            cond = `(um.flags & ${FLAG.read}) = 0`;
            indexed('usermessage_unread');
            break;
          case 'mentioned':
            cond = flagSet(MENTION_FLAGS);
            indexed('usermessage_mentioned');
            break;
          case 'alerted':
            cond = flagSet(FLAG.has_alert_word);
            break;
          case 'resolved':
            cond = "m.stream_id IS NOT NULL AND m.topic LIKE '✔ %'";
            break;
          case 'followed':
            cond = 'EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 3)';
            p.push(user.id);
            break;
          case 'muted':
            cond = MUTED_CONDITION;
            p.push(user.id, user.id, user.id);
            break;
          default:
            throw badNarrow(`unknown 'is' operand ${String(t.operand)}`);
        }
        break;
      }
      case 'has':
        switch (t.operand) {
          case 'link':
            cond = 'm.has_link = 1';
            break;
          case 'image':
            cond = 'm.has_image = 1';
            break;
          case 'attachment':
            cond = 'm.has_attachment = 1';
            break;
          case 'reaction':
            cond = 'EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)';
            break;
          default:
            throw badNarrow(`unknown 'has' operand ${String(t.operand)}`);
        }
        break;
      case 'in':
        if (t.operand === 'home') {
          cond = `NOT ${MUTED_CONDITION}`;
          p.push(user.id, user.id, user.id);
        } else if (t.operand === 'all') cond = '1';
        else throw badNarrow(`unknown 'in' operand ${String(t.operand)}`);
        break;
      case 'search': {
        const parsed = parseSearch(String(t.operand));
        // A word required twice is required once (the index folds case); so is a phrase.
        const words = [...new Map(parsed.words.map((w) => [w.toLowerCase(), w])).values()];
        const phrases = [...new Set(parsed.phrases)];
        searchWords += words.length + phrases.length;
        if (searchWords > MAX_SEARCH_WORDS) throw badNarrow(`search is too long (limit: ${MAX_SEARCH_WORDS} words)`);
        // As PostgreSQL's, a query of stop words alone matches nothing.
        if (words.length === 0) {
          cond = NOTHING;
          break;
        }
        const phraseConds = phrases.map(() => PHRASE_CONDITION);
        const phraseParams = phrases.flatMap((ph) => [likePattern(ph), likePattern(ph)]);
        if (!t.negated) {
          // Positive searches are combined into one MATCH on the joined index (see fromClause); the
          // phrases only filter what it returns.
          searchTerms.push(...words.map(stem));
          ftsWords.push(...words);
          where.push(...phraseConds);
          params.push(...phraseParams);
          continue;
        }
        cond = ['m.id IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)', ...phraseConds].join(' AND ');
        p.push(ftsQuery(words), ...phraseParams);
        break;
      }
      case 'near':
        cond = '1'; // clients pass the message as the anchor; no filtering
        break;
      case 'id': {
        if (!/^[0-9]+$/.test(String(t.operand))) throw badNarrow('Invalid message ID');
        cond = 'm.id = ?';
        p.push(Number(t.operand));
        break;
      }
      case 'mentions': {
        const other = resolveUser(db, user, t.operand);
        cond = `EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = ? AND x.message_id = m.id AND (x.flags & ${FLAG.mentioned}) <> 0)`;
        p.push(other.id);
        break;
      }
      default:
        throw badNarrow(`unknown operator ${t.operator}`);
    }
    // A negated condition that is NULL (m.stream_id = ? for a direct message) holds, as Zulip's
    // recipient_id <> ? does.
    where.push(t.negated ? `NOT coalesce(${cond}, 0)` : `(${cond})`);
    params.push(...p);
  }
  if (ftsWords.length) {
    where.push('message_fts MATCH ?');
    params.push(ftsQuery(ftsWords));
  }
  where.push('m.realm_id = ?');
  params.push(user.realm_id);
  // Every query over a narrow joins the user's rows by user: their implied rows are written first
  // (only now, once the narrow is known to be valid).
  materializeUserMessages(db, user.id);
  const fts = ftsWords.length > 0;
  // What drives the query (NarrowSql.order): a partial index of the user's rows (a search only for the
  // few starred or mentioned ones), else the full-text index, else an index on message, else the
  // user's rows in key order.
  let userIndex = base === 'user' ? USER_INDEXES.find((i) => userIndexes.has(i)) : undefined;
  if (fts && userIndex !== undefined && !FEW_ROWS.has(userIndex)) userIndex = undefined;
  let order: NarrowSql['order'];
  if (userIndex !== undefined) order = 'um.message_id';
  else if (fts) order = 'message_fts.rowid';
  else if (base === 'user' && !positive.some((t) => MESSAGE_INDEXED.has(t.operator))) order = 'um.message_id';
  else order = 'm.id';
  // zulip-compat: the first channel term names the channel, negated or not (get_channel_from_narrow_access_unchecked).
  const mutingChannel = terms.find((t) => t.operator === 'channel');
  const unmuted = mutingChannel
    ? {
        cond: 'NOT (m.stream_id = ? AND EXISTS (SELECT 1 FROM user_topic ut WHERE ut.user_id = ? AND ut.stream_id = m.stream_id AND ut.topic_key = m.topic_key AND ut.visibility_policy = 1))',
        params: [resolveStream(db, user, mutingChannel.operand).id, user.id],
      }
    : { cond: `NOT ${MUTED_CONDITION}`, params: [user.id, user.id, user.id] };
  return { base, where, params, searchTerms, fts, order, userIndex, unmuted };
}

/** Whether the message is muted for the user (MUTED_CONDITION; never for a direct message). */
export function messageMutedFor(db: Db, userId: number, messageId: number): boolean {
  const row = stmt(db, `SELECT ${MUTED_CONDITION} AS muted FROM message m WHERE m.id = ?`).get(userId, userId, userId, messageId) as { muted: number } | undefined;
  return row?.muted === 1;
}

/**
 * What the unread event of update_message_flags says about each message, in one statement for a list
 * of ids (up to 5000; a query per message made marking 5000 unread take ~60 ms): where it is, and
 * whether it is muted for the user (MUTED_CONDITION) and what flags the user has on it.
 */
export function unreadDetails(
  db: Db,
  userId: number,
  realmId: number,
  ids: readonly number[],
): { id: number; stream_id: number | null; topic: string; direct_group_id: number | null; muted: number; flags: number | null }[] {
  return stmt(
    db,
    `SELECT m.id, m.stream_id, m.topic, m.direct_group_id, ${MUTED_CONDITION} AS muted,
       (SELECT flags FROM usermessage um WHERE um.user_id = ? AND um.message_id = m.id) AS flags
     FROM message m WHERE m.realm_id = ? AND m.id IN (SELECT value FROM json_each(?)) ORDER BY m.id`,
  ).all(userId, userId, userId, userId, realmId, JSON.stringify(ids)) as ReturnType<typeof unreadDetails>;
}

/** Whether `user` can read message `id`: their own row (written or implied), or a channel whose history they can read. */
export function messageVisibleTo(db: Db, user: UserRow, id: number): boolean {
  if (userMessageFlags(db, user.id, id) !== null) return true;
  const m = stmt(db, 'SELECT stream_id FROM message WHERE id = ? AND realm_id = ?').get(id, user.realm_id) as { stream_id: number | null } | undefined;
  if (!m || m.stream_id === null) return false;
  const s = findStreamById(db, user.realm_id, m.stream_id);
  return s !== null && canAccessStreamHistory(db, user, s);
}

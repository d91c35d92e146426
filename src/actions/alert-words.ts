// Alert words: the user's list (add, remove, read), and the send-time flags that depend on other
// users' private lists (has_alert_word, and messages from muted senders arriving already read).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchedCache, watchTable } from '../db/watch';
import { errors } from '../http/errors';
import { codePoints } from '../http/params';
import { AhoCorasick } from '../lib/aho-corasick';
import { FLAG } from '../lib/narrow';
import type { UserRow } from '../lib/users';

/** Zulip's AlertWord.MAX_WORD_LENGTH. */
export const MAX_ALERT_WORD_LENGTH = 100;
/**
 * Words one user may keep, and their characters in all. Zulip has neither limit; without them a member
 * could store a million words and make every message to them costly. The characters are what an
 * automaton is built from: 10,000 of them build in ~2 ms (1000 words of 100 characters took ~20 ms,
 * and a send after several users' changes builds each of theirs).
 */
export const MAX_ALERT_WORDS = 1000;
export const MAX_ALERT_WORDS_CHARS = 10_000;

/** The user's alert words, in the order the register provider lists them. */
export function listAlertWords(app: App, userId: number): string[] {
  return (stmt(app.db, 'SELECT word FROM alert_word WHERE user_id = ? ORDER BY word').all(userId) as { word: string }[]).map((r) => r.word);
}

/** Zulip's clean_alert_words: trimmed, empty ones dropped; each at most 100 characters. */
function cleanWords(words: string[]): string[] {
  words.forEach((w, i) => {
    if ([...w].length > MAX_ALERT_WORD_LENGTH) {
      throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', {
        var_name: `alert_words[${i}]`,
        max_length: MAX_ALERT_WORD_LENGTH,
      });
    }
  });
  return words.map((w) => w.trim()).filter((w) => w !== '');
}

function notify(app: App, userId: number): string[] {
  const words = listAlertWords(app, userId);
  app.batch.onCommit(() => app.events.send({ type: 'alert_words', alert_words: words }, [userId]));
  return words;
}

/** POST /users/me/alert_words: adds words, skipping ones the user has in any letter case. */
export function doAddAlertWords(app: App, user: UserRow, words: string[]): string[] {
  const clean = cleanWords(words);
  return app.batch.write(() => {
    const have = new Set(listAlertWords(app, user.id).map((w) => w.toLowerCase()));
    const fresh = new Map<string, string>();
    // zulip-compat: among new words differing only in case, the last one given is kept.
    for (const w of clean) if (!have.has(w.toLowerCase())) fresh.set(w.toLowerCase(), w);
    if (fresh.size > 0 && have.size + fresh.size > MAX_ALERT_WORDS) {
      throw errors.badRequest('You can have at most {max} alert words.', { max: MAX_ALERT_WORDS });
    }
    const chars = (list: Iterable<string>) => [...list].reduce((n, w) => n + codePoints(w), 0);
    if (fresh.size > 0 && chars(listAlertWords(app, user.id)) + chars(fresh.values()) > MAX_ALERT_WORDS_CHARS) {
      throw errors.badRequest('Your alert words can have at most {max} characters in all.', { max: MAX_ALERT_WORDS_CHARS });
    }
    const insert = stmt(app.db, 'INSERT OR IGNORE INTO alert_word (user_id, word) VALUES (?, ?)');
    for (const w of fresh.values()) insert.run(user.id, w);
    return notify(app, user.id);
  });
}

/**
 * DELETE /users/me/alert_words: removes words case-insensitively (as Zulip's word__iexact); unknown
 * words are ignored. The user's words are read once and matched in memory: a statement per word given,
 * each comparing lower(word) over every word the user has, made 1000 words against 1000 take ~130 ms.
 */
export function doRemoveAlertWords(app: App, user: UserRow, words: string[]): string[] {
  return app.batch.write(() => {
    const gone = new Set(words.map((w) => w.toLowerCase()));
    const del = stmt(app.db, 'DELETE FROM alert_word WHERE user_id = ? AND word = ?');
    for (const w of listAlertWords(app, user.id)) if (gone.has(w.toLowerCase())) del.run(user.id, w);
    return notify(app, user.id);
  });
}

// Zulip's AlertWordNotificationProcessor: a match must start and end at these boundaries.
// zulip-compat: two deliberate differences from its code, both as Zulip's web app highlights words
// (web/src/alert_words.ts): '"' ends a word (the server's set has the typo '",'), and the character
// before a match is always checked (the server's off-by-one accepts any character before index 1).
const BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER = new Set([' ', '\n', ')', '"', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/**
 * Extra usermessage flag bits at send time, by recipient: has_alert_word for recipients whose alert
 * words occur in the Markdown source, and read for recipients who muted the sender (as Zulip's
 * do_send_messages marks them). Called by doSendMessage inside its write.
 */
export function sendTimeFlags(app: App, sender: UserRow, content: string, recipients: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (recipients.length === 0) return out;
  // Both lookups run on every send: answered from memory, kept until an alert word, mute or user changes.
  const watchers = activeAlertWordUsers(app);
  if (watchers.size > 0 && recipients.some((uid) => watchers.has(uid))) {
    // One pass over the content for the words of every user with a short list (Zulip's realm
    // automaton), one more per recipient with a long list; the users found are narrowed to this
    // message's active recipients.
    const lower = content.toLowerCase();
    // Where a word may start and end, by offset, worked out once for every automaton and word.
    const starts = new Uint8Array(lower.length + 1);
    const ends = new Uint8Array(lower.length + 1);
    starts[0] = 1;
    ends[lower.length] = 1;
    for (let i = 0; i < lower.length; i++) {
      if (BEFORE.has(lower[i])) starts[i + 1] = 1;
      if (AFTER.has(lower[i])) ends[i] = 1;
    }
    const accept = (start: number, end: number) => starts[start] === 1 && ends[end] === 1;
    const index = alertWordIndex(app);
    const matched = new Set(index.shared.automaton.matches(lower, accept, { ends }).flat());
    for (const uid of recipients) {
      const own = index.own.get(uid);
      // Its words are all this user's: the first match settles it.
      if (own && watchers.has(uid) && own.automaton.matches(lower, accept, { first: true, ends }).length > 0) matched.add(uid);
    }
    for (const uid of recipients) if (matched.has(uid) && watchers.has(uid)) out.set(uid, (out.get(uid) ?? 0) | FLAG.has_alert_word);
  }
  const muters = mutersOf(app, sender.id);
  if (muters.size > 0) for (const uid of recipients) if (muters.has(uid)) out.set(uid, (out.get(uid) ?? 0) | FLAG.read);
  return out;
}

/**
 * Lists longer than this many characters get an automaton of their own. A change to any word rebuilds
 * the automaton holding it on the next send; with one automaton for the realm (Zulip's design) that is
 * every word of every user, bounded only by the number of members (ten members with lists of 100,000
 * characters made the send after any change take most of a second). Short lists, nearly everyone's
 * (ten words of twenty characters are 200), stay shared: one pass over a message for all of them; a
 * long list costs one more pass for each message its owner receives.
 */
const OWN_AUTOMATON_CHARS = 2_000;

interface Built {
  /** The lower-cased words it was built from (what a rebuild compares). */
  key: string;
  automaton: AhoCorasick<number>;
}

interface AlertWordIndex {
  dirty: boolean;
  realmId: number;
  /** Every word of every user whose list is short, each carrying the ids of the users with it. */
  shared: Built;
  /** One automaton per user with a long list. */
  own: Map<number, Built>;
}

const indexes = new WeakMap<App['db'], AlertWordIndex>();

/**
 * The realm's alert-word automata (lower-cased words). After any change to alert_word the words are
 * read again and only the automata whose words differ are rebuilt, on the first send that needs them:
 * the cost of a change is bounded by one long list, or by the short lists together.
 */
function alertWordIndex(app: App): AlertWordIndex {
  let index = indexes.get(app.db);
  if (!index) {
    const fresh: AlertWordIndex = { dirty: true, realmId: app.realmId(), shared: { key: '', automaton: new AhoCorasick([]) }, own: new Map() };
    watchTable(app.db, 'alert_word', () => (fresh.dirty = true));
    indexes.set(app.db, fresh);
    index = fresh;
  }
  if (!index.dirty && index.realmId === app.realmId()) return index;
  const rows = stmt(app.db, 'SELECT a.user_id, a.word FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.realm_id = ? ORDER BY a.user_id').all(app.realmId()) as {
    user_id: number;
    word: string;
  }[];
  const byUser = new Map<number, string[]>();
  for (const r of rows) {
    let list = byUser.get(r.user_id);
    if (!list) byUser.set(r.user_id, (list = []));
    list.push(r.word.toLowerCase());
  }
  const own = new Map<number, Built>();
  const shared: [string, number][] = [];
  const sharedKey: string[] = [];
  for (const [uid, words] of byUser) {
    const key = words.join('\n');
    if (key.length <= OWN_AUTOMATON_CHARS) {
      for (const w of words) shared.push([w, uid]);
      sharedKey.push(`${uid}\n${key}`);
      continue;
    }
    const before = index.own.get(uid);
    own.set(uid, before?.key === key ? before : { key, automaton: new AhoCorasick(words.map((w) => [w, uid] as const)) });
  }
  const key = sharedKey.join('\n\n');
  if (index.shared.key !== key) index.shared = { key, automaton: new AhoCorasick(shared) };
  index.own = own;
  index.realmId = app.realmId();
  index.dirty = false;
  return index;
}

/** Active users of the realm with at least one alert word (a deactivated user's words never match). */
function activeAlertWordUsers(app: App): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(app.db, 'alertWordUsers', ['alert_word', 'user']).get(app.realmId(), () => {
    const rows = stmt(
      app.db,
      'SELECT DISTINCT a.user_id FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.is_active = 1 AND u.realm_id = ?',
    ).all(app.realmId()) as { user_id: number }[];
    return new Set(rows.map((r) => r.user_id));
  });
}

/** The users who muted `userId`. */
function mutersOf(app: App, userId: number): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(app.db, 'muters', ['muted_user']).get(
    userId,
    () => new Set((stmt(app.db, 'SELECT user_id FROM muted_user WHERE muted_user_id = ?').all(userId) as { user_id: number }[]).map((r) => r.user_id)),
  );
}

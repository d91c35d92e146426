// Alert words: the user's list (add, remove, read), and the send-time flags that depend on other
// users' private lists (has_alert_word, and messages from muted senders arriving already read).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { errors } from '../http/errors';
import { AhoCorasick } from '../lib/aho-corasick';
import { FLAG } from '../lib/narrow';
import type { UserRow } from '../lib/users';

/** Zulip's AlertWord.MAX_WORD_LENGTH. */
export const MAX_ALERT_WORD_LENGTH = 100;
/**
 * Words one user may keep. Zulip has no such limit; without one a member could store a million words
 * and make every message to them costly. 1000 words of at most 100 characters bound one user's part of
 * the realm's automaton to 100,000 characters (a few MB), built in milliseconds.
 */
export const MAX_ALERT_WORDS = 1000;

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
    const insert = stmt(app.db, 'INSERT OR IGNORE INTO alert_word (user_id, word) VALUES (?, ?)');
    for (const w of fresh.values()) insert.run(user.id, w);
    return notify(app, user.id);
  });
}

/** DELETE /users/me/alert_words: removes words case-insensitively; unknown words are ignored. */
export function doRemoveAlertWords(app: App, user: UserRow, words: string[]): string[] {
  return app.batch.write(() => {
    const del = stmt(app.db, 'DELETE FROM alert_word WHERE user_id = ? AND lower(word) = lower(?)');
    for (const w of words) del.run(user.id, w);
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
    // One pass over the content for every word of every user (Zulip's realm automaton), then the
    // users found are narrowed to this message's active recipients.
    const lower = content.toLowerCase();
    const found = alertWordAutomaton(app).matches(
      lower,
      (start, end) => (start === 0 || BEFORE.has(lower[start - 1])) && (end >= lower.length || AFTER.has(lower[end])),
    );
    const matched = new Set(found.flat());
    for (const uid of recipients) if (matched.has(uid) && watchers.has(uid)) out.set(uid, (out.get(uid) ?? 0) | FLAG.has_alert_word);
  }
  const muters = mutersOf(app, sender.id);
  if (muters.size > 0) for (const uid of recipients) if (muters.has(uid)) out.set(uid, (out.get(uid) ?? 0) | FLAG.read);
  return out;
}

/**
 * The automaton of every alert word in the realm (lower-cased), each word carrying the ids of the users
 * who have it. Built on the first send after a word changes, then shared by every send: it depends on
 * alert_word alone, so users' other changes (a login, a setting) do not rebuild it.
 */
function alertWordAutomaton(app: App): AhoCorasick<number> {
  return watchedCache<number, AhoCorasick<number>>(app.db, 'alertWordAutomaton', ['alert_word']).get(app.realmId(), () => {
    const rows = stmt(app.db, 'SELECT a.user_id, a.word FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.realm_id = ?').all(app.realmId()) as {
      user_id: number;
      word: string;
    }[];
    return new AhoCorasick(rows.map((r) => [r.word.toLowerCase(), r.user_id] as const));
  });
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

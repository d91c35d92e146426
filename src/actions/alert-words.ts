// Alert words: the user's list (add, remove, read), and the send-time flags that depend on other
// users' private lists (has_alert_word, and messages from muted senders arriving already read).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { errors } from '../http/errors';
import { FLAG } from '../lib/narrow';
import type { UserRow } from '../lib/users';

/** Zulip's AlertWord.MAX_WORD_LENGTH. */
export const MAX_ALERT_WORD_LENGTH = 100;

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
const BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER = new Set([' ', '\n', ')', '"', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/** Whether `word` (lower case) occurs in `content` (lower case) between Zulip's word boundaries. */
function containsAlertWord(content: string, word: string): boolean {
  for (let i = content.indexOf(word); i !== -1; i = content.indexOf(word, i + 1)) {
    const end = i + word.length;
    if ((i === 0 || BEFORE.has(content[i - 1])) && (end >= content.length || AFTER.has(content[end]))) return true;
  }
  return false;
}

/**
 * Extra usermessage flag bits at send time, by recipient: has_alert_word for recipients whose alert
 * words occur in the Markdown source, and read for recipients who muted the sender (as Zulip's
 * do_send_messages marks them). Called by doSendMessage inside its write.
 */
export function sendTimeFlags(app: App, sender: UserRow, content: string, recipients: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  if (recipients.length === 0) return out;
  // Both lookups run on every send: answered from memory, kept until an alert word, mute or user changes.
  const words = activeAlertWords(app);
  if (words.size > 0) {
    let lower: string | null = null;
    for (const uid of recipients) {
      const mine = words.get(uid);
      if (!mine) continue;
      lower ??= content.toLowerCase();
      if (mine.some((w) => containsAlertWord(lower as string, w))) out.set(uid, (out.get(uid) ?? 0) | FLAG.has_alert_word);
    }
  }
  const muters = mutersOf(app, sender.id);
  if (muters.size > 0) for (const uid of recipients) if (muters.has(uid)) out.set(uid, (out.get(uid) ?? 0) | FLAG.read);
  return out;
}

/** Every active user's alert words, lower-cased, by user id. */
function activeAlertWords(app: App): ReadonlyMap<number, readonly string[]> {
  return watchedCache<number, ReadonlyMap<number, readonly string[]>>(app.db, 'alertWords', ['alert_word', 'user']).get(app.realmId(), () => {
    const rows = stmt(app.db, 'SELECT a.user_id, a.word FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.is_active = 1 AND u.realm_id = ?').all(
      app.realmId(),
    ) as { user_id: number; word: string }[];
    const byUser = new Map<number, string[]>();
    for (const r of rows) {
      let list = byUser.get(r.user_id);
      if (!list) byUser.set(r.user_id, (list = []));
      list.push(r.word.toLowerCase());
    }
    return byUser;
  });
}

/** The users who muted `userId`. */
function mutersOf(app: App, userId: number): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(app.db, 'muters', ['muted_user']).get(
    userId,
    () => new Set((stmt(app.db, 'SELECT user_id FROM muted_user WHERE muted_user_id = ?').all(userId) as { user_id: number }[]).map((r) => r.user_id)),
  );
}

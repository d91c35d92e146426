// Bot storage: a per-bot dictionary of strings with a size limit counted in characters of keys and values.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { codePoints } from '../http/params';
import { isBot, type UserRow } from '../lib/users';

/** Most keys one bot may store (the characters are bounded by app.config.botStorageLimit). */
export const MAX_BOT_STORAGE_KEYS = 10_000;

/** Only bots have storage (the spec's PERMISSION_DENIED for anyone else). */
export function requireBot(user: UserRow): void {
  if (!isBot(user)) throw errors.botRequired();
}

/** The bot's stored entries, all or the named keys (each must exist). */
export function getBotStorage(app: App, bot: UserRow, keys?: string[]): Record<string, string> {
  requireBot(bot);
  const out: Record<string, string> = {};
  if (keys === undefined) {
    for (const r of stmt(app.db, 'SELECT key, value FROM bot_storage WHERE bot_id = ? ORDER BY key').all(bot.id) as { key: string; value: string }[]) {
      out[r.key] = r.value;
    }
    return out;
  }
  for (const key of keys) {
    const r = stmt(app.db, 'SELECT value FROM bot_storage WHERE bot_id = ? AND key = ?').get(bot.id, key) as { value: string } | undefined;
    if (!r) throw errors.badRequest('Key does not exist.');
    out[key] = r.value;
  }
  return out;
}

/** PUT /bot_storage: sets keys (others stay), refusing a result above app.config.botStorageLimit characters. */
export function doSetBotStorage(app: App, bot: UserRow, storage: Record<string, string>): void {
  requireBot(bot);
  app.batch.write(() => {
    const rows = stmt(app.db, 'SELECT key, value FROM bot_storage WHERE bot_id = ?').all(bot.id) as { key: string; value: string }[];
    const current = new Map(rows.map((r) => [r.key, r.value]));
    let size = 0;
    for (const [k, v] of current) size += codePoints(k) + codePoints(v);
    for (const [k, v] of Object.entries(storage)) {
      const old = current.get(k);
      if (old !== undefined) size -= codePoints(k) + codePoints(old);
      size += codePoints(k) + codePoints(v);
    }
    // Zulip bounds the characters only; 300,000 small keys fit in them, and every GET of the whole
    // storage then built and sent all of them (~600 ms, as often as the bot liked).
    const keys = current.size + Object.keys(storage).filter((k) => !current.has(k)).length;
    if (keys > MAX_BOT_STORAGE_KEYS) throw errors.badRequest('Bot storage can hold at most {limit} keys.', { limit: MAX_BOT_STORAGE_KEYS });
    const limit = app.config.botStorageLimit;
    if (size > limit) {
      throw errors.badRequest('Request exceeds storage limit by {excess} characters. The limit is {limit} characters.', {
        excess: size - limit,
        limit,
      });
    }
    const put = stmt(app.db, 'INSERT INTO bot_storage (bot_id, key, value) VALUES (?, ?, ?) ON CONFLICT (bot_id, key) DO UPDATE SET value = excluded.value');
    for (const [k, v] of Object.entries(storage)) put.run(bot.id, k, v);
  });
}

/** DELETE /bot_storage: the named keys (all must exist; nothing is deleted otherwise), or everything. */
export function doRemoveBotStorage(app: App, bot: UserRow, keys?: string[]): void {
  requireBot(bot);
  app.batch.write(() => {
    if (keys === undefined) {
      stmt(app.db, 'DELETE FROM bot_storage WHERE bot_id = ?').run(bot.id);
      return;
    }
    for (const key of keys) {
      if (!stmt(app.db, 'SELECT 1 FROM bot_storage WHERE bot_id = ? AND key = ?').get(bot.id, key)) throw errors.badRequest('Key does not exist.');
    }
    const del = stmt(app.db, 'DELETE FROM bot_storage WHERE bot_id = ? AND key = ?');
    for (const key of keys) del.run(bot.id, key);
  });
}

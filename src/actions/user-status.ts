// User status (POST /users/me/status, POST /users/{id}/status): status text, an emoji, and the
// deprecated `away` (which is the presence_enabled setting, inverted).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { accessibleUsers } from '../lib/access';
import { nowSeconds } from '../lib/clock';
import { checkEmojiReaction, resolveEmojiName } from '../lib/emoji';
import { accessUserById, isAdmin, isBot, type UserRow } from '../lib/users';
import { realmEmojiLookup } from '../lib/realm-emoji';
import { doChangeSettings } from './settings';

export interface StatusChange {
  away?: boolean;
  statusText?: string;
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

interface StatusRow {
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** Zulip's format_user_status: only the keys that are set; `away` when presence is disabled. */
export function formatUserStatus(row: StatusRow | undefined, presenceEnabled: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!row) return out;
  if (!presenceEnabled) out.away = true;
  if (row.status_text) out.status_text = row.status_text;
  if (row.emoji_name) {
    out.emoji_name = row.emoji_name;
    out.emoji_code = row.emoji_code;
    out.reaction_type = row.reaction_type;
  }
  return out;
}

/** GET /users/{id}/status: the status of a human the caller can access. */
export function getUserStatus(app: App, viewer: UserRow, targetId: number): Record<string, unknown> {
  const target = accessUserById(app.db, viewer, targetId);
  const access = accessibleUsers(app.db, viewer);
  if (access && !access.has(target.id)) throw errors.insufficientPermission();
  const row = stmt(app.db, 'SELECT status_text, emoji_name, emoji_code, reaction_type FROM user_status WHERE user_id = ?').get(target.id) as
    | StatusRow
    | undefined;
  return formatUserStatus(row, target.presence_enabled !== 0);
}

/** Active users who may access `subject` (the audience of their status events). */
export function usersWhoCanAccess(app: App, subject: UserRow): number[] {
  const users = stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND is_active = 1').all(subject.realm_id) as UserRow[];
  return users.filter((u) => u.id === subject.id || (accessibleUsers(app.db, u)?.has(subject.id) ?? true)).map((u) => u.id);
}

/** Zulip's update_user_status_backend checks: the resolved emoji triple (or undefined: unchanged). */
function checkStatus(app: App, realmId: number, change: StatusChange): { name: string; code: string; type: string } | undefined {
  if (change.away === undefined && change.statusText === undefined && change.emojiName === undefined) {
    throw errors.badRequest('Client did not pass any new values.');
  }
  const name = change.emojiName;
  if (name === '') return { name: '', code: '', type: 'unicode_emoji' };
  if (name === undefined) {
    if (change.emojiCode || change.reactionType) {
      throw errors.badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    }
    return undefined;
  }
  const realmEmoji = realmEmojiLookup(app.db, realmId);
  let code = change.emojiCode;
  let type = change.reactionType;
  if (code === undefined || type === undefined) {
    const found = resolveEmojiName(name, realmEmoji);
    if (!found) throw errors.badRequest("Emoji '{name}' does not exist", { name });
    code ??= found.code;
    type ??= found.reaction_type;
  }
  const problem = checkEmojiReaction(name, code, type, realmEmoji);
  if (problem) throw errors.badRequest(problem);
  return { name, code, type };
}

function writeStatus(app: App, target: UserRow, change: StatusChange, actingSelf: boolean): void {
  app.batch.write(() => {
    const emoji = checkStatus(app, target.realm_id, change);
    if (change.away !== undefined && actingSelf) {
      // zulip-compat: `away` is presence_enabled inverted; the settings action sends its own
      // user_settings and user_status events first, as Zulip's do_change_user_setting does.
      doChangeSettings(app, target, { settings: { presence_enabled: !change.away } }, () => {});
    }
    const old = stmt(app.db, 'SELECT status_text, emoji_name, emoji_code, reaction_type FROM user_status WHERE user_id = ?').get(target.id) as
      | StatusRow
      | undefined;
    const next: StatusRow = {
      status_text: change.statusText ?? old?.status_text ?? '',
      emoji_name: emoji?.name ?? old?.emoji_name ?? '',
      emoji_code: emoji?.code ?? old?.emoji_code ?? '',
      reaction_type: emoji?.type ?? old?.reaction_type ?? 'unicode_emoji',
    };
    stmt(
      app.db,
      `INSERT INTO user_status (user_id, status_text, emoji_name, emoji_code, reaction_type, timestamp) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(user_id) DO UPDATE SET status_text = excluded.status_text, emoji_name = excluded.emoji_name,
         emoji_code = excluded.emoji_code, reaction_type = excluded.reaction_type, timestamp = excluded.timestamp`,
    ).run(target.id, next.status_text, next.emoji_name, next.emoji_code, next.reaction_type, nowSeconds(app.clock));
    const event: Record<string, unknown> = { type: 'user_status', user_id: target.id };
    if (change.away !== undefined && actingSelf) event.away = change.away;
    if (change.statusText !== undefined) event.status_text = change.statusText;
    if (emoji) {
      event.emoji_name = emoji.name;
      event.emoji_code = emoji.code;
      event.reaction_type = emoji.type;
    }
    app.batch.onCommit(() => app.events.send({ ...event, type: 'user_status' }, usersWhoCanAccess(app, target)));
  });
}

/** POST /users/me/status (humans only). */
export function doUpdateOwnStatus(app: App, user: UserRow, change: StatusChange): void {
  if (isBot(user)) throw errors.notForBots();
  writeStatus(app, user, change, true);
}

/** POST /users/{id}/status: administrators set another user's status text and emoji (FL 407). */
export function doUpdateStatusForUser(app: App, acting: UserRow, targetId: number, change: StatusChange): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  const target = accessUserById(app.db, acting, targetId, { forAdmin: true });
  writeStatus(app, target, { ...change, away: undefined }, false);
}

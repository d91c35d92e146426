// Read side of users: lookups, access checks for administrative actions, and the JSON shapes Zulip
// clients expect (the user object of GET /users and the own-user object of GET /users/me).
import crypto from 'node:crypto';
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { errors } from '../http/errors';
import { canAccessUser } from './access';
import { canAccessDeliveryEmail, deliveryEmailFor, mayClientComputeAvatar, placeholderUserId } from './user-emails';
import { ROLE } from './roles';
import { uploadedAvatarUrl } from './avatars';
import { materializeUserMessages } from './user-messages';

export interface UserRow {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  password_hash: string | null;
  api_key: string;
  role: number;
  is_active: number;
  bot_type: number | null;
  bot_owner_id: number | null;
  is_imported_stub: number;
  date_joined: number;
  first_login_pending: number;
  avatar_version: number;
  avatar_source: string;
  /** The uploaded avatar's file name (avatar_source U), else null. */
  avatar_file: string | null;
  timezone: string;
  default_language: string;
  /** Who may read delivery_email (lib/user-emails.ts). */
  email_address_visibility: number;
  [setting: string]: unknown;
}

export const isBot = (u: Pick<UserRow, 'bot_type'>) => u.bot_type !== null;
export const isAdmin = (u: Pick<UserRow, 'role'>) => u.role <= ROLE.ADMINISTRATOR;
export const isOwner = (u: Pick<UserRow, 'role'>) => u.role === ROLE.OWNER;
export const isGuest = (u: Pick<UserRow, 'role'>) => u.role === ROLE.GUEST;

/** A user of the realm by API email (case-insensitive), active or not. */
export function findUserByEmail(db: Db, realmId: number, email: string): UserRow | null {
  return (stmt(db, 'SELECT * FROM user WHERE realm_id = ? AND email = ? COLLATE NOCASE').get(realmId, email) as UserRow | undefined) ?? null;
}

/** A user of the realm by delivery email (the login name), active or not. */
export function findUserByDeliveryEmail(db: Db, realmId: number, email: string): UserRow | null {
  return (
    (stmt(db, 'SELECT * FROM user WHERE realm_id = ? AND delivery_email = ? COLLATE NOCASE').get(realmId, email) as UserRow | undefined) ??
    null
  );
}

/** A user of the realm by id, active or not. */
export function findUserById(db: Db, realmId: number, id: number): UserRow | null {
  return (stmt(db, 'SELECT * FROM user WHERE realm_id = ? AND id = ?').get(realmId, id) as UserRow | undefined) ?? null;
}

/**
 * Every user of the realm in id order (GET /users, /register's realm_users): not the system bots,
 * which in Zulip are cross-realm bots, members of no organization (/register's cross_realm_bots).
 */
export function listUsers(db: Db, realmId: number): UserRow[] {
  return stmt(db, `SELECT * FROM user u WHERE realm_id = ? AND ${NOT_SYSTEM_BOT_SQL} ORDER BY id`).all(realmId) as UserRow[];
}

/** The columns of a user that the user object (formatUser) is made of. */
const LISTED_USER_COLUMNS = [
  'id',
  'realm_id',
  'email',
  'delivery_email',
  'full_name',
  'role',
  'is_active',
  'bot_type',
  'bot_owner_id',
  'is_imported_stub',
  'date_joined',
  'avatar_version',
  'avatar_source',
  'avatar_file',
  'timezone',
  'email_address_visibility',
] as const;

export type ListedUser = Pick<UserRow, (typeof LISTED_USER_COLUMNS)[number]>;

/**
 * listUsers with only the columns of the user object, for /register's realm_users: every client start
 * reads the whole organization, and reading the user table's 80-odd settings columns of every user
 * cost most of that. Kept in memory until a user row changes (rarely: settings, roles, names,
 * logins); frozen, as it is shared.
 */
export function listedUsers(db: Db, realmId: number): readonly ListedUser[] {
  return watchedCache<number, readonly ListedUser[]>(db, 'listedUsers', ['user'], 100).get(realmId, () =>
    Object.freeze(
      (stmt(db, `SELECT ${LISTED_USER_COLUMNS.join(', ')} FROM user u WHERE realm_id = ? AND ${NOT_SYSTEM_BOT_SQL} ORDER BY id`).all(realmId) as ListedUser[]).map(
        (u) => Object.freeze(u),
      ),
    ),
  );
}

/** The realm's system bots (cross-realm bots in Zulip) by name, as get_cross_realm_dicts orders them. */
export function listSystemBots(db: Db, realmId: number): UserRow[] {
  return stmt(db, `SELECT * FROM user u WHERE realm_id = ? AND NOT ${NOT_SYSTEM_BOT_SQL} ORDER BY full_name, id`).all(realmId) as UserRow[];
}

/** Active owners of the realm (to protect the last one). */
export function activeOwnerIds(db: Db, realmId: number): number[] {
  return (stmt(db, 'SELECT id FROM user WHERE realm_id = ? AND role = 100 AND is_active = 1 AND bot_type IS NULL').all(realmId) as {
    id: number;
  }[]).map((r) => r.id);
}

/** Newest message the user has received, or -1 (deprecated max_message_id of GET /users/me, as Zulip counts it). */
export function maxMessageId(db: Db, userId: number): number {
  materializeUserMessages(db, userId);
  const row = stmt(db, 'SELECT max(message_id) AS id FROM usermessage WHERE user_id = ?').get(userId) as { id: number | null };
  return row.id ?? -1;
}

/**
 * Whether `actor` may administer `target` (Zulip's can_admin_user): administrators, and a bot's owner.
 * Not oneself: a bot holding only its own key must not re-own, re-key or deactivate itself.
 */
export function canAdminUser(actor: UserRow, target: UserRow): boolean {
  if (isAdmin(actor)) return true;
  return target.bot_owner_id !== null && target.bot_owner_id === actor.id;
}

/** Email local parts of the system bots (actions/system-bots.ts), which are created without an owner. */
export const SYSTEM_BOT_LOCAL_PARTS = ['notification-bot', 'welcome-bot'] as const;

/**
 * Whether `u` is a system bot (Notification Bot, Welcome Bot): Zulip's cross-realm bots, which live
 * outside every organization. Nobody administers them, their keys are never shown, and they cannot
 * log in; only the server speaks as them. Known by having no owner and a system bot's local part (as
 * Zulip knows them by email), so a member's bot named "notification-bot@..." is an ordinary bot.
 */
export function isSystemBot(u: UserRow): boolean {
  if (u.bot_type === null || u.bot_owner_id !== null) return false;
  // A "+suffix" is the address a system bot gets when its usual one was taken (actions/system-bots.ts).
  const local = u.email
    .slice(0, u.email.lastIndexOf('@'))
    .toLowerCase()
    .replace(/\+.*$/, '');
  return (SYSTEM_BOT_LOCAL_PARTS as readonly string[]).includes(local);
}

/**
 * SQL condition on a `user` row aliased `u`: not a system bot (the same test as isSystemBot), for lists
 * of the organization's bots.
 */
export const NOT_SYSTEM_BOT_SQL = `NOT (u.bot_type IS NOT NULL AND u.bot_owner_id IS NULL AND (${SYSTEM_BOT_LOCAL_PARTS.map(
  (l) => `u.email LIKE '${l}@%' OR u.email LIKE '${l}+%@%'`,
).join(' OR ')}))`;

/**
 * The owner a bot borrows channel access from (its owner's subscriptions and group memberships), or
 * null: for humans, ownerless bots, and bots whose owner is deactivated. Deactivating a person
 * deactivates their bots; this keeps a bot reactivated afterwards from reaching its former owner's
 * private channels.
 */
export function activeBotOwnerId(db: Db, u: UserRow): number | null {
  if (u.bot_type === null || u.bot_owner_id === null) return null;
  const owner = stmt(db, 'SELECT is_active FROM user WHERE id = ? AND realm_id = ?').get(u.bot_owner_id, u.realm_id) as { is_active: number } | undefined;
  return owner?.is_active ? u.bot_owner_id : null;
}

/** Active administrators plus the bot's owner while active: who hears realm_bot events about it (Zulip's bot_owner_user_ids). */
export function botAudience(db: Db, bot: UserRow): number[] {
  const admins = (
    stmt(db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1 AND role <= 200 AND bot_type IS NULL').all(bot.realm_id) as { id: number }[]
  ).map((r) => r.id);
  const ids = new Set(admins);
  const owner = activeBotOwnerId(db, bot);
  if (owner !== null) ids.add(owner);
  return [...ids].sort((a, b) => a - b);
}

/**
 * Zulip's access_user_by_id: the target user or the error Zulip gives. Missing users and users of other
 * organizations are the same "No such user". A read (not forAdmin) also needs access to the user
 * (can_access_all_users_group), as Zulip's access_user_common: "Insufficient permission" otherwise.
 */
export function accessUserById(
  db: Db,
  actor: UserRow,
  targetId: number,
  opts: { allowDeactivated?: boolean; allowBots?: boolean; forAdmin?: boolean; includeCrossRealm?: boolean } = {},
): UserRow {
  const target = findUserById(db, actor.realm_id, targetId);
  if (!target) throw errors.noSuchUser();
  if (isBot(target) && !opts.allowBots) throw errors.noSuchUser();
  // zulip-compat: system bots are cross-realm in Zulip, so its access_user_by_id cannot find them;
  // only access_user_by_id_including_cross_realm (includeCrossRealm: muting) can, never for administration.
  if (isSystemBot(target) && (opts.forAdmin || !opts.includeCrossRealm)) throw errors.noSuchUser();
  if (!target.is_active && !opts.allowDeactivated) throw errors.badRequest('User is deactivated');
  if (opts.forAdmin && !canAdminUser(actor, target)) throw errors.insufficientPermission();
  if (!opts.forAdmin && !canAccessUser(db, actor, target)) throw errors.insufficientPermission();
  return target;
}

/**
 * Zulip's access_user_by_email: a placeholder address (user{id}@host) is looked up by id, as anyone may;
 * a real address only among the users whose address the actor may read, so a hidden address cannot be
 * confirmed by asking for it. Then the checks of accessUserById.
 */
export function accessUserByEmail(
  app: App,
  actor: UserRow,
  email: string,
  opts: { allowDeactivated?: boolean; allowBots?: boolean; forAdmin?: boolean; includeCrossRealm?: boolean } = {},
): UserRow {
  const id = placeholderUserId(app, email);
  if (id !== null) return accessUserById(app.db, actor, id, opts);
  const target = findUserByDeliveryEmail(app.db, actor.realm_id, email.trim());
  if (!target || !canAccessDeliveryEmail(actor, target)) throw errors.noSuchUser();
  return accessUserById(app.db, actor, target.id, opts);
}

/**
 * The avatar URL of a user: their uploaded image (lib/avatars.ts), else the Gravatar URL Zulip builds
 * for users without one. `medium` is Zulip's avatar_url_medium (Gravatar's s=500).
 */
export function avatarUrl(u: Pick<UserRow, 'realm_id' | 'delivery_email' | 'avatar_source' | 'avatar_version' | 'avatar_file'>, medium = false): string {
  if (u.avatar_source === 'U' && u.avatar_file) return uploadedAvatarUrl(u.realm_id, u.avatar_file, u.avatar_version, medium);
  const email = u.delivery_email.toLowerCase();
  let hash = gravatarHashes.get(email);
  if (hash === undefined) {
    hash = crypto.createHash('md5').update(email).digest('hex');
    if (gravatarHashes.size >= 10_000) gravatarHashes.clear();
    gravatarHashes.set(email, hash);
  }
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? '&s=500' : ''}&version=${u.avatar_version}`;
}

// md5 of an address never changes: remember it (bounded) rather than hash on every request.
const gravatarHashes = new Map<string, string>();

/** ISO 8601 with a UTC offset, as Django serialises date_joined. */
export function isoTime(seconds: number): string {
  let text = isoTimes.get(seconds);
  if (text === undefined) {
    text = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    if (isoTimes.size >= 10_000) isoTimes.clear();
    isoTimes.set(seconds, text);
  }
  return text;
}

// The same instants (users' date_joined) are formatted on every request: remember them (bounded).
const isoTimes = new Map<number, string>();

/**
 * The user object of GET /users, GET /users/{id}, /register and realm_user add events (Zulip's
 * APIUserDict) as `viewer` may see it: delivery_email only where email_address_visibility lets them
 * (lib/user-emails.ts). With clientGravatar, a Gravatar URL the client can build itself is left null.
 */
export function formatUser(
  u: ListedUser,
  viewer: Pick<UserRow, 'id' | 'role'>,
  opts: { profileData?: Record<string, unknown>; clientGravatar?: boolean } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    email: u.email,
    user_id: u.id,
    avatar_version: u.avatar_version,
    is_admin: isAdmin(u),
    is_owner: isOwner(u),
    is_guest: isGuest(u),
    role: u.role,
    is_bot: isBot(u),
    full_name: u.full_name,
    timezone: u.timezone,
    is_active: u.is_active === 1,
    date_joined: isoTime(u.date_joined),
    // zulip-compat: with client_gravatar the client computes Gravatar URLs itself, so the server sends null.
    avatar_url: opts.clientGravatar && mayClientComputeAvatar(u) ? null : avatarUrl(u),
    delivery_email: deliveryEmailFor(viewer, u),
    is_imported_stub: u.is_imported_stub === 1,
  };
  if (isBot(u)) {
    out.bot_type = u.bot_type;
    out.bot_owner_id = u.bot_owner_id;
  } else if (opts.profileData) {
    out.profile_data = opts.profileData;
  }
  return out;
}

/**
 * A system bot as /register's cross_realm_bots lists it (Zulip's get_cross_realm_dicts): the user
 * object as the bot itself sees it (its address shown, the avatar URL always given), with no owner
 * and is_system_bot.
 */
export function formatCrossRealmBot(u: UserRow): Record<string, unknown> {
  return { ...formatUser(u, u), bot_owner_id: null, is_system_bot: true };
}

/** The custom profile field values of a user, keyed by field id, as the API shows them. */
export function profileData(db: Db, userId: number): Record<string, { value: string; rendered_value?: string }> {
  const rows = stmt(db, 'SELECT field_id, value, rendered_value FROM custom_profile_field_value WHERE user_id = ?').all(userId) as {
    field_id: number;
    value: string;
    rendered_value: string | null;
  }[];
  const out: Record<string, { value: string; rendered_value?: string }> = {};
  for (const r of rows) out[r.field_id] = r.rendered_value === null ? { value: r.value } : { value: r.value, rendered_value: r.rendered_value };
  return out;
}

/** The own-user object of GET /users/me: every field of the spec's table. */
export function formatOwnUser(db: Db, u: UserRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    avatar_url: avatarUrl(u),
    avatar_version: u.avatar_version,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    is_admin: isAdmin(u),
    is_owner: isOwner(u),
    is_guest: isGuest(u),
    is_bot: isBot(u),
    is_active: u.is_active === 1,
    is_imported_stub: u.is_imported_stub === 1,
    role: u.role,
    timezone: u.timezone,
    date_joined: isoTime(u.date_joined),
    max_message_id: maxMessageId(db, u.id),
    user_id: u.id,
  };
  if (isBot(u)) {
    out.bot_type = u.bot_type;
    out.bot_owner_id = u.bot_owner_id;
  } else {
    out.profile_data = profileData(db, u.id);
  }
  return out;
}

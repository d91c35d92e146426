// Bots: create, edit, deactivate, regenerate API keys. realm_bot events go to the bot's owner and the
// organization's administrators (Zulip's bot_owner_user_ids); realm_user events to everyone.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { isUserInGroup } from '../lib/groups';
import { getRealmById } from '../lib/realm';
import { BOT_TYPE, ROLE, ROLES } from '../lib/roles';
import { newApiKey } from '../lib/secrets';
import { accessStreamByName } from '../lib/streams';
import {
  avatarUrl,
  botAudience,
  canAdminUser,
  findUserByDeliveryEmail,
  findUserById,
  isAdmin,
  isBot,
  isOwner,
  isSystemBot,
  NOT_SYSTEM_BOT_SQL,
  type UserRow,
} from '../lib/users';
import { checkFullName, isValidEmail } from '../lib/validate';
import { checkUniqueName } from '../lib/realm-settings';
import { requireMemberOrAdmin } from './user-groups';
import { activeUserIds, deactivateAccount, doCreateUser } from './users';

const SERVICE_INTERFACES = [1, 2]; // Zulip's Service.GENERIC, Service.SLACK

function streamName(app: App, id: unknown): string | null {
  if (typeof id !== 'number') return null;
  return (stmt(app.db, 'SELECT name FROM stream WHERE id = ?').get(id) as { name: string } | undefined)?.name ?? null;
}

function services(app: App, bot: UserRow): Record<string, unknown>[] {
  const rows = stmt(app.db, 'SELECT name, base_url, interface, config FROM bot_service WHERE bot_id = ? ORDER BY id').all(bot.id) as {
    name: string;
    base_url: string;
    interface: number;
    config: string;
  }[];
  return rows.map((s) => {
    const config = JSON.parse(s.config) as Record<string, unknown>;
    if (bot.bot_type === BOT_TYPE.EMBEDDED) return { service_name: s.name, config_data: config };
    return { base_url: s.base_url, interface: s.interface, token: typeof config.token === 'string' ? config.token : '' };
  });
}

/** The realm_bot dictionary (register state and add events). */
export function formatRealmBot(app: App, b: UserRow): Record<string, unknown> {
  return {
    email: b.email,
    user_id: b.id,
    avatar_url: avatarUrl(b),
    api_key: b.api_key,
    full_name: b.full_name,
    is_active: b.is_active === 1,
    bot_type: b.bot_type,
    default_sending_stream: streamName(app, b.default_sending_stream_id),
    default_events_register_stream: streamName(app, b.default_events_register_stream_id),
    default_all_public_streams: b.default_all_public_streams === 1,
    owner_id: b.bot_owner_id,
    services: services(app, b),
  };
}

/** GET /bots entry (Zulip's bot_info). */
export function formatBotInfo(app: App, b: UserRow): Record<string, unknown> {
  return {
    username: b.email,
    full_name: b.full_name,
    api_key: b.api_key,
    avatar_url: avatarUrl(b),
    default_sending_stream: streamName(app, b.default_sending_stream_id),
    default_events_register_stream: streamName(app, b.default_events_register_stream_id),
    default_all_public_streams: b.default_all_public_streams === 1,
  };
}

/**
 * GET /bots: the caller's active bots; administrators see every active bot of the organization, never
 * the system bots (whose keys nobody may hold). Guests and bots are refused, as Zulip's
 * require_member_or_admin does.
 */
export function listBots(app: App, user: UserRow): Record<string, unknown>[] {
  requireMemberOrAdmin(user);
  const rows = (
    isAdmin(user)
      ? stmt(app.db, `SELECT * FROM user u WHERE realm_id = ? AND bot_type IS NOT NULL AND is_active = 1 AND ${NOT_SYSTEM_BOT_SQL} ORDER BY id`).all(user.realm_id)
      : stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND bot_type IS NOT NULL AND is_active = 1 AND bot_owner_id = ? ORDER BY id').all(
          user.realm_id,
          user.id,
        )
  ) as UserRow[];
  return rows.map((b) => formatBotInfo(app, b));
}

/** Zulip's check_bot_name_available: no active user of the organization has that name. */
function checkBotNameAvailable(app: App, realmId: number, fullName: string, exceptId?: number): void {
  const dup = stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND full_name = ? COLLATE NOCASE AND is_active = 1 AND id != ?').get(
    realmId,
    fullName,
    exceptId ?? -1,
  );
  if (dup) throw errors.badRequest('Name is already in use.');
}

/** Zulip's check_can_create_bot: can_create_bots_group, or can_create_write_only_bots_group for incoming webhooks. */
function checkCanCreateBot(app: App, user: UserRow, botType: number): void {
  const realm = getRealmById(app.db, user.realm_id);
  const inGroup = (setting: string) => typeof realm?.[setting] === 'number' && isUserInGroup(app.db, user.id, realm[setting] as number);
  if (inGroup('can_create_bots_group')) return;
  if (botType === BOT_TYPE.INCOMING_WEBHOOK && inGroup('can_create_write_only_bots_group')) return;
  throw errors.insufficientPermission();
}

/** Django's URLValidator.max_length, which Zulip's check_url applies. */
const MAX_PAYLOAD_URL_LENGTH = 2048;

/** Zulip's check_url (Django's URLValidator) for the two parameters that take a bot's URL. */
function checkPayloadUrl(url: string, varName: 'payload_url' | 'service_payload_url' = 'payload_url'): void {
  let ok = false;
  const invalid = () => errors.badRequest('Invalid {var_name}: Value error, Not a URL', { var_name: varName });
  if (url.length > MAX_PAYLOAD_URL_LENGTH) throw invalid();
  try {
    const u = new URL(url);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    ok = false;
  }
  if (!ok) throw invalid();
}

export interface NewBot {
  fullName: string;
  shortName: string;
  botType: number;
  payloadUrl: string;
  interfaceType: number;
  serviceName?: string;
  configData: Record<string, string>;
  defaultSendingStream?: string;
  defaultEventsRegisterStream?: string;
  defaultAllPublicStreams?: boolean;
}

/** POST /bots: the bot's email is `{short_name}-bot@{the owner's email domain}`. */
export function doCreateBot(app: App, user: UserRow, spec: NewBot): Record<string, unknown> {
  requireMemberOrAdmin(user);
  return app.batch.write(() => {
    // Zulip's order of checks (add_bot_backend); payload_url is a typed parameter, so it comes first.
    if (spec.botType === BOT_TYPE.OUTGOING_WEBHOOK) checkPayloadUrl(spec.payloadUrl);
    const shortName = spec.shortName.trim();
    if (shortName === '') throw errors.badRequest('Bad name or username');
    const fullName = checkFullName(spec.fullName);
    checkUniqueName(app.db, user.realm_id, fullName, null);
    if (spec.botType === BOT_TYPE.EMBEDDED) {
      // No embedded bot handlers ship with Parley.
      throw errors.badRequest('Embedded bots are not enabled.');
    }
    const domain = user.delivery_email.slice(user.delivery_email.lastIndexOf('@') + 1);
    const email = `${shortName}-bot@${domain}`;
    if (!isValidEmail(email)) throw errors.badRequest('Bad name or username');
    if (findUserByDeliveryEmail(app.db, user.realm_id, email)) throw errors.badRequest('Email is already in use.');
    checkBotNameAvailable(app, user.realm_id, fullName);
    checkCanCreateBot(app, user, spec.botType);
    if (![BOT_TYPE.GENERIC, BOT_TYPE.INCOMING_WEBHOOK, BOT_TYPE.OUTGOING_WEBHOOK, BOT_TYPE.EMBEDDED].includes(spec.botType as 1)) {
      throw errors.badRequest('Invalid bot type');
    }
    if (!SERVICE_INTERFACES.includes(spec.interfaceType)) throw errors.badRequest('Invalid interface type');
    const sending = spec.defaultSendingStream ? accessStreamByName(app.db, user, spec.defaultSendingStream) : null;
    const register = spec.defaultEventsRegisterStream ? accessStreamByName(app.db, user, spec.defaultEventsRegisterStream) : null;
    const created = doCreateUser(app, {
      realmId: user.realm_id,
      email,
      password: null,
      fullName,
      role: ROLE.MEMBER,
      botType: spec.botType,
      botOwnerId: user.id,
      acting: user,
    });
    stmt(
      app.db,
      'UPDATE user SET default_sending_stream_id = ?, default_events_register_stream_id = ?, default_all_public_streams = ? WHERE id = ?',
    ).run(sending?.id ?? null, register?.id ?? null, spec.defaultAllPublicStreams ? 1 : 0, created.userId);
    if (spec.botType === BOT_TYPE.OUTGOING_WEBHOOK) {
      stmt(app.db, 'INSERT INTO bot_service (bot_id, name, base_url, interface, config) VALUES (?, ?, ?, ?, ?)').run(
        created.userId,
        spec.serviceName || shortName,
        spec.payloadUrl,
        spec.interfaceType,
        JSON.stringify({ token: newApiKey() }),
      );
    }
    const bot = findUserById(app.db, user.realm_id, created.userId) as UserRow;
    const dict = formatRealmBot(app, bot);
    app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'add', bot: dict }, botAudience(app.db, bot)));
    return {
      user_id: bot.id,
      api_key: bot.api_key,
      avatar_url: avatarUrl(bot),
      default_sending_stream: dict.default_sending_stream,
      default_events_register_stream: dict.default_events_register_stream,
      default_all_public_streams: dict.default_all_public_streams,
    };
  });
}

/**
 * Zulip's access_bot_by_id: "No such bot" unless a bot of the realm the caller may administer (see
 * canAdminUser: never the caller itself). System bots are "No such bot": in Zulip they belong to no
 * organization.
 */
export function accessBotById(app: App, user: UserRow, botId: number): UserRow {
  const bot = findUserById(app.db, user.realm_id, botId);
  if (!bot || !isBot(bot) || isSystemBot(bot)) throw errors.badRequest('No such bot');
  if (!canAdminUser(user, bot)) throw errors.insufficientPermission();
  return bot;
}

export interface BotChange {
  fullName?: string;
  botOwnerId?: number;
  role?: number;
  defaultSendingStream?: string;
  defaultEventsRegisterStream?: string;
  defaultAllPublicStreams?: boolean;
  servicePayloadUrl?: string;
  serviceInterface?: number;
}

/**
 * PATCH /bots/{id}: returns Zulip's summary of the bot after the change. Bots are refused (Zulip's
 * require_member_or_admin): a bot that could name a new owner would reach that owner's channels.
 */
export function doUpdateBot(app: App, user: UserRow, botId: number, change: BotChange): Record<string, unknown> {
  requireMemberOrAdmin(user);
  return app.batch.write(() => {
    const bot = accessBotById(app, user, botId);
    const everyone = () => activeUserIds(app, bot.realm_id);
    const botUpdate = (data: Record<string, unknown>) =>
      app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...data } }, botAudience(app.db, current())));
    const current = () => findUserById(app.db, bot.realm_id, bot.id) as UserRow;
    if (change.fullName !== undefined && change.fullName.trim() !== '' && change.fullName !== bot.full_name) {
      const name = checkFullName(change.fullName);
      checkUniqueName(app.db, bot.realm_id, name, bot.id);
      checkBotNameAvailable(app, bot.realm_id, name, bot.id);
      stmt(app.db, 'UPDATE user SET full_name = ? WHERE id = ?').run(name, bot.id);
      botUpdate({ full_name: name });
      app.batch.onCommit(() => app.events.send({ type: 'realm_user', op: 'update', person: { user_id: bot.id, full_name: name } }, everyone()));
    }
    if (change.role !== undefined && change.role !== bot.role) {
      if (!ROLES.includes(change.role)) throw errors.badRequest('Invalid role');
      if (!isAdmin(user)) throw errors.adminRequired();
      if ((change.role === ROLE.OWNER || bot.role === ROLE.OWNER) && !isOwner(user)) throw errors.ownerRequired();
      stmt(app.db, 'UPDATE user SET role = ? WHERE id = ?').run(change.role, bot.id);
      app.batch.onCommit(() => app.events.send({ type: 'realm_user', op: 'update', person: { user_id: bot.id, role: change.role } }, everyone()));
    }
    if (change.botOwnerId !== undefined && change.botOwnerId !== bot.bot_owner_id) {
      const owner = findUserById(app.db, bot.realm_id, change.botOwnerId);
      if (!owner) throw errors.badRequest('Failed to change owner, no such user');
      if (!owner.is_active) throw errors.badRequest('Failed to change owner, user is deactivated');
      if (isBot(owner)) throw errors.badRequest("Failed to change owner, bots can't own other bots");
      const previous = bot.bot_owner_id;
      // zulip-compat: a new owner means a new key. A bot acts with its owner's access (their private
      // channels), and whoever held the key before (the previous owner, who may hand the bot to
      // someone on purpose) would otherwise act with the new owner's; Zulip keeps the key.
      const apiKey = newApiKey();
      stmt(app.db, 'UPDATE user SET bot_owner_id = ?, api_key = ? WHERE id = ?').run(owner.id, apiKey, bot.id);
      app.batch.onCommit(() => {
        // The previous owner (unless an administrator) loses sight of the bot; the new one gains it.
        const admins = new Set(botAudience(app.db, { ...current(), bot_owner_id: null }));
        if (previous !== null && !admins.has(previous)) {
          app.events.send({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }, [previous]);
        }
        if (!admins.has(owner.id)) app.events.send({ type: 'realm_bot', op: 'add', bot: formatRealmBot(app, current()) }, [owner.id]);
        app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: owner.id } }, [...admins]);
        app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: apiKey } }, [...admins]);
        app.events.send({ type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: owner.id } }, everyone());
      });
    }
    const streamSetting = (value: string | undefined, column: string, key: string) => {
      if (value === undefined) return;
      const stream = value === '' ? null : accessStreamByName(app.db, user, value);
      // column names come from the two literals below, never from input
      app.db.prepare(`UPDATE user SET ${column} = ? WHERE id = ?`).run(stream?.id ?? null, bot.id);
      botUpdate({ [key]: stream?.name ?? null });
    };
    streamSetting(change.defaultSendingStream, 'default_sending_stream_id', 'default_sending_stream');
    streamSetting(change.defaultEventsRegisterStream, 'default_events_register_stream_id', 'default_events_register_stream');
    if (change.defaultAllPublicStreams !== undefined) {
      stmt(app.db, 'UPDATE user SET default_all_public_streams = ? WHERE id = ?').run(change.defaultAllPublicStreams ? 1 : 0, bot.id);
      botUpdate({ default_all_public_streams: change.defaultAllPublicStreams });
    }
    if (change.servicePayloadUrl !== undefined || change.serviceInterface !== undefined) {
      if (change.serviceInterface !== undefined && !SERVICE_INTERFACES.includes(change.serviceInterface)) {
        throw errors.badRequest('Invalid interface type');
      }
      if (change.servicePayloadUrl !== undefined) checkPayloadUrl(change.servicePayloadUrl, 'service_payload_url');
      if (bot.bot_type === BOT_TYPE.OUTGOING_WEBHOOK) {
        if (change.servicePayloadUrl !== undefined) stmt(app.db, 'UPDATE bot_service SET base_url = ? WHERE bot_id = ?').run(change.servicePayloadUrl, bot.id);
        if (change.serviceInterface !== undefined) stmt(app.db, 'UPDATE bot_service SET interface = ? WHERE bot_id = ?').run(change.serviceInterface, bot.id);
        const svc = services(app, bot);
        botUpdate({ services: svc });
      }
    }
    const after = current();
    const out: Record<string, unknown> = {
      full_name: after.full_name,
      avatar_url: avatarUrl(after),
      service_interface: change.serviceInterface ?? null,
      service_payload_url: change.servicePayloadUrl ?? null,
      config_data: null,
      default_sending_stream: streamName(app, after.default_sending_stream_id),
      default_events_register_stream: streamName(app, after.default_events_register_stream_id),
      default_all_public_streams: after.default_all_public_streams === 1,
    };
    if (after.bot_owner_id !== null) out.bot_owner = (findUserById(app.db, after.realm_id, after.bot_owner_id) as UserRow).email;
    return out;
  });
}

/** DELETE /bots/{id}: deactivates the bot (as Zulip, no bot check beyond access_bot_by_id's). */
export function doDeactivateBot(app: App, user: UserRow, botId: number): void {
  app.batch.write(() => {
    const bot = accessBotById(app, user, botId);
    if (!bot.is_active) throw errors.badRequest('User is deactivated');
    deactivateAccount(app, bot);
  });
}

/** GET /bots/{id}/api_key (FL 463): the key of a bot the caller administers; not for guests or bots. */
export function getBotApiKey(app: App, user: UserRow, botId: number): string {
  requireMemberOrAdmin(user);
  return accessBotById(app, user, botId).api_key;
}

/** POST /bots/{id}/api_key/regenerate → the new key. Bots are refused (Zulip's require_member_or_admin). */
export function doRegenerateBotApiKey(app: App, user: UserRow, botId: number): string {
  requireMemberOrAdmin(user);
  return app.batch.write(() => {
    const bot = accessBotById(app, user, botId);
    const key = newApiKey();
    stmt(app.db, 'UPDATE user SET api_key = ? WHERE id = ?').run(key, bot.id);
    app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: key } }, botAudience(app.db, bot)));
    return key;
  });
}

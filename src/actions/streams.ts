// Channels: creation (also through subscribing), updates, archiving, default channels and folders.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { codePoints } from '../http/params';
import { nowSeconds } from '../lib/clock';
import { isUserInGroup, storeGroupSetting, type GroupSettingValue } from '../lib/groups';
import { getRealmById, systemGroupId, type RealmRow } from '../lib/realm';
import { renderPlain } from '../lib/render';
import { REALM_CHANNEL_SETTINGS, realmExtraSettings } from '../lib/realm-settings';
import { invalidCharacterPosition } from '../lib/validate';
import {
  canAccessStreamMetadata,
  findStreamById,
  findStreamByName,
  formatStream,
  MAX_STREAM_DESCRIPTION_LENGTH,
  MAX_STREAM_NAME_LENGTH,
  STREAM_GROUP_SETTINGS,
  type StreamGroupSetting,
  type StreamRow,
} from '../lib/streams';
import { findUserById, isAdmin, isGuest, isOwner, type UserRow } from '../lib/users';
import { activeUserIds } from './users';

export type RetentionInput = 'realm_default' | 'unlimited' | 'forever' | number;
export type TopicsPolicy = 'inherit' | 'allow_empty_topic' | 'disable_empty_topic' | 'empty_topic_only';
export const TOPICS_POLICIES: readonly TopicsPolicy[] = ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'];

export interface ChannelSpec {
  name: string;
  description?: string;
  inviteOnly?: boolean;
  isWebPublic?: boolean;
  isDefaultStream?: boolean;
  historyPublicToSubscribers?: boolean | null;
  messageRetentionDays?: RetentionInput;
  folderId?: number | null;
  topicsPolicy?: TopicsPolicy;
  groupSettings?: Partial<Record<StreamGroupSetting, GroupSettingValue>>;
}

/** Zulip's check_stream_name: trimmed, non-empty, at most 60 code points, no control characters. */
export function checkStreamName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw errors.badRequest("Channel name can't be empty.");
  if (codePoints(name) > MAX_STREAM_NAME_LENGTH) {
    throw errors.badRequest('Channel name too long (limit: {limit} characters).', { limit: MAX_STREAM_NAME_LENGTH });
  }
  const position = invalidCharacterPosition(name);
  if (position) throw errors.badRequest('Invalid character in channel name, at position {position}.', { position });
  return name;
}

export function checkStreamDescription(raw: string): string {
  if (codePoints(raw) > MAX_STREAM_DESCRIPTION_LENGTH) {
    throw errors.badRequest('description is too long (limit: {max_length} characters)', { max_length: MAX_STREAM_DESCRIPTION_LENGTH });
  }
  // Zulip stores descriptions on one line.
  return raw.replace(/\r?\n/g, ' ');
}

/** The stored form of message_retention_days: NULL realm default, -1 unlimited, N days. */
export function retentionToColumn(value: RetentionInput): number | null {
  if (value === 'realm_default') return null;
  // zulip-compat: 'forever' is the pre-feature-level-91 spelling of 'unlimited'.
  if (value === 'unlimited' || value === 'forever') return -1;
  if (value <= 0) throw errors.badRequest('Bad value for \'message_retention_days\': {value}', { value });
  return value;
}

/** Default group settings of a new channel (Zulip's defaults). */
function defaultGroupSettings(app: App, realmId: number, creator: UserRow | null, now: number): Record<StreamGroupSetting, number> {
  const sys = (name: string) => systemGroupId(app.db, realmId, name);
  // zulip-compat: "stream_creator_or_nobody"; organization administrators may administer every channel anyway.
  const administer = creator
    ? storeGroupSetting(app.db, realmId, 'can_administer_channel_group', { direct_members: [creator.id], direct_subgroups: [] }, now)
    : sys('role:nobody');
  return {
    can_add_subscribers_group: sys('role:nobody'),
    can_administer_channel_group: administer,
    can_create_topic_group: sys('role:everyone'),
    can_delete_any_message_group: sys('role:nobody'),
    can_delete_own_message_group: sys('role:nobody'),
    can_move_messages_out_of_channel_group: sys('role:nobody'),
    can_move_messages_within_channel_group: sys('role:nobody'),
    can_remove_subscribers_group: sys('role:administrators'),
    can_resolve_topics_group: sys('role:nobody'),
    can_send_message_group: sys('role:everyone'),
    can_subscribe_group: sys('role:nobody'),
  };
}

/** Permission and validity checks for creating a channel (Zulip's check_channel_creation_permissions). */
export function checkCreateChannel(app: App, user: UserRow, realm: RealmRow, spec: ChannelSpec): void {
  if (isGuest(user)) throw errors.notForGuests();
  const inviteOnly = spec.inviteOnly ?? false;
  const groupFor = inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group';
  if (!isUserInGroup(app.db, user.id, realm[groupFor] as number)) throw errors.insufficientPermission();
  if (spec.isWebPublic) {
    if (!app.config.webPublicStreamsEnabled || !realm.enable_spectator_access) throw errors.badRequest('Web-public channels are not enabled.');
    if (!isUserInGroup(app.db, user.id, realm.can_create_web_public_channel_group as number)) throw errors.insufficientPermission();
  }
  if (spec.isDefaultStream) {
    if (!isAdmin(user)) throw errors.insufficientPermission();
    if (inviteOnly) throw errors.badRequest('A default channel cannot be private.');
  }
  const retention = spec.messageRetentionDays ?? 'realm_default';
  if (retention !== 'realm_default' && !isOwner(user)) throw errors.ownerRequired();
  if (spec.topicsPolicy && spec.topicsPolicy !== 'inherit' && !isUserInGroup(app.db, user.id, realm.can_set_topics_policy_group as number)) {
    throw errors.badRequest('Insufficient permission');
  }
}

/** Creates a channel (no subscriptions) and announces it to everyone who can see it. */
export function doCreateChannel(app: App, creator: UserRow | null, realmId: number, spec: ChannelSpec): StreamRow {
  return app.batch.write(() => {
    const now = nowSeconds(app.clock);
    const name = checkStreamName(spec.name);
    const existing = findStreamByName(app.db, realmId, name);
    if (existing) {
      throw new JsonableError("Channel '{channel_name}' already exists", {
        code: 'CHANNEL_ALREADY_EXISTS',
        status: 409,
        data: { channel_name: existing.name },
      });
    }
    const description = checkStreamDescription(spec.description ?? '');
    const inviteOnly = spec.inviteOnly ?? false;
    // Public channels always share history; private ones do unless asked otherwise.
    const historyPublic = !inviteOnly ? true : (spec.historyPublicToSubscribers ?? false);
    const topicsPolicy = spec.topicsPolicy ?? 'inherit';
    // A brand-new channel has no messages, so empty_topic_only is always allowed here.
    if (spec.folderId !== undefined && spec.folderId !== null) {
      const folder = stmt(app.db, 'SELECT id FROM channel_folder WHERE realm_id = ? AND id = ?').get(realmId, spec.folderId);
      if (!folder) throw errors.badRequest('Invalid channel folder ID');
    }
    const settings = defaultGroupSettings(app, realmId, creator, now);
    for (const [setting, value] of Object.entries(spec.groupSettings ?? {}) as [StreamGroupSetting, GroupSettingValue][]) {
      settings[setting] = storeGroupSetting(app.db, realmId, setting, value, now, {
        allowNobody: setting !== 'can_create_topic_group',
      });
    }
    if (inviteOnly && !historyPublic && settings.can_create_topic_group !== systemGroupId(app.db, realmId, 'role:everyone')) {
      throw errors.badRequest("'can_create_topic_group' must be 'role:everyone' for private channels with protected history.");
    }
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO stream (realm_id, name, description, rendered_description, date_created, creator_id, invite_only, is_web_public,
           history_public_to_subscribers, message_retention_days, topics_policy, folder_id,
           ${STREAM_GROUP_SETTINGS.join(', ')})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${STREAM_GROUP_SETTINGS.map(() => '?').join(', ')})`,
      ).run(
        realmId,
        name,
        description,
        renderPlain(app, realmId, description),
        now,
        creator?.id ?? null,
        inviteOnly ? 1 : 0,
        spec.isWebPublic ? 1 : 0,
        historyPublic ? 1 : 0,
        retentionToColumn(spec.messageRetentionDays ?? 'realm_default'),
        topicsPolicy,
        spec.folderId ?? null,
        ...STREAM_GROUP_SETTINGS.map((s) => settings[s]),
      ).lastInsertRowid,
    );
    if (spec.isDefaultStream) stmt(app.db, 'INSERT OR IGNORE INTO default_stream (realm_id, stream_id) VALUES (?, ?)').run(realmId, id);
    const stream = findStreamById(app.db, realmId, id) as StreamRow;
    app.batch.onCommit(() => {
      const fresh = findStreamById(app.db, realmId, id) as StreamRow;
      app.events.send({ type: 'stream', op: 'create', streams: [formatStream(app.db, fresh)] }, streamViewers(app, fresh));
    });
    if (!inviteOnly) claimAnnouncementSettings(app, realmId, id);
    return stream;
  });
}

/**
 * zulip-compat: Zulip creates #general with the organization and makes it the new-channel and Zulip-update
 * announcements channel. Parley creates no channel with the organization, so the first public channel
 * takes both roles, each unless it was ever set (an administrator's choice, -1 included, stays).
 */
function claimAnnouncementSettings(app: App, realmId: number, streamId: number): void {
  const extra = realmExtraSettings(getRealmById(app.db, realmId));
  const claimed = (['new_stream_announcements_stream_id', 'zulip_update_announcements_stream_id'] as const).filter((k) => !(k in extra));
  if (claimed.length === 0) return;
  for (const k of claimed) extra[k] = streamId;
  stmt(app.db, 'UPDATE realm SET extra_settings = ? WHERE id = ?').run(JSON.stringify(extra), realmId);
  app.batch.onCommit(() => {
    const users = activeUserIds(app, realmId);
    for (const k of claimed) app.events.send({ type: 'realm', op: 'update', property: k, value: streamId }, users);
  });
}

/** Zulip's maybe_set_moderation_or_announcement_channels_none: an archived channel announces nothing. */
function releaseAnnouncementSettings(app: App, realmId: number, streamId: number): void {
  const extra = realmExtraSettings(getRealmById(app.db, realmId));
  const released = REALM_CHANNEL_SETTINGS.filter((k) => extra[k] === streamId);
  if (released.length === 0) return;
  for (const k of released) extra[k] = -1;
  stmt(app.db, 'UPDATE realm SET extra_settings = ? WHERE id = ?').run(JSON.stringify(extra), realmId);
  const data = Object.fromEntries(released.map((k) => [k, -1]));
  app.batch.onCommit(() => app.events.send({ type: 'realm', op: 'update_dict', property: 'default', data }, activeUserIds(app, realmId)));
}

/** Every active user who can see channel `s`: who hears about it. */
export function streamViewers(app: App, s: StreamRow): number[] {
  return activeUserIds(app, s.realm_id).filter((uid) => {
    const u = findUserById(app.db, s.realm_id, uid);
    return u !== null && canAccessStreamMetadata(app.db, u, s);
  });
}

/** Realm of a user, for permission checks. */
export function realmOf(app: App, user: UserRow): RealmRow {
  return getRealmById(app.db, user.realm_id) as RealmRow;
}

export interface ChannelChange {
  newName?: string;
  description?: string;
  isPrivate?: boolean;
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  messageRetentionDays?: RetentionInput;
  topicsPolicy?: TopicsPolicy;
  folderId?: number | null;
  isDefaultStream?: boolean;
  groupSettings?: Partial<Record<StreamGroupSetting, { new: GroupSettingValue; old?: GroupSettingValue } | GroupSettingValue>>;
}

/** PATCH /streams/{id}: channel administrators change properties; one stream update event per property. */
export function doUpdateChannel(app: App, user: UserRow, streamId: number, change: ChannelChange): void {
  app.batch.write(() => {
    const s = findStreamById(app.db, user.realm_id, streamId);
    if (!s || !canAccessStreamMetadata(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
    if (!isAdmin(user) && !isUserInGroup(app.db, user.id, s.can_administer_channel_group)) {
      throw errors.badRequest('You do not have permission to administer this channel.');
    }
    const now = nowSeconds(app.clock);
    const updates: { property: string; value: unknown; column?: string; stored?: unknown; extra?: Record<string, unknown> }[] = [];
    if (change.newName !== undefined) {
      const name = checkStreamName(change.newName);
      const other = findStreamByName(app.db, user.realm_id, name);
      if (other && other.id !== s.id) {
        throw new JsonableError("Channel '{channel_name}' already exists", { code: 'CHANNEL_ALREADY_EXISTS', status: 409, data: { channel_name: other.name } });
      }
      if (name !== s.name) updates.push({ property: 'name', value: name, column: 'name', stored: name });
    }
    if (change.description !== undefined) {
      const d = checkStreamDescription(change.description);
      const html = renderPlain(app, user.realm_id, d);
      stmt(app.db, 'UPDATE stream SET rendered_description = ? WHERE id = ?').run(html, s.id);
      updates.push({ property: 'description', value: d, column: 'description', stored: d, extra: { rendered_description: html } });
    }
    if (change.isPrivate !== undefined || change.historyPublicToSubscribers !== undefined || change.isWebPublic !== undefined) {
      const inviteOnly = change.isPrivate ?? s.invite_only === 1;
      const isDefault = change.isDefaultStream ?? stmt(app.db, 'SELECT 1 FROM default_stream WHERE stream_id = ?').get(s.id) !== undefined;
      if (inviteOnly && isDefault) throw errors.badRequest('A default channel cannot be private.');
      const webPublic = change.isWebPublic ?? (inviteOnly ? false : s.is_web_public === 1);
      if (webPublic && (!app.config.webPublicStreamsEnabled || !realmOf(app, user).enable_spectator_access)) {
        throw errors.badRequest('Web-public channels are not enabled.');
      }
      const history = !inviteOnly ? true : (change.historyPublicToSubscribers ?? s.history_public_to_subscribers === 1);
      stmt(app.db, 'UPDATE stream SET invite_only = ?, is_web_public = ?, history_public_to_subscribers = ? WHERE id = ?').run(
        inviteOnly ? 1 : 0,
        webPublic ? 1 : 0,
        history ? 1 : 0,
        s.id,
      );
      updates.push({
        property: 'invite_only',
        value: inviteOnly,
        extra: { history_public_to_subscribers: history, is_web_public: webPublic },
      });
    }
    if (change.messageRetentionDays !== undefined) {
      if (!(user.role === 100)) throw errors.ownerRequired();
      const stored = retentionToColumn(change.messageRetentionDays);
      updates.push({ property: 'message_retention_days', value: stored, column: 'message_retention_days', stored });
    }
    if (change.topicsPolicy !== undefined) {
      if (change.topicsPolicy === 'empty_topic_only') {
        const other = stmt(app.db, "SELECT 1 FROM message WHERE stream_id = ? AND topic_key <> '' LIMIT 1").get(s.id);
        if (other) throw errors.badRequest('To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.');
      }
      updates.push({ property: 'topics_policy', value: change.topicsPolicy, column: 'topics_policy', stored: change.topicsPolicy });
    }
    if (change.folderId !== undefined) {
      if (change.folderId !== null && !stmt(app.db, 'SELECT 1 FROM channel_folder WHERE realm_id = ? AND id = ?').get(user.realm_id, change.folderId)) {
        throw errors.badRequest('Invalid channel folder ID');
      }
      updates.push({ property: 'folder_id', value: change.folderId, column: 'folder_id', stored: change.folderId });
    }
    for (const [setting, raw] of Object.entries(change.groupSettings ?? {}) as [StreamGroupSetting, { new: GroupSettingValue } | GroupSettingValue][]) {
      const value = typeof raw === 'object' && raw !== null && 'new' in raw ? raw.new : (raw as GroupSettingValue);
      const id = storeGroupSetting(app.db, user.realm_id, setting, value, now, { allowNobody: setting !== 'can_create_topic_group' });
      updates.push({ property: setting, value, column: setting, stored: id });
    }
    if (change.isDefaultStream !== undefined) {
      if (!isAdmin(user)) throw errors.insufficientPermission();
      if (change.isDefaultStream) stmt(app.db, 'INSERT OR IGNORE INTO default_stream (realm_id, stream_id) VALUES (?, ?)').run(user.realm_id, s.id);
      else stmt(app.db, 'DELETE FROM default_stream WHERE realm_id = ? AND stream_id = ?').run(user.realm_id, s.id);
    }
    for (const u of updates) {
      // column names come from the fixed properties above, never from input
      if (u.column) app.db.prepare(`UPDATE stream SET ${u.column} = ? WHERE id = ?`).run(u.stored as never, s.id);
    }
    const after = findStreamById(app.db, user.realm_id, s.id) as StreamRow;
    if (after.invite_only && !after.history_public_to_subscribers && after.can_create_topic_group !== systemGroupId(app.db, user.realm_id, 'role:everyone')) {
      throw errors.badRequest("'can_create_topic_group' must be 'role:everyone' for private channels with protected history.");
    }
    app.batch.onCommit(() => {
      // Everyone who could see the channel before or can see it now hears about the change.
      const viewers = new Set([...streamViewers(app, s), ...streamViewers(app, after)]);
      for (const u of updates) {
        app.events.send({ type: 'stream', op: 'update', stream_id: s.id, name: s.name, property: u.property, value: u.value, ...(u.extra ?? {}) }, [...viewers]);
      }
    });
  });
}

/** DELETE /streams/{id}: archives the channel (messages stay; it leaves listings and refuses new messages). */
export function doArchiveChannel(app: App, user: UserRow, streamId: number): void {
  app.batch.write(() => {
    const s = findStreamById(app.db, user.realm_id, streamId);
    if (!s || !canAccessStreamMetadata(app.db, user, s) || s.deactivated) throw errors.badRequest('Invalid channel ID');
    if (!isAdmin(user) && !isUserInGroup(app.db, user.id, s.can_administer_channel_group)) {
      throw errors.badRequest('You do not have permission to administer this channel.');
    }
    const viewers = streamViewers(app, s);
    stmt(app.db, 'UPDATE stream SET deactivated = 1 WHERE id = ?').run(s.id);
    stmt(app.db, 'DELETE FROM default_stream WHERE stream_id = ?').run(s.id);
    releaseAnnouncementSettings(app, user.realm_id, s.id);
    app.batch.onCommit(() => {
      const after = findStreamById(app.db, user.realm_id, s.id) as StreamRow;
      app.events.send({ type: 'stream', op: 'delete', streams: [formatStream(app.db, after)], stream_ids: [s.id] }, viewers);
    });
  });
}

/** POST/DELETE /default_streams (administrators). */
export function doSetDefaultStream(app: App, user: UserRow, streamId: number, on: boolean): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const s = findStreamById(app.db, user.realm_id, streamId);
    if (!s || !canAccessStreamMetadata(app.db, user, s) || s.deactivated) throw errors.badRequest('Invalid channel ID');
    if (on) {
      if (s.invite_only) throw errors.badRequest('Private channels cannot be made default.');
      stmt(app.db, 'INSERT OR IGNORE INTO default_stream (realm_id, stream_id) VALUES (?, ?)').run(user.realm_id, s.id);
    } else {
      stmt(app.db, 'DELETE FROM default_stream WHERE realm_id = ? AND stream_id = ?').run(user.realm_id, s.id);
    }
    app.batch.onCommit(() => {
      const rows = stmt(app.db, 'SELECT s.* FROM default_stream d JOIN stream s ON s.id = d.stream_id WHERE d.realm_id = ? ORDER BY s.id').all(user.realm_id) as StreamRow[];
      app.events.send({ type: 'default_streams', default_streams: rows.map((r) => formatStream(app.db, r)) }, activeUserIds(app, user.realm_id));
    });
  });
}

/** POST /channel_folders/create (administrators). */
export function doCreateChannelFolder(app: App, user: UserRow, name: string, description: string): number {
  if (!isAdmin(user)) throw errors.adminRequired();
  return app.batch.write(() => {
    const clean = name.trim();
    if (clean === '') throw errors.badRequest('Channel folder name can\'t be empty.');
    if (codePoints(clean) > 60) throw errors.badRequest('name is too long (limit: 60 characters)');
    if (stmt(app.db, 'SELECT 1 FROM channel_folder WHERE realm_id = ? AND name = ? COLLATE NOCASE').get(user.realm_id, clean)) {
      throw errors.badRequest("Channel folder name '{name}' is already in use.", { name: clean });
    }
    const order = (stmt(app.db, 'SELECT coalesce(max("order"), -1) + 1 AS n FROM channel_folder WHERE realm_id = ?').get(user.realm_id) as { n: number }).n;
    const id = Number(
      stmt(
        app.db,
        'INSERT INTO channel_folder (realm_id, name, description, rendered_description, "order", date_created, creator_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(user.realm_id, clean, description, renderPlain(app, user.realm_id, description), order, nowSeconds(app.clock), user.id).lastInsertRowid,
    );
    app.batch.onCommit(() =>
      app.events.send({ type: 'channel_folder', op: 'add', channel_folder: formatFolder(app, id) }, activeUserIds(app, user.realm_id)),
    );
    return id;
  });
}

/** The channel folder object of GET /channel_folders. */
export function formatFolder(app: App, id: number): Record<string, unknown> {
  const f = stmt(app.db, 'SELECT * FROM channel_folder WHERE id = ?').get(id) as Record<string, unknown>;
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    rendered_description: f.rendered_description,
    order: f.order,
    date_created: f.date_created,
    creator_id: f.creator_id,
    is_archived: f.is_archived === 1,
  };
}

/** PATCH /channel_folders/{id} (administrators). */
export function doUpdateChannelFolder(app: App, user: UserRow, id: number, change: { name?: string; description?: string; isArchived?: boolean }): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    if (!stmt(app.db, 'SELECT 1 FROM channel_folder WHERE realm_id = ? AND id = ?').get(user.realm_id, id)) throw errors.badRequest('Invalid channel folder ID');
    const data: Record<string, unknown> = {};
    if (change.name !== undefined) {
      const clean = change.name.trim();
      if (clean === '') throw errors.badRequest('Channel folder name can\'t be empty.');
      const other = stmt(app.db, 'SELECT id FROM channel_folder WHERE realm_id = ? AND name = ? COLLATE NOCASE').get(user.realm_id, clean) as { id: number } | undefined;
      if (other && other.id !== id) throw errors.badRequest("Channel folder name '{name}' is already in use.", { name: clean });
      stmt(app.db, 'UPDATE channel_folder SET name = ? WHERE id = ?').run(clean, id);
      data.name = clean;
    }
    if (change.description !== undefined) {
      const html = renderPlain(app, user.realm_id, change.description);
      stmt(app.db, 'UPDATE channel_folder SET description = ?, rendered_description = ? WHERE id = ?').run(change.description, html, id);
      data.description = change.description;
      data.rendered_description = html;
    }
    if (change.isArchived !== undefined) {
      stmt(app.db, 'UPDATE channel_folder SET is_archived = ? WHERE id = ?').run(change.isArchived ? 1 : 0, id);
      data.is_archived = change.isArchived;
    }
    app.batch.onCommit(() => app.events.send({ type: 'channel_folder', op: 'update', channel_folder_id: id, data }, activeUserIds(app, user.realm_id)));
  });
}

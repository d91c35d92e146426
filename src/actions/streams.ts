// Channels: creation (also through subscribing), updates, archiving, default channels and folders.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { codePoints } from '../http/params';
import { nowSeconds } from '../lib/clock';
import { groupSettingForApi, isUserInGroup, storeGroupSetting, type GroupSettingRules, type GroupSettingValue } from '../lib/groups';
import { getRealmById, systemGroupId, type RealmRow } from '../lib/realm';
import { renderPlain } from '../lib/render';
import { REALM_CHANNEL_SETTINGS, realmExtraSettings } from '../lib/realm-settings';
import { invalidCharacterPosition } from '../lib/validate';
import {
  canAccessStreamContent,
  canAccessStreamMetadata,
  CONTENT_ACCESS_GROUP_SETTINGS,
  defaultStreams,
  findStreamById,
  findStreamByName,
  formatStream,
  MAX_STREAM_DESCRIPTION_LENGTH,
  MAX_STREAM_NAME_LENGTH,
  METADATA_ACCESS_GROUP_SETTINGS,
  STREAM_GROUP_SETTINGS,
  subscriberIds,
  type StreamGroupSetting,
  type StreamRow,
} from '../lib/streams';
import { findUserById, isAdmin, isGuest, isOwner, type UserRow } from '../lib/users';
import {
  accessPermissionsChangedMessage,
  channelArchivedMessage,
  channelRenamedMessage,
  channelUnarchivedMessage,
  descriptionChangedMessage,
  policyName,
  postingPermissionsChangedMessage,
  retentionChangedMessage,
  sendChannelEventsNotice,
  topicsPolicyChangedMessage,
} from './channel-notices';
import { parseGroupSetting, sameGroupSetting } from './realm-settings';
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
  if (value <= 0) throw errors.badValue('message_retention_days', value);
  return value;
}

/**
 * What each group setting may hold. As Zulip's Stream.stream_permission_group_settings
 * (allow_everyone_group=False), the settings that grant access to the channel cannot be role:everyone,
 * which holds guests. can_create_topic_group keeps refusing role:nobody, as Parley always has (Zulip
 * allows it since can_create_topic_group took allow_nobody_group=True).
 */
const GROUP_SETTING_RULES: Record<StreamGroupSetting, GroupSettingRules> = {
  can_add_subscribers_group: { allowEveryone: false },
  can_administer_channel_group: { allowEveryone: false },
  can_create_topic_group: { allowNobody: false },
  can_delete_any_message_group: {},
  can_delete_own_message_group: {},
  can_move_messages_out_of_channel_group: {},
  can_move_messages_within_channel_group: {},
  can_remove_subscribers_group: {},
  can_resolve_topics_group: {},
  can_send_message_group: {},
  can_subscribe_group: { allowEveryone: false },
};

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
      if (setting === 'can_create_topic_group') checkProtectedHistoryTopics(app, realmId, inviteOnly, historyPublic, parseGroupSetting(app, realmId, value));
      settings[setting] = storeGroupSetting(app.db, realmId, setting, value, now, GROUP_SETTING_RULES[setting]);
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
    const stream = findStreamById(app.db, realmId, id) as StreamRow;
    app.batch.onCommit(() => {
      const fresh = findStreamById(app.db, realmId, id) as StreamRow;
      app.events.send({ type: 'stream', op: 'create', streams: [formatStream(app.db, fresh)] }, streamViewers(app, fresh));
    });
    if (spec.isDefaultStream) setDefaultStream(app, realmId, id, true);
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
  isArchived?: boolean;
  groupSettings?: Partial<Record<StreamGroupSetting, GroupSettingChange>>;
}

/** A group setting in PATCH: the new value, or {new, old} where old must match the current value. */
export type GroupSettingChange = { new: GroupSettingValue; old?: GroupSettingValue } | GroupSettingValue;

/**
 * Zulip's access_stream_for_delete_or_update_requiring_metadata_access: organization administrators
 * and the channel's administrators; others who can read the channel are told they may not administer
 * it, and everyone else gets the answer a missing channel gets. Archived channels included.
 */
function accessChannelToAdminister(app: App, user: UserRow, streamId: number): StreamRow {
  const s = findStreamById(app.db, user.realm_id, streamId);
  if (!s) throw errors.badRequest('Invalid channel ID');
  if (isAdmin(user) || (!isGuest(user) && isUserInGroup(app.db, user.id, s.can_administer_channel_group))) return s;
  if (canAccessStreamContent(app.db, user, s)) throw errors.badRequest('You do not have permission to administer this channel.');
  throw errors.badRequest('Invalid channel ID');
}

/**
 * PATCH /streams/{id} (Zulip's update_stream_backend): every check and change in Zulip's order, each
 * change with its events and its Notification Bot notice; the request is one write, so a refused
 * later change leaves the earlier ones unapplied.
 */
export function doUpdateChannel(app: App, user: UserRow, streamId: number, change: ChannelChange): void {
  app.batch.write(() => {
    const realmId = user.realm_id;
    const current = () => findStreamById(app.db, realmId, streamId) as StreamRow;
    const s = accessChannelToAdminister(app, user, streamId);
    const realm = realmOf(app, user);

    // The permission settings the request leads to must make sense together.
    const isPrivate = change.isPrivate ?? s.invite_only === 1;
    const isWebPublic = change.isWebPublic ?? s.is_web_public === 1;
    const isDefault = change.isDefaultStream ?? isDefaultStream(app, s.id);
    // As Zulip: a channel made private without saying otherwise gets protected history.
    const history = change.historyPublicToSubscribers ?? (change.isPrivate !== undefined ? !change.isPrivate : s.history_public_to_subscribers === 1);
    if (isWebPublic && (!history || isPrivate)) throw errors.badRequest('Invalid parameters');
    if (!isPrivate && !history) throw errors.badRequest('Invalid parameters');
    if (isPrivate && isDefault) throw errors.badRequest('A default channel cannot be private.');
    // As Zulip's update_stream_backend: the moderation request channel stays private.
    if (!isPrivate && realmExtraSettings(realm)['moderation_request_channel_id'] === s.id) {
      throw errors.badRequest('Moderation request channel must be private.');
    }
    if (change.isPrivate !== undefined) {
      // Changing who can read a channel needs being able to read it, beyond administering it.
      if (!canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Channel content access is required.');
      const group = change.isPrivate ? realm.can_create_private_channel_group : realm.can_create_public_channel_group;
      if (!isUserInGroup(app.db, user.id, group as number)) throw errors.insufficientPermission();
    }
    if (change.isWebPublic) {
      if (!webPublicChannelsEnabled(app, realm)) throw errors.badRequest('Web-public channels are not enabled.');
      if (!isUserInGroup(app.db, user.id, realm.can_create_web_public_channel_group as number)) throw errors.insufficientPermission();
    }
    const topicGroup = change.groupSettings?.can_create_topic_group;
    if (change.isPrivate !== undefined || change.historyPublicToSubscribers !== undefined || topicGroup !== undefined) {
      const value = topicGroup === undefined ? s.can_create_topic_group : parseGroupSetting(app, realmId, settingChange(topicGroup).new);
      checkProtectedHistoryTopics(app, realmId, isPrivate, history, value);
    }
    if (change.isPrivate !== undefined || change.isWebPublic !== undefined || change.historyPublicToSubscribers !== undefined) {
      changeChannelPermission(app, user, s, { isPrivate, isWebPublic, history });
    }
    if (change.isDefaultStream !== undefined) {
      if (!isAdmin(user)) throw errors.insufficientPermission();
      setDefaultStream(app, realmId, s.id, change.isDefaultStream);
    }
    if (change.messageRetentionDays !== undefined) {
      if (!isOwner(user)) throw errors.ownerRequired();
      const stored = retentionToColumn(change.messageRetentionDays);
      const before = current();
      // As Zulip's do_change_stream_message_retention_days: the event and the notice even when unchanged.
      updateChannelProperty(app, before, 'message_retention_days', stored);
      sendChannelEventsNotice(app, before, retentionChangedMessage(user, before.message_retention_days, stored, realm.message_retention_days));
    }
    if (change.isArchived === false) unarchiveChannel(app, current());
    if (change.topicsPolicy !== undefined) {
      if (change.topicsPolicy !== 'inherit' && !isUserInGroup(app.db, user.id, realm.can_set_topics_policy_group as number)) {
        throw errors.insufficientPermission();
      }
      if (change.topicsPolicy === 'empty_topic_only') {
        const other = stmt(app.db, "SELECT 1 FROM message WHERE stream_id = ? AND topic_key <> '' LIMIT 1").get(s.id);
        if (other) throw errors.badRequest('To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.');
      }
      // As Zulip's do_set_stream_property: an unchanged value is no change (no event, no notice).
      const before = current();
      if (before.topics_policy !== change.topicsPolicy) {
        updateChannelProperty(app, before, 'topics_policy', change.topicsPolicy);
        sendChannelEventsNotice(app, before, topicsPolicyChangedMessage(user, before.topics_policy, change.topicsPolicy, realm.empty_topic_display_name));
      }
    }
    if (change.description !== undefined) {
      const before = current();
      const description = checkStreamDescription(change.description);
      const html = renderPlain(app, realmId, description);
      stmt(app.db, 'UPDATE stream SET description = ?, rendered_description = ? WHERE id = ?').run(description, html, s.id);
      sendChannelUpdate(app, current(), 'description', description, { rendered_description: html });
      sendChannelEventsNotice(app, before, descriptionChangedMessage(user, before.description, description));
    }
    if (change.newName !== undefined) {
      const before = current();
      if (change.newName.trim() === before.name) throw errors.badRequest('Channel already has that name.');
      const name = checkStreamName(change.newName);
      const other = findStreamByName(app.db, realmId, name);
      if (other && other.id !== s.id) {
        throw new JsonableError("Channel '{channel_name}' already exists", { code: 'CHANNEL_ALREADY_EXISTS', status: 409, data: { channel_name: other.name } });
      }
      stmt(app.db, 'UPDATE stream SET name = ? WHERE id = ?').run(name, s.id);
      // The event names the channel by its old name, as Zulip's does.
      sendChannelUpdate(app, { ...current(), name: before.name }, 'name', name);
      sendChannelEventsNotice(app, before, channelRenamedMessage(user, before.name, name));
    }
    if (change.folderId !== undefined) {
      if (change.folderId !== null && !stmt(app.db, 'SELECT 1 FROM channel_folder WHERE realm_id = ? AND id = ?').get(realmId, change.folderId)) {
        throw errors.badRequest('Invalid channel folder ID');
      }
      updateChannelProperty(app, current(), 'folder_id', change.folderId);
    }
    for (const setting of STREAM_GROUP_SETTINGS) {
      const requested = change.groupSettings?.[setting];
      if (requested !== undefined) changeChannelGroupSetting(app, user, current(), setting, settingChange(requested));
    }
  });
}

const settingChange = (c: GroupSettingChange) => (typeof c === 'object' && 'new' in c ? c : { new: c });

/** Whether the channel is one of the organization's default channels. */
function isDefaultStream(app: App, streamId: number): boolean {
  return stmt(app.db, 'SELECT 1 FROM default_stream WHERE stream_id = ?').get(streamId) !== undefined;
}

function webPublicChannelsEnabled(app: App, realm: RealmRow): boolean {
  return app.config.webPublicStreamsEnabled && Boolean(realm.enable_spectator_access);
}

/**
 * Zulip's validate_can_create_topic_group_setting_for_protected_history_streams: in a private channel
 * with protected history everyone must be able to start topics (exactly role:everyone).
 */
function checkProtectedHistoryTopics(app: App, realmId: number, isPrivate: boolean, history: boolean, topicGroup: GroupSettingValue): void {
  if (!isPrivate || history) return;
  if (topicGroup !== systemGroupId(app.db, realmId, 'role:everyone')) {
    throw errors.incompatible(['history_public_to_subscribers', 'can_create_topic_group']);
  }
}

/** Writes one column of the channel and sends the stream update event (Zulip's do_set_stream_property and kin). */
function updateChannelProperty(app: App, s: StreamRow, column: 'message_retention_days' | 'topics_policy' | 'folder_id', value: string | number | null): void {
  // column names come from the fixed union above, never from input
  app.db.prepare(`UPDATE stream SET ${column} = ? WHERE id = ?`).run(value, s.id);
  sendChannelUpdate(app, s, column, value);
}

/** The stream update event, to everyone who can see the channel now. */
function sendChannelUpdate(app: App, s: StreamRow, property: string, value: unknown, extra: Record<string, unknown> = {}, to?: number[]): void {
  const event = { type: 'stream', op: 'update', stream_id: s.id, name: s.name, property, value, ...extra };
  const users = to ?? streamViewers(app, findStreamById(app.db, s.realm_id, s.id) as StreamRow);
  app.batch.onCommit(() => app.events.send(event, users));
}

/**
 * Zulip's do_change_stream_permission. A private channel made public is new to the non-guests who
 * could not see it: they get the stream create event and the subscribers (peer_add) instead of the
 * update. zulip-compat: the update goes only to those who can see the channel afterwards, so users
 * who lose access hear nothing; and as Zulip, the update and the notice are sent even when nothing
 * changed.
 */
function changeChannelPermission(app: App, actor: UserRow, s: StreamRow, next: { isPrivate: boolean; isWebPublic: boolean; history: boolean }): void {
  const before = new Set(streamViewers(app, s));
  stmt(app.db, 'UPDATE stream SET invite_only = ?, is_web_public = ?, history_public_to_subscribers = ? WHERE id = ?').run(
    next.isPrivate ? 1 : 0,
    next.isWebPublic ? 1 : 0,
    next.history ? 1 : 0,
    s.id,
  );
  const after = findStreamById(app.db, s.realm_id, s.id) as StreamRow;
  const viewers = streamViewers(app, after);
  const gaining = s.invite_only && !after.invite_only ? viewers.filter((uid) => !before.has(uid)) : [];
  if (gaining.length > 0) announceNewlyVisible(app, after, gaining);
  sendChannelUpdate(
    app,
    after,
    'invite_only',
    next.isPrivate,
    { history_public_to_subscribers: next.history, is_web_public: next.isWebPublic },
    viewers.filter((uid) => !gaining.includes(uid)),
  );
  sendChannelEventsNotice(app, after, accessPermissionsChangedMessage(actor, policyName(s), policyName(after)));
}

/**
 * The stream delete event: ids only (feature level 343); `streams` keeps the deprecated list of
 * objects, now holding just the id.
 */
export const streamDeleteEvent = (streamId: number) => ({ type: 'stream', op: 'delete', streams: [{ stream_id: streamId }], stream_ids: [streamId] });

/** Users who can newly see a channel: the stream create event, then its subscribers (peer_add). */
function announceNewlyVisible(app: App, s: StreamRow, userIds: number[]): void {
  const created = { type: 'stream', op: 'create', streams: [formatStream(app.db, s)] };
  const peers = { type: 'subscription', op: 'peer_add', stream_ids: [s.id], user_ids: [...subscriberIds(app.db, s.id)] };
  app.batch.onCommit(() => {
    app.events.send(created, userIds);
    app.events.send(peers, userIds);
  });
}

/**
 * Zulip's do_change_stream_group_based_setting for PATCH: {new, old} with old checked against the
 * current value; an unchanged value changes nothing and says nothing. Settings that grant metadata
 * access tell the users who gain it about the channel (create, peer_add) and those who lose it
 * (delete) instead of the update; a new posting permission gets its notice.
 */
function changeChannelGroupSetting(
  app: App,
  actor: UserRow,
  s: StreamRow,
  setting: StreamGroupSetting,
  req: { new: GroupSettingValue; old?: GroupSettingValue },
): void {
  const realmId = actor.realm_id;
  const currentValue = groupSettingForApi(app.db, s[setting]);
  const newValue = parseGroupSetting(app, realmId, req.new);
  if (req.old !== undefined && !sameGroupSetting(parseGroupSetting(app, realmId, req.old), currentValue)) {
    throw new JsonableError("'old' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
  }
  if (sameGroupSetting(currentValue, newValue)) return;
  if ((CONTENT_ACCESS_GROUP_SETTINGS as readonly string[]).includes(setting) && !canAccessStreamContent(app.db, actor, s)) {
    throw errors.badRequest('Channel content access is required.');
  }
  const before = new Set(streamViewers(app, s));
  const id = storeGroupSetting(app.db, realmId, setting, newValue, nowSeconds(app.clock), GROUP_SETTING_RULES[setting]);
  // column names come from the constant STREAM_GROUP_SETTINGS list, never from input
  app.db.prepare(`UPDATE stream SET ${setting} = ? WHERE id = ?`).run(id, s.id);
  const after = findStreamById(app.db, realmId, s.id) as StreamRow;
  const viewers = streamViewers(app, after);
  const value = groupSettingForApi(app.db, id);
  if ((METADATA_ACCESS_GROUP_SETTINGS as readonly string[]).includes(setting)) {
    const gaining = viewers.filter((uid) => !before.has(uid));
    const losing = [...before].filter((uid) => !viewers.includes(uid));
    sendChannelUpdate(app, after, setting, value, {}, viewers.filter((uid) => !gaining.includes(uid)));
    if (gaining.length > 0) announceNewlyVisible(app, after, gaining);
    if (losing.length > 0) {
      const deleted = streamDeleteEvent(s.id);
      app.batch.onCommit(() => app.events.send(deleted, losing));
    }
  } else {
    sendChannelUpdate(app, after, setting, value, {}, viewers);
  }
  if (setting === 'can_send_message_group') {
    sendChannelEventsNotice(app, after, postingPermissionsChangedMessage(app, actor, currentValue, value));
  }
}

/** Zulip's do_unarchive_stream (PATCH is_archived=false): the channel returns, announced as created. */
function unarchiveChannel(app: App, s: StreamRow): void {
  if (!s.deactivated) throw errors.badRequest('Channel is not currently deactivated');
  // Deactivated subscribers count: they keep the channel reachable.
  if (s.invite_only && !stmt(app.db, 'SELECT 1 FROM subscription WHERE stream_id = ? AND active = 1').get(s.id)) {
    throw errors.badRequest('Channel is private and have no subscribers');
  }
  // Older archiving could leave a private channel web-public; unarchiving repairs it, as in Zulip.
  stmt(app.db, 'UPDATE stream SET deactivated = 0, is_web_public = CASE WHEN invite_only = 1 THEN 0 ELSE is_web_public END WHERE id = ?').run(s.id);
  const after = findStreamById(app.db, s.realm_id, s.id) as StreamRow;
  // As Zulip: clients with the archived_channels capability knew the channel all along and hear it
  // unarchived (is_archived false); the others hear it created (for_unarchiving: see bus.ts).
  const unarchived = { type: 'stream', op: 'update', stream_id: after.id, name: after.name, property: 'is_archived', value: false };
  const created = { type: 'stream', op: 'create', streams: [formatStream(app.db, after)], for_unarchiving: true };
  const viewers = streamViewers(app, after);
  app.batch.onCommit(() => {
    app.events.send(unarchived, viewers);
    app.events.send(created, viewers);
  });
  sendChannelEventsNotice(app, after, channelUnarchivedMessage(after.name));
}

/**
 * DELETE /streams/{id} (Zulip's do_deactivate_stream): the channel leaves the default channels and the
 * announcement settings, its viewers hear it deleted, and Notification Bot says so in it (read by all).
 * Messages stay; it leaves listings and refuses new messages.
 */
export function doArchiveChannel(app: App, user: UserRow, streamId: number): void {
  app.batch.write(() => {
    const s = accessChannelToAdminister(app, user, streamId);
    if (s.deactivated) throw errors.badRequest('Channel is already deactivated');
    const viewers = streamViewers(app, s);
    releaseAnnouncementSettings(app, user.realm_id, s.id);
    if (isDefaultStream(app, s.id)) setDefaultStream(app, user.realm_id, s.id, false);
    // As Zulip: clients with the archived_channels capability keep the channel and hear it archived
    // (is_archived true); the others hear it deleted (for_archiving: see bus.ts; streams holds only
    // the id, FL 343).
    const archived = { type: 'stream', op: 'update', stream_id: s.id, name: s.name, property: 'is_archived', value: true };
    const deleted = { ...streamDeleteEvent(s.id), for_archiving: true };
    app.batch.onCommit(() => {
      app.events.send(archived, viewers);
      app.events.send(deleted, viewers);
    });
    // Posted while the channel still takes messages; the event goes out after the delete event.
    sendChannelEventsNotice(app, s, channelArchivedMessage(s.name), { readBy: subscriberIds(app.db, s.id) });
    stmt(app.db, 'UPDATE stream SET deactivated = 1 WHERE id = ?').run(s.id);
  });
}

/**
 * Adds or removes a default channel and, as Zulip's do_add_default_stream / do_remove_default_stream,
 * tells the non-guests the new list (ids, FL 330): adding one that already is default says nothing.
 */
function setDefaultStream(app: App, realmId: number, streamId: number, on: boolean): void {
  if (on) {
    const added = stmt(app.db, 'INSERT OR IGNORE INTO default_stream (realm_id, stream_id) VALUES (?, ?)').run(realmId, streamId).changes > 0;
    if (!added) return;
  } else {
    stmt(app.db, 'DELETE FROM default_stream WHERE realm_id = ? AND stream_id = ?').run(realmId, streamId);
  }
  app.batch.onCommit(() => {
    const ids = defaultStreams(app.db, realmId).map((r) => r.id);
    const users = activeUserIds(app, realmId).filter((uid) => {
      const u = findUserById(app.db, realmId, uid);
      return u !== null && !isGuest(u);
    });
    app.events.send({ type: 'default_streams', default_streams: ids }, users);
  });
}

/** POST/DELETE /default_streams (administrators). */
export function doSetDefaultStream(app: App, user: UserRow, streamId: number, on: boolean): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const s = findStreamById(app.db, user.realm_id, streamId);
    if (!s || !canAccessStreamMetadata(app.db, user, s) || s.deactivated) throw errors.badRequest('Invalid channel ID');
    if (on && s.invite_only) throw errors.badRequest('Private channels cannot be made default.');
    setDefaultStream(app, user.realm_id, s.id, on);
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

/**
 * PATCH /channel_folders (administrators), as Zulip's try_reorder_realm_channel_folders: `order` must
 * name every folder of the organization (archived ones too); each folder's order becomes its
 * position in the list. zulip-compat: ids that are no folder are ignored, a repeated id takes its
 * last position, and the event carries the list as sent.
 */
export function doReorderChannelFolders(app: App, user: UserRow, order: number[]): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const position = new Map<number, number>();
    order.forEach((id, i) => position.set(id, i));
    const folders = stmt(app.db, 'SELECT id FROM channel_folder WHERE realm_id = ?').all(user.realm_id) as { id: number }[];
    if (folders.some((f) => !position.has(f.id))) throw errors.badRequest('Invalid order mapping.');
    for (const f of folders) stmt(app.db, 'UPDATE channel_folder SET "order" = ? WHERE id = ?').run(position.get(f.id), f.id);
    app.batch.onCommit(() => app.events.send({ type: 'channel_folder', op: 'reorder', order }, activeUserIds(app, user.realm_id)));
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

/**
 * PATCH /channel_folders/{id} (administrators), as Zulip's update_channel_folder: one update event per
 * field that changes, none for an unchanged one; a folder still holding channels (archived ones
 * count) cannot be archived.
 */
export function doUpdateChannelFolder(app: App, user: UserRow, id: number, change: { name?: string; description?: string; isArchived?: boolean }): void {
  if (!isAdmin(user)) throw errors.adminRequired();
  app.batch.write(() => {
    const folder = stmt(app.db, 'SELECT name, description, is_archived FROM channel_folder WHERE realm_id = ? AND id = ?').get(user.realm_id, id) as
      | { name: string; description: string; is_archived: number }
      | undefined;
    if (!folder) throw errors.badRequest('Invalid channel folder ID');
    const announce = (data: Record<string, unknown>) =>
      app.batch.onCommit(() => app.events.send({ type: 'channel_folder', op: 'update', channel_folder_id: id, data }, activeUserIds(app, user.realm_id)));
    if (change.name !== undefined && change.name !== folder.name) {
      const clean = change.name.trim();
      if (clean === '') throw errors.badRequest('Channel folder name can\'t be empty.');
      const other = stmt(app.db, 'SELECT id FROM channel_folder WHERE realm_id = ? AND name = ? COLLATE NOCASE').get(user.realm_id, clean) as { id: number } | undefined;
      if (other && other.id !== id) throw errors.badRequest("Channel folder name '{name}' is already in use.", { name: clean });
      stmt(app.db, 'UPDATE channel_folder SET name = ? WHERE id = ?').run(clean, id);
      announce({ name: clean });
    }
    if (change.description !== undefined && change.description !== folder.description) {
      const html = renderPlain(app, user.realm_id, change.description);
      stmt(app.db, 'UPDATE channel_folder SET description = ?, rendered_description = ? WHERE id = ?').run(change.description, html, id);
      announce({ description: change.description, rendered_description: html });
    }
    if (change.isArchived !== undefined && change.isArchived !== (folder.is_archived === 1)) {
      if (change.isArchived && stmt(app.db, 'SELECT 1 FROM stream WHERE folder_id = ? LIMIT 1').get(id)) {
        throw errors.badRequest('You need to remove all the channels from this folder to archive it.');
      }
      stmt(app.db, 'UPDATE channel_folder SET is_archived = ? WHERE id = ?').run(change.isArchived ? 1 : 0, id);
      announce({ is_archived: change.isArchived });
    }
  });
}

// Read side of channels: lookups, who may see a channel and its history, and the JSON shapes of
// channels and subscriptions. "Missing" and "not yours" answer the same, so existence never leaks.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchedCache, watchTable } from '../db/watch';
import { errors } from '../http/errors';
import { groupSettingForApi, isUserInGroup } from './groups';
import { activeBotOwnerId, isAdmin, isGuest, type UserRow } from './users';
import type { RealmRow } from './realm';

export interface StreamRow {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  date_created: number;
  creator_id: number | null;
  invite_only: number;
  is_web_public: number;
  history_public_to_subscribers: number;
  message_retention_days: number | null;
  topics_policy: string;
  folder_id: number | null;
  deactivated: number;
  first_message_id: number | null;
  is_recently_active: number;
  can_add_subscribers_group: number;
  can_administer_channel_group: number;
  can_create_topic_group: number;
  can_delete_any_message_group: number;
  can_delete_own_message_group: number;
  can_move_messages_out_of_channel_group: number;
  can_move_messages_within_channel_group: number;
  can_remove_subscribers_group: number;
  can_resolve_topics_group: number;
  can_send_message_group: number;
  can_subscribe_group: number;
}

export const STREAM_GROUP_SETTINGS = [
  'can_add_subscribers_group',
  'can_administer_channel_group',
  'can_create_topic_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group',
  'can_move_messages_within_channel_group',
  'can_remove_subscribers_group',
  'can_resolve_topics_group',
  'can_send_message_group',
  'can_subscribe_group',
] as const;
export type StreamGroupSetting = (typeof STREAM_GROUP_SETTINGS)[number];

export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;

export interface SubscriptionRow {
  user_id: number;
  stream_id: number;
  active: number;
  is_muted: number;
  color: string;
  pin_to_top: number;
  desktop_notifications: number | null;
  audible_notifications: number | null;
  push_notifications: number | null;
  email_notifications: number | null;
  wildcard_mentions_notify: number | null;
}

const streamCaches = new WeakMap<Db, Map<number, StreamRow>>();

/** A channel by id. Kept in memory (bounded); any write to the stream table clears the copies. */
export function findStreamById(db: Db, realmId: number, id: number): StreamRow | null {
  let cache = streamCaches.get(db);
  if (!cache) {
    const fresh = new Map<number, StreamRow>();
    watchTable(db, 'stream', () => fresh.clear());
    streamCaches.set(db, (cache = fresh));
  }
  let row = cache.get(id);
  if (row === undefined) {
    row = stmt(db, 'SELECT * FROM stream WHERE id = ?').get(id) as StreamRow | undefined;
    if (!row) return null;
    if (cache.size >= 10_000) cache.clear();
    cache.set(id, Object.freeze(row) as StreamRow);
  }
  return row.realm_id === realmId ? row : null;
}

export function findStreamByName(db: Db, realmId: number, name: string): StreamRow | null {
  return (stmt(db, 'SELECT * FROM stream WHERE realm_id = ? AND name = ? COLLATE NOCASE').get(realmId, name) as StreamRow | undefined) ?? null;
}

export function findSubscription(db: Db, userId: number, streamId: number): SubscriptionRow | null {
  return (stmt(db, 'SELECT * FROM subscription WHERE user_id = ? AND stream_id = ?').get(userId, streamId) as SubscriptionRow | undefined) ?? null;
}

export function isSubscribed(db: Db, userId: number, streamId: number): boolean {
  return stmt(db, 'SELECT 1 FROM subscription WHERE user_id = ? AND stream_id = ? AND active = 1').get(userId, streamId) !== undefined;
}

/** Active subscribers' ids (active accounts only). */
export function subscriberIds(db: Db, streamId: number): number[] {
  // Read on every send: kept in memory until a subscription or user row changes. Frozen, as it is shared.
  return watchedCache<number, number[]>(db, 'subscriberIds', ['subscription', 'user']).get(streamId, () =>
    Object.freeze(
      (
        stmt(
          db,
          'SELECT s.user_id AS id FROM subscription s JOIN user u ON u.id = s.user_id WHERE s.stream_id = ? AND s.active = 1 AND u.is_active = 1 ORDER BY s.user_id',
        ).all(streamId) as { id: number }[]
      ).map((r) => r.id),
    ) as number[],
  );
}

export const isPublic = (s: StreamRow) => s.invite_only === 0;

/** Whether the user may administer the channel (organization administrators always may). */
export function canAdministerChannel(db: Db, user: UserRow, s: StreamRow): boolean {
  return isAdmin(user) || isUserInGroup(db, user.id, s.can_administer_channel_group);
}

/**
 * Whether the user may see the channel's metadata (Zulip's user_has_metadata_access): subscribers,
 * everyone but guests in public channels, organization administrators, and, through
 * has_metadata_access_to_channel_via_groups, the members of the channel's administer, add-subscribers
 * and subscribe groups (none of which may hold guests).
 */
export function canAccessStreamMetadata(db: Db, user: UserRow, s: StreamRow, subscribed?: boolean): boolean {
  if (s.is_web_public) return true;
  // subscribed: whether the user is an active subscriber, when the caller knows it already.
  if (subscribed ?? isSubscribed(db, user.id, s.id)) return true;
  if (isGuest(user)) return false;
  if (isPublic(s)) return true;
  if (isAdmin(user)) return true;
  return METADATA_ACCESS_GROUP_SETTINGS.some((setting) => isUserInGroup(db, user.id, s[setting]));
}

/** Zulip's Stream.stream_permission_group_settings_granting_metadata_access. */
export const METADATA_ACCESS_GROUP_SETTINGS = ['can_add_subscribers_group', 'can_administer_channel_group', 'can_subscribe_group'] as const;

/** Zulip's Stream.stream_permission_group_settings_requiring_content_access. */
export const CONTENT_ACCESS_GROUP_SETTINGS = ['can_add_subscribers_group', 'can_subscribe_group'] as const;

/**
 * Zulip's require_content_access: metadata alone (organization administrators see every channel) is
 * not enough to read a channel's contents; subscribers, members in a public channel, and those who may
 * subscribe themselves or others can.
 */
export function canAccessStreamContent(db: Db, user: UserRow, s: StreamRow): boolean {
  // What the rows answer first: the subscription is a query (every #channel link of a send asks).
  if (s.is_web_public) return true;
  if (!isGuest(user) && isPublic(s)) return true;
  if (isSubscribed(db, user.id, s.id)) return true;
  if (isGuest(user)) return false;
  return isUserInGroup(db, user.id, s.can_subscribe_group) || isUserInGroup(db, user.id, s.can_add_subscribers_group);
}

/**
 * Whether the user may read the channel's whole history (messages they did not receive):
 * subscribers of a shared-history channel, and non-guests for public channels.
 */
export function canAccessStreamHistory(db: Db, user: UserRow, s: StreamRow): boolean {
  if (!s.history_public_to_subscribers) return false;
  if (s.is_web_public) return true;
  if (isPublic(s) && !isGuest(user)) return true;
  return isSubscribed(db, user.id, s.id);
}

/** Zulip's access_stream_by_id: the channel, or "Invalid channel ID" for missing and inaccessible alike. */
export function accessStreamById(db: Db, user: UserRow, id: number, opts: { allowArchived?: boolean } = {}): StreamRow {
  const s = findStreamById(db, user.realm_id, id);
  if (!s || !canAccessStreamMetadata(db, user, s)) throw errors.badRequest('Invalid channel ID');
  if (s.deactivated && !opts.allowArchived) throw errors.badRequest('Invalid channel ID');
  return s;
}

/** Zulip's access_stream_by_name. */
export function accessStreamByName(db: Db, user: UserRow, name: string, opts: { allowArchived?: boolean } = {}): StreamRow {
  const s = findStreamByName(db, user.realm_id, name);
  if (!s || !canAccessStreamMetadata(db, user, s) || (s.deactivated && !opts.allowArchived)) {
    throw errors.badRequest("Invalid channel name '{name}'", { name });
  }
  return s;
}

/**
 * Counts of active subscribers per channel, in one query. Every client start (/register) and channel
 * listing reads them all, a pass over every subscription of the organization: kept in memory until a
 * subscription, user or channel row changes.
 */
export function subscriberCounts(db: Db, realmId: number): ReadonlyMap<number, number> {
  return watchedCache<number, ReadonlyMap<number, number>>(db, 'subscriberCounts', ['subscription', 'user', 'stream'], 100).get(realmId, () => {
    const rows = stmt(
      db,
      `SELECT s.stream_id AS id, count(*) AS n FROM subscription s JOIN user u ON u.id = s.user_id JOIN stream st ON st.id = s.stream_id
       WHERE st.realm_id = ? AND s.active = 1 AND u.is_active = 1 GROUP BY s.stream_id`,
    ).all(realmId) as { id: number; n: number }[];
    return new Map(rows.map((r) => [r.id, r.n]));
  });
}

/** The channel object of GET /streams and stream events. */
export function formatStream(db: Db, s: StreamRow, subscriberCount?: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    stream_id: s.id,
    name: s.name,
    is_archived: s.deactivated === 1,
    description: s.description,
    rendered_description: s.rendered_description,
    date_created: s.date_created,
    creator_id: s.creator_id,
    invite_only: s.invite_only === 1,
    is_web_public: s.is_web_public === 1,
    stream_post_policy: 1,
    message_retention_days: s.message_retention_days === -1 ? -1 : s.message_retention_days,
    history_public_to_subscribers: s.history_public_to_subscribers === 1,
    first_message_id: s.first_message_id,
    folder_id: s.folder_id,
    topics_policy: s.topics_policy,
    is_recently_active: s.is_recently_active === 1,
    is_announcement_only: false,
    subscriber_count: subscriberCount ?? subscriberIds(db, s.id).length,
    stream_weekly_traffic: null,
  };
  for (const setting of STREAM_GROUP_SETTINGS) out[setting] = groupSettingForApi(db, s[setting]);
  return out;
}

/** The subscription object of GET /users/me/subscriptions: the channel plus the user's properties. */
export function formatSubscription(
  db: Db,
  s: StreamRow,
  sub: SubscriptionRow,
  opts: { subscribers?: number[]; subscriberCount?: number; streamObject?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    // streamObject: formatStream(db, s, subscriberCount), when the caller has it already.
    ...(opts.streamObject ?? formatStream(db, s, opts.subscriberCount)),
    color: sub.color,
    is_muted: sub.is_muted === 1,
    in_home_view: sub.is_muted === 0,
    pin_to_top: sub.pin_to_top === 1,
    desktop_notifications: nullableBool(sub.desktop_notifications),
    audible_notifications: nullableBool(sub.audible_notifications),
    push_notifications: nullableBool(sub.push_notifications),
    email_notifications: nullableBool(sub.email_notifications),
    wildcard_mentions_notify: nullableBool(sub.wildcard_mentions_notify),
  };
  if (opts.subscribers) out.subscribers = opts.subscribers;
  return out;
}

const nullableBool = (v: number | null) => (v === null ? null : v === 1);

/**
 * Every channel row of the organization, by id (frozen: shared by every reader). Reading the 27
 * columns of 200 channels is ~2 ms of each /register, the same rows every time: kept until a channel
 * row changes.
 */
export function realmStreamRows(db: Db, realmId: number): readonly StreamRow[] {
  return watchedCache<number, readonly StreamRow[]>(db, 'realmStreamRows', ['stream'], 100).get(realmId, () =>
    Object.freeze((stmt(db, 'SELECT * FROM stream WHERE realm_id = ? ORDER BY id').all(realmId) as StreamRow[]).map((r) => Object.freeze(r))),
  );
}

/** Channels the user can see in listings (GET /streams defaults: public + subscribed, not archived). */
export function visibleStreams(db: Db, user: UserRow, opts: { includeArchived?: boolean; subscribedIds?: ReadonlySet<number> } = {}): readonly StreamRow[] {
  // subscribedIds: the user's active subscriptions, when the caller has read them (no query per channel).
  return realmStreamRows(db, user.realm_id).filter(
    (s) => (opts.includeArchived || !s.deactivated) && canAccessStreamMetadata(db, user, s, opts.subscribedIds?.has(s.id)),
  );
}

export interface StreamListOptions {
  includePublic: boolean;
  includeWebPublic: boolean;
  includeSubscribed: boolean;
  excludeArchived: boolean;
  includeAll: boolean;
  includeOwnerSubscribed: boolean;
  includeCanAccessContent: boolean;
}

/**
 * GET /streams (Zulip's get_streams_for_user and do_get_streams): include_all is every channel the
 * user may see; otherwise the union of the sources asked for (subscribed, public, web-public,
 * content access, and for a bot its active owner's subscriptions). Sorted by name.
 */
export function listStreams(db: Db, user: UserRow, opts: StreamListOptions): StreamRow[] {
  const all = (stmt(db, 'SELECT * FROM stream WHERE realm_id = ? ORDER BY id').all(user.realm_id) as StreamRow[]).filter(
    (s) => !opts.excludeArchived || !s.deactivated,
  );
  const subscribedTo = (userId: number) =>
    new Set((stmt(db, 'SELECT stream_id FROM subscription WHERE user_id = ? AND active = 1').all(userId) as { stream_id: number }[]).map((r) => r.stream_id));
  let rows: StreamRow[];
  if (opts.includeAll) {
    rows = all.filter((s) => canAccessStreamMetadata(db, user, s));
  } else {
    // Guests never get the public channels as such (Zulip's can_access_public_streams).
    const includePublic = opts.includePublic && !isGuest(user);
    const mine = opts.includeSubscribed && !opts.includeCanAccessContent ? subscribedTo(user.id) : new Set<number>();
    const owner = opts.includeOwnerSubscribed ? activeBotOwnerId(db, user) : null;
    const owners = owner !== null ? subscribedTo(owner) : new Set<number>();
    rows = all.filter((s) => {
      if (opts.includeCanAccessContent) {
        if (canAccessStreamContent(db, user, s)) return true;
      } else {
        if (mine.has(s.id)) return true;
        if (includePublic && isPublic(s)) return true;
        if (opts.includeWebPublic && s.is_web_public && isPublic(s) && s.history_public_to_subscribers && !s.deactivated) return true;
      }
      return owners.has(s.id);
    });
  }
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The organization's default channels, by id. */
export function defaultStreams(db: Db, realmId: number): StreamRow[] {
  return stmt(db, 'SELECT s.* FROM default_stream d JOIN stream s ON s.id = d.stream_id WHERE d.realm_id = ? ORDER BY s.id').all(realmId) as StreamRow[];
}

/** The user's active subscriptions to channels that are not archived, by name. */
export function subscribedStreams(db: Db, userId: number): StreamRow[] {
  return stmt(
    db,
    'SELECT s.* FROM subscription sub JOIN stream s ON s.id = sub.stream_id WHERE sub.user_id = ? AND sub.active = 1 AND s.deactivated = 0 ORDER BY s.name COLLATE NOCASE',
  ).all(userId) as StreamRow[];
}

/** Channel folder ids of the organization in display order, with their archived state. */
export function channelFolders(db: Db, realmId: number): { id: number; is_archived: number }[] {
  return stmt(db, 'SELECT id, is_archived FROM channel_folder WHERE realm_id = ? ORDER BY "order", id').all(realmId) as { id: number; is_archived: number }[];
}

/** The topics policy in force in a channel: its own, or the organization's when it inherits. */
export function effectiveTopicsPolicy(s: StreamRow, realm: RealmRow): string {
  return s.topics_policy === 'inherit' ? String(realm.topics_policy) : s.topics_policy;
}

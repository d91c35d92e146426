// Subscribing and unsubscribing (self and others, creating channels on the way like Zulip) and the
// per-user subscription properties.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { isUserInGroup } from '../lib/groups';
import { getRealmById, type RealmRow } from '../lib/realm';
import {
  canAccessStreamContent,
  canAccessStreamMetadata,
  canAdministerChannel,
  isPublic,
  findStreamById,
  findStreamByName,
  findSubscription,
  formatStream,
  formatSubscription,
  subscriberIds,
  type StreamRow,
} from '../lib/streams';
import { findUserByEmail, findUserById, isAdmin, isGuest, isSystemBot, type UserRow } from '../lib/users';
import { checkCreateChannel, checkStreamName, doCreateChannel, streamDeleteEvent, type ChannelSpec } from './streams';
import { activeUserIds } from './users';
import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES, sendNewChannelMessages, sendSubscribedYouMessages } from './channel-notices';

// Zulip's palette for new subscriptions.
export const STREAM_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5',
  '#f5ce6e', '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063',
  '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
];

/** Resolves `principals` (emails or ids) to active users of the realm; bots allowed. */
export function resolvePrincipals(app: App, actor: UserRow, principals: (string | number)[]): UserRow[] {
  // Each principal given is looked up once, and kept once (a list of 10,000 copies of one id took
  // 10,000 lookups; 10,000 distinct users, a scan of the list so far for each).
  const out = new Map<number, UserRow>();
  for (const p of new Set(principals)) {
    const u = typeof p === 'number' ? findUserById(app.db, actor.realm_id, p) : findUserByEmail(app.db, actor.realm_id, p);
    // The system bots are in no organization (Zulip's cross-realm bots): they subscribe to nothing.
    if (!u || !u.is_active || isSystemBot(u)) throw errors.noSuchUser();
    if (!out.has(u.id)) out.set(u.id, u);
  }
  return [...out.values()];
}

function canSubscribeOthers(app: App, actor: UserRow, realm: RealmRow, s: StreamRow): boolean {
  if (canAdministerChannel(app.db, actor, s) && (isPublic(s) || isAdmin(actor) || subscribedOrAdministers(app, actor, s))) return true;
  if (isGuest(actor)) return false;
  return isUserInGroup(app.db, actor.id, realm.can_add_subscribers_group as number) || isUserInGroup(app.db, actor.id, s.can_add_subscribers_group);
}

function subscribedOrAdministers(app: App, actor: UserRow, s: StreamRow): boolean {
  return findSubscription(app.db, actor.id, s.id)?.active === 1 || isUserInGroup(app.db, actor.id, s.can_administer_channel_group);
}

/** Whether `actor` may subscribe themselves to `s`. */
function canSubscribeSelf(app: App, actor: UserRow, s: StreamRow): boolean {
  if (isPublic(s)) return true;
  return isUserInGroup(app.db, actor.id, s.can_subscribe_group) || isUserInGroup(app.db, actor.id, s.can_add_subscribers_group) || isUserInGroup(app.db, actor.id, s.can_administer_channel_group);
}

/** Inserts or reactivates one subscription; returns false when it was already active. */
function addSubscription(app: App, user: UserRow, s: StreamRow, color?: string): boolean {
  const existing = findSubscription(app.db, user.id, s.id);
  if (existing?.active) return false;
  if (existing) {
    stmt(app.db, 'UPDATE subscription SET active = 1 WHERE user_id = ? AND stream_id = ?').run(user.id, s.id);
    if (color) stmt(app.db, 'UPDATE subscription SET color = ? WHERE user_id = ? AND stream_id = ?').run(color, user.id, s.id);
  } else {
    const n = (stmt(app.db, 'SELECT count(*) AS n FROM subscription WHERE user_id = ?').get(user.id) as { n: number }).n;
    stmt(app.db, 'INSERT INTO subscription (user_id, stream_id, color) VALUES (?, ?, ?)').run(user.id, s.id, color ?? STREAM_COLORS[n % STREAM_COLORS.length]);
  }
  return true;
}

export interface SubscribeRequest {
  streams: { name: string; description?: string; color?: string }[];
  principals: UserRow[] | null;
  authorizationErrorsFatal: boolean;
  channelSpec: Omit<ChannelSpec, 'name' | 'description'>;
  /** Notification Bot announces the channels this request creates (see sendNewChannelMessages). */
  announce?: boolean;
  /**
   * Zulip's send_new_subscription_messages: Notification Bot tells the other users this request
   * subscribes (when not too many); undefined or false sends nothing and leaves
   * new_subscription_messages_sent out of the result.
   */
  sendNewSubscriptionMessages?: boolean;
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
  new_subscription_messages_sent?: boolean;
}

/**
 * POST /users/me/subscriptions (Zulip's add_subscriptions_backend): guests are refused outright
 * (require_non_guest_user). Missing channels are created; existing ones need the actor to see them and
 * to be allowed to join (else "Unable to access channel", or listed in `unauthorized`), and to
 * subscribe others the permission to add subscribers ("Insufficient permission").
 */
export function doSubscribe(app: App, actor: UserRow, req: SubscribeRequest): SubscribeResult {
  if (isGuest(actor)) throw errors.notForGuests();
  return app.batch.write(() => {
    const realm = getRealmById(app.db, actor.realm_id) as RealmRow;
    const targets = req.principals ?? [actor];
    const othersIncluded = targets.some((u) => u.id !== actor.id);
    const streams: { stream: StreamRow; color?: string }[] = [];
    const unauthorized: string[] = [];
    const created: StreamRow[] = [];
    for (const item of req.streams) {
      const name = checkStreamName(item.name);
      let s = findStreamByName(app.db, actor.realm_id, name);
      if (s && s.deactivated) throw errors.badRequest('Unable to access channel ({channel_name}).', { channel_name: name });
      if (!s) {
        const spec: ChannelSpec = { ...req.channelSpec, name, description: item.description };
        checkCreateChannel(app, actor, realm, spec);
        s = doCreateChannel(app, actor, actor.realm_id, spec);
        created.push(s);
      } else {
        // Metadata access includes the channel's administer, add-subscribers and subscribe groups.
        const allowedSelf = canAccessStreamMetadata(app.db, actor, s) && (canSubscribeSelf(app, actor, s) || findSubscription(app.db, actor.id, s.id)?.active === 1);
        const allowedOthers = !othersIncluded || canSubscribeOthers(app, actor, realm, s);
        if (!allowedSelf && !(othersIncluded && canSubscribeOthers(app, actor, realm, s) && canAccessStreamMetadata(app.db, actor, s))) {
          if (req.authorizationErrorsFatal) throw errors.badRequest('Unable to access channel ({channel_name}).', { channel_name: name });
          unauthorized.push(s.name);
          continue;
        }
        if (!allowedOthers) throw errors.insufficientPermission();
      }
      streams.push({ stream: s, color: item.color });
    }
    const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
    const added: { user: UserRow; stream: StreamRow; visibility?: 'gained' }[] = [];
    for (const user of targets) {
      for (const { stream, color } of streams) {
        // Someone who could not see the channel (private, or public to a guest) hears it created
        // first, as in Zulip (send_stream_creation_events_for_previously_inaccessible_streams); the
        // channels this request creates are announced by doCreateChannel already.
        const hidden = !created.includes(stream) && !canAccessStreamMetadata(app.db, user, stream);
        if (addSubscription(app, user, stream, color)) {
          (result.subscribed[user.id] ??= []).push(stream.name);
          added.push({ user, stream, ...(hidden ? { visibility: 'gained' as const } : {}) });
        } else {
          (result.already_subscribed[user.id] ??= []).push(stream.name);
        }
      }
    }
    if (!req.authorizationErrorsFatal) result.unauthorized = unauthorized;
    app.batch.onCommit(() => announceSubscriptionChanges(app, actor.realm_id, added, 'add'));
    if (req.sendNewSubscriptionMessages) {
      // zulip-compat: the answer says whether the request was small enough for the messages, not
      // whether anyone needed one (a request subscribing only its sender answers true).
      const newlySubscribed = targets.filter((u) => result.subscribed[u.id] !== undefined);
      result.new_subscription_messages_sent = newlySubscribed.length <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
      if (result.new_subscription_messages_sent) {
        sendSubscribedYouMessages(app, actor, newlySubscribed.map((user) => ({ user, channelNames: result.subscribed[user.id] })), created);
      }
    }
    // After the subscriptions, so the new channels' first subscribers receive their first message.
    sendNewChannelMessages(app, actor, created, req.announce ?? false);
    return result;
  });
}

/**
 * Sends subscription add/remove to the affected users and peer_add/peer_remove to everyone else who can
 * see the channel. A user who gained sight of the channel by subscribing hears it created before the
 * add; one who lost it by leaving hears it deleted after the remove (Zulip's bulk_remove_subscriptions).
 */
function announceSubscriptionChanges(
  app: App,
  realmId: number,
  changes: { user: UserRow; stream: StreamRow; visibility?: 'gained' | 'lost' }[],
  op: 'add' | 'remove',
): void {
  const byStream = new Map<number, { stream: StreamRow; userIds: number[] }>();
  for (const { user, stream, visibility } of changes) {
    const entry = byStream.get(stream.id) ?? { stream: findStreamById(app.db, realmId, stream.id) as StreamRow, userIds: [] };
    entry.userIds.push(user.id);
    byStream.set(stream.id, entry);
    if (op === 'add') {
      const sub = findSubscription(app.db, user.id, stream.id);
      if (!sub) continue;
      if (visibility === 'gained') app.events.send({ type: 'stream', op: 'create', streams: [formatStream(app.db, entry.stream)] }, [user.id]);
      app.events.send(
        { type: 'subscription', op: 'add', subscriptions: [formatSubscription(app.db, entry.stream, sub, { subscribers: subscriberIds(app.db, stream.id) })] },
        [user.id],
      );
    } else {
      app.events.send({ type: 'subscription', op: 'remove', subscriptions: [{ name: stream.name, stream_id: stream.id }] }, [user.id]);
      if (visibility === 'lost') app.events.send(streamDeleteEvent(stream.id), [user.id]);
    }
  }
  const everyone = activeUserIds(app, realmId);
  for (const { stream, userIds } of byStream.values()) {
    const peers = everyone.filter((uid) => {
      if (userIds.includes(uid) && op === 'add') return false;
      const u = findUserById(app.db, realmId, uid);
      return u !== null && canAccessStreamMetadata(app.db, u, stream) && !(op === 'remove' && userIds.includes(uid));
    });
    app.events.send({ type: 'subscription', op: op === 'add' ? 'peer_add' : 'peer_remove', stream_ids: [stream.id], user_ids: userIds }, peers);
  }
}

/** DELETE /users/me/subscriptions. */
export function doUnsubscribe(app: App, actor: UserRow, names: string[], principals: UserRow[] | null): { removed: string[]; not_removed: string[] } {
  return app.batch.write(() => {
    const realm = getRealmById(app.db, actor.realm_id) as RealmRow;
    const streams: StreamRow[] = [];
    const missing: string[] = [];
    for (const name of names) {
      const s = findStreamByName(app.db, actor.realm_id, name.trim());
      if (!s || !canAccessStreamMetadata(app.db, actor, s)) missing.push(name);
      else streams.push(s);
    }
    if (missing.length) throw errors.badRequest('Channel(s) ({channel_names}) do not exist', { channel_names: missing.join(', ') });
    const targets = principals ?? [actor];
    for (const s of streams) {
      const removingOthers = targets.some((u) => u.id !== actor.id);
      if (removingOthers && !isAdmin(actor) && !isUserInGroup(app.db, actor.id, s.can_remove_subscribers_group) && !canAdministerChannel(app.db, actor, s)) {
        throw errors.insufficientPermission();
      }
    }
    void realm;
    const removed: string[] = [];
    const notRemoved: string[] = [];
    const changes: { user: UserRow; stream: StreamRow; visibility?: 'lost' }[] = [];
    for (const user of targets) {
      for (const s of streams) {
        const sub = findSubscription(app.db, user.id, s.id);
        if (!sub?.active) {
          notRemoved.push(s.name);
          continue;
        }
        stmt(app.db, 'UPDATE subscription SET active = 0 WHERE user_id = ? AND stream_id = ?').run(user.id, s.id);
        removed.push(s.name);
        // Leaving a private channel one has no other access to hides it (register lists it no more).
        changes.push({ user, stream: s, ...(canAccessStreamMetadata(app.db, user, s) ? {} : { visibility: 'lost' as const }) });
      }
    }
    app.batch.onCommit(() => announceSubscriptionChanges(app, actor.realm_id, changes, 'remove'));
    return { removed, not_removed: notRemoved };
  });
}

export const SUBSCRIPTION_PROPERTIES = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;

export const HEX_COLOR = /^#([a-fA-F0-9]{3,6})$/;

/**
 * POST /users/me/subscriptions/properties (Zulip's update_subscription_properties_backend): the whole
 * list is validated first (property names, booleans, colours); then the changes apply one by one in
 * order, each its own write with its events, so an access error on a later element ("Invalid channel
 * ID", "Not subscribed") leaves the earlier changes made, as in Zulip.
 */
export function doUpdateSubscriptionProperties(
  app: App,
  user: UserRow,
  changes: { stream_id: number; property: string; value: boolean | string }[],
): void {
  changes.forEach(({ property, value }, index) => {
    if (property === 'color') {
      if (typeof value !== 'string' || !HEX_COLOR.test(value)) {
        throw errors.badRequest('Invalid subscription_data[{index}]: Value error, color is not a valid hex color code', { index });
      }
    } else if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(property)) {
      throw errors.badRequest('Unknown subscription property: {property}', { property });
    } else if (typeof value !== 'boolean') {
      throw errors.badRequest('{property} is not a boolean', { property });
    }
  });
  for (const change of changes) app.batch.write(() => updateSubscriptionProperty(app, user, change));
}

/** Zulip's do_change_subscription_property for one validated change. */
function updateSubscriptionProperty(app: App, user: UserRow, change: { stream_id: number; property: string; value: boolean | string }): void {
  const { stream_id: streamId, property, value } = change;
  const s = findStreamById(app.db, user.realm_id, streamId);
  if (!s || s.deactivated || !canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  const sub = findSubscription(app.db, user.id, streamId);
  if (!sub?.active) throw errors.badRequest('Not subscribed to channel ID {channel_id}', { channel_id: streamId });
  const events: { property: string; value: unknown }[] = [];
  if (property === 'color') {
    stmt(app.db, 'UPDATE subscription SET color = ? WHERE user_id = ? AND stream_id = ?').run(value, user.id, streamId);
    events.push({ property, value });
  } else if (property === 'is_muted' || property === 'in_home_view') {
    const muted = property === 'is_muted' ? value : !value;
    stmt(app.db, 'UPDATE subscription SET is_muted = ? WHERE user_id = ? AND stream_id = ?').run(muted ? 1 : 0, user.id, streamId);
    // Two events, one per property, so old and new clients both stay right.
    events.push({ property: 'in_home_view', value: !muted }, { property: 'is_muted', value: muted });
  } else {
    // column names come from the constant list above, never from input
    app.db.prepare(`UPDATE subscription SET ${property} = ? WHERE user_id = ? AND stream_id = ?`).run(value ? 1 : 0, user.id, streamId);
    events.push({ property, value });
  }
  app.batch.onCommit(() => {
    for (const e of events) app.events.send({ type: 'subscription', op: 'update', stream_id: streamId, ...e }, [user.id]);
  });
}

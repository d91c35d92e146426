// Personal topic preferences (visibility policy: muted, unmuted, followed), the legacy topic-muting
// endpoint, and the bulk subscription update that composes subscribe and unsubscribe.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { topicKey } from '../lib/narrow';
import { getRealmById, type RealmRow } from '../lib/realm';
import { accessStreamById, accessStreamByName, canAccessStreamContent, findStreamById, findStreamByName, type StreamRow } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';
import { topicFromClient } from './message-extras';
import { doSubscribe, doUnsubscribe, type SubscribeResult } from './subscriptions';

export const VISIBILITY_POLICY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

/** Zulip's access_stream_by_id / _by_name: content access, active channels only. */
function accessStream(app: App, user: UserRow, by: { id?: number; name?: string }): StreamRow {
  const s = by.id !== undefined ? accessStreamById(app.db, user, by.id) : accessStreamByName(app.db, user, by.name as string);
  if (!canAccessStreamContent(app.db, user, s)) {
    throw by.id !== undefined ? errors.badRequest('Invalid channel ID') : errors.badRequest("Invalid channel name '{name}'", { name: by.name });
  }
  return s;
}

/**
 * Zulip's access_stream_to_remove_visibility_policy: removing a policy needs only that the channel
 * exists in the organization (access may have been lost since the topic was muted).
 */
function streamForRemoval(app: App, user: UserRow, by: { id?: number; name?: string }, error: string): StreamRow {
  const s = by.id !== undefined ? findStreamById(app.db, user.realm_id, by.id) : findStreamByName(app.db, user.realm_id, by.name as string);
  if (!s) throw errors.badRequest(error);
  return s;
}

/** The legacy muted_topics list: [channel name, topic, last_updated] for each muted topic. */
function legacyMutedTopics(app: App, user: UserRow, realm: RealmRow): [string, string, number][] {
  const rows = stmt(
    app.db,
    `SELECT s.name AS stream_name, t.topic_name, t.last_updated FROM user_topic t JOIN stream s ON s.id = t.stream_id
     WHERE t.user_id = ? AND t.visibility_policy = 1 ORDER BY t.last_updated, t.stream_id, t.topic_key`,
  ).all(user.id) as { stream_name: string; topic_name: string; last_updated: number }[];
  // zulip-compat: the legacy event goes to clients that predate the empty topic, so "" is shown by its display name.
  return rows.map((r) => [r.stream_name, r.topic_name === '' ? realm.empty_topic_display_name : r.topic_name, r.last_updated]);
}

/** The user's visibility policy for a channel topic (inherit when they set none). */
export function topicPolicy(app: App, userId: number, streamId: number, topic: string): number {
  const row = stmt(app.db, 'SELECT visibility_policy FROM user_topic WHERE user_id = ? AND stream_id = ? AND topic_key = ?').get(userId, streamId, topicKey(topic)) as
    | { visibility_policy: number }
    | undefined;
  return row?.visibility_policy ?? VISIBILITY_POLICY.inherit;
}

/**
 * Sets (or with 0 removes) the user's visibility policy for a topic. As Zulip: a request that changes
 * nothing sends nothing; otherwise the legacy `muted_topics` event (the registry drops it for queues
 * that asked for user_topic) and the `user_topic` event.
 */
export function setVisibilityPolicy(app: App, user: UserRow, s: StreamRow, topic: string, policy: number, opts: { skipMutedTopicsEvent?: boolean } = {}): void {
  const key = topicKey(topic);
  const existing = topicPolicy(app, user.id, s.id, topic);
  const now = nowSeconds(app.clock);
  if (policy === VISIBILITY_POLICY.inherit) {
    if (existing === VISIBILITY_POLICY.inherit) return;
    stmt(app.db, 'DELETE FROM user_topic WHERE user_id = ? AND stream_id = ? AND topic_key = ?').run(user.id, s.id, key);
  } else if (existing !== VISIBILITY_POLICY.inherit) {
    if (existing === policy) return;
    stmt(app.db, 'UPDATE user_topic SET visibility_policy = ?, last_updated = ? WHERE user_id = ? AND stream_id = ? AND topic_key = ?').run(
      policy,
      now,
      user.id,
      s.id,
      key,
    );
  } else {
    stmt(app.db, 'INSERT INTO user_topic (user_id, stream_id, topic_key, topic_name, visibility_policy, last_updated) VALUES (?, ?, ?, ?, ?, ?)').run(
      user.id,
      s.id,
      key,
      topic,
      policy,
      now,
    );
  }
  app.batch.onCommit(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    if (!opts.skipMutedTopicsEvent) app.events.send({ type: 'muted_topics', muted_topics: legacyMutedTopics(app, user, realm) }, [user.id]);
    app.events.send({ type: 'user_topic', stream_id: s.id, topic_name: topic, last_updated: now, visibility_policy: policy }, [user.id]);
  });
}

/**
 * Zulip's get_visibility_policy_after_merge: when a topic is moved into one that has messages, each
 * user keeps the more visible of their two policies (followed, unmuted, inherit, muted).
 */
export function visibilityAfterMerge(orig: number, target: number): number {
  for (const p of [VISIBILITY_POLICY.followed, VISIBILITY_POLICY.unmuted, VISIBILITY_POLICY.inherit]) if (orig === p || target === p) return p;
  return VISIBILITY_POLICY.muted;
}

/** Every user's policy for a channel topic. */
export function topicPolicies(app: App, streamId: number, topic: string): Map<number, number> {
  const rows = stmt(app.db, 'SELECT user_id, visibility_policy FROM user_topic WHERE stream_id = ? AND topic_key = ?').all(streamId, topicKey(topic)) as {
    user_id: number;
    visibility_policy: number;
  }[];
  return new Map(rows.map((r) => [r.user_id, r.visibility_policy]));
}

/** The users whose policy in `policies` (topicPolicies) is followed. */
export const followersIn = (policies: ReadonlyMap<number, number>): Set<number> =>
  new Set([...policies].filter(([, p]) => p === VISIBILITY_POLICY.followed).map(([uid]) => uid));

/**
 * After a whole topic moved (do_update_message, moved_all_visible_messages): users' follow and mute
 * settings go with it. Those who lost access to the messages lose the old topic's setting; into a
 * topic that had messages the two settings merge (visibilityAfterMerge), into a new one the old
 * setting moves as it is. Returns who followed the old topic (the resolve notice reads them).
 * A change of case only moves nothing: the setting is keyed case-insensitively already (Zulip would
 * drop it there).
 */
export function moveTopicVisibility(
  app: App,
  move: { origStream: StreamRow; origTopic: string; targetStream: StreamRow; targetTopic: string; targetHadMessages: boolean; losingAccess: ReadonlySet<number> },
): Set<number> {
  const orig = topicPolicies(app, move.origStream.id, move.origTopic);
  const followers = followersIn(orig);
  if (move.origStream.id === move.targetStream.id && topicKey(move.origTopic) === topicKey(move.targetTopic)) return followers;
  const target = topicPolicies(app, move.targetStream.id, move.targetTopic);
  const userOf = (uid: number) => findUserById(app.db, move.origStream.realm_id, uid);
  for (const uid of [...orig.keys()]) {
    if (!move.losingAccess.has(uid)) continue;
    const u = userOf(uid);
    if (u) setVisibilityPolicy(app, u, move.origStream, move.origTopic, VISIBILITY_POLICY.inherit);
    orig.delete(uid);
  }
  for (const uid of new Set([...orig.keys(), ...target.keys()])) {
    const u = userOf(uid);
    if (!u) continue;
    const from = orig.get(uid) ?? VISIBILITY_POLICY.inherit;
    const to = target.get(uid) ?? VISIBILITY_POLICY.inherit;
    const policy = move.targetHadMessages ? visibilityAfterMerge(from, to) : from;
    // When the target changes too, its muted_topics event carries the whole list for both halves.
    if (from !== VISIBILITY_POLICY.inherit) setVisibilityPolicy(app, u, move.origStream, move.origTopic, VISIBILITY_POLICY.inherit, { skipMutedTopicsEvent: policy !== to });
    if (policy !== to) setVisibilityPolicy(app, u, move.targetStream, move.targetTopic, policy);
  }
  return followers;
}

/** POST /user_topics. */
export function doUpdateUserTopic(app: App, user: UserRow, streamId: number, rawTopic: string, policy: number): void {
  app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const topic = topicFromClient(realm, rawTopic);
    const s = policy === VISIBILITY_POLICY.inherit ? streamForRemoval(app, user, { id: streamId }, 'Invalid channel ID') : accessStream(app, user, { id: streamId });
    setVisibilityPolicy(app, user, s, topic, policy);
  });
}

/** PATCH /users/me/subscriptions/muted_topics (legacy): mute (add) or clear (remove) a topic. */
export function doUpdateMutedTopic(app: App, user: UserRow, by: { id?: number; name?: string }, rawTopic: string, op: 'add' | 'remove'): void {
  if (by.id === undefined && by.name === undefined) throw errors.badRequest("Missing '{var_name}' argument", { var_name: 'stream_id' });
  if (by.id !== undefined && by.name !== undefined) throw errors.incompatible(['stream_id', 'stream']);
  app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const topic = topicFromClient(realm, rawTopic);
    if (op === 'add') setVisibilityPolicy(app, user, accessStream(app, user, by), topic, VISIBILITY_POLICY.muted);
    else setVisibilityPolicy(app, user, streamForRemoval(app, user, by, 'Topic is not muted'), topic, VISIBILITY_POLICY.inherit);
  });
}

export interface UpdateSubscriptionsResult extends SubscribeResult {
  removed: string[];
  not_removed: string[];
}

/**
 * PATCH /users/me/subscriptions: Zulip's compose_views of POST and DELETE for the current user, in
 * one transaction (a failing half rolls back the other).
 */
export function doUpdateSubscriptions(
  app: App,
  user: UserRow,
  add: { name: string; color?: string; description?: string }[],
  remove: string[],
): UpdateSubscriptionsResult {
  if (add.length === 0 && remove.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  return app.batch.write(() => {
    // zulip-compat: Zulip calls its POST view with the defaults, so send_new_subscription_messages is
    // true and the answer carries new_subscription_messages_sent (only the user themself is subscribed).
    const subscribed = doSubscribe(app, user, { streams: add, principals: null, authorizationErrorsFatal: true, channelSpec: {}, sendNewSubscriptionMessages: true });
    const removed = doUnsubscribe(app, user, remove, null);
    return { ...subscribed, ...removed };
  });
}

// Initial state (POST /register) for channels, subscriptions and messages: subscriptions,
// unsubscribed, never_subscribed, streams, channel_folders, unread_msgs, recent_private_conversations.
import type { App } from '../app';
import { RawJson, registerStateProvider, type StateOptions } from '../events/state';
import { watchedCache } from '../db/watch';
import { stmt } from '../db/stmt';
import { FLAG, MENTION_FLAGS } from './narrow';
import { getRealmById } from './realm';
import type { UserRow } from './users';
import {
  formatStream,
  formatSubscription,
  subscriberCounts,
  subscriberIds,
  visibleStreams,
  type StreamRow,
  type SubscriptionRow,
} from './streams';

// Zulip sends at most this many unread message ids.
const MAX_UNREAD_MESSAGES = 50_000;
const RECENT_PRIVATE_MESSAGES = 1000;

/**
 * What the subscription and stream providers share within one registration: the channels the user
 * can see (archived ones too), each formatted once, and the user's subscription rows in one query.
 */
function channelState(app: App, user: UserRow, opts: StateOptions) {
  return opts.memo('channel_state', () => {
    const counts = subscriberCounts(app.db, user.realm_id);
    const objects = new Map<number, Record<string, unknown>>();
    const subs = stmt(app.db, 'SELECT * FROM subscription WHERE user_id = ?').all(user.id) as SubscriptionRow[];
    const subscribedIds = new Set(subs.filter((s) => s.active).map((s) => s.stream_id));
    const json = channelJson(app, user.realm_id);
    return {
      visible: visibleStreams(app.db, user, { includeArchived: true, subscribedIds }),
      counts,
      subscriptions: new Map(subs.map((s) => [s.stream_id, s])),
      /** The channel object (shared: copy before changing it). */
      streamObject(s: StreamRow): Record<string, unknown> {
        let o = objects.get(s.id);
        if (!o) objects.set(s.id, (o = formatStream(app.db, s, counts.get(s.id) ?? 0)));
        return o;
      },
      /** The channel object as JSON (for a caller that takes RawJson). */
      streamJson(s: StreamRow): string {
        let j = json.get(s.id);
        if (j === undefined) json.set(s.id, (j = JSON.stringify(this.streamObject(s))));
        return j;
      },
    };
  });
}

/**
 * Each channel's object as JSON, by channel id: the same for every viewer, and formatting and
 * serialising 200 of them (streams, subscriptions, never_subscribed) was ~2 ms of each /register.
 * Kept until what formatStream reads changes: a channel row, a subscription or user row (the
 * subscriber count), a group, membership or subgroup row (the group settings).
 */
const channelJson = (app: App, realmId: number) =>
  watchedCache<number, Map<number, string>>(app.db, 'channelJson', ['stream', 'subscription', 'user', 'user_group', 'user_group_member', 'user_group_subgroup'], 100).get(
    realmId,
    () => new Map(),
  );

/** An object's JSON with more fields after its own: `{...a, ...extra}` serialised (no key shared). */
const withFields = (json: string, extra: Record<string, unknown>): string => {
  const more = JSON.stringify(extra);
  return more === '{}' ? json : `${json.slice(0, -1)},${more.slice(1)}`;
};

registerStateProvider('subscription', (app, user, opts) => {
  const c = channelState(app, user, opts);
  const withSubs = opts.includeSubscribers !== false;
  const subscriptions: Record<string, unknown>[] = [];
  const unsubscribed: Record<string, unknown>[] = [];
  const neverSubscribed: Record<string, unknown>[] = [];
  const includeArchived = opts.capabilities.archived_channels === true;
  if (opts.rawJson) {
    // The same objects, from each channel's cached JSON plus the user's own fields.
    const lists: [string[], string[], string[]] = [[], [], []];
    for (const s of c.visible) {
      if (s.deactivated && !includeArchived) continue;
      const sub = c.subscriptions.get(s.id);
      const subscribers = withSubs ? subscriberIds(app.db, s.id) : undefined;
      const own = sub ? formatSubscription(app.db, s, sub, { subscribers, streamObject: {} }) : subscribers ? { subscribers } : {};
      lists[sub?.active ? 0 : sub ? 1 : 2].push(withFields(c.streamJson(s), own));
    }
    const [subscribed, left, never] = lists.map((l) => new RawJson(`[${l.join(',')}]`));
    return { subscriptions: subscribed, unsubscribed: left, never_subscribed: never };
  }
  for (const s of c.visible) {
    if (s.deactivated && !includeArchived) continue;
    const sub = c.subscriptions.get(s.id);
    const subscribers = withSubs ? subscriberIds(app.db, s.id) : undefined;
    const streamObject = c.streamObject(s);
    if (sub?.active) subscriptions.push(formatSubscription(app.db, s, sub, { subscribers, streamObject }));
    else if (sub) unsubscribed.push(formatSubscription(app.db, s, sub, { subscribers, streamObject }));
    else neverSubscribed.push(subscribers ? { ...streamObject, subscribers } : { ...streamObject });
  }
  return { subscriptions, unsubscribed, never_subscribed: neverSubscribed };
});

registerStateProvider('stream', (app, user, opts) => {
  const c = channelState(app, user, opts);
  const includeArchived = opts.capabilities.archived_channels === true;
  const shown = c.visible.filter((s) => includeArchived || !s.deactivated);
  if (opts.rawJson) return { streams: new RawJson(`[${shown.map((s) => c.streamJson(s)).join(',')}]`) };
  return { streams: shown.map((s) => c.streamObject(s)) };
});

registerStateProvider('channel_folders', (app, user) => ({
  channel_folders: (stmt(app.db, 'SELECT * FROM channel_folder WHERE realm_id = ? ORDER BY "order", id').all(user.realm_id) as Record<string, unknown>[]).map((f) => ({
    id: f.id,
    name: f.name,
    description: f.description,
    rendered_description: f.rendered_description,
    order: f.order,
    date_created: f.date_created,
    creator_id: f.creator_id,
    is_archived: f.is_archived === 1,
  })),
}));

registerStateProvider('message', (app, user, opts) => {
  if (!opts.want('update_message_flags')) return {};
  // As Zulip's get_raw_unread_data: nothing from channels the user has left (get_inactive_recipient_ids).
  // Most users have left none: then the check, a lookup per unread message, is skipped.
  const leftAny = stmt(app.db, 'SELECT 1 FROM subscription WHERE user_id = ? AND active = 0 LIMIT 1').get(user.id) !== undefined;
  // The newest unread rows (one more than Zulip sends tells whether older ones are left out), newest
  // first, as ONE JSON array of [id, flags, stream_id, topic, topic_key, direct_group_id]: a busy
  // user has 2,000, and one string parsed costs a third of 2,000 row objects made by the driver.
  const json = stmt(
    app.db,
    `SELECT json_group_array(json_array(u.id, u.flags, u.stream_id, u.topic, u.topic_key, u.direct_group_id)) FROM
       (SELECT um.message_id AS id, um.flags AS flags, m.stream_id, m.topic, m.topic_key, m.direct_group_id
        FROM usermessage um INDEXED BY usermessage_unread JOIN message m ON m.id = um.message_id
        WHERE um.user_id = @user AND (um.flags & ${FLAG.read}) = 0
          ${leftAny ? 'AND NOT EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = @user AND s.stream_id = m.stream_id AND s.active = 0)' : ''}
        ORDER BY um.message_id DESC LIMIT @limit) u`,
  )
    .pluck()
    .get({ user: user.id, limit: MAX_UNREAD_MESSAGES + 1 }) as string;
  const rows = JSON.parse(json) as [id: number, flags: number, streamId: number | null, topic: string, topicKey: string, directGroupId: number | null][];
  const oldMissing = rows.length > MAX_UNREAD_MESSAGES;
  if (oldMissing) rows.pop();
  const realm = getRealmById(app.db, user.realm_id);
  const showTopic = (t: string) => (t === '' && !opts.capabilities.empty_topic_name ? (realm?.empty_topic_display_name ?? '') : t);
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const pms = new Map<number, { other_user_id: number; sender_id: number; unread_message_ids: number[] }>();
  const huddles = new Map<string, { user_ids_string: string; unread_message_ids: number[] }>();
  const mentions: number[] = [];
  const membersOf = (gid: number) =>
    opts.memo(`dm_members_${gid}`, () => (stmt(app.db, 'SELECT user_id FROM direct_group_member WHERE group_id = ? ORDER BY user_id').all(gid) as { user_id: number }[]).map((r) => r.user_id));
  const muted = opts.memo('muted_streams', () => new Set((stmt(app.db, 'SELECT stream_id FROM subscription WHERE user_id = ? AND is_muted = 1').all(user.id) as { stream_id: number }[]).map((r) => r.stream_id)));
  const topicPolicies = opts.memo('topic_policies', () => {
    const rows = stmt(app.db, 'SELECT stream_id, topic_key, visibility_policy FROM user_topic WHERE user_id = ?').all(user.id) as {
      stream_id: number;
      topic_key: string;
      visibility_policy: number;
    }[];
    return new Map(rows.map((r) => [`${r.stream_id}\u0000${r.topic_key}`, r.visibility_policy]));
  });
  let count = 0;
  // Oldest first: each conversation is listed where its oldest unread message falls, with the topic
  // as that message spells it (topics are grouped case-insensitively, by their key).
  for (let i = rows.length - 1; i >= 0; i--) {
    const [id, flags, streamId, topic, topicKey, directGroupId] = rows[i];
    if (flags & MENTION_FLAGS) mentions.push(id);
    if (streamId !== null) {
      const key = `${streamId}\u0000${topicKey}`;
      let entry = streams.get(key);
      if (!entry) streams.set(key, (entry = { stream_id: streamId, topic: showTopic(topic), unread_message_ids: [] }));
      entry.unread_message_ids.push(id);
      // zulip-compat: the count leaves out muted messages as Zulip's is_row_muted decides them.
      const policy = topicPolicies.get(key) ?? 0;
      if (muted.has(streamId) ? policy === 2 || policy === 3 : policy !== 1) count++;
      continue;
    }
    count++;
    const members = membersOf(directGroupId as number);
    if (members.length <= 2) {
      const other = members.find((m) => m !== user.id) ?? user.id;
      let entry = pms.get(other);
      if (!entry) pms.set(other, (entry = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
      entry.unread_message_ids.push(id);
    } else {
      const key = members.join(',');
      let entry = huddles.get(key);
      if (!entry) huddles.set(key, (entry = { user_ids_string: key, unread_message_ids: [] }));
      entry.unread_message_ids.push(id);
    }
  }
  return {
    unread_msgs: {
      count,
      pms: [...pms.values()],
      streams: [...streams.values()],
      huddles: [...huddles.values()],
      mentions,
      old_unreads_missing: oldMissing,
    },
  };
});

registerStateProvider('recent_private_conversations', (app, user) => {
  // One query: the conversations of the newest private messages, each with its other members (a
  // query per conversation cost more than the rest together).
  const rows = stmt(
    app.db,
    `SELECT r.max_id, (SELECT json_group_array(g.user_id ORDER BY g.user_id) FROM direct_group_member g WHERE g.group_id = r.gid AND g.user_id <> @user) AS others
     FROM (SELECT m.direct_group_id AS gid, max(m.id) AS max_id FROM
       (SELECT message_id FROM usermessage INDEXED BY usermessage_private WHERE user_id = @user AND (flags & ${FLAG.is_private}) <> 0 ORDER BY message_id DESC LIMIT @limit) um
       JOIN message m ON m.id = um.message_id GROUP BY m.direct_group_id) r
     ORDER BY r.max_id DESC`,
  ).all({ user: user.id, limit: RECENT_PRIVATE_MESSAGES }) as { max_id: number; others: string }[];
  return {
    recent_private_conversations: rows.map((r) => ({ max_message_id: r.max_id, user_ids: JSON.parse(r.others) as number[] })),
  };
});

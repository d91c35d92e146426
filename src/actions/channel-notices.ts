// Notification Bot's messages about new subscriptions and channels (Zulip's send_messages_for_new_subscribers):
// the "subscribed you" direct messages to users someone else subscribed, the announcement in the
// organization's new-channel announcements channel when the creator asked for one, and the "channel
// events" message in each new channel.
import type { App } from '../app';
import { realmChannel, sendsChannelEventsMessages } from '../lib/realm-settings';
import { findStreamById, type StreamRow } from '../lib/streams';
import { isBot, type UserRow } from '../lib/users';
import { doSendMessage } from './messages';
import { notificationBot } from './system-bots';

/**
 * Zulip's settings.MAX_BULK_NEW_SUBSCRIPTION_MESSAGES: above this many newly subscribed users in one
 * request, nobody gets a "subscribed you" direct message (POST /register's max_bulk_new_subscription_messages).
 */
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;

/** Zulip's Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME. */
export const CHANNEL_EVENTS_TOPIC = 'channel events';
/** The topic of new-channel announcements. */
export const NEW_CHANNELS_TOPIC = 'new channels';

/** Zulip's channel_events_topic_name: a channel that allows only the empty topic gets its notices there. */
export const channelEventsTopic = (s: StreamRow) => (s.topics_policy === 'empty_topic_only' ? '' : CHANNEL_EVENTS_TOPIC);

/** Zulip's silent_mention_syntax_for_user. */
export const silentMention = (u: { full_name: string; id: number }) => `@_**${u.full_name}|${u.id}**`;

/** Zulip's Stream.PERMISSION_POLICIES names (public channels always share history in Parley). */
function policyName(s: StreamRow): string {
  if (s.is_web_public) return 'Web-public';
  if (!s.invite_only) return 'Public';
  return s.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
}

/** The announcement in the new-channel announcements channel. */
export function newChannelsAnnouncement(creator: UserRow, created: StreamRow[]): string {
  const links = created.map((s) => `#**${s.name}**`).join(', ');
  return created.length > 1
    ? `${silentMention(creator)} created the following channels: ${links}.`
    : `${silentMention(creator)} created a new channel ${links}.`;
}

/** The first message of a new channel's "channel events" topic. */
export function channelCreatedMessage(creator: UserRow, s: StreamRow): string {
  const description = s.description === '' ? '*No description.*' : s.description;
  return `**${policyName(s)}** channel created by ${silentMention(creator)}. **Description:**\n\`\`\`\` quote\n${description}\n\`\`\`\``;
}

/** Zulip's you_were_just_subscribed_message: the channel names sorted, one or a bulleted list. */
export function youWereJustSubscribedMessage(actor: UserRow, channelNames: string[]): string {
  const names = [...channelNames].sort();
  if (names.length === 1) return `${silentMention(actor)} subscribed you to #**${names[0]}**.`;
  return `${silentMention(actor)} subscribed you to the following channels:\n\n${names.map((n) => `* #**${n}**\n`).join('')}`;
}

/**
 * The "subscribed you" direct messages from Notification Bot to each user `actor` newly subscribed
 * (Zulip's send_user_subscribed_direct_messages): not to the actor, not to bots, and not about the
 * channels this request created (the channel events message covers those). Returns the ids sent.
 */
export function sendSubscribedYouMessages(
  app: App,
  actor: UserRow,
  newSubscriptions: { user: UserRow; channelNames: string[] }[],
  created: StreamRow[],
): number[] {
  const createdNames = new Set(created.map((s) => s.name));
  const sends = newSubscriptions
    .filter(({ user }) => user.id !== actor.id && !isBot(user))
    .map(({ user, channelNames }) => ({ user, names: [...new Set(channelNames)].filter((n) => !createdNames.has(n)) }))
    .filter(({ names }) => names.length > 0);
  if (sends.length === 0) return [];
  return app.batch.write(() => {
    const bot = notificationBot(app, actor.realm_id);
    return sends.map(
      ({ user, names }) =>
        doSendMessage(app, bot, {
          to: { kind: 'direct', userIds: [user.id] },
          content: youWereJustSubscribedMessage(actor, names),
          client: 'Internal',
          system: true,
          readBy: [actor.id],
        }).id,
    );
  });
}

/**
 * After channels were created by `creator` (and their first subscribers added): the announcement when
 * `announce` is set and the organization has a new-channel announcements channel, then the "channel
 * events" message in each new channel unless the organization turned those off. As in Zulip, the
 * creator has them already read. Returns the ids sent.
 *
 * Notification Bot posts as a system bot (SendRequest.system), so private channels and restricted
 * posting or topic-creation settings do not stop it, as for Zulip's cross-realm bots.
 */
export function sendNewChannelMessages(app: App, creator: UserRow, created: StreamRow[], announce: boolean): number[] {
  if (created.length === 0) return [];
  return app.batch.write(() => {
    const realmId = creator.realm_id;
    const sends: { streamId: number; topic: string; content: string }[] = [];
    if (announce) {
      const target = realmChannel(app.db, realmId, 'new_stream_announcements_stream_id');
      if (target) sends.push({ streamId: target.id, topic: NEW_CHANNELS_TOPIC, content: newChannelsAnnouncement(creator, created) });
    }
    if (sendsChannelEventsMessages(app.db, realmId)) {
      for (const s of created) {
        const fresh = findStreamById(app.db, realmId, s.id) ?? s;
        sends.push({ streamId: s.id, topic: channelEventsTopic(fresh), content: channelCreatedMessage(creator, fresh) });
      }
    }
    if (sends.length === 0) return [];
    const bot = notificationBot(app, realmId);
    // Zulip's mark_as_read=[acting user]: the creator has them read from the start (the flag is set
    // where they have a row, so the message event already says read).
    return sends.map(
      (m) =>
        doSendMessage(app, bot, {
          to: { kind: 'channel', streamId: m.streamId, topic: m.topic },
          content: m.content,
          client: 'Internal',
          system: true,
          readBy: [creator.id],
        }).id,
    );
  });
}

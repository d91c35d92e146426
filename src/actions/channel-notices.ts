// Notification Bot's messages about new subscriptions and channels (Zulip's send_messages_for_new_subscribers):
// the "subscribed you" direct messages to users someone else subscribed, the announcement in the
// organization's new-channel announcements channel when the creator asked for one, the "channel
// events" message in each new channel, and the later notices in that topic (renames, descriptions,
// access and posting permissions, archiving).
import type { App } from '../app';
import { findGroup, type GroupSettingValue } from '../lib/groups';
import { translate } from '../lib/i18n';
import { getRealmById } from '../lib/realm';
import { realmChannel, sendsChannelEventsMessages } from '../lib/realm-settings';
import { findStreamById, type StreamRow } from '../lib/streams';
import { findUserById, isBot, type UserRow } from '../lib/users';
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

/** Renders one English template (Zulip's msgid) in a language, filling its {placeholders}. */
export type Translator = (template: string, vars?: Record<string, unknown>) => string;
/**
 * A notice as its builder leaves it: the text once a language is chosen. Channel notices are written
 * in the organization's default language, "subscribed you" messages in the recipient's (Zulip's
 * override_language); the catalogue (lib/i18n.ts) has the languages Parley translates.
 */
export type Notice = (t: Translator) => string;

/** A translator for `locale` (a language code; unknown ones fall back to English). */
export const translatorFor =
  (locale: string | null | undefined): Translator =>
  (template, vars) =>
    translate(locale ?? 'en', template, vars ?? {});

/** The organization's default language, as Zulip's override_language(realm.default_language). */
export const realmTranslator = (app: App, realmId: number): Translator => translatorFor(getRealmById(app.db, realmId)?.default_language);

/** Zulip's silent_mention_syntax_for_user. */
export const silentMention = (u: { full_name: string; id: number }) => `@_**${u.full_name}|${u.id}**`;

/** Zulip's Stream.PERMISSION_POLICIES names (public channels always share history in Parley), in English. */
export function policyName(s: Pick<StreamRow, 'invite_only' | 'is_web_public' | 'history_public_to_subscribers'>): string {
  if (s.is_web_public) return 'Web-public';
  if (!s.invite_only) return 'Public';
  return s.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
}

/** The announcement in the new-channel announcements channel. */
export function newChannelsAnnouncement(creator: UserRow, created: StreamRow[]): Notice {
  const links = created.map((s) => `#**${s.name}**`).join(', ');
  return (t) =>
    created.length > 1
      ? t('{user_name} created the following channels: {new_channels}.', { user_name: silentMention(creator), new_channels: links })
      : t('{user_name} created a new channel {new_channels}.', { user_name: silentMention(creator), new_channels: links });
}

/** The first message of a new channel's "channel events" topic. */
export function channelCreatedMessage(creator: UserRow, s: StreamRow): Notice {
  return (t) => {
    const description = s.description === '' ? t('*No description.*') : s.description;
    const head = t('**{policy}** channel created by {user_name}. **Description:**', { policy: t(policyName(s)), user_name: silentMention(creator) });
    return `${head}\n\`\`\`\` quote\n${description}\n\`\`\`\``;
  };
}

/** Zulip's you_were_just_subscribed_message: the channel names sorted, one or a bulleted list. */
export function youWereJustSubscribedMessage(actor: UserRow, channelNames: string[]): Notice {
  const names = [...channelNames].sort();
  return (t) => {
    if (names.length === 1) return t('{user_full_name} subscribed you to {channel_name}.', { user_full_name: silentMention(actor), channel_name: `#**${names[0]}**` });
    const head = t('{user_full_name} subscribed you to the following channels:', { user_full_name: silentMention(actor) });
    return `${head}\n\n${names.map((n) => `* #**${n}**\n`).join('')}`;
  };
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
          // As Zulip: in the language of the one it is sent to.
          content: youWereJustSubscribedMessage(actor, names)(translatorFor(user.default_language)),
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
    const t = realmTranslator(app, realmId);
    if (announce) {
      const target = realmChannel(app.db, realmId, 'new_stream_announcements_stream_id');
      if (target) sends.push({ streamId: target.id, topic: NEW_CHANNELS_TOPIC, content: newChannelsAnnouncement(creator, created)(t) });
    }
    if (sendsChannelEventsMessages(app.db, realmId)) {
      for (const s of created) {
        const fresh = findStreamById(app.db, realmId, s.id) ?? s;
        sends.push({ streamId: s.id, topic: channelEventsTopic(fresh), content: channelCreatedMessage(creator, fresh)(t) });
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

/**
 * Zulip's maybe_send_channel_events_notice: a Notification Bot message in the channel's "channel
 * events" topic, unless the organization turned those messages off. `readBy` have it read from the
 * start (Zulip's limit_unread_user_ids). Returns the message id, or null when nothing was sent.
 */
export function sendChannelEventsNotice(app: App, s: StreamRow, notice: Notice, opts: { readBy?: readonly number[] } = {}): number | null {
  if (!sendsChannelEventsMessages(app.db, s.realm_id)) return null;
  const fresh = findStreamById(app.db, s.realm_id, s.id) ?? s;
  // Nothing goes to an archived channel: Zulip's internal send refuses it (only the archiving notice
  // itself passes, with archived_channel_notice) and logs instead of failing the change.
  if (fresh.deactivated) return null;
  return app.batch.write(
    () =>
      doSendMessage(app, notificationBot(app, s.realm_id), {
        to: { kind: 'channel', streamId: s.id, topic: channelEventsTopic(fresh) },
        content: notice(realmTranslator(app, s.realm_id)),
        client: 'Internal',
        system: true,
        readBy: opts.readBy,
      }).id,
  );
}

/** do_rename_stream's notice. */
export const channelRenamedMessage =
  (actor: UserRow, oldName: string, newName: string): Notice =>
  (t) =>
    t('{user_name} renamed channel {old_channel_name} to {new_channel_name}.', {
      user_name: silentMention(actor),
      old_channel_name: `**${oldName}**`,
      new_channel_name: `**${newName}**`,
    });

/**
 * send_change_stream_message_retention_days_notification's notice. The channel's values are stored
 * as NULL (the organization's), -1 (forever) or days; the organization's NULL is forever.
 */
export function retentionChangedMessage(actor: UserRow, oldValue: number | null, newValue: number | null, realmDays: number | null): Notice {
  const resolve = (v: number | null) => v ?? realmDays ?? -1;
  const [before, after] = [resolve(oldValue), resolve(newValue)];
  return (t) => {
    const days = (n: number) => t('{number_of_days} days', { number_of_days: n });
    const deletedAfter = (n: number) =>
      t('Messages in this channel will now be automatically deleted {number_of_days} days after they are sent.', { number_of_days: n });
    let oldPeriod: string;
    let newPeriod: string;
    let summary: string;
    // zulip-compat: Zulip decides by the old value first, so "forever" to "forever" reads "-1 days".
    if (before === -1) {
      [oldPeriod, newPeriod] = [t('Forever'), days(after)];
      summary = deletedAfter(after);
    } else if (after === -1) {
      [oldPeriod, newPeriod] = [days(before), t('Forever')];
      summary = t('Messages in this channel will now be retained forever.');
    } else {
      [oldPeriod, newPeriod] = [days(before), days(after)];
      summary = deletedAfter(after);
    }
    return t(
      '{user} has changed the [message retention period]({help_link}) for this channel:\n* **Old retention period**: {old_retention_period}\n* **New retention period**: {new_retention_period}\n\n{summary_line}',
      {
        user: silentMention(actor),
        help_link: '/help/message-retention-policy',
        old_retention_period: oldPeriod,
        new_retention_period: newPeriod,
        summary_line: summary,
      },
    );
  };
}

/** do_set_stream_property's notice for topics_policy; `emptyTopic` is how the empty topic is shown. */
export function topicsPolicyChangedMessage(actor: UserRow, oldPolicy: string, newPolicy: string, emptyTopic: string): Notice {
  return (t) => {
    const names: Record<string, string> = {
      inherit: t('Automatic'),
      allow_empty_topic: t('*{empty_topic_name}* topic allowed', { empty_topic_name: emptyTopic }),
      disable_empty_topic: t('No *{empty_topic_name}* topic', { empty_topic_name: emptyTopic }),
      empty_topic_only: t('Only *{empty_topic_name}* topic allowed', { empty_topic_name: emptyTopic }),
    };
    const name = (p: string) => (Object.hasOwn(names, p) ? names[p] : p);
    return t('{user} changed the "Allow posting to the *general chat* topic?" setting from **{old_setting}** to **{new_setting}**.', {
      user: silentMention(actor),
      old_setting: name(oldPolicy),
      new_setting: name(newPolicy),
    });
  };
}

/** send_change_stream_description_notification's notice. */
export function descriptionChangedMessage(actor: UserRow, oldDescription: string, newDescription: string): Notice {
  return (t) => {
    const shown = (d: string) => (d === '' ? t('*No description.*') : d);
    return (
      `${t('{user_name} changed the description for this channel.', { user_name: silentMention(actor) })}\n\n` +
      `* **${t('Old description')}:**\n\`\`\`\` quote\n${shown(oldDescription)}\n\`\`\`\`\n` +
      `* **${t('New description')}:**\n\`\`\`\` quote\n${shown(newDescription)}\n\`\`\`\``
    );
  };
}

/** send_change_stream_permission_notification's notice. */
export const accessPermissionsChangedMessage =
  (actor: UserRow, oldPolicy: string, newPolicy: string): Notice =>
  (t) =>
    t('{user} changed the [access permissions]({help_link}) for this channel from **{old_policy}** to **{new_policy}**.', {
      user: silentMention(actor),
      help_link: '/help/channel-permissions',
      old_policy: t(oldPolicy),
      new_policy: t(newPolicy),
    });

/** send_stream_posting_permission_update_notification's notice. */
export function postingPermissionsChangedMessage(app: App, actor: UserRow, oldValue: GroupSettingValue, newValue: GroupSettingValue): Notice {
  const [before, after] = [usersWithPermission(app, actor.realm_id, oldValue), usersWithPermission(app, actor.realm_id, newValue)];
  return (t) =>
    t('{user} changed the [posting permissions]({help_link}) for this channel:\n\n* **Old**: {old_setting_description}\n* **New**: {new_setting_description}\n', {
      user: silentMention(actor),
      help_link: '/help/channel-posting-policy',
      old_setting_description: before,
      new_setting_description: after,
    });
}

/** do_deactivate_stream's and do_unarchive_stream's notices. */
export const channelArchivedMessage =
  (name: string): Notice =>
  (t) =>
    t('Channel {channel_name} has been archived.', { channel_name: `#**${name}**` });
export const channelUnarchivedMessage =
  (name: string): Notice =>
  (t) =>
    t('Channel {channel_name} has been unarchived.', { channel_name: `#**${name}**` });

/**
 * Zulip's get_users_string_with_permission: a named group as a silent group mention; an anonymous
 * value as its groups, then its users, each by id.
 */
function usersWithPermission(app: App, realmId: number, value: GroupSettingValue): string {
  const groupMention = (id: number) => `@_*${findGroup(app.db, realmId, id)?.name ?? ''}*`;
  if (typeof value === 'number') return groupMention(value);
  const groups = [...value.direct_subgroups].sort((a, b) => a - b).map(groupMention);
  const users = [...value.direct_members]
    .sort((a, b) => a - b)
    .map((id) => findUserById(app.db, realmId, id))
    .filter((u): u is UserRow => u !== null)
    .map(silentMention);
  return [...groups, ...users].join(', ');
}

// Organization settings kept in realm.extra_settings (those without a column of their own), and the
// rules Zulip applies to the realm's group-valued settings.
import type { Db } from '../db/open';
import { getRealmById, type RealmRow } from './realm';
import { findStreamById, type StreamRow } from './streams';

/** The realm's channel-valued settings (Zulip's realm.<name>_stream / moderation_request_channel). */
export const REALM_CHANNEL_SETTINGS = ['new_stream_announcements_stream_id', 'signup_announcements_stream_id', 'zulip_update_announcements_stream_id'] as const;
export type RealmChannelSetting = (typeof REALM_CHANNEL_SETTINGS)[number];

/** realm.extra_settings as an object ({} when unset or unreadable). */
export function realmExtraSettings(realm: RealmRow | null): Record<string, unknown> {
  try {
    const parsed = JSON.parse(String(realm?.extra_settings ?? '{}'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Whether a channel setting was ever given a value (by an administrator, or on the first channel). */
export function realmChannelSettingIsSet(db: Db, realmId: number, setting: RealmChannelSetting): boolean {
  return setting in realmExtraSettings(getRealmById(db, realmId));
}

/** A channel setting's id as /register shows it: -1 when unset or disabled. */
export function realmChannelSettingId(db: Db, realmId: number, setting: RealmChannelSetting): number {
  const v = realmExtraSettings(getRealmById(db, realmId))[setting];
  return typeof v === 'number' && v >= 0 ? v : -1;
}

/** The channel a channel setting names, or null when disabled, gone or archived (Zulip's get_*_stream()). */
export function realmChannel(db: Db, realmId: number, setting: RealmChannelSetting): StreamRow | null {
  const id = realmChannelSettingId(db, realmId, setting);
  if (id < 0) return null;
  const s = findStreamById(db, realmId, id);
  return s && !s.deactivated ? s : null;
}

/** realm_send_channel_events_messages: whether Notification Bot posts in a channel's "channel events" topic. */
export function sendsChannelEventsMessages(db: Db, realmId: number): boolean {
  return realmExtraSettings(getRealmById(db, realmId)).send_channel_events_messages !== false;
}

/**
 * A realm group setting (Zulip's GroupPermissionSetting in Realm.REALM_PERMISSION_GROUP_SETTINGS):
 * what POST /register lists in server_supported_permission_settings.realm and how PATCH /realm checks
 * a new value. Unset flags take Zulip's defaults (allow_nobody_group true, the others false).
 */
export interface RealmGroupSettingRule {
  /** The system group the setting names by default (Zulip's default_group_name). */
  defaultGroupName: string;
  requireSystemGroup?: boolean;
  allowNobody?: boolean;
  allowEveryone?: boolean;
  allowedSystemGroups?: string[];
  /** Only organization owners may change it. */
  ownerOnly?: boolean;
  /** Listed for clients but not changeable through PATCH /realm here (no realm column). */
  readOnly?: boolean;
}

/**
 * The realm's group settings, in Zulip's Realm.REALM_PERMISSION_GROUP_SETTINGS order: the order of
 * POST /register's realm_* keys and server_supported_permission_settings.realm, and the order in which
 * PATCH /realm applies them (Zulip's update_realm walks the same dict). Each one but the read-only
 * has a realm column of the same name.
 */
export const REALM_GROUP_SETTING_RULES: Record<string, RealmGroupSettingRule> = {
  create_multiuse_invite_group: { defaultGroupName: 'role:administrators', ownerOnly: true },
  can_access_all_users_group: {
    defaultGroupName: 'role:everyone',
    requireSystemGroup: true,
    allowNobody: false,
    allowEveryone: true,
    allowedSystemGroups: ['role:everyone', 'role:members'],
  },
  can_add_subscribers_group: { defaultGroupName: 'role:members' },
  can_add_custom_emoji_group: { defaultGroupName: 'role:members' },
  can_create_bots_group: { defaultGroupName: 'role:members' },
  can_create_groups: { defaultGroupName: 'role:members', ownerOnly: true },
  can_create_public_channel_group: { defaultGroupName: 'role:members' },
  can_create_private_channel_group: { defaultGroupName: 'role:members' },
  can_create_web_public_channel_group: {
    defaultGroupName: 'role:owners',
    requireSystemGroup: true,
    allowedSystemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  },
  can_create_write_only_bots_group: { defaultGroupName: 'role:members' },
  can_delete_any_message_group: { defaultGroupName: 'role:administrators' },
  can_delete_own_message_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
  can_invite_users_group: { defaultGroupName: 'role:members', ownerOnly: true },
  can_manage_all_groups: { defaultGroupName: 'role:owners', allowNobody: false, ownerOnly: true },
  can_manage_billing_group: { defaultGroupName: 'role:administrators', allowNobody: false, readOnly: true },
  can_mention_many_users_group: { defaultGroupName: 'role:administrators', allowEveryone: true },
  can_move_messages_between_channels_group: { defaultGroupName: 'role:members' },
  can_move_messages_between_topics_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
  can_resolve_topics_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
  can_set_delete_message_policy_group: { defaultGroupName: 'role:moderators' },
  can_set_topics_policy_group: { defaultGroupName: 'role:members', allowEveryone: true },
  can_summarize_topics_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
  direct_message_initiator_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
  direct_message_permission_group: { defaultGroupName: 'role:everyone', allowEveryone: true },
};

/** The realm group settings PATCH /realm changes (each a realm column), in Zulip's order. */
export const REALM_CHANGEABLE_GROUP_SETTINGS: readonly string[] = Object.keys(REALM_GROUP_SETTING_RULES).filter(
  (s) => !REALM_GROUP_SETTING_RULES[s].readOnly,
);

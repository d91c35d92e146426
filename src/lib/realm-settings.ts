// Organization settings kept in realm.extra_settings (those without a column of their own), and the
// rules Zulip applies to the realm's group-valued settings.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { getRealmById, type RealmRow } from './realm';
import { NOT_SYSTEM_BOT_SQL } from './users';
import { findStreamById, type StreamRow } from './streams';

/**
 * The realm's channel-valued settings (Zulip's realm.<name>_stream / moderation_request_channel), in
 * the order Zulip's update_realm and maybe_set_moderation_or_announcement_channels_none take them.
 */
export const REALM_CHANNEL_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
] as const;
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
  return (realmExtraSetting(getRealmById(db, realmId), 'send_channel_events_messages') as boolean) !== false;
}

/**
 * Organization settings without a realm column, kept in realm.extra_settings, with the value each has
 * until an administrator changes it (Zulip's Realm model defaults; /register shows the same).
 */
export const REALM_EXTRA_SETTING_DEFAULTS = {
  // NOTE for the avatar upload routes (issue 15 item 2): as Zulip's set_avatar_backend and
  // delete_avatar_backend, POST and DELETE /users/me/avatar must refuse non-administrators with
  // "Avatar changes are disabled in this organization." while this is on (realmExtraSetting).
  avatar_changes_disabled: false,
  default_code_block_language: '',
  digest_emails_enabled: false,
  digest_weekday: 1,
  email_changes_disabled: false,
  enable_guest_user_dm_warning: true,
  enable_guest_user_indicator: true,
  // Zulip's do_create_realm turns read receipts on for closed organizations, and Parley's are created
  // invite-only (invite_required 1), as Zulip's default.
  enable_read_receipts: true,
  giphy_rating: 2,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  jitsi_server_url: null as string | null,
  message_content_allowed_in_email_notifications: true,
  name_changes_disabled: false,
  org_type: 0,
  require_e2ee_push_notifications: false,
  require_unique_names: false,
  send_channel_events_messages: true,
  // Parley sends no email; the setting is kept and shown as Zulip's is.
  send_welcome_emails: true,
  video_chat_provider: 1,
  want_advertise_in_communities_directory: false,
} as const;
export type RealmExtraSetting = keyof typeof REALM_EXTRA_SETTING_DEFAULTS;

/** A setting from realm.extra_settings, or its default. */
export function realmExtraSetting<K extends RealmExtraSetting>(realm: RealmRow | null, name: K): (typeof REALM_EXTRA_SETTING_DEFAULTS)[K] {
  const extra = realmExtraSettings(realm);
  return (name in extra ? extra[name] : REALM_EXTRA_SETTING_DEFAULTS[name]) as (typeof REALM_EXTRA_SETTING_DEFAULTS)[K];
}

/** Zulip's Realm.VIDEO_CHAT_PROVIDERS as this server offers them (realm_available_video_chat_providers). */
export const VIDEO_CHAT_PROVIDER_IDS: readonly number[] = [0, 1];
/** Zulip's Realm.GIPHY_RATING_OPTIONS ids: disabled, y, g, pg, pg-13, r. */
export const GIPHY_RATING_IDS: readonly number[] = [0, 1, 2, 3, 4, 5];
/** Zulip's DigestWeekdayEnum: Monday (0) to Sunday (6). */
export const DIGEST_WEEKDAYS: readonly number[] = [0, 1, 2, 3, 4, 5, 6];
/** Zulip's OrgTypeEnum. */
export const ORG_TYPE_IDS: readonly number[] = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];

/**
 * Zulip's RealmTopicsPolicyEnum with its stored values (the organization's default for channels whose
 * topics_policy is "inherit"; empty_topic_only is a channel-only policy).
 */
export const REALM_TOPICS_POLICIES = { allow_empty_topic: 2, disable_empty_topic: 3 } as const;
export type RealmTopicsPolicy = keyof typeof REALM_TOPICS_POLICIES;

/** Zulip's MessageEditHistoryVisibilityPolicyEnum with its stored values. */
export const EDIT_HISTORY_VISIBILITY_POLICIES = { all: 1, moves: 2, none: 3 } as const;
export type EditHistoryVisibilityPolicy = keyof typeof EDIT_HISTORY_VISIBILITY_POLICIES;

/**
 * realm_message_edit_history_visibility_policy: kept in extra_settings; before it was ever set, what
 * the allow_edit_history column says (true is "all", false "none", as Zulip's migration mapped them).
 */
export function realmEditHistoryPolicy(realm: RealmRow): EditHistoryVisibilityPolicy {
  const v = realmExtraSettings(realm).message_edit_history_visibility_policy;
  if (typeof v === 'string' && Object.hasOwn(EDIT_HISTORY_VISIBILITY_POLICIES, v)) return v as EditHistoryVisibilityPolicy;
  return realm.allow_edit_history ? 'all' : 'none';
}

/** realm_topics_policy: the topics_policy column (mandatory_topics, its older spelling, is kept equal to it). */
export function realmTopicsPolicy(realm: RealmRow): RealmTopicsPolicy {
  return realm.topics_policy === 'disable_empty_topic' ? 'disable_empty_topic' : 'allow_empty_topic';
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

/**
 * Zulip's authentication backends this server offers (realm.authentication_methods_dict()): Parley
 * has password ("Email") login only, always on.
 */
export const AUTHENTICATION_METHODS: Readonly<Record<string, boolean>> = { Email: true };

/** A name compared as Zulip's check_full_name compares them: NFKC, then case-folded. */
function foldName(name: string): string {
  // toUpperCase first folds what lower-casing alone keeps apart (ß and SS, ﬁ and FI), as casefold does.
  return name.normalize('NFKC').toUpperCase().toLowerCase();
}

/**
 * Zulip's check_full_name with require_unique_names on: no other account of the organization
 * (deactivated ones and bots included; not the system bots, which Zulip keeps in no organization)
 * may have the same name, compared without case and compatibility forms. `exceptId` is the account
 * being renamed.
 */
export function checkUniqueName(db: Db, realmId: number, name: string, exceptId: number | null): void {
  if ((realmExtraSetting(getRealmById(db, realmId), 'require_unique_names') as boolean) !== true) return;
  const wanted = foldName(name);
  const rows = stmt(db, `SELECT u.id, u.full_name FROM user u WHERE u.realm_id = ? AND ${NOT_SYSTEM_BOT_SQL}`).all(realmId) as { id: number; full_name: string }[];
  if (rows.some((r) => r.id !== exceptId && foldName(r.full_name) === wanted)) throw errors.badRequest('Unique names required in this organization.');
}

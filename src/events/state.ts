// Initial state for POST /register: the data a client loads before it applies events. Each slice of
// state belongs to an event type (Zulip's fetch_initial_state_data) and is produced by a provider.
//
// Provider interface
//   registerStateProvider(eventType, fn)   fn: (app, user, opts) => Record<string, unknown>
// - `fn` runs when the client wants `eventType` (fetch_event_types, else event_types, else every
//   type) and returns top-level keys of the register response; results are merged in registration
//   order. Several providers may share an event type (e.g. 'message': max_message_id here,
//   unread_msgs in the messages area; a provider needing two types checks `opts.want(other)`).
// - It reads committed data only (POST /register commits the open write batch first) with read-only
//   SQL, and must be a pure function of (app, user, opts): the provider list is module-level, shared
//   by every App in the process, and holds code only.
// - `opts.capabilities` are the client_capabilities; providers apply the ones touching their data
//   (empty_topic_name → topic "" shown as realm_empty_topic_display_name, archived_channels,
//   include_deactivated_groups, linkifier_url_template, user_settings_object, ...).
// - `opts.memo(key, fn)` shares a computation between providers of one registration.
// - Register providers at module load, in a module that is always imported (for an area, the lib/
//   module its api/ file imports). Types owned elsewhere: 'subscription' (subscriptions, unsubscribed,
//   never_subscribed), 'stream' (streams), 'message' + 'update_message_flags' (unread_msgs),
//   'recent_private_conversations', 'channel_folders' — the channels/messages area provides them.
import type { App } from '../app';
import { accessibleUsers, inaccessibleUser } from '../lib/access';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { materializeUserMessages } from '../lib/user-messages';
import { listRealmEmoji } from '../lib/realm-emoji';
import { nowSeconds } from '../lib/clock';
import { formatLinkifier, listLinkifiers } from '../lib/linkifiers';
import { presencesForUser, presencesJsonForUser } from '../lib/presence';
import { getRealmById, type RealmRow } from '../lib/realm';
import { REALM_EXTRA_SETTING_DEFAULTS, REALM_GROUP_SETTING_RULES } from '../lib/realm-settings';
import {
  avatarUrl,
  formatCrossRealmBot,
  formatUser,
  isAdmin,
  isBot,
  isGuest,
  isOwner,
  isoTime,
  listSystemBots,
  listedUsers,
  NOT_SYSTEM_BOT_SQL,
  type UserRow,
} from '../lib/users';
import { deliveryEmailFor } from '../lib/user-emails';
import { watchedCache } from '../db/watch';
import { ROLE } from '../lib/roles';
import { fakeEmailDomain } from '../lib/user-emails';
import { formatField, listFields } from '../lib/profile-fields';
import { listGroups } from '../lib/user-groups';
import { formatReminder, listReminders, MAX_REMINDER_NOTE_LENGTH } from '../lib/reminders';
import { emojiApiUrl } from '../lib/static-files';
import { MAX_AVATAR_FILE_SIZE_MIB, MAX_ICON_FILE_SIZE_MIB, realmIconUrl } from '../lib/avatars';
import type { ClientCapabilities } from './queue';

export interface StateOptions {
  /** Whether the client wants the initial data of `eventType`. */
  want(eventType: string): boolean;
  /** The event types asked for (fetch_event_types, else event_types); null: everything. */
  eventTypes: ReadonlySet<string> | null;
  queueId: string;
  clientGravatar: boolean;
  slimPresence: boolean;
  /** presence_history_limit_days; null: the default window. */
  presenceHistoryLimitDays: number | null;
  includeSubscribers: boolean | 'partial';
  capabilities: ClientCapabilities;
  /** Runs `fn` once per registration and returns its (shared) result. */
  memo<T>(key: string, fn: () => T): T;
  /** The caller splices RawJson values into its answer (POST /register); otherwise none are given. */
  rawJson?: boolean;
}

/** A value already serialised as JSON, for a caller that says it takes them (StateOptions.rawJson). */
export class RawJson {
  constructor(readonly json: string) {}
}

export type StateProvider = (app: App, user: UserRow, opts: StateOptions) => Record<string, unknown>;

const providers: { eventType: string; fn: StateProvider }[] = [];

/** Adds a provider of initial state for `eventType` (see the interface notes at the top). */
export function registerStateProvider(eventType: string, fn: StateProvider): void {
  providers.push({ eventType, fn });
}

/** Event types with at least one provider (what POST /register can fetch). */
export function stateEventTypes(): string[] {
  return [...new Set(providers.map((p) => p.eventType))];
}

/** Runs every provider the client wants and merges their keys. */
export function fetchInitialState(app: App, user: UserRow, opts: StateOptions): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  // Several providers read the user's message rows by user (unread, starred, recent conversations).
  materializeUserMessages(app.db, user.id);
  for (const p of providers) if (opts.want(p.eventType)) Object.assign(state, p.fn(app, user, opts));
  return state;
}

/** Builds StateOptions (with `want` and `memo`) from the register parameters. */
export function stateOptions(o: Omit<StateOptions, 'want' | 'memo'>): StateOptions {
  const cache = new Map<string, unknown>();
  return {
    ...o,
    want: (type) => o.eventTypes === null || o.eventTypes.has(type),
    memo<T>(key: string, fn: () => T): T {
      if (!cache.has(key)) cache.set(key, fn());
      return cache.get(key) as T;
    },
  };
}

// ---- constants of the Zulip API ---------------------------------------------------------------------

export const MAX_MESSAGE_LENGTH = 10_000;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;
/** Recommended client HTTP timeout for GET /events; always well above the heartbeat interval. */
export const longpollTimeoutSeconds = (heartbeatSeconds: number) => Math.max(90, heartbeatSeconds + 40);

type SettingKind = 'bool' | 'int' | 'str';

/** Personal settings as user_settings lists them, with their JSON kinds (the schema stores 0/1). */
export const USER_SETTINGS: Readonly<Record<string, SettingKind>> = {
  twenty_four_hour_time: 'bool',
  web_mark_read_on_scroll_policy: 'int',
  web_channel_default_view: 'int',
  starred_message_counts: 'bool',
  receives_typing_notifications: 'bool',
  web_suggest_update_timezone: 'bool',
  fluid_layout_width: 'bool',
  high_contrast_mode: 'bool',
  web_font_size_px: 'int',
  web_line_height_percent: 'int',
  color_scheme: 'int',
  translate_emoticons: 'bool',
  display_emoji_reaction_users: 'bool',
  default_language: 'str',
  web_home_view: 'str',
  web_escape_navigates_to_home_view: 'bool',
  left_side_userlist: 'bool',
  emojiset: 'str',
  demote_inactive_streams: 'int',
  user_list_style: 'int',
  web_animate_image_previews: 'str',
  web_stream_unreads_count_display_policy: 'int',
  web_inbox_show_channel_folders: 'bool',
  hide_ai_features: 'bool',
  timezone: 'str',
  enter_sends: 'bool',
  enable_drafts_synchronization: 'bool',
  enable_stream_desktop_notifications: 'bool',
  enable_stream_email_notifications: 'bool',
  enable_stream_push_notifications: 'bool',
  enable_stream_audible_notifications: 'bool',
  notification_sound: 'str',
  enable_desktop_notifications: 'bool',
  enable_sounds: 'bool',
  enable_followed_topic_desktop_notifications: 'bool',
  enable_followed_topic_email_notifications: 'bool',
  enable_followed_topic_push_notifications: 'bool',
  enable_followed_topic_audible_notifications: 'bool',
  email_notifications_batching_period_seconds: 'int',
  enable_offline_email_notifications: 'bool',
  enable_offline_push_notifications: 'bool',
  enable_online_push_notifications: 'bool',
  enable_digest_emails: 'bool',
  enable_marketing_emails: 'bool',
  enable_login_emails: 'bool',
  message_content_in_email_notifications: 'bool',
  pm_content_in_desktop_notifications: 'bool',
  wildcard_mentions_notify: 'bool',
  enable_followed_topic_wildcard_mentions_notify: 'bool',
  desktop_icon_count_display: 'int',
  realm_name_in_email_notifications_policy: 'int',
  automatically_follow_topics_policy: 'int',
  automatically_unmute_topics_in_muted_streams_policy: 'int',
  automatically_follow_topics_where_mentioned: 'bool',
  presence_enabled: 'bool',
  send_private_typing_notifications: 'bool',
  send_stream_typing_notifications: 'bool',
  send_read_receipts: 'bool',
  allow_private_data_export: 'bool',
  email_address_visibility: 'int',
  web_navigate_to_sent_message: 'bool',
  resolved_topic_notice_auto_read_policy: 'str',
};

/** Settings of the legacy update_display_settings event type (Zulip's display_settings_legacy). */
export const DISPLAY_SETTINGS_LEGACY = [
  'color_scheme',
  'default_language',
  'web_home_view',
  'demote_inactive_streams',
  'emojiset',
  'enable_drafts_synchronization',
  'enter_sends',
  'fluid_layout_width',
  'high_contrast_mode',
  'left_side_userlist',
  'starred_message_counts',
  'translate_emoticons',
  'twenty_four_hour_time',
] as const;

/** Settings of the legacy update_global_notifications event type (notification_settings_legacy). */
export const NOTIFICATION_SETTINGS_LEGACY = [
  'desktop_icon_count_display',
  'email_notifications_batching_period_seconds',
  'enable_desktop_notifications',
  'enable_digest_emails',
  'enable_login_emails',
  'enable_marketing_emails',
  'enable_offline_email_notifications',
  'enable_offline_push_notifications',
  'enable_online_push_notifications',
  'enable_sounds',
  'enable_stream_audible_notifications',
  'enable_stream_desktop_notifications',
  'enable_stream_email_notifications',
  'enable_stream_push_notifications',
  'message_content_in_email_notifications',
  'notification_sound',
  'pm_content_in_desktop_notifications',
  'presence_enabled',
  'realm_name_in_email_notifications_policy',
  'wildcard_mentions_notify',
] as const;

export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
];

export const NOTIFICATION_SOUNDS = ['chime', 'ding', 'zulip'];

function settingValue(kind: SettingKind, raw: unknown): unknown {
  if (kind === 'bool') return raw === 1 || raw === true || raw === '1';
  if (kind === 'int') return Number(raw);
  return String(raw);
}

/** A user's personal settings, typed for the API. */
export function userSettingsOf(user: UserRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(USER_SETTINGS)) {
    const raw = user[name];
    out[name] = raw === undefined || raw === null ? settingValue(kind, 0) : settingValue(kind, raw);
  }
  return out;
}

/** The column defaults of the user table: the organization's defaults for new users. */
function settingDefaults(db: Db): Record<string, unknown> {
  const cols = db.prepare('PRAGMA table_info(user)').all() as { name: string; dflt_value: string | null }[];
  const byName = new Map(cols.map((c) => [c.name, c.dflt_value]));
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(USER_SETTINGS)) {
    if (name === 'timezone') continue;
    const dflt = byName.get(name);
    if (dflt === undefined || dflt === null) {
      out[name] = settingValue(kind, 0);
      continue;
    }
    const unquoted = /^'.*'$/.test(dflt) ? dflt.slice(1, -1).replace(/''/g, "'") : dflt;
    out[name] = settingValue(kind, unquoted);
  }
  return out;
}

// ---- shared helpers -----------------------------------------------------------------------------------

const bool = (v: unknown) => v === 1 || v === true;

function realmOf(app: App, user: UserRow, opts: StateOptions): RealmRow {
  return opts.memo('realm', () => getRealmById(app.db, user.realm_id) as RealmRow);
}

function extraSettings(realm: RealmRow): Record<string, unknown> {
  try {
    const parsed = JSON.parse(String(realm.extra_settings ?? '{}'));
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The realm's empty-topic display name (what clients without empty_topic_name see for ""). */
function topicForClient(realm: RealmRow, opts: StateOptions, topic: string): string {
  return topic === '' && !opts.capabilities.empty_topic_name ? realm.empty_topic_display_name : topic;
}

/** Ids of every group the user belongs to, directly or through subgroups. */
function recursiveGroupIds(db: Db, userId: number): Set<number> {
  const rows = stmt(
    db,
    `WITH RECURSIVE g(id) AS (
       SELECT group_id FROM user_group_member WHERE user_id = ?
       UNION SELECT s.supergroup_id FROM user_group_subgroup s JOIN g ON s.subgroup_id = g.id
     ) SELECT id FROM g`,
  ).all(userId) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/** A group-setting value: a named group's id, or an anonymous group's {direct_members, direct_subgroups}. */
export function groupSettingValue(db: Db, groupId: number): GroupSettingValue {
  const g = stmt(db, 'SELECT named FROM user_group WHERE id = ?').get(groupId) as { named: number } | undefined;
  if (!g || g.named) return groupId;
  const members = (stmt(db, 'SELECT user_id FROM user_group_member WHERE group_id = ? ORDER BY user_id').all(groupId) as { user_id: number }[]).map(
    (r) => r.user_id,
  );
  const subgroups = (
    stmt(db, 'SELECT subgroup_id FROM user_group_subgroup WHERE supergroup_id = ? ORDER BY subgroup_id').all(groupId) as { subgroup_id: number }[]
  ).map((r) => r.subgroup_id);
  return { direct_members: members, direct_subgroups: subgroups };
}

function systemGroups(db: Db, realmId: number): Map<string, number> {
  const rows = stmt(db, 'SELECT id, name FROM user_group WHERE realm_id = ? AND is_system_group = 1').all(realmId) as { id: number; name: string }[];
  return new Map(rows.map((r) => [r.name, r.id]));
}

// ---- realm ----------------------------------------------------------------------------------------

interface PermissionSetting {
  require_system_group: boolean;
  allow_internet_group: boolean;
  allow_nobody_group: boolean;
  allow_everyone_group: boolean;
  default_group_name: string;
  default_for_system_groups: string | null;
  allowed_system_groups: string[];
}

const perm = (default_group_name: string, o: Partial<PermissionSetting> = {}): PermissionSetting => ({
  require_system_group: false,
  allow_internet_group: false,
  allow_nobody_group: true,
  allow_everyone_group: false,
  default_group_name,
  default_for_system_groups: null,
  allowed_system_groups: [],
  ...o,
});

/**
 * Realm group settings (Zulip's Realm.REALM_PERMISSION_GROUP_SETTINGS), from the one table PATCH /realm
 * also checks against; the realm column has the same name.
 */
const REALM_PERMISSION_SETTINGS: Record<string, PermissionSetting> = Object.fromEntries(
  Object.entries(REALM_GROUP_SETTING_RULES).map(([name, r]) => [
    name,
    perm(r.defaultGroupName, {
      require_system_group: r.requireSystemGroup ?? false,
      allow_nobody_group: r.allowNobody ?? true,
      allow_everyone_group: r.allowEveryone ?? false,
      allowed_system_groups: r.allowedSystemGroups ?? [],
    }),
  ]),
);

const STREAM_PERMISSION_SETTINGS: Record<string, PermissionSetting> = {
  can_add_subscribers_group: perm('role:nobody', { allow_everyone_group: true }),
  can_administer_channel_group: perm('stream_creator_or_nobody'),
  can_create_topic_group: perm('role:everyone', { allow_everyone_group: true }),
  can_delete_any_message_group: perm('role:nobody'),
  can_delete_own_message_group: perm('role:nobody', { allow_everyone_group: true }),
  can_move_messages_out_of_channel_group: perm('role:nobody'),
  can_move_messages_within_channel_group: perm('role:nobody', { allow_everyone_group: true }),
  can_remove_subscribers_group: perm('role:administrators', { allow_everyone_group: true }),
  can_resolve_topics_group: perm('role:nobody', { allow_everyone_group: true }),
  can_send_message_group: perm('role:everyone', { allow_everyone_group: true, allow_internet_group: false }),
  can_subscribe_group: perm('role:nobody'),
};

const GROUP_PERMISSION_SETTINGS: Record<string, PermissionSetting> = {
  can_add_members_group: perm('group_creator', { default_for_system_groups: 'role:nobody' }),
  can_join_group: perm('role:nobody', { default_for_system_groups: 'role:nobody' }),
  can_leave_group: perm('role:everyone', { allow_everyone_group: true, default_for_system_groups: 'role:nobody' }),
  can_manage_group: perm('group_creator', { default_for_system_groups: 'role:nobody' }),
  can_mention_group: perm('role:everyone', { allow_everyone_group: true, default_for_system_groups: 'role:everyone' }),
  can_remove_members_group: perm('role:nobody', { default_for_system_groups: 'role:nobody' }),
};

// Deprecated integer policies derived from group settings (for old clients).
const COMMON_POLICY: Record<string, number> = { 'role:members': 1, 'role:administrators': 2, 'role:fullmembers': 3, 'role:moderators': 4 };
const WEB_PUBLIC_POLICY: Record<string, number> = { 'role:administrators': 2, 'role:moderators': 4, 'role:nobody': 6, 'role:owners': 7 };
const WILDCARD_POLICY: Record<string, number> = {
  'role:everyone': 1,
  'role:members': 2,
  'role:fullmembers': 3,
  'role:administrators': 5,
  'role:nobody': 6,
  'role:moderators': 7,
};

function realmGroupIds(app: App, user: UserRow, realm: RealmRow, opts: StateOptions): Record<string, number> {
  return opts.memo('realmGroupIds', () => {
    const sys = systemGroups(app.db, user.realm_id);
    const extra = extraSettings(realm);
    const out: Record<string, number> = {};
    for (const [name, setting] of Object.entries(REALM_PERMISSION_SETTINGS)) {
      const col = realm[name] ?? extra[name];
      out[name] = typeof col === 'number' ? col : (sys.get(setting.default_group_name) ?? 0);
    }
    return out;
  });
}

registerStateProvider('realm', (app, user, opts) => {
  const db = app.db;
  const realm = realmOf(app, user, opts);
  const extra = extraSettings(realm);
  const groupIds = realmGroupIds(app, user, realm, opts);
  const sysNames = new Map([...systemGroups(db, user.realm_id)].map(([name, id]) => [id, name]));
  const policy = (table: Record<string, number>, setting: string, fallback: number) => table[sysNames.get(groupIds[setting]) ?? ''] ?? fallback;
  const publicUrl = app.publicUrl;
  let host = 'localhost';
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    /* keep the fallback */
  }
  const topicsPolicy = String(realm.topics_policy ?? 'allow_empty_topic');
  const state: Record<string, unknown> = {
    max_stream_name_length: MAX_STREAM_NAME_LENGTH,
    max_stream_description_length: MAX_STREAM_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: 60,
    max_channel_folder_description_length: 1024,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_bulk_new_subscription_messages: 100,
    max_reminder_note_length: MAX_REMINDER_NOTE_LENGTH,
    server_min_deactivated_realm_deletion_days: 14,
    server_max_deactivated_realm_deletion_days: null,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 200,
    server_typing_started_expiry_period_milliseconds: 45_000,
    server_typing_stopped_wait_period_milliseconds: 5_000,
    server_typing_started_wait_period_milliseconds: 10_000,
    server_supported_permission_settings: {
      realm: REALM_PERMISSION_SETTINGS,
      stream: STREAM_PERMISSION_SETTINGS,
      group: GROUP_PERMISSION_SETTINGS,
    },
    realm_date_created: realm.date_created,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_default_language: realm.default_language,
    realm_allow_message_editing: bool(realm.allow_message_editing),
    realm_allow_edit_history: bool(realm.allow_edit_history),
    realm_message_edit_history_visibility_policy: bool(realm.allow_edit_history) ? 'all' : 'none',
    realm_message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds ?? null,
    realm_message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds ?? null,
    realm_move_messages_within_stream_limit_seconds: realm.move_messages_within_stream_limit_seconds ?? null,
    realm_move_messages_between_streams_limit_seconds: realm.move_messages_between_streams_limit_seconds ?? null,
    // zulip-compat: Zulip stores "forever" as -1; the schema's NULL means the same.
    realm_message_retention_days: realm.message_retention_days ?? -1,
    realm_mandatory_topics: topicsPolicy === 'disable_empty_topic' || bool(realm.mandatory_topics),
    realm_topics_policy: topicsPolicy,
    realm_empty_topic_display_name: realm.empty_topic_display_name,
    realm_invite_required: bool(realm.invite_required),
    realm_emails_restricted_to_domains: bool(realm.emails_restricted_to_domains),
    realm_disallow_disposable_email_addresses: bool(realm.disallow_disposable_email_addresses),
    realm_waiting_period_threshold: realm.waiting_period_threshold,
    realm_enable_spectator_access: bool(realm.enable_spectator_access),
    realm_welcome_message_custom_text: realm.welcome_message_custom_text ?? '',
    realm_digest_emails_enabled: REALM_EXTRA_SETTING_DEFAULTS.digest_emails_enabled,
    realm_digest_weekday: REALM_EXTRA_SETTING_DEFAULTS.digest_weekday,
    realm_email_changes_disabled: false,
    realm_name_changes_disabled: false,
    realm_avatar_changes_disabled: false,
    realm_require_unique_names: false,
    realm_inline_image_preview: REALM_EXTRA_SETTING_DEFAULTS.inline_image_preview,
    realm_inline_url_embed_preview: REALM_EXTRA_SETTING_DEFAULTS.inline_url_embed_preview,
    realm_send_welcome_emails: true,
    realm_send_channel_events_messages: REALM_EXTRA_SETTING_DEFAULTS.send_channel_events_messages,
    realm_message_content_allowed_in_email_notifications: REALM_EXTRA_SETTING_DEFAULTS.message_content_allowed_in_email_notifications,
    realm_want_advertise_in_communities_directory: REALM_EXTRA_SETTING_DEFAULTS.want_advertise_in_communities_directory,
    realm_video_chat_provider: REALM_EXTRA_SETTING_DEFAULTS.video_chat_provider,
    realm_jitsi_server_url: REALM_EXTRA_SETTING_DEFAULTS.jitsi_server_url,
    realm_giphy_rating: REALM_EXTRA_SETTING_DEFAULTS.giphy_rating,
    realm_default_code_block_language: REALM_EXTRA_SETTING_DEFAULTS.default_code_block_language,
    realm_enable_read_receipts: REALM_EXTRA_SETTING_DEFAULTS.enable_read_receipts,
    realm_enable_guest_user_dm_warning: true,
    realm_enable_guest_user_indicator: true,
    realm_require_e2ee_push_notifications: false,
    realm_org_type: REALM_EXTRA_SETTING_DEFAULTS.org_type,
    realm_plan_type: 1,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: 'Available on Zulip Cloud Standard. Upgrade to access.',
    realm_authentication_methods: { Email: { enabled: true, available: true } },
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_push_notifications_enabled: app.config.pushService !== null,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_upload_quota_mib: realm.upload_quota_mib ?? null,
    realm_icon_url: realmIconUrl(publicUrl, realm),
    realm_icon_source: realm.icon_source,
    max_icon_file_size_mib: MAX_ICON_FILE_SIZE_MIB,
    realm_logo_url: `${publicUrl}/static/images/logo/default-realm-logo.png?version=0`,
    realm_logo_source: 'D',
    realm_night_logo_url: `${publicUrl}/static/images/logo/default-realm-logo.png?version=0`,
    realm_night_logo_source: 'D',
    max_logo_file_size_mib: 5,
    realm_bot_domain: host,
    realm_url: publicUrl,
    realm_uri: publicUrl,
    realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } },
    realm_presence_disabled: false,
    settings_send_digest_emails: false,
    realm_is_zephyr_mirror_realm: false,
    realm_default_external_accounts: {
      github: { name: 'GitHub', text: 'GitHub', hint: 'Enter your GitHub username', url_pattern: 'https://github.com/%(username)s' },
      twitter: { name: 'Twitter', text: 'Twitter', hint: 'Enter your Twitter username', url_pattern: 'https://twitter.com/%(username)s' },
    },
    jitsi_server_url: 'https://meet.jit.si',
    server_jitsi_server_url: 'https://meet.jit.si',
    development_environment: false,
    server_generation: app.queues.generation,
    password_min_length: 6,
    password_max_length: 100,
    password_min_guesses: 10_000,
    giphy_rating_options: {
      disabled: { name: 'GIPHY integration disabled', id: 0 },
      y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
      g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
      pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
      'pg-13': { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
      r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
    },
    max_file_upload_size_mib: realm.max_file_upload_size_mib ?? app.config.maxFileUploadSizeMib,
    max_avatar_file_size_mib: MAX_AVATAR_FILE_SIZE_MIB,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: [],
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_web_public_streams_enabled: app.config.webPublicStreamsEnabled,
    server_emoji_data_url: `${publicUrl}${emojiApiUrl()}`,
    server_can_summarize_topics: false,
    event_queue_longpoll_timeout_seconds: longpollTimeoutSeconds(app.config.heartbeatSeconds),
    realm_moderation_request_channel_id: -1,
    realm_new_stream_announcements_stream_id: -1,
    realm_signup_announcements_stream_id: -1,
    realm_zulip_update_announcements_stream_id: -1,
    realm_create_public_stream_policy: policy(COMMON_POLICY, 'can_create_public_channel_group', 1),
    realm_create_private_stream_policy: policy(COMMON_POLICY, 'can_create_private_channel_group', 1),
    realm_create_web_public_stream_policy: policy(WEB_PUBLIC_POLICY, 'can_create_web_public_channel_group', 7),
    realm_wildcard_mention_policy: policy(WILDCARD_POLICY, 'can_mention_many_users_group', 5),
  };
  for (const [name, id] of Object.entries(groupIds)) state[`realm_${name}`] = groupSettingValue(db, id);
  // Settings stored without a column yet (realm.extra_settings) override the defaults above.
  for (const [k, v] of Object.entries(extra)) if (!(k in REALM_PERMISSION_SETTINGS) && k !== REALM_DEFAULTS_KEY) state[`realm_${k}`] = v;
  return state;
});

/** realm.extra_settings key of the changed new-user defaults (REALM_DEFAULTS_KEY in src/actions/realm-defaults.ts). */
const REALM_DEFAULTS_KEY = 'user_settings_defaults';

/** The organization's defaults for new users: column defaults, overridden by PATCH /realm/user_settings_defaults. */
export function realmUserSettingsDefaults(db: Db, realmId: number): Record<string, unknown> {
  const realm = getRealmById(db, realmId) as RealmRow | null;
  const stored = realm ? extraSettings(realm)[REALM_DEFAULTS_KEY] : undefined;
  const out = settingDefaults(db);
  if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
    for (const [k, v] of Object.entries(stored)) if (k in out) out[k] = v;
  }
  return out;
}

registerStateProvider('realm_user_settings_defaults', (app, user) => ({
  realm_user_settings_defaults: {
    ...realmUserSettingsDefaults(app.db, user.realm_id),
    emojiset_choices: EMOJISET_CHOICES,
    available_notification_sounds: NOTIFICATION_SOUNDS,
  },
}));

registerStateProvider('realm_billing', () => ({ realm_billing: { has_pending_sponsorship_request: false } }));

// ---- users ----------------------------------------------------------------------------------------

function profileDataByUser(db: Db, realmId: number, o: { inactiveOnly?: boolean } = {}): Map<number, Record<string, { value: string; rendered_value?: string }>> {
  const rows = stmt(
    db,
    `SELECT v.user_id, v.field_id, v.value, v.rendered_value FROM custom_profile_field_value v
     JOIN user u ON u.id = v.user_id WHERE u.realm_id = ?${o.inactiveOnly ? ' AND u.is_active = 0' : ''}`,
  ).all(realmId) as { user_id: number; field_id: number; value: string; rendered_value: string | null }[];
  const out = new Map<number, Record<string, { value: string; rendered_value?: string }>>();
  for (const r of rows) {
    let d = out.get(r.user_id);
    if (!d) out.set(r.user_id, (d = {}));
    d[r.field_id] = r.rendered_value === null ? { value: r.value } : { value: r.value, rendered_value: r.rendered_value };
  }
  return out;
}

const DELIVERY_EMAIL_MARK = JSON.stringify({ delivery_email: '\u0000' }).slice(1, -1);

/**
 * Each active user's realm_users entry as JSON, in two parts around its delivery_email value (the
 * one field that depends on who is looking), by client_gravatar. Formatting and serialising 1,000
 * user objects was ~3 ms of every /register, the same text every time: kept until a user row or a
 * profile field value changes.
 */
function activeUserJson(db: Db, realmId: number, clientGravatar: boolean): { u: ReturnType<typeof listedUsers>[number]; head: string; tail: string }[] {
  return watchedCache<string, { u: ReturnType<typeof listedUsers>[number]; head: string; tail: string }[]>(db, 'activeUserJson', ['user', 'custom_profile_field_value'], 100).get(
    `${realmId}:${clientGravatar}`,
    () => {
      const profiles = profileDataByUser(db, realmId);
      return listedUsers(db, realmId)
        .filter((u) => u.is_active)
        .map((u) => {
          const d = formatUser(u, u, { clientGravatar, profileData: isBot(u) ? undefined : (profiles.get(u.id) ?? {}) });
          delete d.is_active;
          d.delivery_email = '\u0000';
          const json = JSON.stringify(d);
          const at = json.indexOf(DELIVERY_EMAIL_MARK);
          return { u, head: json.slice(0, at) + '"delivery_email":', tail: json.slice(at + DELIVERY_EMAIL_MARK.length) };
        });
    },
  );
}

registerStateProvider('realm_user', (app, user, opts) => {
  const db = app.db;
  // The system bots are not the organization's: Zulip lists them apart, as cross_realm_bots.
  const rows = listedUsers(db, user.realm_id);
  const active: Record<string, unknown>[] = [];
  const inactive: Record<string, unknown>[] = [];
  // Users outside the viewer's access (can_access_all_users_group) are left out for clients that
  // declare user_list_incomplete, and shown as "Unknown user" placeholders to the others, as in Zulip.
  const access = accessibleUsers(db, user);
  // A viewer who sees everyone, for a caller that takes JSON: the active users' cached text.
  const raw = opts.rawJson === true && access === null;
  const profiles = raw ? profileDataByUser(db, user.realm_id, { inactiveOnly: true }) : profileDataByUser(db, user.realm_id);
  const domain = fakeEmailDomain(app);
  const nowIso = isoTime(nowSeconds(app.clock));
  for (const u of rows) {
    if (raw && u.is_active) continue;
    if (access && !access.has(u.id)) {
      if (!opts.capabilities.user_list_incomplete) {
        const placeholder = inaccessibleUser(u.id, domain, nowIso);
        delete placeholder.is_active;
        active.push(placeholder);
      }
      continue;
    }
    const d = formatUser(u, user, { clientGravatar: opts.clientGravatar, profileData: isBot(u) ? undefined : (profiles.get(u.id) ?? {}) });
    // The two lists say whether a user is active; Zulip drops the key from both.
    delete d.is_active;
    (u.is_active ? active : inactive).push(d);
  }
  const realm = realmOf(app, user, opts);
  const groupIds = realmGroupIds(app, user, realm, opts);
  const mine = opts.memo('myGroups', () => recursiveGroupIds(db, user.id));
  const can = (setting: string) => mine.has(groupIds[setting]);
  const canCreatePublic = can('can_create_public_channel_group');
  const canCreatePrivate = can('can_create_private_channel_group');
  const canCreateWebPublic = can('can_create_web_public_channel_group');
  const activeJson = raw
    ? new RawJson(`[${activeUserJson(db, user.realm_id, opts.clientGravatar).map((e) => e.head + JSON.stringify(deliveryEmailFor(user, e.u)) + e.tail).join(',')}]`)
    : null;
  return {
    realm_users: activeJson ?? active,
    realm_non_active_users: inactive,
    cross_realm_bots: listSystemBots(db, user.realm_id).map(formatCrossRealmBot),
    avatar_source: user.avatar_source,
    avatar_url_medium: avatarUrl(user, true),
    avatar_url: avatarUrl(user),
    can_create_streams: canCreatePublic || canCreatePrivate || canCreateWebPublic,
    can_create_public_streams: canCreatePublic,
    can_create_private_streams: canCreatePrivate,
    can_create_web_public_streams: canCreateWebPublic,
    can_subscribe_other_users: can('can_add_subscribers_group'),
    can_invite_others_to_realm: can('can_invite_users_group'),
    is_admin: isAdmin(user),
    is_owner: isOwner(user),
    is_moderator: user.role === ROLE.MODERATOR,
    is_guest: isGuest(user),
    user_id: user.id,
    email: user.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
  };
});

registerStateProvider('realm_bot', (app, user) => {
  const db = app.db;
  const rows = (
    isAdmin(user)
      ? // The system bots are not the organization's (Zulip's are cross-realm) and their keys are never shown.
        stmt(db, `SELECT * FROM user u WHERE realm_id = ? AND bot_type IS NOT NULL AND ${NOT_SYSTEM_BOT_SQL} ORDER BY id`).all(user.realm_id)
      : stmt(db, 'SELECT * FROM user WHERE realm_id = ? AND bot_type IS NOT NULL AND bot_owner_id = ? ORDER BY id').all(user.realm_id, user.id)
  ) as UserRow[];
  const streamName = (id: unknown) =>
    typeof id === 'number' ? ((stmt(db, 'SELECT name FROM stream WHERE id = ?').get(id) as { name: string } | undefined)?.name ?? null) : null;
  return {
    realm_bots: rows.map((b) => ({
      email: b.email,
      user_id: b.id,
      avatar_url: avatarUrl(b),
      api_key: b.api_key,
      full_name: b.full_name,
      is_active: b.is_active === 1,
      bot_type: b.bot_type,
      default_sending_stream: streamName(b.default_sending_stream_id),
      default_events_register_stream: streamName(b.default_events_register_stream_id),
      default_all_public_streams: bool(b.default_all_public_streams),
      owner_id: b.bot_owner_id,
      services: botServices(db, b),
    })),
  };
});

function botServices(db: Db, bot: UserRow): Record<string, unknown>[] {
  const rows = stmt(db, 'SELECT name, base_url, interface, config FROM bot_service WHERE bot_id = ? ORDER BY id').all(bot.id) as {
    name: string;
    base_url: string;
    interface: number;
    config: string;
  }[];
  return rows.map((s) => {
    let config: Record<string, unknown> = {};
    try {
      config = JSON.parse(s.config) as Record<string, unknown>;
    } catch {
      /* an unreadable config reads as empty */
    }
    if (bot.bot_type === 4) return { service_name: s.name, config_data: config };
    return { base_url: s.base_url, interface: s.interface, token: typeof config.token === 'string' ? config.token : '' };
  });
}

registerStateProvider('realm_user_groups', (app, user, opts) => {
  // The same dictionaries as GET /user_groups (direct members without deactivated users, Zulip FL 303).
  const includeDeactivated = opts.capabilities.include_deactivated_groups === true;
  if (!opts.rawJson) return { realm_user_groups: listGroups(app.db, user.realm_id, { includeDeactivated }) };
  // As JSON, the same for every viewer: kept until a group, membership, subgroup or user row changes
  // (a query per group for its members, the role groups holding everyone, was ~1 ms of each /register).
  const json = watchedCache<string, string>(app.db, 'realmUserGroupsJson', ['user_group', 'user_group_member', 'user_group_subgroup', 'user'], 100).get(
    `${user.realm_id}:${includeDeactivated}`,
    () => JSON.stringify(listGroups(app.db, user.realm_id, { includeDeactivated })),
  );
  return { realm_user_groups: new RawJson(json) };
});

// ---- personal settings ------------------------------------------------------------------------------

registerStateProvider('user_settings', (_app, user) => ({
  user_settings: { ...userSettingsOf(user), emojiset_choices: EMOJISET_CHOICES, available_notification_sounds: NOTIFICATION_SOUNDS },
}));

registerStateProvider('update_display_settings', (_app, user, opts) => {
  if (opts.capabilities.user_settings_object) return {};
  const all = userSettingsOf(user);
  const out: Record<string, unknown> = {};
  for (const k of DISPLAY_SETTINGS_LEGACY) out[k] = all[k];
  out.emojiset_choices = EMOJISET_CHOICES;
  out.timezone = all.timezone;
  // The 10.2 register schema lists this one top-level too (feature level 253).
  out.receives_typing_notifications = all.receives_typing_notifications;
  return out;
});

registerStateProvider('update_global_notifications', (_app, user, opts) => {
  if (opts.capabilities.user_settings_object) return {};
  const all = userSettingsOf(user);
  const out: Record<string, unknown> = {};
  for (const k of NOTIFICATION_SETTINGS_LEGACY) out[k] = all[k];
  out.available_notification_sounds = NOTIFICATION_SOUNDS;
  return out;
});

// ---- realm data ---------------------------------------------------------------------------------------

registerStateProvider('realm_linkifiers', (app, user, opts) => {
  // zulip-compat: clients that cannot read URL templates get an empty list (Zulip FL 176).
  if (!opts.capabilities.linkifier_url_template) return { realm_linkifiers: [] };
  return { realm_linkifiers: listLinkifiers(app.db, user.realm_id).map(formatLinkifier) };
});

// zulip-compat: the legacy realm_filters list is always empty (its URL format strings are gone).
registerStateProvider('realm_filters', () => ({ realm_filters: [] }));

registerStateProvider('realm_emoji', (app, user) => ({ realm_emoji: listRealmEmoji(app.db, user.realm_id) }));

registerStateProvider('realm_domains', (app, user) => ({
  realm_domains: (
    stmt(app.db, 'SELECT domain, allow_subdomains FROM realm_domain WHERE realm_id = ? ORDER BY domain').all(user.realm_id) as {
      domain: string;
      allow_subdomains: number;
    }[]
  ).map((d) => ({ domain: d.domain, allow_subdomains: bool(d.allow_subdomains) })),
}));

const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: 'Text (short)' },
  LONG_TEXT: { id: 2, name: 'Text (long)' },
  SELECT: { id: 3, name: 'List of options' },
  DATE: { id: 4, name: 'Date picker' },
  URL: { id: 5, name: 'Link' },
  USER: { id: 6, name: 'Users' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
};

registerStateProvider('custom_profile_fields', (app, user) => ({
  custom_profile_fields: listFields(app.db, user.realm_id).map(formatField),
  custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
}));

registerStateProvider('default_streams', (app, user) => ({
  // zulip-compat: guests are told the organization has no default channels.
  realm_default_streams: isGuest(user)
    ? []
    : (stmt(app.db, 'SELECT stream_id FROM default_stream WHERE realm_id = ? ORDER BY stream_id').all(user.realm_id) as { stream_id: number }[]).map(
        (r) => r.stream_id,
      ),
}));

registerStateProvider('default_stream_groups', () => ({ realm_default_stream_groups: [] }));
registerStateProvider('realm_embedded_bots', () => ({ realm_embedded_bots: [] }));
registerStateProvider('realm_incoming_webhook_bots', () => ({ realm_incoming_webhook_bots: [] }));
registerStateProvider('onboarding_steps', () => ({ onboarding_steps: [], navigation_tour_video_url: null }));
registerStateProvider('stop_words', () => ({ stop_words: [] }));
registerStateProvider('video_calls', () => ({ has_zoom_token: false }));
registerStateProvider('giphy', () => ({ giphy_api_key: '' }));

// ---- presence and status ------------------------------------------------------------------------------

registerStateProvider('presence', (app, user, opts) => {
  // The presence area's query (src/lib/presence.ts): same formats, window and access limits as
  // POST /users/me/presence.
  const modern = opts.slimPresence || opts.capabilities.simplified_presence_events;
  const raw = opts.rawJson && modern ? presencesJsonForUser(app, user, opts.presenceHistoryLimitDays) : null;
  if (raw) return { presences: new RawJson(raw.json), presence_last_update_id: raw.lastUpdateId, server_timestamp: app.clock.nowMs() / 1000 };
  const { presences, presence_last_update_id } = presencesForUser(app, user, {
    modern,
    lastUpdateId: null,
    historyLimitDays: opts.presenceHistoryLimitDays,
  });
  return { presences, presence_last_update_id, server_timestamp: app.clock.nowMs() / 1000 };
});

registerStateProvider('user_status', (app, user, opts) => {
  const rows = stmt(
    app.db,
    `SELECT s.user_id, s.status_text, s.emoji_name, s.emoji_code, s.reaction_type, u.presence_enabled
     FROM user_status s JOIN user u ON u.id = s.user_id WHERE u.realm_id = ? AND u.is_active = 1 ORDER BY s.user_id`,
  ).all(user.realm_id) as {
    user_id: number;
    status_text: string;
    emoji_name: string;
    emoji_code: string;
    reaction_type: string;
    presence_enabled: number;
  }[];
  const out: Record<string, unknown> = {};
  // Only users the viewer may access (Zulip's get_all_users_status_dict).
  const access = opts.memo('userStatusAccess', () => accessibleUsers(app.db, user));
  for (const r of rows) {
    if (access && !access.has(r.user_id)) continue;
    const d: Record<string, unknown> = {};
    // zulip-compat: the deprecated `away` mirrors a disabled presence_enabled.
    if (!r.presence_enabled) d.away = true;
    if (r.status_text) d.status_text = r.status_text;
    if (r.emoji_name) {
      d.emoji_name = r.emoji_name;
      d.emoji_code = r.emoji_code;
      d.reaction_type = r.reaction_type;
    }
    if (Object.keys(d).length > 0) out[String(r.user_id)] = d;
  }
  return { user_status: out };
});

// ---- the user's own data --------------------------------------------------------------------------

registerStateProvider('message', (app, user) => {
  const row = stmt(app.db, 'SELECT max(message_id) AS id FROM usermessage WHERE user_id = ?').get(user.id) as { id: number | null };
  return { max_message_id: row.id ?? -1 };
});

registerStateProvider('alert_words', (app, user) => ({
  alert_words: (stmt(app.db, 'SELECT word FROM alert_word WHERE user_id = ? ORDER BY word').all(user.id) as { word: string }[]).map((r) => r.word),
}));

registerStateProvider('starred_messages', (app, user) => ({
  starred_messages: (
    stmt(app.db, 'SELECT message_id FROM usermessage INDEXED BY usermessage_starred WHERE user_id = ? AND (flags & 2) <> 0 ORDER BY message_id').all(user.id) as { message_id: number }[]
  ).map((r) => r.message_id),
}));

registerStateProvider('muted_users', (app, user) => ({
  muted_users: (
    stmt(app.db, 'SELECT muted_user_id, date_muted FROM muted_user WHERE user_id = ? ORDER BY muted_user_id').all(user.id) as {
      muted_user_id: number;
      date_muted: number;
    }[]
  ).map((r) => ({ id: r.muted_user_id, timestamp: r.date_muted })),
}));

interface UserTopicRow {
  stream_id: number;
  topic_name: string;
  visibility_policy: number;
  last_updated: number;
  stream_name: string;
}

function userTopicRows(app: App, user: UserRow, opts: StateOptions): UserTopicRow[] {
  // user_topic and the legacy muted_topics both read them.
  return opts.memo('user_topic_rows', () => readUserTopicRows(app, user));
}

function readUserTopicRows(app: App, user: UserRow): UserTopicRow[] {
  return stmt(
    app.db,
    `SELECT t.stream_id, t.topic_name, t.visibility_policy, t.last_updated, s.name AS stream_name
     FROM user_topic t JOIN stream s ON s.id = t.stream_id
     WHERE t.user_id = ? AND t.visibility_policy <> 0 ORDER BY t.last_updated, t.stream_id, t.topic_key`,
  ).all(user.id) as UserTopicRow[];
}

registerStateProvider('user_topic', (app, user, opts) => {
  const realm = realmOf(app, user, opts);
  return {
    user_topics: userTopicRows(app, user, opts).map((t) => ({
      stream_id: t.stream_id,
      topic_name: topicForClient(realm, opts, t.topic_name),
      last_updated: t.last_updated,
      visibility_policy: t.visibility_policy,
    })),
  };
});

registerStateProvider('muted_topics', (app, user, opts) => {
  // zulip-compat: a client that explicitly asks for user_topic gets no duplicate legacy list.
  if (opts.eventTypes !== null && opts.want('user_topic')) return {};
  const realm = realmOf(app, user, opts);
  return {
    muted_topics: userTopicRows(app, user, opts)
      .filter((t) => t.visibility_policy === 1)
      .map((t) => [t.stream_name, topicForClient(realm, opts, t.topic_name), t.last_updated]),
  };
});

/** Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE. */
const MAX_DRAFTS = 1000;

registerStateProvider('drafts', (app, user) => {
  const rows = stmt(app.db, 'SELECT id, type, "to" AS to_json, topic, content, timestamp FROM draft WHERE user_id = ? ORDER BY timestamp DESC, id DESC LIMIT ?').all(
    user.id,
    MAX_DRAFTS,
  ) as { id: number; type: string; to_json: string; topic: string; content: string; timestamp: number }[];
  return {
    drafts: rows.map((d) => ({ id: d.id, type: d.type, to: parseIds(d.to_json), topic: d.topic, content: d.content, timestamp: d.timestamp })),
  };
});

function parseIds(json: string | null): number[] {
  try {
    const v = JSON.parse(json ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : [];
  } catch {
    return [];
  }
}

// Message reminders (Zulip's get_undelivered_reminders): failed ones included, soonest first.
registerStateProvider('reminders', (app, user) => ({ reminders: listReminders(app.db, user.id).map(formatReminder) }));

registerStateProvider('scheduled_messages', (app, user, opts) => {
  const realm = realmOf(app, user, opts);
  const rows = stmt(
    app.db,
    `SELECT id, type, stream_id, recipient_ids, topic, content, rendered_content, scheduled_timestamp, failed
     FROM scheduled_message WHERE sender_id = ? AND delivered = 0 AND delivery_type = 1 ORDER BY scheduled_timestamp, id`,
  ).all(user.id) as {
    id: number;
    type: string;
    stream_id: number | null;
    recipient_ids: string | null;
    topic: string;
    content: string;
    rendered_content: string;
    scheduled_timestamp: number;
    failed: number;
  }[];
  return {
    scheduled_messages: rows.map((s) => {
      const out: Record<string, unknown> = { scheduled_message_id: s.id, type: s.type };
      if (s.type === 'stream') {
        out.to = s.stream_id;
        out.topic = topicForClient(realm, opts, s.topic);
      } else {
        out.to = parseIds(s.recipient_ids);
      }
      out.content = s.content;
      out.rendered_content = s.rendered_content;
      out.scheduled_delivery_timestamp = s.scheduled_timestamp;
      out.failed = bool(s.failed);
      return out;
    }),
  };
});

// What Zulip's organization importer (`manage.py import`, zerver/lib/import_realm.py) reads, as data:
// the files of an export tarball, the tables in each, every field Parley writes with its type, which
// fields the importer cannot do without, which are foreign keys into which table, and the id rules.
// `parley export` writes to this description and its test checks a tarball against it
// (src/export/zulip-check.ts); `parley import` validates its input with the same check (src/import/zulip/).
//
// Taken from Zulip's own code (zulip/zulip, read through the code index):
// - zerver/lib/export.py as stored at file id 4047815392, the newest version in the index (Zulip main
//   after 10.x: it has ChannelFolder, NavigationView, DirectMessageGroup, `import_source`,
//   migration_status.json; the older stored versions are at commits 767ceecce470 (9.x) and 00c1f25b5836).
// - zerver/lib/import_realm.py as stored at file id 4034375569 (same generation: reads import_source,
//   channel folders, migration_status.json); the 9.x version is at commit 92b01437f99a.
// - UserMessage.ALL_FLAGS from zerver/models/messages.py (the bitfield order).
// The wire format is Django's model_to_dict: a foreign key appears under the field's name without
// `_id` ("sender": 7), a many-to-many as a list of ids, and every DateTimeField listed in export.py's
// DATE_FIELDS as a float of UNIX seconds (floatify_datetime_fields). The importer builds each row
// with Model(**row) after renaming the foreign keys it remaps (re_map_foreign_keys), so a key that
// is not a field of the model makes the import fail: Parley writes only fields it is sure of, and a
// field left out gets the Zulip model's default.

/** Where the description comes from (kept with the data, for people and for error messages). */
export const ZULIP_SOURCE = {
  repository: 'zulip/zulip',
  exportPy: 'zerver/lib/export.py (index file id 4047815392; Zulip main after 10.x)',
  importRealmPy: 'zerver/lib/import_realm.py (index file id 4034375569; same generation)',
  olderCommits: { exportPy: '767ceecce4701dea2b8a14bd478c23d9bab25b88', importRealmPy: '92b01437f99a7f9432ce37bc6ee7c6570139f8ba' },
} as const;

/** export.py's MESSAGE_BATCH_CHUNK_SIZE: messages per messages-NNNNNN.json file. */
export const MESSAGE_CHUNK_SIZE = 1000;

/** messages-000001.json, ...: export.py's f"messages-{dump_file_id:06}.json", numbered from 1. */
export const messageFileName = (n: number): string => `messages-${String(n).padStart(6, '0')}.json`;
export const MESSAGE_FILE = /^messages-(\d{6})\.json$/;

/** Recipient.type (zerver/models/recipients.py). */
export const RECIPIENT_TYPE = { personal: 1, stream: 2, huddle: 3 } as const;

/**
 * UserMessage.ALL_FLAGS in bit order: `flags_mask` in zerver_usermessage is this bitfield. Bits 7 and 8
 * (force_expand, force_collapse) are retired and always clear.
 */
export const ZULIP_USERMESSAGE_FLAGS = [
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'group_mentioned',
  'force_expand',
  'force_collapse',
  'has_alert_word',
  'historical',
  'is_private',
  'active_mobile_push_notification',
] as const;

/** The cross-realm bots a realm.json names by Zulip's default addresses (custom_fetch_user_profile_cross_realm). */
export const CROSS_REALM_BOT_EMAILS = { notification: 'notification-bot@zulip.com', welcome: 'welcome-bot@zulip.com', emailGateway: 'emailgateway@zulip.com' } as const;

/** The value of realm.json's `import_source` key; the importer treats "zulip" as a Zulip-to-Zulip move. */
export const IMPORT_SOURCE = 'parley';

export type FieldType = 'int' | 'float' | 'bool' | 'string' | 'int[]' | 'json';

export interface FieldSpec {
  type: FieldType;
  /** null is a valid value. */
  nullable?: boolean;
  /**
   * The importer reads the key directly (item[field]: fix_datetime_fields, re_map_foreign_keys, or a
   * column with no default), so a row without it fails the import. Other fields fall back to the model default.
   */
  required?: boolean;
  /** A foreign key: the value (unless null) is the id of a row of this table. */
  fk?: TableName;
}

/** Which file a table lives in. */
export type FileKind = 'realm.json' | 'messages' | 'attachment.json';

export interface TableSpec {
  file: FileKind;
  /** The importer reads the table unconditionally (data[table]): its key must be present, even as []. */
  required: boolean;
  /** Every row has an integer `id`, unique in the table (the importer allocates new ids and remaps). */
  ids: boolean;
  fields: Record<string, FieldSpec>;
  /** Why the table holds what it holds (Zulip's rule, or Parley's mapping). */
  note?: string;
}

const int = (o: Omit<FieldSpec, 'type'> = {}): FieldSpec => ({ type: 'int', ...o });
const float = (o: Omit<FieldSpec, 'type'> = {}): FieldSpec => ({ type: 'float', ...o });
const bool = (o: Omit<FieldSpec, 'type'> = {}): FieldSpec => ({ type: 'bool', ...o });
const str = (o: Omit<FieldSpec, 'type'> = {}): FieldSpec => ({ type: 'string', ...o });
const id = (): FieldSpec => ({ type: 'int', required: true });
const fk = (table: TableName, o: Omit<FieldSpec, 'type' | 'fk'> = {}): FieldSpec => ({ type: 'int', fk: table, required: true, ...o });

/** Realm.REALM_PERMISSION_GROUP_SETTINGS: the importer remaps each (so each key must be present) to a zerver_usergroup id. */
export const REALM_GROUP_SETTINGS = [
  'can_access_all_users_group',
  'can_add_custom_emoji_group',
  'can_add_subscribers_group',
  'can_create_bots_group',
  'can_create_groups',
  'can_create_private_channel_group',
  'can_create_public_channel_group',
  'can_create_web_public_channel_group',
  'can_create_write_only_bots_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
  'can_mention_many_users_group',
  'can_move_messages_between_channels_group',
  'can_move_messages_between_topics_group',
  'can_resolve_topics_group',
  'can_set_delete_message_policy_group',
  'can_set_topics_policy_group',
  'can_summarize_topics_group',
  'create_multiuse_invite_group',
  'direct_message_initiator_group',
  'direct_message_permission_group',
] as const;

/** Stream.stream_permission_group_settings: remapped to zerver_usergroup ids, each required. */
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

/** NamedUserGroup.GROUP_PERMISSION_SETTINGS: remapped to zerver_usergroup ids, each required. */
export const GROUP_GROUP_SETTINGS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;

/**
 * Personal settings (UserBaseSettings) Parley writes on zerver_userprofile, with Zulip's field type.
 * Parley's column has the same name; 0/1 columns become JSON booleans (PostgreSQL refuses an integer
 * in a boolean column). Settings not listed take Zulip's default on import.
 */
export const USER_SETTING_TYPES: Record<string, 'bool' | 'int' | 'string'> = {
  default_language: 'string',
  timezone: 'string',
  twenty_four_hour_time: 'bool',
  web_channel_default_view: 'int',
  starred_message_counts: 'bool',
  receives_typing_notifications: 'bool',
  fluid_layout_width: 'bool',
  high_contrast_mode: 'bool',
  web_font_size_px: 'int',
  web_line_height_percent: 'int',
  color_scheme: 'int',
  enable_drafts_synchronization: 'bool',
  translate_emoticons: 'bool',
  display_emoji_reaction_users: 'bool',
  web_home_view: 'string',
  web_escape_navigates_to_home_view: 'bool',
  left_side_userlist: 'bool',
  emojiset: 'string',
  demote_inactive_streams: 'int',
  user_list_style: 'int',
  web_animate_image_previews: 'string',
  web_stream_unreads_count_display_policy: 'int',
  enable_stream_desktop_notifications: 'bool',
  enable_stream_email_notifications: 'bool',
  enable_stream_push_notifications: 'bool',
  enable_stream_audible_notifications: 'bool',
  notification_sound: 'string',
  enable_desktop_notifications: 'bool',
  enable_sounds: 'bool',
  email_notifications_batching_period_seconds: 'int',
  enable_offline_email_notifications: 'bool',
  enable_offline_push_notifications: 'bool',
  enable_online_push_notifications: 'bool',
  enable_followed_topic_desktop_notifications: 'bool',
  enable_followed_topic_email_notifications: 'bool',
  enable_followed_topic_push_notifications: 'bool',
  enable_followed_topic_audible_notifications: 'bool',
  enable_followed_topic_wildcard_mentions_notify: 'bool',
  enable_digest_emails: 'bool',
  enable_login_emails: 'bool',
  enable_marketing_emails: 'bool',
  message_content_in_email_notifications: 'bool',
  pm_content_in_desktop_notifications: 'bool',
  wildcard_mentions_notify: 'bool',
  desktop_icon_count_display: 'int',
  realm_name_in_email_notifications_policy: 'int',
  automatically_follow_topics_policy: 'int',
  automatically_unmute_topics_in_muted_streams_policy: 'int',
  automatically_follow_topics_where_mentioned: 'bool',
  presence_enabled: 'bool',
  enter_sends: 'bool',
  send_private_typing_notifications: 'bool',
  send_stream_typing_notifications: 'bool',
  send_read_receipts: 'bool',
  allow_private_data_export: 'bool',
  email_address_visibility: 'int',
  web_navigate_to_sent_message: 'bool',
  web_mark_read_on_scroll_policy: 'int',
  web_suggest_update_timezone: 'bool',
  hide_ai_features: 'bool',
};

const groupFks = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, fk('zerver_usergroup')]));

/** Every table key of an export, in the order Parley writes them. */
export const TABLE_NAMES = [
  'zerver_realm',
  'zerver_realmauthenticationmethod',
  'zerver_realmuserdefault',
  'zerver_presencesequence',
  'zerver_defaultstream',
  'zerver_customprofilefield',
  'zerver_realmemoji',
  'zerver_realmdomain',
  'zerver_realmfilter',
  'zerver_realmplayground',
  'zerver_client',
  'zerver_userprofile',
  'zerver_userprofile_mirrordummy',
  'zerver_userprofile_crossrealm',
  'zerver_usergroup',
  'zerver_namedusergroup',
  'zerver_usergroupmembership',
  'zerver_groupgroupmembership',
  'zerver_channelfolder',
  'zerver_stream',
  'zerver_huddle',
  'zerver_recipient',
  'zerver_subscription',
  'zerver_alertword',
  'zerver_usertopic',
  'zerver_muteduser',
  'zerver_userstatus',
  'zerver_userpresence',
  'zerver_useractivity',
  'zerver_useractivityinterval',
  'zerver_customprofilefieldvalue',
  'zerver_scheduledmessage',
  'zerver_reaction',
  'zerver_savedsnippet',
  'zerver_navigationview',
  'zerver_service',
  'zerver_botstoragedata',
  'zerver_botconfigdata',
  'zerver_message',
  'zerver_usermessage',
  'zerver_attachment',
] as const;

export type TableName = (typeof TABLE_NAMES)[number];

/** The tables of an export, by key. */
export const TABLES: Record<TableName, TableSpec> = {
  // ---- realm.json ----
  zerver_realm: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'exactly one row: the organization. The importer overwrites string_id and name with the subdomain given to manage.py import.',
    fields: {
      id: id(),
      string_id: str({ required: true }),
      name: str({ required: true }),
      description: str(),
      date_created: float({ required: true }),
      deactivated: bool({ required: true }),
      invite_required: bool(),
      emails_restricted_to_domains: bool(),
      disallow_disposable_email_addresses: bool(),
      waiting_period_threshold: int(),
      default_language: str(),
      // -1: unlimited (the column is NOT NULL).
      message_retention_days: int(),
      allow_message_editing: bool(),
      // 1 all, 2 moves, 3 none (MessageEditHistoryVisibilityPolicyEnum; it replaced allow_edit_history).
      message_edit_history_visibility_policy: int(),
      // 2 allow_empty_topic, 3 disable_empty_topic (RealmTopicsPolicyEnum).
      topics_policy: int(),
      welcome_message_custom_text: str(),
      avatar_changes_disabled: bool(),
      default_code_block_language: str(),
      digest_emails_enabled: bool(),
      digest_weekday: int(),
      email_changes_disabled: bool(),
      enable_guest_user_dm_warning: bool(),
      enable_guest_user_indicator: bool(),
      enable_read_receipts: bool(),
      giphy_rating: int(),
      inline_image_preview: bool(),
      inline_url_embed_preview: bool(),
      jitsi_server_url: str({ nullable: true }),
      message_content_allowed_in_email_notifications: bool(),
      name_changes_disabled: bool(),
      org_type: int(),
      require_e2ee_push_notifications: bool(),
      require_unique_names: bool(),
      send_channel_events_messages: bool(),
      send_welcome_emails: bool(),
      video_chat_provider: int(),
      want_advertise_in_communities_directory: bool(),
      message_content_edit_limit_seconds: int({ nullable: true }),
      message_content_delete_limit_seconds: int({ nullable: true }),
      move_messages_within_stream_limit_seconds: int({ nullable: true }),
      move_messages_between_streams_limit_seconds: int({ nullable: true }),
      enable_spectator_access: bool(),
      icon_source: str(),
      icon_version: int(),
      // Remapped to stream ids by the importer (each read directly): Parley has no announcement
      // channels, so Zulip's default, none.
      new_stream_announcements_stream: fk('zerver_stream', { nullable: true }),
      signup_announcements_stream: fk('zerver_stream', { nullable: true }),
      zulip_update_announcements_stream: fk('zerver_stream', { nullable: true }),
      moderation_request_channel: fk('zerver_stream', { nullable: true }),
      ...groupFks(REALM_GROUP_SETTINGS),
    },
  },
  zerver_realmuserdefault: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: "the organization's defaults for new users' settings (RealmUserDefault: UserBaseSettings, so the personal settings but the time zone). Parley writes the defaults an administrator changed; the rest take Zulip's defaults, which are Parley's.",
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      ...Object.fromEntries(
        Object.entries(USER_SETTING_TYPES)
          .filter(([k]) => k !== 'timezone')
          .map(([k, t]) => [k, { type: t } as FieldSpec]),
      ),
    },
  },
  zerver_realmauthenticationmethod: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'one of realm_tables (read unconditionally). Parley logs in with email and password: Zulip\'s "Email" backend.',
    fields: { id: id(), realm: fk('zerver_realm'), name: str({ required: true }) },
  },
  zerver_presencesequence: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), realm: fk('zerver_realm'), last_update_id: int({ required: true }) },
  },
  zerver_defaultstream: {
    file: 'realm.json',
    required: true,
    ids: true,
    fields: { id: id(), realm: fk('zerver_realm'), stream: fk('zerver_stream') },
  },
  zerver_customprofilefield: {
    file: 'realm.json',
    required: true,
    ids: true,
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      name: str({ required: true }),
      hint: str(),
      field_type: int({ required: true }),
      field_data: str(),
      order: int(),
      display_in_profile_summary: bool(),
      required: bool(),
      editable_by_user: bool(),
    },
  },
  zerver_realmemoji: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'a reaction or status with reaction_type realm_emoji names its emoji by str(id) in emoji_code (re_map_realm_emoji_codes).',
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      name: str({ required: true }),
      author: fk('zerver_userprofile', { nullable: true }),
      file_name: str({ nullable: true }),
      deactivated: bool(),
    },
  },
  zerver_realmdomain: {
    file: 'realm.json',
    required: true,
    ids: true,
    fields: { id: id(), realm: fk('zerver_realm'), domain: str({ required: true }), allow_subdomains: bool() },
  },
  zerver_realmfilter: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'linkifiers.',
    fields: { id: id(), realm: fk('zerver_realm'), pattern: str({ required: true }), url_template: str({ required: true }), order: int() },
  },
  zerver_realmplayground: {
    file: 'realm.json',
    required: true,
    ids: true,
    fields: { id: id(), realm: fk('zerver_realm'), name: str({ required: true }), pygments_language: str({ required: true }), url_template: str({ required: true }) },
  },
  zerver_client: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'the clients messages were sent from (bulk_import_client matches them by name on the new server).',
    fields: { id: id(), name: str({ required: true }) },
  },
  zerver_userprofile: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'every account but the cross-realm bots; passwords and API keys are never exported (the importer makes new keys and unusable passwords).',
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      email: str({ required: true }),
      delivery_email: str({ required: true }),
      full_name: str({ required: true }),
      is_active: bool(),
      is_bot: bool(),
      bot_type: int({ nullable: true }),
      bot_owner: fk('zerver_userprofile', { nullable: true }),
      role: int(),
      is_mirror_dummy: bool(),
      date_joined: float({ required: true }),
      last_login: float({ required: true, nullable: true }),
      last_reminder: float({ required: true, nullable: true }),
      tos_version: str({ nullable: true }),
      avatar_source: str(),
      avatar_version: int(),
      default_sending_stream: fk('zerver_stream', { nullable: true }),
      default_events_register_stream: fk('zerver_stream', { nullable: true }),
      default_all_public_streams: bool(),
      last_active_message_id: fk('zerver_message', { nullable: true }),
      groups: { type: 'int[]', required: true },
      user_permissions: { type: 'int[]', required: true },
      ...Object.fromEntries(Object.entries(USER_SETTING_TYPES).map(([k, t]) => [k, { type: t } as FieldSpec])),
    },
  },
  zerver_userprofile_mirrordummy: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'placeholder accounts of mirrored services; Parley has none.',
    fields: { id: id() },
  },
  zerver_userprofile_crossrealm: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: "the system bots (Notification Bot, Welcome Bot): the importer maps each, by Zulip's default address, to the new server's own bot, and recipient_id to that bot's personal recipient.",
    fields: { id: id(), email: str({ required: true }), recipient_id: int({ required: true }) },
  },
  zerver_usergroup: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: 'every group: named groups (with a zerver_namedusergroup row of the same id), system groups (role:*), and the anonymous groups that hold a group-setting value.',
    fields: { id: id(), realm: fk('zerver_realm') },
  },
  zerver_namedusergroup: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: {
      id: id(),
      usergroup_ptr: fk('zerver_usergroup'),
      realm_for_sharding: fk('zerver_realm'),
      name: str({ required: true }),
      description: str({ required: true }),
      is_system_group: bool({ required: true }),
      deactivated: bool(),
      date_created: float({ required: true, nullable: true }),
      creator: fk('zerver_userprofile', { required: false, nullable: true }),
      ...groupFks(GROUP_GROUP_SETTINGS),
    },
  },
  zerver_usergroupmembership: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), user_group: fk('zerver_usergroup'), user_profile: fk('zerver_userprofile') },
  },
  zerver_groupgroupmembership: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: 'GroupGroupMembership.subgroup is a NamedUserGroup: only named groups are subgroups.',
    fields: { id: id(), supergroup: fk('zerver_usergroup'), subgroup: fk('zerver_namedusergroup') },
  },
  zerver_channelfolder: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      name: str({ required: true }),
      description: str(),
      rendered_description: str(),
      order: int(),
      date_created: float({ required: true }),
      creator: fk('zerver_userprofile', { required: false, nullable: true }),
      is_archived: bool(),
    },
  },
  zerver_stream: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'channels, archived ones included. rendered_description is rendered again by the importer.',
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      name: str({ required: true }),
      description: str({ required: true }),
      rendered_description: str(),
      date_created: float({ required: true }),
      creator: fk('zerver_userprofile', { nullable: true }),
      invite_only: bool(),
      is_web_public: bool(),
      history_public_to_subscribers: bool(),
      // null: the organization's; -1: unlimited.
      message_retention_days: int({ nullable: true }),
      // 1 inherit, 2 allow_empty_topic, 3 disable_empty_topic, 4 empty_topic_only (StreamTopicsPolicyEnum).
      topics_policy: int(),
      deactivated: bool(),
      first_message_id: int({ nullable: true }),
      is_recently_active: bool(),
      folder: fk('zerver_channelfolder', { nullable: true }),
      ...groupFks(STREAM_GROUP_SETTINGS),
    },
  },
  zerver_huddle: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'direct-message groups of three or more people (DirectMessageGroup, still table zerver_huddle). The importer recomputes huddle_hash from the subscriptions.',
    fields: { id: id(), huddle_hash: str({ required: true }), group_size: int({ required: true }) },
  },
  zerver_recipient: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'type 1 personal (type_id a zerver_userprofile id), 2 stream (a zerver_stream id), 3 huddle (a zerver_huddle id); one row for every user, channel and group DM.',
    fields: { id: id(), type: int({ required: true }), type_id: int({ required: true }) },
  },
  zerver_subscription: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: "each user to their own personal recipient, channel subscriptions (active or not), and each member of a group DM to its recipient. is_user_active is recomputed by the importer.",
    fields: {
      id: id(),
      user_profile: fk('zerver_userprofile'),
      recipient: fk('zerver_recipient'),
      active: bool(),
      is_user_active: bool(),
      is_muted: bool(),
      color: str(),
      pin_to_top: bool(),
      desktop_notifications: bool({ nullable: true }),
      audible_notifications: bool({ nullable: true }),
      push_notifications: bool({ nullable: true }),
      email_notifications: bool({ nullable: true }),
      wildcard_mentions_notify: bool({ nullable: true }),
    },
  },
  zerver_alertword: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), user_profile: fk('zerver_userprofile'), realm: fk('zerver_realm'), word: str({ required: true }) },
  },
  zerver_usertopic: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: {
      id: id(),
      user_profile: fk('zerver_userprofile'),
      stream: fk('zerver_stream'),
      recipient: fk('zerver_recipient'),
      topic_name: str({ required: true }),
      last_updated: float({ required: true }),
      visibility_policy: int({ required: true }),
    },
  },
  zerver_muteduser: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), user_profile: fk('zerver_userprofile'), muted_user: fk('zerver_userprofile'), date_muted: float({ required: true }) },
  },
  zerver_userstatus: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: {
      id: id(),
      user_profile: fk('zerver_userprofile'),
      client: fk('zerver_client'),
      timestamp: float({ required: true }),
      status_text: str(),
      emoji_name: str(),
      emoji_code: str(),
      reaction_type: str(),
    },
  },
  zerver_userpresence: {
    file: 'realm.json',
    required: true,
    ids: true,
    fields: {
      id: id(),
      user_profile: fk('zerver_userprofile'),
      realm: fk('zerver_realm'),
      last_active_time: float({ required: true, nullable: true }),
      last_connected_time: float({ required: true, nullable: true }),
      last_update_id: int(),
    },
  },
  zerver_useractivity: { file: 'realm.json', required: true, ids: true, note: 'per-client visit counts; Parley keeps none.', fields: { id: id() } },
  zerver_useractivityinterval: { file: 'realm.json', required: true, ids: true, note: 'online intervals; Parley keeps none.', fields: { id: id() } },
  zerver_customprofilefieldvalue: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'a USER-type field (6) holds a JSON list of user ids in value, remapped by fix_customprofilefield.',
    fields: { id: id(), user_profile: fk('zerver_userprofile'), field: fk('zerver_customprofilefield'), value: str({ required: true }), rendered_value: str({ nullable: true }) },
  },
  zerver_scheduledmessage: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: 'send-later messages and reminders (delivery_type 1 and 2), delivered or not.',
    fields: {
      id: id(),
      sender: fk('zerver_userprofile'),
      recipient: fk('zerver_recipient'),
      subject: str({ required: true }),
      content: str({ required: true }),
      rendered_content: str({ required: true }),
      sending_client: fk('zerver_client'),
      stream: fk('zerver_stream', { nullable: true }),
      realm: fk('zerver_realm'),
      scheduled_timestamp: float({ required: true }),
      request_timestamp: float({ required: true }),
      read_by_sender: bool(),
      delivered: bool(),
      delivered_message: fk('zerver_message', { nullable: true }),
      has_attachment: bool({ required: true }),
      failed: bool(),
      failure_message: str({ nullable: true }),
      delivery_type: int(),
      reminder_target_message_id: int({ nullable: true }),
      reminder_note: str({ nullable: true }),
    },
  },
  zerver_reaction: {
    file: 'realm.json',
    required: true,
    ids: true,
    note: 'reactions to the exported messages (fetch_reaction_data), in realm.json though they point into the message files.',
    fields: {
      id: id(),
      message: fk('zerver_message'),
      user_profile: fk('zerver_userprofile'),
      emoji_name: str({ required: true }),
      emoji_code: str({ required: true }),
      reaction_type: str({ required: true }),
    },
  },
  zerver_savedsnippet: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      user_profile: fk('zerver_userprofile'),
      title: str({ required: true }),
      content: str({ required: true }),
      date_created: float({ required: true }),
    },
  },
  zerver_navigationview: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), user: fk('zerver_userprofile'), fragment: str({ required: true }), is_pinned: bool(), name: str({ nullable: true }) },
  },
  zerver_service: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: "outgoing-webhook and embedded bots' services; the importer makes each a new token.",
    fields: { id: id(), user_profile: fk('zerver_userprofile'), name: str({ required: true }), base_url: str(), interface: int() },
  },
  zerver_botstoragedata: {
    file: 'realm.json',
    required: false,
    ids: true,
    fields: { id: id(), bot_profile: fk('zerver_userprofile'), key: str({ required: true }), value: str({ required: true }) },
  },
  zerver_botconfigdata: {
    file: 'realm.json',
    required: false,
    ids: true,
    note: "an embedded bot's configuration, one row per key (Parley keeps it as a JSON object on the service).",
    fields: { id: id(), bot_profile: fk('zerver_userprofile'), key: str({ required: true }), value: str({ required: true }) },
  },
  // ---- messages-NNNNNN.json ----
  zerver_message: {
    file: 'messages',
    required: true,
    ids: true,
    note: 'in id order, MESSAGE_CHUNK_SIZE to a file. subject is the topic ("" for direct messages); rendered_content is kept (the importer only rewrites ids in mentions).',
    fields: {
      id: id(),
      sender: fk('zerver_userprofile'),
      recipient: fk('zerver_recipient'),
      realm: fk('zerver_realm'),
      subject: str({ required: true }),
      content: str({ required: true }),
      rendered_content: str({ required: true, nullable: true }),
      rendered_content_version: int({ nullable: true }),
      date_sent: float({ required: true }),
      last_edit_time: float({ required: true, nullable: true }),
      edit_history: str({ nullable: true }),
      sending_client: fk('zerver_client'),
      has_attachment: bool({ required: true }),
      has_image: bool(),
      has_link: bool(),
      is_channel_message: bool(),
    },
  },
  zerver_usermessage: {
    file: 'messages',
    required: true,
    ids: true,
    note: "each message's per-user rows, in the same file as the message (the importer asserts it). flags_mask is the ZULIP_USERMESSAGE_FLAGS bitfield; the id is not kept (the importer lets the database number the rows).",
    fields: { id: id(), user_profile: fk('zerver_userprofile'), message: fk('zerver_message'), flags_mask: int({ required: true }) },
  },
  // ---- attachment.json ----
  zerver_attachment: {
    file: 'attachment.json',
    required: true,
    ids: true,
    note: "only files linked from an exported message or scheduled message (fetch_attachment_data); each path_id must be an s3_path of uploads/records.json (the importer looks its new path up there).",
    fields: {
      id: id(),
      realm: fk('zerver_realm'),
      owner: fk('zerver_userprofile'),
      path_id: str({ required: true }),
      file_name: str({ required: true }),
      content_type: str({ nullable: true }),
      size: int({ required: true }),
      create_time: float({ required: true }),
      is_realm_public: bool({ nullable: true }),
      is_web_public: bool({ nullable: true }),
      messages: { type: 'int[]', required: true },
      scheduled_messages: { type: 'int[]', required: true },
    },
  },
};

/** The element type of a many-to-many list: messages → zerver_message ids, and so on. */
export const LIST_FKS: Partial<Record<TableName, Record<string, TableName>>> = {
  zerver_attachment: { messages: 'zerver_message', scheduled_messages: 'zerver_scheduledmessage' },
};

/**
 * Tables Zulip's exporter leaves out on purpose (NON_EXPORTED_TABLES), which Parley has an
 * equivalent of: Parley leaves them out too, for Zulip's reason.
 */
export const NOT_EXPORTED: Record<string, string> = {
  zerver_draft: 'Drafts don\'t need to be exported as they are supposed to be more ephemeral. (export.py)',
  zerver_submessage: 'poll and to-do widget data: listed by export.py among unfinished features not yet exported.',
  zerver_multiuseinvite: 'invitation links break with the server URL change anyway. (export.py)',
  zerver_pushdevicetoken: 'clients must log in again and re-register for push notifications. (export.py)',
};

/** The files besides the tables. */
export const OTHER_FILES = {
  /**
   * Read first by the importer (check_migration_status): {zulip_version, migrations_by_app}. The
   * major version (before the first ".") must equal the importing server's; an app missing from
   * migrations_by_app only logs a warning, and apps listed on both sides must list the same migrations.
   */
  migrationStatus: 'migration_status.json',
} as const;

/** A records.json: the files of one folder, with the fields the importer reads (import_uploads). */
export interface RecordsSpec {
  folder: 'uploads' | 'avatars' | 'emoji' | 'realm_icons';
  fields: Record<string, FieldSpec>;
  note: string;
}

export const RECORDS: Record<RecordsSpec['folder'], RecordsSpec> = {
  uploads: {
    folder: 'uploads',
    note: 'one record per zerver_attachment row; the file is uploads/<path>. fix_upload_links replaces s3_path in message content with the new path.',
    fields: {
      realm_id: { type: 'int', required: true, fk: 'zerver_realm' },
      user_profile_id: { type: 'int', required: true, fk: 'zerver_userprofile' },
      user_profile_email: str({ required: true }),
      s3_path: str({ required: true }),
      path: str({ required: true }),
      size: int({ required: true }),
      last_modified: float({ required: true }),
      content_type: str({ nullable: true }),
    },
  },
  avatars: {
    folder: 'avatars',
    note: 'an uploaded avatar as <realm_id>/<name>.original; importer_should_thumbnail asks the importer to make the sizes Zulip serves (Parley keeps only the original).',
    fields: {
      realm_id: { type: 'int', required: true, fk: 'zerver_realm' },
      user_profile_id: { type: 'int', required: true, fk: 'zerver_userprofile' },
      user_profile_email: str({ required: true }),
      avatar_version: int({ required: true }),
      s3_path: str({ required: true }),
      path: str({ required: true }),
      size: int({ required: true }),
      last_modified: float({ required: true }),
      content_type: str({ nullable: true }),
      importer_should_thumbnail: bool(),
    },
  },
  emoji: {
    folder: 'emoji',
    note: 'each custom emoji as <realm_id>/emoji/images/<file_name> and the same file with .original (export_emoji_from_local).',
    fields: {
      realm_id: { type: 'int', required: true, fk: 'zerver_realm' },
      author: { type: 'int', nullable: true, fk: 'zerver_userprofile' },
      path: str({ required: true }),
      s3_path: str({ required: true }),
      file_name: str({ required: true }),
      name: str({ required: true }),
      deactivated: bool({ required: true }),
    },
  },
  realm_icons: {
    folder: 'realm_icons',
    note: 'the uploaded organization icon as <realm_id>/icon.original and <realm_id>/icon.png (export_realm_icons).',
    fields: {
      realm_id: { type: 'int', required: true, fk: 'zerver_realm' },
      path: str({ required: true }),
      s3_path: str({ required: true }),
    },
  },
};

/** The tables of a file kind, in the order Parley writes them. */
export const tablesIn = (file: FileKind): TableName[] => TABLE_NAMES.filter((t) => TABLES[t].file === file);

/**
 * Zulip's default group for each realm setting (Realm.REALM_PERMISSION_GROUP_SETTINGS'
 * default_group_name, zerver/models/realms.py): written where Parley has no value (can_manage_billing_group).
 */
export const REALM_GROUP_DEFAULTS: Record<(typeof REALM_GROUP_SETTINGS)[number], string> = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:members',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
};

/** Zulip's defaults for a channel's group settings (Stream.stream_permission_group_settings), for a NULL column. */
export const STREAM_GROUP_DEFAULTS: Record<(typeof STREAM_GROUP_SETTINGS)[number], string> = {
  can_add_subscribers_group: 'role:nobody',
  can_administer_channel_group: 'role:nobody',
  can_create_topic_group: 'role:everyone',
  can_delete_any_message_group: 'role:nobody',
  can_delete_own_message_group: 'role:nobody',
  can_move_messages_out_of_channel_group: 'role:nobody',
  can_move_messages_within_channel_group: 'role:nobody',
  can_remove_subscribers_group: 'role:administrators',
  can_resolve_topics_group: 'role:nobody',
  can_send_message_group: 'role:everyone',
  can_subscribe_group: 'role:nobody',
};

/** Zulip's defaults for a named group's settings (NamedUserGroup.GROUP_PERMISSION_SETTINGS), for a NULL column. */
export const GROUP_GROUP_DEFAULTS: Record<(typeof GROUP_GROUP_SETTINGS)[number], string> = {
  can_add_members_group: 'role:nobody',
  can_join_group: 'role:nobody',
  can_leave_group: 'role:everyone',
  can_manage_group: 'role:nobody',
  can_mention_group: 'role:everyone',
  can_remove_members_group: 'role:nobody',
};

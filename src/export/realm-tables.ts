// realm.json: the organization and every table that hangs off it, written row by row.
import { JsonTablesFile } from './json-writer';
import { bool, directRecipient, groupId, huddleHash, nbool, secs, type Context, type Db, type Row } from './context';
import { EXPORT_TYPE, keepDirectGroup, keepPrivate, keepScheduled } from './filter';
import { STREAM_COLORS } from '../actions/subscriptions';
import {
  GROUP_GROUP_DEFAULTS,
  GROUP_GROUP_SETTINGS,
  IMPORT_SOURCE,
  REALM_GROUP_DEFAULTS,
  REALM_GROUP_SETTINGS,
  RECIPIENT_TYPE,
  STREAM_GROUP_DEFAULTS,
  STREAM_GROUP_SETTINGS,
  USER_SETTING_TYPES,
} from './zulip-format';
import { EDIT_HISTORY_VISIBILITY_POLICIES, REALM_EXTRA_SETTING_DEFAULTS, realmExtraSettings, type RealmChannelSetting, REALM_TOPICS_POLICIES, realmEditHistoryPolicy, realmExtraSetting, realmTopicsPolicy } from '../lib/realm-settings';
import type { RealmRow } from '../lib/realm';
import { REALM_DEFAULTS_KEY } from '../actions/realm-defaults';

/** A channel setting of extra_settings as Zulip's nullable foreign key. */
function realmChannelOrNull(realm: Row, setting: RealmChannelSetting): number | null {
  const v = realmExtraSettings(realm as RealmRow)[setting];
  return typeof v === 'number' && v >= 0 ? v : null;
}

/** Zulip's StreamTopicsPolicyEnum (zerver/models/streams.py): Parley stores the names. */
const STREAM_TOPICS_POLICIES: Record<string, number> = { inherit: 1, allow_empty_topic: 2, disable_empty_topic: 3, empty_topic_only: 4 };

export function writeRealmTables(db: Db, ctx: Context, f: JsonTablesFile): void {
  const R = ctx.realmId;
  const realm = ctx.realm;
  f.value('import_source', IMPORT_SOURCE);
  const z: Row = {
    id: R,
    string_id: realm.string_id,
    name: realm.name,
    description: realm.description,
    date_created: secs(realm.date_created),
    deactivated: bool(realm.deactivated),
    invite_required: bool(realm.invite_required),
    emails_restricted_to_domains: bool(realm.emails_restricted_to_domains),
    disallow_disposable_email_addresses: bool(realm.disallow_disposable_email_addresses),
    waiting_period_threshold: realm.waiting_period_threshold,
    default_language: realm.default_language,
    // Zulip's column is NOT NULL with -1 for unlimited; Parley's is NULL.
    message_retention_days: realm.message_retention_days ?? -1,
    allow_message_editing: bool(realm.allow_message_editing),
    // Zulip replaced allow_edit_history with this enum (zerver/models/realms.py).
    message_edit_history_visibility_policy: EDIT_HISTORY_VISIBILITY_POLICIES[realmEditHistoryPolicy(realm as RealmRow)],
    topics_policy: REALM_TOPICS_POLICIES[realmTopicsPolicy(realm as RealmRow)],
    welcome_message_custom_text: realm.welcome_message_custom_text,
    message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds,
    message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds,
    move_messages_within_stream_limit_seconds: realm.move_messages_within_stream_limit_seconds,
    move_messages_between_streams_limit_seconds: realm.move_messages_between_streams_limit_seconds,
    enable_spectator_access: bool(realm.enable_spectator_access),
    icon_source: realm.icon_source,
    icon_version: realm.icon_version,
    // The announcement and moderation channels Parley keeps in extra_settings (-1 or unset: none).
    new_stream_announcements_stream: realmChannelOrNull(realm, 'new_stream_announcements_stream_id'),
    signup_announcements_stream: realmChannelOrNull(realm, 'signup_announcements_stream_id'),
    zulip_update_announcements_stream: realmChannelOrNull(realm, 'zulip_update_announcements_stream_id'),
    moderation_request_channel: realmChannelOrNull(realm, 'moderation_request_channel_id'),
  };
  // The settings Parley keeps in extra_settings are Realm fields of the same names in Zulip.
  for (const name of Object.keys(REALM_EXTRA_SETTING_DEFAULTS) as (keyof typeof REALM_EXTRA_SETTING_DEFAULTS)[]) z[name] = realmExtraSetting(realm as RealmRow, name);
  // can_manage_billing_group has no Parley column: Zulip's default group.
  for (const s of REALM_GROUP_SETTINGS) z[s] = groupId(ctx, s in realm ? realm[s] : null, REALM_GROUP_DEFAULTS[s]);
  f.tableOf('zerver_realm', [z]);
  // The defaults an administrator changed (PATCH /realm/user_settings_defaults); the rest are Zulip's.
  const defaults = realmExtraSettings(realm as RealmRow)[REALM_DEFAULTS_KEY];
  const changed = defaults && typeof defaults === 'object' && !Array.isArray(defaults) ? (defaults as Row) : {};
  f.tableOf('zerver_realmuserdefault', [{ id: 1, realm: R, ...Object.fromEntries(Object.entries(changed).filter(([k]) => k in USER_SETTING_TYPES && k !== 'timezone')) }]);
  // Parley logs in with email and password, Zulip's "Email" backend.
  f.tableOf('zerver_realmauthenticationmethod', [{ id: 1, realm: R, name: 'Email' }]);
  f.tableOf('zerver_presencesequence', [{ id: 1, realm: R, last_update_id: realm.presence_last_update_id }]);

  let n = 0;
  f.table('zerver_defaultstream');
  for (const r of db.prepare('SELECT stream_id FROM default_stream WHERE realm_id = ? ORDER BY stream_id').all(R) as Row[]) f.row({ id: ++n, realm: R, stream: r.stream_id });

  f.table('zerver_customprofilefield');
  for (const c of db.prepare('SELECT * FROM custom_profile_field WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({
      id: c.id,
      realm: R,
      name: c.name,
      hint: c.hint,
      field_type: c.field_type,
      field_data: c.field_data,
      order: c.order,
      display_in_profile_summary: bool(c.display_in_profile_summary),
      required: bool(c.required),
      editable_by_user: bool(c.editable_by_user),
    });
  }

  f.table('zerver_realmemoji');
  for (const e of db.prepare('SELECT * FROM realm_emoji WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({ id: e.id, realm: R, name: e.name, author: e.author_id, file_name: e.file_name, deactivated: bool(e.deactivated) });
  }

  n = 0;
  f.table('zerver_realmdomain');
  for (const d of db.prepare('SELECT * FROM realm_domain WHERE realm_id = ? ORDER BY domain').all(R) as Row[]) f.row({ id: ++n, realm: R, domain: d.domain, allow_subdomains: bool(d.allow_subdomains) });

  f.table('zerver_realmfilter');
  for (const l of db.prepare('SELECT * FROM linkifier WHERE realm_id = ? ORDER BY id').all(R) as Row[]) f.row({ id: l.id, realm: R, pattern: l.pattern, url_template: l.url_template, order: l.order });

  f.table('zerver_realmplayground');
  for (const p of db.prepare('SELECT * FROM realm_playground WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({ id: p.id, realm: R, name: p.name, pygments_language: p.pygments_language, url_template: p.url_template });
  }

  f.tableOf(
    'zerver_client',
    [...ctx.clients].map(([name, id]) => ({ id, name })),
  );

  f.table('zerver_userprofile');
  for (const u of ctx.users.values()) if (!ctx.crossRealm.has(u.id)) f.row(zulipUser(ctx, u));
  f.tableOf('zerver_userprofile_mirrordummy', []);
  f.tableOf(
    'zerver_userprofile_crossrealm',
    [...ctx.crossRealm].map(([id, email]) => ({ id, email, recipient_id: ctx.personalRecipient.get(id) })),
  );

  writeGroups(db, ctx, f);

  f.table('zerver_channelfolder');
  for (const c of db.prepare('SELECT * FROM channel_folder WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    f.row({
      id: c.id,
      realm: R,
      name: c.name,
      description: c.description,
      rendered_description: c.rendered_description,
      order: c.order,
      date_created: secs(c.date_created),
      creator: c.creator_id,
      is_archived: bool(c.is_archived),
    });
  }

  f.table('zerver_stream');
  for (const s of db.prepare('SELECT * FROM stream WHERE realm_id = ? ORDER BY id').all(R) as Row[]) {
    const row: Row = {
      id: s.id,
      realm: R,
      name: s.name,
      description: s.description,
      rendered_description: s.rendered_description,
      date_created: secs(s.date_created),
      creator: s.creator_id,
      invite_only: bool(s.invite_only),
      is_web_public: bool(s.is_web_public),
      history_public_to_subscribers: bool(s.history_public_to_subscribers),
      message_retention_days: s.message_retention_days,
      topics_policy: STREAM_TOPICS_POLICIES[s.topics_policy as string] ?? STREAM_TOPICS_POLICIES.inherit,
      deactivated: bool(s.deactivated),
      first_message_id: s.first_message_id,
      is_recently_active: bool(s.is_recently_active),
      folder: s.folder_id,
    };
    for (const g of STREAM_GROUP_SETTINGS) row[g] = groupId(ctx, s[g], STREAM_GROUP_DEFAULTS[g]);
    f.row(row);
  }

  // Scheduled messages first decide which group DMs exist (one may be scheduled to a new set of people).
  let scheduled = db.prepare('SELECT * FROM scheduled_message WHERE realm_id = ? ORDER BY id').all(R) as Row[];
  const filter = ctx.filter;
  if (filter) {
    scheduled = scheduled.filter((s) => keepScheduled(filter, s.sender_id));
    for (const s of scheduled) filter.keptScheduled.add(s.id);
  }
  const scheduledRecipient = new Map<number, number>();
  for (const s of scheduled) {
    if (s.type === 'stream') scheduledRecipient.set(s.id, ctx.streamRecipient.get(s.stream_id) as number);
    else scheduledRecipient.set(s.id, directRecipient(ctx, [s.sender_id, ...(JSON.parse(s.recipient_ids ?? '[]') as number[])], s.sender_id));
  }

  // Group DMs without a consenting member stay out of a filtered export (who talks with whom is private).
  const huddles = [...ctx.huddles.values()].filter((h) => keepDirectGroup(filter, h.members));
  f.table('zerver_huddle');
  for (const h of huddles) f.row({ id: h.id, huddle_hash: huddleHash(h.members), group_size: h.members.length });

  f.table('zerver_recipient');
  for (const [userId, rid] of ctx.personalRecipient) if (!ctx.crossRealm.has(userId)) f.row({ id: rid, type: RECIPIENT_TYPE.personal, type_id: userId });
  for (const [streamId, rid] of ctx.streamRecipient) f.row({ id: rid, type: RECIPIENT_TYPE.stream, type_id: streamId });
  for (const h of huddles) f.row({ id: h.recipient, type: RECIPIENT_TYPE.huddle, type_id: h.id });

  n = 0;
  const sub = (user: number, recipient: number, extra: Row = {}): Row => ({
    id: ++n,
    user_profile: user,
    recipient,
    active: true,
    is_user_active: bool(ctx.users.get(user)?.is_active),
    is_muted: false,
    color: '#c2c2c2',
    pin_to_top: false,
    desktop_notifications: null,
    audible_notifications: null,
    push_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    ...extra,
  });
  f.table('zerver_subscription');
  for (const [userId, rid] of ctx.personalRecipient) if (!ctx.crossRealm.has(userId)) f.row(sub(userId, rid));
  for (const s of db.prepare('SELECT s.* FROM subscription s JOIN stream c ON c.id = s.stream_id WHERE c.realm_id = ? ORDER BY s.stream_id, s.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(s.user_id)) continue;
    if (!keepPrivate(filter, s.user_id)) {
      // Zulip's custom_process_subscription_in_realm_config: only membership, with a color that says
      // nothing of the person's choice (Zulip picks one at random; the channel's id picks it here).
      f.row(sub(s.user_id, ctx.streamRecipient.get(s.stream_id) as number, { active: bool(s.active), color: STREAM_COLORS[s.stream_id % STREAM_COLORS.length] }));
      continue;
    }
    f.row(
      sub(s.user_id, ctx.streamRecipient.get(s.stream_id) as number, {
        active: bool(s.active),
        is_muted: bool(s.is_muted),
        color: s.color,
        pin_to_top: bool(s.pin_to_top),
        desktop_notifications: nbool(s.desktop_notifications),
        audible_notifications: nbool(s.audible_notifications),
        push_notifications: nbool(s.push_notifications),
        email_notifications: nbool(s.email_notifications),
        wildcard_mentions_notify: nbool(s.wildcard_mentions_notify),
      }),
    );
  }
  for (const h of huddles) for (const u of h.members) if (!ctx.crossRealm.has(u)) f.row(sub(u, h.recipient));

  n = 0;
  f.table('zerver_alertword');
  for (const a of db.prepare('SELECT a.* FROM alert_word a JOIN user u ON u.id = a.user_id WHERE u.realm_id = ? ORDER BY a.user_id, a.word').all(R) as Row[]) {
    if (keepPrivate(filter, a.user_id)) f.row({ id: ++n, user_profile: a.user_id, realm: R, word: a.word });
  }

  n = 0;
  f.table('zerver_usertopic');
  for (const t of db.prepare('SELECT t.* FROM user_topic t JOIN user u ON u.id = t.user_id WHERE u.realm_id = ? ORDER BY t.user_id, t.stream_id, t.topic_key').all(R) as Row[]) {
    if (!keepPrivate(filter, t.user_id)) continue;
    f.row({
      id: ++n,
      user_profile: t.user_id,
      stream: t.stream_id,
      recipient: ctx.streamRecipient.get(t.stream_id),
      topic_name: t.topic_name,
      last_updated: secs(t.last_updated),
      visibility_policy: t.visibility_policy,
    });
  }

  n = 0;
  f.table('zerver_muteduser');
  for (const m of db.prepare('SELECT m.* FROM muted_user m JOIN user u ON u.id = m.user_id WHERE u.realm_id = ? ORDER BY m.user_id, m.muted_user_id').all(R) as Row[]) {
    if (keepPrivate(filter, m.user_id)) f.row({ id: ++n, user_profile: m.user_id, muted_user: m.muted_user_id, date_muted: secs(m.date_muted) });
  }

  n = 0;
  f.table('zerver_userstatus');
  for (const s of db.prepare('SELECT s.* FROM user_status s JOIN user u ON u.id = s.user_id WHERE u.realm_id = ? ORDER BY s.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(s.user_id) || !keepPrivate(filter, s.user_id)) continue;
    f.row({
      id: ++n,
      user_profile: s.user_id,
      // Parley does not keep the client a status was set from.
      client: ctx.clients.get('API'),
      timestamp: secs(s.timestamp),
      status_text: s.status_text,
      emoji_name: s.emoji_name,
      emoji_code: s.emoji_code,
      reaction_type: s.reaction_type,
    });
  }

  n = 0;
  f.table('zerver_userpresence');
  for (const p of db.prepare('SELECT * FROM presence WHERE realm_id = ? ORDER BY user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(p.user_id)) continue;
    // Presence is public, but for people who turned it off: the API shows theirs to no one (not even
    // administrators), so a filtered export leaves it out unless they consent. (Zulip's export.py
    // keeps every row; the API's own rule is kept here.)
    if (ctx.users.get(p.user_id)?.presence_enabled === 0 && !keepPrivate(filter, p.user_id)) continue;
    f.row({
      id: ++n,
      user_profile: p.user_id,
      realm: R,
      last_active_time: secs(p.last_active_time),
      last_connected_time: secs(p.last_connected_time),
      last_update_id: p.last_update_id,
    });
  }
  f.tableOf('zerver_useractivity', []);
  f.tableOf('zerver_useractivityinterval', []);

  n = 0;
  f.table('zerver_customprofilefieldvalue');
  for (const v of db.prepare('SELECT v.* FROM custom_profile_field_value v JOIN custom_profile_field c ON c.id = v.field_id WHERE c.realm_id = ? ORDER BY v.field_id, v.user_id').all(R) as Row[]) {
    f.row({ id: ++n, user_profile: v.user_id, field: v.field_id, value: v.value, rendered_value: v.rendered_value });
  }

  f.table('zerver_scheduledmessage');
  const messageExists = db.prepare('SELECT 1 FROM message WHERE id = ?').pluck();
  const scheduledAttachments = db.prepare('SELECT count(*) FROM attachment_scheduled_message WHERE scheduled_message_id = ?').pluck();
  for (const s of scheduled) {
    const delivered = s.delivered_message_id !== null && messageExists.get(s.delivered_message_id) && (!filter || filter.keptMessages.has(s.delivered_message_id)) ? s.delivered_message_id : null;
    f.row({
      id: s.id,
      sender: s.sender_id,
      recipient: scheduledRecipient.get(s.id),
      subject: s.topic,
      content: s.content,
      rendered_content: s.rendered_content,
      sending_client: ctx.clients.get('API'),
      stream: s.type === 'stream' ? s.stream_id : null,
      realm: R,
      scheduled_timestamp: secs(s.scheduled_timestamp),
      request_timestamp: secs(s.created),
      read_by_sender: bool(s.read_by_sender),
      delivered: bool(s.delivered),
      delivered_message: delivered,
      has_attachment: (scheduledAttachments.get(s.id) as number) > 0,
      failed: bool(s.failed),
      failure_message: s.failure_message,
      delivery_type: s.delivery_type,
      reminder_target_message_id: s.reminder_target_message_id,
      reminder_note: s.reminder_note,
    });
  }

  f.table('zerver_savedsnippet');
  for (const x of db.prepare('SELECT x.* FROM saved_snippet x JOIN user u ON u.id = x.user_id WHERE u.realm_id = ? ORDER BY x.id').all(R) as Row[]) {
    if (keepPrivate(filter, x.user_id)) f.row({ id: x.id, realm: R, user_profile: x.user_id, title: x.title, content: x.content, date_created: secs(x.date_created) });
  }
  f.table('zerver_navigationview');
  for (const v of db.prepare('SELECT v.* FROM navigation_view v JOIN user u ON u.id = v.user_id WHERE u.realm_id = ? ORDER BY v.id').all(R) as Row[]) {
    if (keepPrivate(filter, v.user_id)) f.row({ id: v.id, user: v.user_id, fragment: v.fragment, is_pinned: bool(v.is_pinned), name: v.name });
  }
  // A bot never consents: a filtered export carries no bot's services, storage or configuration (as Zulip's).
  const services = (db.prepare('SELECT b.* FROM bot_service b JOIN user u ON u.id = b.bot_id WHERE u.realm_id = ? ORDER BY b.id').all(R) as Row[]).filter((b) => keepPrivate(filter, b.bot_id));
  f.tableOf(
    'zerver_service',
    services.map((b) => ({ id: b.id, user_profile: b.bot_id, name: b.name, base_url: b.base_url, interface: b.interface })),
  );
  n = 0;
  f.table('zerver_botstoragedata');
  for (const b of db.prepare('SELECT b.* FROM bot_storage b JOIN user u ON u.id = b.bot_id WHERE u.realm_id = ? ORDER BY b.bot_id, b.key').all(R) as Row[]) {
    if (keepPrivate(filter, b.bot_id)) f.row({ id: ++n, bot_profile: b.bot_id, key: b.key, value: b.value });
  }
  n = 0;
  f.table('zerver_botconfigdata');
  for (const b of services) {
    let config: Record<string, unknown> = {};
    try {
      config = JSON.parse(b.config ?? '{}') as Record<string, unknown>;
    } catch {
      config = {};
    }
    for (const [key, value] of Object.entries(config)) f.row({ id: ++n, bot_profile: b.bot_id, key, value: String(value) });
  }

  // Reactions to the exported messages: every message of the organization is exported. Read in id
  // order, a page at a time (the table can be as large as the history).
  f.table('zerver_reaction');
  const reactions = db.prepare(
    `SELECT r.id, r.message_id, r.user_id, r.emoji_name, r.emoji_code, r.reaction_type FROM reaction r JOIN message m ON m.id = r.message_id
     WHERE m.realm_id = ? AND r.id > ? ORDER BY r.id LIMIT 5000`,
  );
  for (let after = 0; ; ) {
    const page = reactions.all(R, after) as Row[];
    if (page.length === 0) break;
    for (const r of page) {
      if (!ctx.crossRealm.has(r.user_id) && (!filter || filter.keptMessages.has(r.message_id))) {
        f.row({ id: r.id, message: r.message_id, user_profile: r.user_id, emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type });
      }
    }
    after = page[page.length - 1].id;
  }
}

function zulipUser(ctx: Context, u: Row): Row {
  const row: Row = {
    id: u.id,
    realm: ctx.realmId,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    is_active: bool(u.is_active),
    is_bot: u.bot_type !== null,
    bot_type: u.bot_type,
    bot_owner: u.bot_owner_id,
    role: u.role,
    is_mirror_dummy: false,
    date_joined: secs(u.date_joined),
    // Zulip's last_login is never empty (it defaults to the creation time).
    last_login: secs(u.last_login ?? u.date_joined),
    last_reminder: null,
    tos_version: u.tos_version,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    default_sending_stream: u.default_sending_stream_id,
    default_events_register_stream: u.default_events_register_stream_id,
    default_all_public_streams: bool(u.default_all_public_streams),
    // Parley does not track it; the importer leaves it empty too when absent from the history.
    last_active_message_id: null,
    groups: [],
    user_permissions: [],
  };
  // Zulip's custom_fetch_user_profile: the personal settings of someone whose private data stays out
  // are those a new account starts with (the importer's defaults), but for their privacy controls.
  const filter = ctx.filter;
  const defaults = filter && !keepPrivate(filter, u.id) ? filter.settingDefaults : null;
  for (const [name, type] of Object.entries(USER_SETTING_TYPES)) {
    const v = defaults && !KEPT_SETTINGS.has(name) && name in defaults ? defaults[name] : u[name];
    if (v === undefined) continue;
    row[name] = type === 'bool' ? bool(v) : v;
  }
  // A public export keeps no address its owner shows to no one: the placeholder stands in for it.
  if (ctx.filter?.hiddenAddresses.has(u.id)) row.delivery_email = u.email;
  // Zulip's custom_fetch_user_profile: in a consent export, an active person who did not consent
  // becomes a mirror dummy (inactive; signing up again with their address brings the account back);
  // in a public export, so does whoever has no real address in it. Zulip lists these rows under
  // zerver_userprofile_mirrordummy, which its importer merges into zerver_userprofile first.
  if (filter && !keepPrivate(filter, u.id)) {
    const dummy = filter.type === EXPORT_TYPE.FULL_WITH_CONSENT ? u.is_active === 1 : filter.hiddenAddresses.has(u.id);
    if (dummy) {
      row.is_mirror_dummy = true;
      row.is_active = false;
    }
  }
  return row;
}

/**
 * The settings a filtered export keeps for everyone: the timezone (every member can read it), and the
 * privacy controls. Zulip keeps only email_address_visibility; its other privacy controls
 * (SECURITY_SENSITIVE_USER_SETTINGS: presence, typing notifications, read receipts) go back to the
 * defaults, which would make an invisible person visible after the import. Kept here: a choice to
 * show less stays made.
 */
const KEPT_SETTINGS: ReadonlySet<string> = new Set([
  'timezone',
  'email_address_visibility',
  'allow_private_data_export',
  'presence_enabled',
  'send_private_typing_notifications',
  'send_stream_typing_notifications',
  'send_read_receipts',
]);

function writeGroups(db: Db, ctx: Context, f: JsonTablesFile): void {
  const R = ctx.realmId;
  const groups = db.prepare('SELECT * FROM user_group WHERE realm_id = ? ORDER BY id').all(R) as Row[];
  f.tableOf(
    'zerver_usergroup',
    groups.map((g) => ({ id: g.id, realm: R })),
  );
  f.table('zerver_namedusergroup');
  for (const g of groups) {
    if (!g.named || g.name === null) continue;
    const row: Row = {
      id: g.id,
      usergroup_ptr: g.id,
      realm_for_sharding: R,
      name: g.name,
      description: g.description,
      is_system_group: bool(g.is_system_group),
      deactivated: bool(g.deactivated),
      date_created: secs(g.date_created),
      creator: g.creator_id,
    };
    for (const s of GROUP_GROUP_SETTINGS) row[s] = groupId(ctx, g[s], GROUP_GROUP_DEFAULTS[s]);
    f.row(row);
  }
  let n = 0;
  f.table('zerver_usergroupmembership');
  for (const m of db.prepare('SELECT m.group_id, m.user_id FROM user_group_member m JOIN user_group g ON g.id = m.group_id WHERE g.realm_id = ? ORDER BY m.group_id, m.user_id').all(R) as Row[]) {
    if (ctx.crossRealm.has(m.user_id)) continue;
    f.row({ id: ++n, user_group: m.group_id, user_profile: m.user_id });
  }
  n = 0;
  f.table('zerver_groupgroupmembership');
  for (const m of db.prepare('SELECT s.supergroup_id, s.subgroup_id FROM user_group_subgroup s JOIN user_group g ON g.id = s.supergroup_id WHERE g.realm_id = ? ORDER BY 1, 2').all(R) as Row[]) {
    f.row({ id: ++n, supergroup: m.supergroup_id, subgroup: m.subgroup_id });
  }
}

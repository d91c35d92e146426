// realm.json into Parley's tables: the organization, its people and bots, groups, channels,
// subscriptions and every per-user table that hangs off them. Zulip's ids are kept (users, channels,
// groups, custom emoji, profile fields, linkifiers, ...), so links and ids clients saw keep working;
// what Zulip addresses through its recipient table becomes Parley's direct addressing (context.ts).
import type { App } from '../../app';
import { stmt } from '../../db/stmt';
import { systemBot, type SystemBotKind } from '../../actions/system-bots';
import { REALM_DEFAULT_SETTINGS, REALM_DEFAULTS_KEY } from '../../actions/realm-defaults';
import { NOBODY_GROUP, SYSTEM_GROUPS } from '../../lib/roles';
import { newApiKey } from '../../lib/secrets';
import { topicKey } from '../../lib/narrow';
import { EDIT_HISTORY_VISIBILITY_POLICIES, REALM_EXTRA_SETTING_DEFAULTS, REALM_TOPICS_POLICIES } from '../../lib/realm-settings';
import { GROUP_GROUP_DEFAULTS, GROUP_GROUP_SETTINGS, RECIPIENT_TYPE, REALM_GROUP_DEFAULTS, REALM_GROUP_SETTINGS, STREAM_GROUP_DEFAULTS, STREAM_GROUP_SETTINGS, USER_SETTING_TYPES } from '../../export/zulip-format';
import { renderPlain } from '../../lib/render';
import { ImportError } from '../errors';
import { isSafeRenderedHtml } from '../rendered-html';
import { bit, described, insertRow, nbit, rowsOf, secs, type Row, type ZulipImport } from './context';

/** Zulip's StreamTopicsPolicyEnum values → the names Parley stores. */
const STREAM_TOPICS_POLICY_NAMES: Record<number, string> = { 1: 'inherit', 2: 'allow_empty_topic', 3: 'disable_empty_topic', 4: 'empty_topic_only' };

/** The export's system groups by name (role:members → its id): where a missing group setting's default is. */
function systemGroupsOf(data: Row): Map<unknown, number> {
  const ids = new Map<unknown, number>();
  for (const g of namedGroups(data).values()) if (g.is_system_group === true) ids.set(g.name, g.id as number);
  return ids;
}

/**
 * The named groups by id: zerver_namedusergroup's rows, or, in an export of Zulip before 9.0 (which
 * had no NamedUserGroup), the zerver_usergroup rows that carry a name.
 */
function namedGroups(data: Row): Map<number, Row> {
  const named = new Map<number, Row>();
  for (const n of rowsOf(data, 'zerver_namedusergroup')) named.set(n.id as number, n);
  if (named.size === 0) for (const g of rowsOf(data, 'zerver_usergroup')) if (typeof g.name === 'string') named.set(g.id as number, g);
  return named;
}

/** The columns of a Parley table (the schema's, never the export's). */
function columnsOf(app: App, table: string): Set<string> {
  return new Set((app.db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name));
}

const keyOf = <T extends string>(map: Record<T, number>, value: unknown): T | undefined => (Object.keys(map) as T[]).find((k) => map[k] === value);

/** Creates the organization row (keeping Zulip's realm id, so upload and avatar paths stay valid) and returns its id. */
function writeRealmRow(app: App, data: Row, realmName: string): number {
  const r = rowsOf(data, 'zerver_realm')[0];
  const realmColumns = columnsOf(app, 'realm');
  const row: Row = {
    id: r.id,
    string_id: typeof r.string_id === 'string' ? r.string_id : '',
    name: realmName !== '' ? realmName : r.name,
    date_created: secs(r.date_created),
    deactivated: bit(r.deactivated),
  };
  const copy = (name: string, conv: (v: unknown) => unknown = (v) => v) => {
    if (r[name] !== undefined) row[name] = conv(r[name]);
  };
  copy('description');
  // Zulip: -1 is unlimited (the column is NOT NULL); Parley: NULL.
  copy('message_retention_days', (v) => (v === -1 || v === null ? null : v));
  for (const b of ['enable_spectator_access', 'invite_required', 'emails_restricted_to_domains', 'disallow_disposable_email_addresses', 'allow_message_editing']) copy(b, (v) => bit(v));
  for (const n of [
    'waiting_period_threshold',
    'default_language',
    'welcome_message_custom_text',
    'message_content_edit_limit_seconds',
    'message_content_delete_limit_seconds',
    'move_messages_within_stream_limit_seconds',
    'move_messages_between_streams_limit_seconds',
    'icon_source',
    'icon_version',
  ]) {
    copy(n);
  }
  const extra: Record<string, unknown> = {};
  for (const name of Object.keys(REALM_EXTRA_SETTING_DEFAULTS)) if (r[name] !== undefined) extra[name] = r[name];
  const editPolicy = keyOf(EDIT_HISTORY_VISIBILITY_POLICIES, r.message_edit_history_visibility_policy);
  if (editPolicy) {
    extra.message_edit_history_visibility_policy = editPolicy;
    row.allow_edit_history = editPolicy === 'none' ? 0 : 1;
  } else if (typeof r.allow_edit_history === 'boolean') {
    // Zulip before 10 (the setting was a boolean).
    row.allow_edit_history = bit(r.allow_edit_history);
  }
  const topics = keyOf(REALM_TOPICS_POLICIES, r.topics_policy) ?? (r.mandatory_topics === true ? 'disable_empty_topic' : undefined);
  if (topics) {
    row.topics_policy = topics;
    row.mandatory_topics = topics === 'disable_empty_topic' ? 1 : 0;
  }
  // Zulip's nullable channel references; null (none) is kept as Parley's -1, a choice made (so the
  // first channel created later does not claim the role, as in a new organization).
  for (const [zulip, setting] of [
    ['new_stream_announcements_stream', 'new_stream_announcements_stream_id'],
    ['signup_announcements_stream', 'signup_announcements_stream_id'],
    ['zulip_update_announcements_stream', 'zulip_update_announcements_stream_id'],
    ['moderation_request_channel', 'moderation_request_channel_id'],
  ] as const) {
    if (r[zulip] !== undefined) extra[setting] = typeof r[zulip] === 'number' ? r[zulip] : -1;
  }
  // The organization's defaults for new users' settings (kept as Parley keeps changed ones).
  const defaults = rowsOf(data, 'zerver_realmuserdefault')[0];
  if (defaults) {
    const kept: Record<string, unknown> = {};
    for (const name of Object.keys(REALM_DEFAULT_SETTINGS)) if (defaults[name] !== undefined && defaults[name] !== null) kept[name] = defaults[name];
    if (Object.keys(kept).length > 0) extra[REALM_DEFAULTS_KEY] = kept;
  }
  row.extra_settings = JSON.stringify(extra);
  // Group settings: Zulip's group ids, kept as the groups are (writeGroups); one an earlier Zulip
  // did not have yet is its default group (so for channels' and groups' settings below).
  const systemGroups = systemGroupsOf(data);
  for (const s of REALM_GROUP_SETTINGS) {
    if (!realmColumns.has(s)) continue;
    row[s] = typeof r[s] === 'number' ? r[s] : (systemGroups.get(REALM_GROUP_DEFAULTS[s]) ?? null);
  }
  const seq = rowsOf(data, 'zerver_presencesequence')[0];
  if (seq && typeof seq.last_update_id === 'number') row.presence_last_update_id = seq.last_update_id;
  return described('realm.json: zerver_realm[0]', () => insertRow(app, 'realm', row));
}

function writeUsers(z: ZulipImport, data: Row): void {
  const { app, realmId } = z;
  const userColumns = columnsOf(app, 'user');
  const settings = Object.entries(USER_SETTING_TYPES).filter(([name]) => userColumns.has(name));
  const users = rowsOf(data, 'zerver_userprofile');
  users.forEach((u, i) => {
    const isBot = u.is_bot === true || (typeof u.bot_type === 'number' && u.bot_type !== null);
    const row: Row = {
      id: u.id,
      realm_id: realmId,
      email: u.email,
      delivery_email: u.delivery_email,
      full_name: u.full_name,
      // No password: people set one through the link `parley import` prints; keys are new (Zulip's importer resets both).
      password_hash: null,
      api_key: newApiKey(),
      role: typeof u.role === 'number' ? u.role : 400,
      is_active: bit(u.is_active, 1),
      bot_type: isBot ? (typeof u.bot_type === 'number' ? u.bot_type : 1) : null,
      is_imported_stub: bit(u.is_mirror_dummy),
      date_joined: secs(u.date_joined),
      last_login: secs(u.last_login),
      avatar_version: typeof u.avatar_version === 'number' ? u.avatar_version : 1,
      // 'U' only once the file is in place (files.ts): an avatar the export lacks falls back to Gravatar.
      avatar_source: 'G',
      tos_version: u.tos_version ?? null,
      default_all_public_streams: bit(u.default_all_public_streams),
    };
    for (const [name, type] of settings) {
      const v = u[name];
      if (v === undefined || v === null) continue;
      row[name] = type === 'bool' ? bit(v) : v;
    }
    described(`realm.json: zerver_userprofile[${i}] (user ${String(u.id)})`, () => insertRow(app, 'user', row));
    z.users.set(u.id as number, u.id as number);
  });
  // Owners may come after their bots in the list.
  const setOwner = stmt(app.db, 'UPDATE user SET bot_owner_id = ? WHERE id = ?');
  users.forEach((u, i) => {
    if (typeof u.bot_owner === 'number') described(`realm.json: zerver_userprofile[${i}].bot_owner`, () => setOwner.run(u.bot_owner, u.id));
  });
  // Zulip's cross-realm bots become this organization's system bots, under the export's ids when free.
  rowsOf(data, 'zerver_userprofile_crossrealm').forEach((c) => {
    const local = String(c.email).slice(0, String(c.email).lastIndexOf('@')).toLowerCase();
    const kind: SystemBotKind = local === 'welcome-bot' ? 'welcome' : 'notification';
    if (local !== 'welcome-bot' && local !== 'notification-bot') z.warnings.push(`the system bot ${String(c.email)} is imported as Notification Bot`);
    let id = systemBot(app, realmId, kind).id;
    const taken = stmt(app.db, 'SELECT 1 FROM user WHERE id = ?').get(c.id);
    if (id !== c.id && !taken && ![...z.users.values()].includes(id)) {
      stmt(app.db, 'UPDATE user SET id = ? WHERE id = ?').run(c.id, id);
      id = c.id as number;
    }
    z.users.set(c.id as number, id);
    z.recipients.set(c.recipient_id as number, { user: id });
  });
}

function writeGroups(z: ZulipImport, data: Row): void {
  const { app, realmId } = z;
  const systemGroups = systemGroupsOf(data);
  const named = namedGroups(data);
  rowsOf(data, 'zerver_usergroup').forEach((g, i) => {
    const n = named.get(g.id as number);
    const row: Row = { id: g.id, realm_id: realmId, named: n ? 1 : 0 };
    if (n) {
      Object.assign(row, {
        name: n.name,
        description: n.description ?? '',
        is_system_group: bit(n.is_system_group),
        deactivated: bit(n.deactivated),
        date_created: secs(n.date_created),
        creator_id: typeof n.creator === 'number' ? (z.users.get(n.creator) ?? null) : null,
      });
      for (const s of GROUP_GROUP_SETTINGS) row[s] = typeof n[s] === 'number' ? n[s] : (systemGroups.get(GROUP_GROUP_DEFAULTS[s]) ?? null);
    }
    described(`realm.json: zerver_usergroup[${i}] (group ${String(g.id)})`, () => insertRow(app, 'user_group', row));
  });
  const system = new Set(
    (stmt(app.db, 'SELECT name FROM user_group WHERE realm_id = ? AND is_system_group = 1').all(realmId) as { name: string }[]).map((g) => g.name),
  );
  for (const name of [...SYSTEM_GROUPS, NOBODY_GROUP]) {
    if (!system.has(name)) throw new ImportError(`realm.json: zerver_namedusergroup has no system group ${name} (every Zulip organization has one)`);
  }
  rowsOf(data, 'zerver_usergroupmembership').forEach((m, i) => {
    described(`realm.json: zerver_usergroupmembership[${i}]`, () =>
      insertRow(app, 'user_group_member', { group_id: m.user_group, user_id: z.users.get(m.user_profile as number) ?? m.user_profile }),
    );
  });
  rowsOf(data, 'zerver_groupgroupmembership').forEach((m, i) => {
    described(`realm.json: zerver_groupgroupmembership[${i}]`, () => insertRow(app, 'user_group_subgroup', { supergroup_id: m.supergroup, subgroup_id: m.subgroup }));
  });
}

function writeChannels(z: ZulipImport, data: Row): void {
  const { app, realmId } = z;
  const systemGroups = systemGroupsOf(data);
  rowsOf(data, 'zerver_channelfolder').forEach((f, i) => {
    described(`realm.json: zerver_channelfolder[${i}]`, () =>
      insertRow(app, 'channel_folder', {
        id: f.id,
        realm_id: realmId,
        name: f.name,
        description: f.description ?? '',
        rendered_description: keptHtml(z, f.rendered_description, f.description),
        order: typeof f.order === 'number' ? f.order : 0,
        date_created: secs(f.date_created),
        creator_id: typeof f.creator === 'number' ? (z.users.get(f.creator) ?? null) : null,
        is_archived: bit(f.is_archived),
      }),
    );
  });
  rowsOf(data, 'zerver_stream').forEach((s, i) => {
    const row: Row = {
      id: s.id,
      realm_id: realmId,
      name: s.name,
      description: s.description,
      rendered_description: keptHtml(z, s.rendered_description, s.description),
      date_created: secs(s.date_created),
      creator_id: typeof s.creator === 'number' ? (z.users.get(s.creator) ?? null) : null,
      invite_only: bit(s.invite_only),
      is_web_public: bit(s.is_web_public),
      history_public_to_subscribers: bit(s.history_public_to_subscribers, 1),
      message_retention_days: typeof s.message_retention_days === 'number' ? s.message_retention_days : null,
      topics_policy: STREAM_TOPICS_POLICY_NAMES[s.topics_policy as number] ?? 'inherit',
      folder_id: typeof s.folder === 'number' ? s.folder : null,
      deactivated: bit(s.deactivated),
      is_recently_active: bit(s.is_recently_active, 1),
    };
    for (const g of STREAM_GROUP_SETTINGS) row[g] = typeof s[g] === 'number' ? s[g] : (systemGroups.get(STREAM_GROUP_DEFAULTS[g]) ?? null);
    described(`realm.json: zerver_stream[${i}] (channel ${String(s.id)})`, () => insertRow(app, 'stream', row));
  });
  // Bots' default channels: the channels exist now.
  const setDefaults = stmt(app.db, 'UPDATE user SET default_sending_stream_id = ?, default_events_register_stream_id = ? WHERE id = ?');
  for (const u of rowsOf(data, 'zerver_userprofile')) {
    if (typeof u.default_sending_stream === 'number' || typeof u.default_events_register_stream === 'number') {
      setDefaults.run(u.default_sending_stream ?? null, u.default_events_register_stream ?? null, u.id);
    }
  }
  rowsOf(data, 'zerver_defaultstream').forEach((d, i) => described(`realm.json: zerver_defaultstream[${i}]`, () => insertRow(app, 'default_stream', { realm_id: realmId, stream_id: d.stream })));
}

function writeRecipientsAndSubscriptions(z: ZulipImport, data: Row): void {
  const { app } = z;
  for (const r of rowsOf(data, 'zerver_recipient')) {
    const id = r.id as number;
    const target = r.type_id as number;
    if (r.type === RECIPIENT_TYPE.personal) z.recipients.set(id, { user: z.users.get(target) ?? target });
    else if (r.type === RECIPIENT_TYPE.stream) z.recipients.set(id, { stream: target });
    else z.recipients.set(id, { huddle: target });
  }
  rowsOf(data, 'zerver_subscription').forEach((s, i) => {
    const r = z.recipients.get(s.recipient as number);
    const user = z.users.get(s.user_profile as number) ?? (s.user_profile as number);
    if (!r) throw new ImportError(`realm.json: zerver_subscription[${i}].recipient ${String(s.recipient)} is not an id of zerver_recipient`);
    if ('huddle' in r) {
      let members = z.huddleMembers.get(r.huddle);
      if (!members) z.huddleMembers.set(r.huddle, (members = []));
      members.push(user);
      return;
    }
    if (!('stream' in r)) return; // each user's subscription to their own DMs: implicit in Parley
    z.counts.subscriptions = (z.counts.subscriptions ?? 0) + 1;
    described(`realm.json: zerver_subscription[${i}]`, () =>
      insertRow(app, 'subscription', {
        user_id: user,
        stream_id: r.stream,
        active: bit(s.active, 1),
        is_muted: bit(s.is_muted),
        color: typeof s.color === 'string' ? s.color : '#c2c2c2',
        pin_to_top: bit(s.pin_to_top),
        desktop_notifications: nbit(s.desktop_notifications),
        audible_notifications: nbit(s.audible_notifications),
        push_notifications: nbit(s.push_notifications),
        email_notifications: nbit(s.email_notifications),
        wildcard_mentions_notify: nbit(s.wildcard_mentions_notify),
      }),
    );
  });
}

/** The tables that hang off users and the organization (settings, words, topics, fields, ...). */
function writePerUserTables(z: ZulipImport, data: Row): void {
  const { app, realmId } = z;
  const user = (id: unknown) => z.users.get(id as number) ?? (id as number);
  const each = (table: string, fn: (r: Row) => void) => rowsOf(data, table).forEach((r, i) => described(`realm.json: ${table}[${i}]`, () => fn(r)));
  each('zerver_realmdomain', (d) => insertRow(app, 'realm_domain', { realm_id: realmId, domain: d.domain, allow_subdomains: bit(d.allow_subdomains) }));
  each('zerver_customprofilefield', (c) =>
    insertRow(app, 'custom_profile_field', {
      id: c.id,
      realm_id: realmId,
      name: c.name,
      hint: c.hint ?? '',
      field_type: c.field_type,
      field_data: c.field_data ?? '',
      order: typeof c.order === 'number' ? c.order : 0,
      display_in_profile_summary: bit(c.display_in_profile_summary),
      required: bit(c.required),
      editable_by_user: bit(c.editable_by_user, 1),
    }),
  );
  each('zerver_customprofilefieldvalue', (v) => insertRow(app, 'custom_profile_field_value', { user_id: user(v.user_profile), field_id: v.field, value: v.value, rendered_value: v.rendered_value === null || v.rendered_value === undefined ? null : keptHtml(z, v.rendered_value, v.value) }));
  each('zerver_realmfilter', (l) =>
    insertRow(app, 'linkifier', { id: l.id, realm_id: realmId, pattern: l.pattern, url_template: l.url_template, order: typeof l.order === 'number' ? l.order : 0 }),
  );
  each('zerver_realmplayground', (p) => insertRow(app, 'realm_playground', { id: p.id, realm_id: realmId, name: p.name, pygments_language: p.pygments_language, url_template: p.url_template }));
  each('zerver_realmemoji', (e) =>
    insertRow(app, 'realm_emoji', {
      id: e.id,
      realm_id: realmId,
      name: e.name,
      author_id: typeof e.author === 'number' ? user(e.author) : null,
      // Set once the image is in place (files.ts).
      file_name: null,
      deactivated: bit(e.deactivated),
    }),
  );
  each('zerver_alertword', (a) => stmt(app.db, 'INSERT OR IGNORE INTO alert_word (user_id, word) VALUES (?, ?)').run(user(a.user_profile), a.word as string));
  each('zerver_usertopic', (t) =>
    insertRow(app, 'user_topic', {
      user_id: user(t.user_profile),
      stream_id: t.stream,
      topic_key: topicKey(t.topic_name as string),
      topic_name: t.topic_name,
      visibility_policy: t.visibility_policy,
      last_updated: secs(t.last_updated),
    }),
  );
  each('zerver_muteduser', (m) => insertRow(app, 'muted_user', { user_id: user(m.user_profile), muted_user_id: user(m.muted_user), date_muted: secs(m.date_muted) }));
  each('zerver_userstatus', (s) =>
    insertRow(app, 'user_status', {
      user_id: user(s.user_profile),
      status_text: s.status_text ?? '',
      emoji_name: s.emoji_name ?? '',
      emoji_code: s.emoji_code ?? '',
      reaction_type: s.reaction_type ?? 'unicode_emoji',
      timestamp: secs(s.timestamp),
    }),
  );
  each('zerver_userpresence', (p) =>
    insertRow(app, 'presence', {
      user_id: user(p.user_profile),
      realm_id: realmId,
      last_active_time: secs(p.last_active_time),
      last_connected_time: secs(p.last_connected_time),
      last_update_id: typeof p.last_update_id === 'number' ? p.last_update_id : 0,
    }),
  );
  each('zerver_savedsnippet', (x) => insertRow(app, 'saved_snippet', { id: x.id, user_id: user(x.user_profile), title: x.title, content: x.content, date_created: secs(x.date_created) }));
  each('zerver_navigationview', (v) => insertRow(app, 'navigation_view', { id: v.id, user_id: user(v.user), fragment: v.fragment, is_pinned: bit(v.is_pinned), name: v.name ?? null }));
  const config = new Map<number, Record<string, string>>();
  for (const c of rowsOf(data, 'zerver_botconfigdata')) {
    const bot = user(c.bot_profile);
    config.set(bot, { ...(config.get(bot) ?? {}), [c.key as string]: c.value as string });
  }
  each('zerver_service', (s) =>
    insertRow(app, 'bot_service', {
      id: s.id,
      bot_id: user(s.user_profile),
      name: s.name,
      base_url: s.base_url ?? '',
      interface: typeof s.interface === 'number' ? s.interface : 1,
      config: JSON.stringify(config.get(user(s.user_profile)) ?? {}),
    }),
  );
  each('zerver_botstoragedata', (b) => insertRow(app, 'bot_storage', { bot_id: user(b.bot_profile), key: b.key, value: b.value }));
}

/** Scheduled messages and reminders (their recipients as Parley's send-later stores them). */
function writeScheduled(z: ZulipImport, data: Row): void {
  const { app, realmId } = z;
  rowsOf(data, 'zerver_scheduledmessage').forEach((s, i) => {
    const where = `realm.json: zerver_scheduledmessage[${i}]`;
    const sender = z.users.get(s.sender as number) ?? (s.sender as number);
    const r = z.recipients.get(s.recipient as number);
    if (!r) throw new ImportError(`${where}.recipient ${String(s.recipient)} is not an id of zerver_recipient`);
    let type = 'stream';
    let streamId: number | null = null;
    let to: number[] | null = null;
    if ('stream' in r) streamId = r.stream;
    else {
      type = 'private';
      const members = 'user' in r ? [sender, r.user] : (z.huddleMembers.get(r.huddle) ?? []);
      // As Zulip's get_recipient_ids: the other participants, or the sender alone for a note to self.
      const others = [...new Set(members)].filter((u) => u !== sender).sort((a, b) => a - b);
      to = others.length ? others : [sender];
    }
    described(where, () =>
      insertRow(app, 'scheduled_message', {
        id: s.id,
        realm_id: realmId,
        sender_id: sender,
        type,
        stream_id: streamId,
        recipient_ids: to ? JSON.stringify(to) : null,
        topic: s.subject ?? '',
        content: s.content,
        rendered_content: s.rendered_content,
        scheduled_timestamp: secs(s.scheduled_timestamp),
        failed: bit(s.failed),
        failure_message: s.failure_message ?? null,
        delivered: bit(s.delivered),
        delivered_message_id: typeof s.delivered_message === 'number' ? s.delivered_message : null,
        read_by_sender: bit(s.read_by_sender, 1),
        created: secs(s.request_timestamp),
        delivery_type: typeof s.delivery_type === 'number' ? s.delivery_type : 1,
        reminder_target_message_id: typeof s.reminder_target_message_id === 'number' ? s.reminder_target_message_id : null,
        reminder_note: s.reminder_note ?? null,
      }),
    );
  });
}

/** Writes everything realm.json holds but reactions (their messages come later). Returns the new realm id. */
export function writeRealmTables(z: ZulipImport, data: Row, realmName: string): number {
  z.realmId = writeRealmRow(z.app, data, realmName);
  writeUsers(z, data);
  writeGroups(z, data);
  writeChannels(z, data);
  z.counts.subscriptions = 0;
  writeRecipientsAndSubscriptions(z, data);
  writePerUserTables(z, data);
  writeScheduled(z, data);
  for (const [table, key] of [
    ['zerver_userprofile', 'users'],
    ['zerver_stream', 'channels'],
    ['zerver_usergroup', 'user_groups'],
    ['zerver_customprofilefield', 'custom_profile_fields'],
    ['zerver_realmfilter', 'linkifiers'],
    ['zerver_realmemoji', 'custom_emoji'],
  ] as const) {
    z.counts[key] = rowsOf(data, table).length;
  }
  return z.realmId;
}

/**
 * A description's or profile value's HTML from the export, kept when it is of the kind Zulip's
 * Markdown writes (rendered-html.ts: clients show it as HTML), else rendered here from its source text.
 */
function keptHtml(z: ZulipImport, given: unknown, source: unknown): string {
  if (typeof given === 'string' && isSafeRenderedHtml(given)) return given;
  return typeof source === 'string' && source !== '' ? renderPlain(z.app, z.realmId, source) : '';
}

// PATCH /realm: organization settings (Zulip's update_realm), with Zulip's checks, events and reply.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { findGroup, groupSettingForApi, storeGroupSetting, type GroupSettingValue } from '../lib/groups';
import { getRealmById, type RealmRow } from '../lib/realm';
import {
  AUTHENTICATION_METHODS,
  EDIT_HISTORY_VISIBILITY_POLICIES,
  GIPHY_RATING_IDS,
  REALM_CHANGEABLE_GROUP_SETTINGS,
  REALM_CHANNEL_SETTINGS,
  REALM_EXTRA_SETTING_DEFAULTS,
  REALM_GROUP_SETTING_RULES,
  REALM_TOPICS_POLICIES,
  realmEditHistoryPolicy,
  realmExtraSettings,
  realmTopicsPolicy,
  VIDEO_CHAT_PROVIDER_IDS,
  type EditHistoryVisibilityPolicy,
  type RealmChannelSetting,
  type RealmExtraSetting,
  type RealmTopicsPolicy,
} from '../lib/realm-settings';
import { LANGUAGES } from '../lib/settings';
import { canAccessStreamMetadata, findStreamById } from '../lib/streams';
import { isAdmin, isOwner, type UserRow } from '../lib/users';
import { updateFullMembersGroup } from './user-groups';
import { activeUserIds } from './users';

export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** A group setting as PATCH /realm takes it (Zulip's GroupSettingChangeRequest). */
export interface GroupSettingChange {
  new: GroupSettingValue;
  old?: GroupSettingValue;
}

export interface RealmChange {
  allow_message_editing?: boolean;
  /** Zulip's {backend name: enabled}; checked against AUTHENTICATION_METHODS. */
  authentication_methods?: Record<string, boolean>;
  avatar_changes_disabled?: boolean;
  default_code_block_language?: string;
  default_language?: string;
  description?: string;
  digest_emails_enabled?: boolean;
  /** Checked by the route: 0 (Monday) to 6. */
  digest_weekday?: number;
  disallow_disposable_email_addresses?: boolean;
  email_changes_disabled?: boolean;
  emails_restricted_to_domains?: boolean;
  enable_guest_user_dm_warning?: boolean;
  enable_guest_user_indicator?: boolean;
  enable_read_receipts?: boolean;
  enable_spectator_access?: boolean;
  giphy_rating?: number;
  inline_image_preview?: boolean;
  inline_url_embed_preview?: boolean;
  invite_required?: boolean;
  /** Checked by the route: an http(s) URL, or "default" (the server's Jitsi). */
  jitsi_server_url?: string;
  /** The older spelling of topics_policy: true is disable_empty_topic, false allow_empty_topic. */
  mandatory_topics?: boolean;
  message_content_allowed_in_email_notifications?: boolean;
  message_edit_history_visibility_policy?: EditHistoryVisibilityPolicy;
  name?: string;
  name_changes_disabled?: boolean;
  /** Checked by the route (Zulip's OrgTypeEnum). */
  org_type?: number;
  require_e2ee_push_notifications?: boolean;
  require_unique_names?: boolean;
  send_channel_events_messages?: boolean;
  send_welcome_emails?: boolean;
  topics_policy?: RealmTopicsPolicy;
  video_chat_provider?: number;
  want_advertise_in_communities_directory?: boolean;
  waiting_period_threshold?: number;
  welcome_message_custom_text?: string;
  /** Raw: a positive number of seconds, or "unlimited". */
  message_content_delete_limit_seconds?: number | string;
  message_content_edit_limit_seconds?: number | string;
  move_messages_within_stream_limit_seconds?: number | string;
  move_messages_between_streams_limit_seconds?: number | string;
  /** Raw: a positive number of days, or "unlimited" (legacy "forever"). */
  message_retention_days?: number | string;
  /** A private channel's id, or any negative number to turn message reports off. */
  moderation_request_channel_id?: number;
  new_stream_announcements_stream_id?: number;
  signup_announcements_stream_id?: number;
  zulip_update_announcements_stream_id?: number;
  groupSettings?: Record<string, GroupSettingChange>;
}

/** Time limits: a positive number of seconds, or "unlimited" (null), in Zulip's order. */
const TIME_LIMITS = [
  'message_content_delete_limit_seconds',
  'message_content_edit_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
] as const;

/** Settings Zulip announces in the update_dict format "due to their history" (do_set_realm_property). */
const UPDATE_DICT_PROPERTIES = new Set(['allow_message_editing', 'message_content_edit_limit_seconds']);

/** Zulip's RequestVariableConversionError (parse_message_time_limit_setting, parse_message_retention_days). */
const badValue = (name: string, value: number | string) => errors.badValue(name, value);

/** Zulip's parse_message_time_limit_setting: "unlimited" is null; anything else a positive integer. */
function parseTimeLimit(name: string, value: number | string): number | null {
  if (value === 'unlimited') return null;
  if (typeof value === 'string' || !Number.isInteger(value) || value <= 0) throw badValue(name, value);
  return value;
}

/** Zulip's parse_message_retention_days for the realm: "unlimited" is -1 (stored as NULL). */
function parseRetentionDays(value: number | string): number {
  // zulip-compat: "forever" is the pre-feature-level-91 spelling of "unlimited".
  if (value === 'unlimited' || value === 'forever') return -1;
  if (typeof value === 'string' || !Number.isInteger(value) || value <= 0) throw badValue('message_retention_days', value);
  return value;
}

/**
 * Zulip's validate_authentication_methods_dict_from_api and the check after it: only the backends
 * the server offers, and at least one of them on. Parley's one backend is always on, so the only
 * accepted value changes nothing (Zulip then leaves authentication_methods out of its reply).
 */
function checkAuthenticationMethods(methods: Record<string, boolean>): void {
  const valid = Object.keys(AUTHENTICATION_METHODS).sort();
  for (const name of Object.keys(methods)) {
    if (!Object.hasOwn(AUTHENTICATION_METHODS, name)) {
      // zulip-compat: the list is Python's repr of a sorted list of names.
      throw errors.badRequest('Invalid authentication method: {name}. Valid methods are: {methods}', {
        name,
        methods: `[${valid.map((m) => `'${m}'`).join(', ')}]`,
      });
    }
  }
  if (!Object.values(methods).includes(true)) throw errors.badRequest('At least one authentication method must be enabled.');
  // zulip-compat: do_set_realm_authentication_methods takes the dict whole; a backend left out is
  // turned off. With one backend, which may not be turned off, nothing can change.
}

/** Zulip's are_both_group_setting_values_equal. */
export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const same = (x: number[], y: number[]) => new Set(x).size === new Set(y).size && x.every((i) => y.includes(i));
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}

/** Zulip's parse_group_setting_value: one subgroup and no members is that group; empty is role:nobody. */
export function parseGroupSetting(app: App, realmId: number, value: GroupSettingValue): GroupSettingValue {
  if (typeof value === 'number') return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0];
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0) {
    return (stmt(app.db, "SELECT id FROM user_group WHERE realm_id = ? AND name = 'role:nobody'").get(realmId) as { id: number }).id;
  }
  return value;
}

/** The checks of Zulip's access_user_group_for_setting that the stored-value helper does not make. */
function checkSystemGroupRules(app: App, realmId: number, setting: string, value: GroupSettingValue): void {
  const rule = REALM_GROUP_SETTING_RULES[setting];
  if (typeof value !== 'number') {
    if (rule.requireSystemGroup) throw errors.badRequest("'{setting_name}' must be a system user group.", { setting_name: setting });
    return;
  }
  const g = findGroup(app.db, realmId, value);
  if (!g || !g.named) return; // storeGroupSetting reports it
  if (rule.requireSystemGroup && !g.is_system_group) throw errors.badRequest("'{setting_name}' must be a system user group.", { setting_name: setting });
  if (g.is_system_group && rule.allowedSystemGroups && !rule.allowedSystemGroups.includes(String(g.name))) {
    throw errors.badRequest("'{setting_name}' setting cannot be set to '{group_name}' group.", { setting_name: setting, group_name: g.name });
  }
}

/**
 * PATCH /realm (administrators; some settings owners). Checks everything first, then applies each
 * change that changes something, in Zulip's order, each with its realm event. Returns the reply's
 * extra keys: each changed setting, strings as "updated" (Zulip's update_realm).
 */
export function doUpdateRealm(app: App, user: UserRow, change: RealmChange): Record<string, unknown> {
  if (!isAdmin(user)) throw errors.adminRequired();
  return app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id) as RealmRow;
    const realmId = realm.id;
    // ---- checks (the whole request succeeds or fails) ----
    if (change.default_language !== undefined && !Object.hasOwn(LANGUAGES, change.default_language)) {
      throw errors.badRequest("Invalid language '{language}'", { language: change.default_language });
    }
    if (change.authentication_methods !== undefined) {
      if (!isOwner(user)) throw errors.ownerRequired();
      checkAuthenticationMethods(change.authentication_methods);
    }
    if (change.video_chat_provider !== undefined && !VIDEO_CHAT_PROVIDER_IDS.includes(change.video_chat_provider)) {
      throw errors.badRequest('Invalid video_chat_provider {video_chat_provider}', { video_chat_provider: change.video_chat_provider });
    }
    if (change.giphy_rating !== undefined && !GIPHY_RATING_IDS.includes(change.giphy_rating)) {
      throw errors.badRequest('Invalid giphy_rating {giphy_rating}', { giphy_rating: change.giphy_rating });
    }
    let retention: number | undefined;
    if (change.message_retention_days !== undefined) {
      if (!isOwner(user)) throw errors.ownerRequired();
      retention = parseRetentionDays(change.message_retention_days);
    }
    const groupChanges = Object.entries(change.groupSettings ?? {});
    if (groupChanges.some(([s]) => REALM_GROUP_SETTING_RULES[s]?.ownerOnly) && !isOwner(user)) throw errors.ownerRequired();
    if (change.invite_required !== undefined && !isOwner(user)) throw errors.ownerRequired();
    if ((change.emails_restricted_to_domains !== undefined || change.disallow_disposable_email_addresses !== undefined) && !isOwner(user)) {
      throw errors.ownerRequired();
    }
    if (change.waiting_period_threshold !== undefined && !isOwner(user)) throw errors.ownerRequired();
    const limit = (name: (typeof TIME_LIMITS)[number]) => (change[name] === undefined ? undefined : parseTimeLimit(name, change[name] as number | string));
    const limits = TIME_LIMITS.map((name) => [name, limit(name)] as const);

    const data: Record<string, unknown> = {};
    const events: Record<string, unknown>[] = [];
    const extra = realmExtraSettings(realm);
    let extraChanged = false;
    const announce = (property: string, value: unknown) =>
      events.push(
        UPDATE_DICT_PROPERTIES.has(property)
          ? { type: 'realm', op: 'update_dict', property: 'default', data: { [property]: value } }
          : { type: 'realm', op: 'update', property, value },
      );
    /** Zulip's do_set_realm_property on a realm column (column names are the constant keys below). */
    const setColumn = (property: string, value: string | number | boolean | null, stored: string | number | null = value as never, shown: unknown = value) => {
      if (realm[property] === stored) return;
      app.db.prepare(`UPDATE realm SET ${property} = ? WHERE id = ?`).run(stored, realmId);
      announce(property, shown);
      data[property] = typeof value === 'string' ? 'updated' : shown;
    };
    /** do_set_realm_property on a setting kept in extra_settings. */
    const setExtra = (property: RealmExtraSetting, value: string | number | boolean | null) => {
      const current = property in extra ? extra[property] : REALM_EXTRA_SETTING_DEFAULTS[property];
      if (current === value) return;
      extra[property] = value;
      extraChanged = true;
      announce(property, value);
      data[property] = typeof value === 'string' ? 'updated' : value;
    };
    const setExtraIfGiven = (property: RealmExtraSetting & keyof RealmChange) => {
      const value = change[property];
      if (value !== undefined) setExtra(property, value as string | number | boolean);
    };

    // "unlimited" time limits and the default Jitsi server first: Zulip sets them before the others.
    for (const [name, value] of limits) if (value === null) setColumn(name, null);
    const jitsi = change.jitsi_server_url === undefined ? undefined : change.jitsi_server_url === 'default' ? null : change.jitsi_server_url;
    if (jitsi === null) setExtra('jitsi_server_url', null);
    // The other settings in the order of Zulip's parameters, then its locals.
    const setBool = (name: keyof RealmChange & string) => {
      const v = change[name];
      if (typeof v === 'boolean') setColumn(name, v, v ? 1 : 0);
    };
    setBool('allow_message_editing');
    setExtraIfGiven('avatar_changes_disabled');
    setExtraIfGiven('default_code_block_language');
    if (change.default_language !== undefined) setColumn('default_language', change.default_language);
    if (change.description !== undefined) setColumn('description', change.description);
    setExtraIfGiven('digest_emails_enabled');
    setExtraIfGiven('digest_weekday');
    setBool('disallow_disposable_email_addresses');
    setExtraIfGiven('email_changes_disabled');
    setBool('emails_restricted_to_domains');
    setExtraIfGiven('enable_guest_user_dm_warning');
    setExtraIfGiven('enable_guest_user_indicator');
    setExtraIfGiven('enable_read_receipts');
    setBool('enable_spectator_access');
    setExtraIfGiven('giphy_rating');
    setExtraIfGiven('inline_image_preview');
    setExtraIfGiven('inline_url_embed_preview');
    setBool('invite_required');
    setExtraIfGiven('message_content_allowed_in_email_notifications');
    if (change.message_edit_history_visibility_policy !== undefined) {
      const policy = change.message_edit_history_visibility_policy;
      if (realmEditHistoryPolicy(realm) !== policy) {
        extra.message_edit_history_visibility_policy = policy;
        extraChanged = true;
        // allow_edit_history (what GET /messages/{id}/history and realm_allow_edit_history read) follows.
        stmt(app.db, 'UPDATE realm SET allow_edit_history = ? WHERE id = ?').run(policy === 'none' ? 0 : 1, realmId);
        // As Zulip's do_set_realm_property: the event names the policy.
        events.push({ type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: policy });
      }
      // zulip-compat: update_realm compares the stored integer with the parsed enum, which never match,
      // so the reply always carries the setting, as the enum's integer value (orjson writes an Enum so).
      data.message_edit_history_visibility_policy = EDIT_HISTORY_VISIBILITY_POLICIES[policy];
    }
    if (change.name !== undefined) setColumn('name', change.name);
    setExtraIfGiven('name_changes_disabled');
    setExtraIfGiven('require_e2ee_push_notifications');
    setExtraIfGiven('require_unique_names');
    setExtraIfGiven('send_channel_events_messages');
    setExtraIfGiven('send_welcome_emails');
    // topics_policy, or mandatory_topics (Zulip 10's spelling of the same setting) when it is not given.
    const topicsPolicy: RealmTopicsPolicy | undefined =
      change.topics_policy ?? (change.mandatory_topics === undefined ? undefined : change.mandatory_topics ? 'disable_empty_topic' : 'allow_empty_topic');
    if (topicsPolicy !== undefined) {
      const mandatory = topicsPolicy === 'disable_empty_topic';
      const changed = realmTopicsPolicy(realm) !== topicsPolicy || Boolean(realm.mandatory_topics) !== mandatory;
      if (changed) {
        stmt(app.db, 'UPDATE realm SET topics_policy = ?, mandatory_topics = ? WHERE id = ?').run(topicsPolicy, mandatory ? 1 : 0, realmId);
        // As Zulip's do_set_realm_property: one update_dict with both spellings.
        events.push({ type: 'realm', op: 'update_dict', property: 'default', data: { topics_policy: topicsPolicy, mandatory_topics: mandatory } });
      }
      // zulip-compat: as for message_edit_history_visibility_policy, topics_policy is always in the
      // reply as its stored integer; mandatory_topics is a boolean, there only when it changed.
      if (change.topics_policy !== undefined) data.topics_policy = REALM_TOPICS_POLICIES[topicsPolicy];
      else if (changed) data.mandatory_topics = mandatory;
    }
    setExtraIfGiven('video_chat_provider');
    if (change.waiting_period_threshold !== undefined) setColumn('waiting_period_threshold', change.waiting_period_threshold);
    setExtraIfGiven('want_advertise_in_communities_directory');
    if (change.welcome_message_custom_text !== undefined) setColumn('welcome_message_custom_text', change.welcome_message_custom_text);
    if (retention !== undefined) setColumn('message_retention_days', retention, retention === -1 ? null : retention, retention);
    for (const [name, value] of limits) if (value !== undefined && value !== null) setColumn(name, value);
    if (jitsi !== undefined && jitsi !== null) setExtra('jitsi_server_url', jitsi);

    // Group settings, in Zulip's REALM_PERMISSION_GROUP_SETTINGS order.
    const now = nowSeconds(app.clock);
    for (const setting of REALM_CHANGEABLE_GROUP_SETTINGS) {
      const req = change.groupSettings?.[setting];
      if (!req) continue;
      const rule = REALM_GROUP_SETTING_RULES[setting];
      const newValue = parseGroupSetting(app, realmId, req.new);
      const currentId = realm[setting] as number;
      const current = groupSettingForApi(app.db, currentId);
      if (req.old !== undefined && !sameGroupSetting(parseGroupSetting(app, realmId, req.old), current)) {
        throw new JsonableError("'old' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
      }
      if (sameGroupSetting(current, newValue)) continue;
      checkSystemGroupRules(app, realmId, setting, newValue);
      const id = storeGroupSetting(app.db, realmId, setting, newValue, now, { allowNobody: rule.allowNobody ?? true, allowEveryone: rule.allowEveryone ?? false });
      // Column names come from the constant REALM_GROUP_SETTING_RULES table, never from input.
      app.db.prepare(`UPDATE realm SET ${setting} = ? WHERE id = ?`).run(id, realmId);
      events.push({ type: 'realm', op: 'update_dict', property: 'default', data: { [setting]: groupSettingForApi(app.db, id) } });
      data[setting] = newValue;
    }

    // Channel-valued settings: any negative id turns one off; Zulip echoes the id it was given.
    for (const setting of REALM_CHANNEL_SETTINGS) {
      const id = change[setting];
      if (id === undefined) continue;
      const currentId = typeof extra[setting] === 'number' && (extra[setting] as number) >= 0 ? (extra[setting] as number) : null;
      if (currentId !== null && currentId === id) continue;
      if (id >= 0) {
        const s = findStreamById(app.db, realmId, id);
        if (!s || s.deactivated || !canAccessStreamMetadata(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
        // Zulip's do_set_realm_moderation_request_channel: reports must not land where everyone reads.
        if (setting === 'moderation_request_channel_id' && (!s.invite_only || s.is_web_public)) {
          throw errors.badRequest('Moderation request channel must be private.');
        }
      }
      extra[setting as RealmChannelSetting] = id >= 0 ? id : -1;
      extraChanged = true;
      events.push({ type: 'realm', op: 'update', property: setting, value: id });
      data[setting] = id;
    }
    // zulip-compat: do_change_realm_org_type announces the type even when it is the same one.
    if (change.org_type !== undefined) {
      extra.org_type = change.org_type;
      extraChanged = true;
      events.push({ type: 'realm', op: 'update', property: 'org_type', value: change.org_type });
      data.org_type = change.org_type;
    }
    if (extraChanged) stmt(app.db, 'UPDATE realm SET extra_settings = ? WHERE id = ?').run(JSON.stringify(extra), realmId);

    if (events.length) {
      app.batch.onCommit(() => {
        const users = activeUserIds(app, realmId);
        for (const e of events) app.events.send(e as { type: string }, users);
      });
    }
    // As Zulip's do_set_realm_property: a new waiting period moves members in or out of
    // role:fullmembers, with user_group events after the realm update.
    if (data.waiting_period_threshold !== undefined) updateFullMembersGroup(app, realmId, null);
    return data;
  });
}

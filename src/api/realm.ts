// PATCH /realm: the organization's settings (Zulip's update_realm).
import * as v from 'valibot';
import { MAX_WELCOME_MESSAGE_LENGTH } from '../actions/invites';
import { doUpdateRealm, MAX_REALM_DESCRIPTION_LENGTH, MAX_REALM_NAME_LENGTH, type GroupSettingChange } from '../actions/realm-settings';
import { p, zBool, zInt, zStr } from '../http/params';
import { route } from '../http/route';
import { groupSettingSchema, type GroupSettingValue } from '../lib/groups';
import {
  DIGEST_WEEKDAYS,
  EDIT_HISTORY_VISIBILITY_POLICIES,
  ORG_TYPE_IDS,
  REALM_CHANGEABLE_GROUP_SETTINGS,
  REALM_TOPICS_POLICIES,
  type EditHistoryVisibilityPolicy,
  type RealmTopicsPolicy,
} from '../lib/realm-settings';

/** A positive integer or "unlimited", JSON-encoded (Zulip) or raw. */
const limitParam = () => p.jsonOrStr(v.union([zInt(), v.string()], '{var_name} is not an integer or string')).optional();

/** Zulip's GroupSettingChangeRequest ({new, old?}); a bare value is taken as `new`, as for user groups. */
const groupChangeSchema = v.union(
  [v.strictObject({ new: groupSettingSchema, old: v.optional(groupSettingSchema) }), groupSettingSchema],
  '{var_name} is not a valid group setting value',
);

/** A JSON integer from a fixed set (Zulip's Json[IntEnum]): anything else is "Invalid {var_name}". */
const enumIntParam = (values: readonly number[]) =>
  p.json(v.pipe(zInt(), v.check((n) => values.includes(n), 'Invalid {var_name}'))).optional();

/** Zulip's Json[dict[str, bool]] (a list is not a dict, though valibot's record would take it). */
const authenticationMethodsSchema = v.pipe(
  v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), '{var_name} is not a dict'),
  v.record(v.string(), zBool()),
);

const JITSI_SERVER_URL_MAX_LENGTH = 200;

/**
 * Zulip's check_jitsi_url: "default", or a URL Django's URLValidator takes (http, https, ftp or ftps;
 * a host name with a dot, localhost or an IP address), at most 200 characters.
 */
function isJitsiUrl(value: string): boolean {
  if (value === 'default') return true;
  if (value.length > JITSI_SERVER_URL_MAX_LENGTH || /\s/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) || !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i.test(value)) return false;
  const host = url.hostname;
  return host === 'localhost' || host.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || /^([a-z0-9-]+\.)+[a-z-]{2,63}\.?$/i.test(host);
}

const groupParams = Object.fromEntries(REALM_CHANGEABLE_GROUP_SETTINGS.map((s) => [s, p.json(groupChangeSchema).optional()])) as Record<
  string,
  ReturnType<typeof p.json<typeof groupChangeSchema>>
>;

export const realmRoutes = [
  route({
    method: 'PATCH',
    path: '/api/v1/realm',
    auth: 'user',
    params: {
      allow_message_editing: p.bool().optional(),
      authentication_methods: p.json(authenticationMethodsSchema).optional(),
      avatar_changes_disabled: p.bool().optional(),
      default_code_block_language: p.str().optional(),
      default_language: p.str().optional(),
      description: p.str({ max: MAX_REALM_DESCRIPTION_LENGTH }).optional(),
      digest_emails_enabled: p.bool().optional(),
      digest_weekday: enumIntParam(DIGEST_WEEKDAYS),
      disallow_disposable_email_addresses: p.bool().optional(),
      email_changes_disabled: p.bool().optional(),
      emails_restricted_to_domains: p.bool().optional(),
      enable_guest_user_dm_warning: p.bool().optional(),
      enable_guest_user_indicator: p.bool().optional(),
      enable_read_receipts: p.bool().optional(),
      enable_spectator_access: p.bool().optional(),
      giphy_rating: p.int().optional(),
      inline_image_preview: p.bool().optional(),
      inline_url_embed_preview: p.bool().optional(),
      invite_required: p.bool().optional(),
      jitsi_server_url: p.json(v.pipe(zStr(), v.check(isJitsiUrl, '{var_name} is not an allowed_type'))).optional(),
      mandatory_topics: p.bool().optional(),
      message_content_allowed_in_email_notifications: p.bool().optional(),
      message_content_delete_limit_seconds: limitParam(),
      message_content_edit_limit_seconds: limitParam(),
      message_edit_history_visibility_policy: p.oneOf(Object.keys(EDIT_HISTORY_VISIBILITY_POLICIES) as EditHistoryVisibilityPolicy[]).optional(),
      message_retention_days: limitParam(),
      move_messages_between_streams_limit_seconds: limitParam(),
      move_messages_within_stream_limit_seconds: limitParam(),
      moderation_request_channel_id: p.int().optional(),
      name: p.str({ max: MAX_REALM_NAME_LENGTH }).optional(),
      name_changes_disabled: p.bool().optional(),
      new_stream_announcements_stream_id: p.int().optional(),
      org_type: enumIntParam(ORG_TYPE_IDS),
      require_e2ee_push_notifications: p.bool().optional(),
      require_unique_names: p.bool().optional(),
      send_channel_events_messages: p.bool().optional(),
      send_welcome_emails: p.bool().optional(),
      signup_announcements_stream_id: p.int().optional(),
      topics_policy: p.oneOf(Object.keys(REALM_TOPICS_POLICIES) as RealmTopicsPolicy[]).optional(),
      video_chat_provider: p.int().optional(),
      waiting_period_threshold: p.int({ min: 0 }).optional(),
      want_advertise_in_communities_directory: p.bool().optional(),
      welcome_message_custom_text: p.str({ max: MAX_WELCOME_MESSAGE_LENGTH }).optional(),
      zulip_update_announcements_stream_id: p.int().optional(),
      ...groupParams,
    },
    handle({ app, user, params }) {
      const groupSettings: Record<string, GroupSettingChange> = {};
      for (const s of REALM_CHANGEABLE_GROUP_SETTINGS) {
        const raw = (params as Record<string, unknown>)[s] as GroupSettingChange | GroupSettingValue | undefined;
        if (raw === undefined) continue;
        groupSettings[s] = typeof raw === 'object' && 'new' in raw ? raw : { new: raw };
      }
      return doUpdateRealm(app, user, {
        allow_message_editing: params.allow_message_editing,
        authentication_methods: params.authentication_methods,
        avatar_changes_disabled: params.avatar_changes_disabled,
        default_code_block_language: params.default_code_block_language,
        default_language: params.default_language,
        description: params.description,
        digest_emails_enabled: params.digest_emails_enabled,
        digest_weekday: params.digest_weekday,
        disallow_disposable_email_addresses: params.disallow_disposable_email_addresses,
        email_changes_disabled: params.email_changes_disabled,
        emails_restricted_to_domains: params.emails_restricted_to_domains,
        enable_guest_user_dm_warning: params.enable_guest_user_dm_warning,
        enable_guest_user_indicator: params.enable_guest_user_indicator,
        enable_read_receipts: params.enable_read_receipts,
        enable_spectator_access: params.enable_spectator_access,
        giphy_rating: params.giphy_rating,
        inline_image_preview: params.inline_image_preview,
        inline_url_embed_preview: params.inline_url_embed_preview,
        invite_required: params.invite_required,
        jitsi_server_url: params.jitsi_server_url,
        mandatory_topics: params.mandatory_topics,
        message_content_allowed_in_email_notifications: params.message_content_allowed_in_email_notifications,
        message_content_delete_limit_seconds: params.message_content_delete_limit_seconds,
        message_content_edit_limit_seconds: params.message_content_edit_limit_seconds,
        message_edit_history_visibility_policy: params.message_edit_history_visibility_policy,
        message_retention_days: params.message_retention_days,
        move_messages_between_streams_limit_seconds: params.move_messages_between_streams_limit_seconds,
        move_messages_within_stream_limit_seconds: params.move_messages_within_stream_limit_seconds,
        moderation_request_channel_id: params.moderation_request_channel_id,
        name: params.name,
        name_changes_disabled: params.name_changes_disabled,
        new_stream_announcements_stream_id: params.new_stream_announcements_stream_id,
        org_type: params.org_type,
        require_e2ee_push_notifications: params.require_e2ee_push_notifications,
        require_unique_names: params.require_unique_names,
        send_channel_events_messages: params.send_channel_events_messages,
        send_welcome_emails: params.send_welcome_emails,
        signup_announcements_stream_id: params.signup_announcements_stream_id,
        topics_policy: params.topics_policy,
        video_chat_provider: params.video_chat_provider,
        waiting_period_threshold: params.waiting_period_threshold,
        want_advertise_in_communities_directory: params.want_advertise_in_communities_directory,
        welcome_message_custom_text: params.welcome_message_custom_text,
        zulip_update_announcements_stream_id: params.zulip_update_announcements_stream_id,
        groupSettings,
      });
    },
  }),
];

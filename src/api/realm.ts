// PATCH /realm: the organization's settings (Zulip's update_realm).
import * as v from 'valibot';
import { MAX_WELCOME_MESSAGE_LENGTH } from '../actions/invites';
import { doUpdateRealm, MAX_REALM_DESCRIPTION_LENGTH, MAX_REALM_NAME_LENGTH, type GroupSettingChange } from '../actions/realm-settings';
import { p, zInt } from '../http/params';
import { route } from '../http/route';
import { groupSettingSchema, type GroupSettingValue } from '../lib/groups';
import { REALM_CHANGEABLE_GROUP_SETTINGS } from '../lib/realm-settings';

/** A positive integer or "unlimited", JSON-encoded (Zulip) or raw. */
const limitParam = () => p.jsonOrStr(v.union([zInt(), v.string()], '{var_name} is not an integer or string')).optional();

/** Zulip's GroupSettingChangeRequest ({new, old?}); a bare value is taken as `new`, as for user groups. */
const groupChangeSchema = v.union(
  [v.strictObject({ new: groupSettingSchema, old: v.optional(groupSettingSchema) }), groupSettingSchema],
  '{var_name} is not a valid group setting value',
);

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
      default_language: p.str().optional(),
      description: p.str({ max: MAX_REALM_DESCRIPTION_LENGTH }).optional(),
      disallow_disposable_email_addresses: p.bool().optional(),
      emails_restricted_to_domains: p.bool().optional(),
      enable_spectator_access: p.bool().optional(),
      invite_required: p.bool().optional(),
      mandatory_topics: p.bool().optional(),
      message_content_delete_limit_seconds: limitParam(),
      message_content_edit_limit_seconds: limitParam(),
      message_retention_days: limitParam(),
      move_messages_between_streams_limit_seconds: limitParam(),
      move_messages_within_stream_limit_seconds: limitParam(),
      name: p.str({ max: MAX_REALM_NAME_LENGTH }).optional(),
      new_stream_announcements_stream_id: p.int().optional(),
      send_channel_events_messages: p.bool().optional(),
      signup_announcements_stream_id: p.int().optional(),
      waiting_period_threshold: p.int({ min: 0 }).optional(),
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
        default_language: params.default_language,
        description: params.description,
        disallow_disposable_email_addresses: params.disallow_disposable_email_addresses,
        emails_restricted_to_domains: params.emails_restricted_to_domains,
        enable_spectator_access: params.enable_spectator_access,
        invite_required: params.invite_required,
        mandatory_topics: params.mandatory_topics,
        message_content_delete_limit_seconds: params.message_content_delete_limit_seconds,
        message_content_edit_limit_seconds: params.message_content_edit_limit_seconds,
        message_retention_days: params.message_retention_days,
        move_messages_between_streams_limit_seconds: params.move_messages_between_streams_limit_seconds,
        move_messages_within_stream_limit_seconds: params.move_messages_within_stream_limit_seconds,
        name: params.name,
        new_stream_announcements_stream_id: params.new_stream_announcements_stream_id,
        send_channel_events_messages: params.send_channel_events_messages,
        signup_announcements_stream_id: params.signup_announcements_stream_id,
        waiting_period_threshold: params.waiting_period_threshold,
        welcome_message_custom_text: params.welcome_message_custom_text,
        zulip_update_announcements_stream_id: params.zulip_update_announcements_stream_id,
        groupSettings,
      });
    },
  }),
];

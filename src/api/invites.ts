// Invitations: POST/GET /invites, revoke and resend, reusable links. (The organization's default
// welcome message text is a PATCH /realm setting: src/api/realm.ts.)
import * as v from 'valibot';
import {
  doCreateMultiuseInvite,
  doInviteUsers,
  doResendInvite,
  doRevokeInvite,
  doSendTestWelcomeMessage,
  MAX_WELCOME_MESSAGE_LENGTH,
} from '../actions/invites';
import { requireMemberOrAdmin } from '../actions/user-groups';
import { p, zInt } from '../http/params';
import { route } from '../http/route';
import { listInvites } from '../lib/invites';
import { ROLES } from '../lib/roles';

const inviteAs = p
  .json(v.pipe(zInt(), v.check((r) => ROLES.includes(r), 'Invalid {var_name}: Value error, Not in the list of possible values')))
  .default(400);

/** Parameters shared by email invitations and reusable links. */
const common = {
  invite_expires_in_minutes: p.json(v.nullable(zInt())).optional(),
  invite_as: inviteAs,
  group_ids: p.json(v.array(zInt())).optional(),
  include_realm_default_subscriptions: p.bool().default(false),
};

/**
 * welcome_message_custom_text: a raw string. Omitted or `null` means the organization's default.
 * zulip-compat: Zulip reads the raw string, so its only null is omission; clients that JSON-encode a
 * null send the text "null", which Parley reads as null rather than as a four-letter message.
 */
const welcomeText = p.str({ max: MAX_WELCOME_MESSAGE_LENGTH }).optional();
const textOrNull = (raw: string | undefined) => (raw === undefined || raw === 'null' ? null : raw);

export const inviteRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/invites',
    auth: 'user',
    params: {
      ...common,
      invitee_emails: p.str(),
      stream_ids: p.json(v.array(zInt())),
      notify_referrer_on_join: p.bool().default(true),
      welcome_message_custom_text: welcomeText,
    },
    handle({ app, user, params }) {
      doInviteUsers(app, user, {
        inviteeEmails: params.invitee_emails,
        expiresInMinutes: params.invite_expires_in_minutes,
        inviteAs: params.invite_as,
        streamIds: params.stream_ids,
        groupIds: params.group_ids,
        includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
        notifyReferrerOnJoin: params.notify_referrer_on_join,
        welcomeMessageCustomText: textOrNull(params.welcome_message_custom_text),
      });
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/invites',
    auth: 'user',
    handle({ app, user }) {
      requireMemberOrAdmin(user);
      return { invites: listInvites(app, user) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/invites/{invite_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doRevokeInvite(app, user, Number(path.invite_id), false);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/invites/{invite_id:int}/resend',
    auth: 'user',
    handle({ app, user, path }) {
      doResendInvite(app, user, Number(path.invite_id));
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/invites/multiuse',
    auth: 'user',
    params: {
      ...common,
      stream_ids: p.json(v.array(zInt())).default([]),
      // zulip-compat: links take notify_referrer_on_join too (stored; Zulip's links never notify).
      notify_referrer_on_join: p.bool().default(true),
      welcome_message_custom_text: welcomeText,
    },
    handle({ app, user, params }) {
      const link = doCreateMultiuseInvite(app, user, {
        expiresInMinutes: params.invite_expires_in_minutes,
        inviteAs: params.invite_as,
        streamIds: params.stream_ids,
        groupIds: params.group_ids,
        includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
        notifyReferrerOnJoin: params.notify_referrer_on_join,
        welcomeMessageCustomText: textOrNull(params.welcome_message_custom_text),
      });
      return { invite_link: link };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/invites/multiuse/{invite_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doRevokeInvite(app, user, Number(path.invite_id), true);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/realm/test_welcome_bot_custom_message',
    auth: 'user',
    requires: 'admin',
    params: { welcome_message_custom_text: p.str({ max: MAX_WELCOME_MESSAGE_LENGTH }) },
    handle({ app, user, params }) {
      return { message_id: doSendTestWelcomeMessage(app, user, params.welcome_message_custom_text) };
    },
  }),
];

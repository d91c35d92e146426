// GET /streams/{id}/email_address (Zulip's get_stream_email_address). Parley has no incoming email
// gateway, so it answers as a Zulip server whose EMAIL_GATEWAY_PATTERN is empty: the same access
// checks on the channel, on posting in it and on sender_id, then an empty address
// (encode_email_address returns "").
import type { App } from '../app';
import { errors } from '../http/errors';
import { canAccessStreamContent, findStreamById } from '../lib/streams';
import type { UserRow } from '../lib/users';
import { accessBotById } from './bots';
import { checkCanSendToChannel } from './messages';

/**
 * The channel's email address for `user`, with `senderId` (a bot the user administers, or the user)
 * as the sender: "" here, always, once the checks pass.
 */
export function channelEmailAddress(app: App, user: UserRow, streamId: number, senderId: number | undefined): string {
  // Zulip's access_stream_by_id with its defaults (require_content_access, an active channel): an
  // administrator who is not subscribed to a private channel is refused as well.
  const s = findStreamById(app.db, user.realm_id, streamId);
  if (!s || s.deactivated || !canAccessStreamContent(app.db, user, s)) throw errors.badRequest('Invalid channel ID');
  // Since Zulip 12 (feature level 448) only those who may post in the channel get its address.
  checkCanSendToChannel(app, user, s);
  // No sender_id is the Email Gateway bot (Parley has none); the caller is allowed; anything else
  // must be a bot the caller may administer (access_bot_by_id: "No such bot", "Insufficient permission").
  if (senderId !== undefined && senderId !== user.id) accessBotById(app, user, senderId);
  // zulip-compat: without an email gateway Zulip still makes (or reuses) the channel's email token,
  // then encode_email_address answers "". No token is kept here: no address ever reaches anyone.
  return '';
}

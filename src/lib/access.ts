// Which users a user may access (Zulip's can_access_all_users_group, zerver/lib/users.py): members of
// that group see everyone; others (guests, since the setting is role:everyone or role:members) see
// themselves, every bot, the subscribers of their channels and the participants of their direct-message
// conversations. User lists show the rest as "Unknown user" placeholders; lookups refuse them.
//
// A conversation counts whoever started it: a guest may not start one with a user it cannot access
// (checkSenderCanAccessRecipients), but a conversation someone else starts with the guest makes its
// participants accessible, as Zulip's personal-message and direct-message-group rules do.
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { groupMemberSet, isUserInGroup } from './groups';
import { getRealmById } from './realm';
import { fakeEmailDomain } from './user-emails';
import { isSystemBot, type UserRow } from './users';

/** Ids of the users `viewer` may access, or null for everyone. */
export function accessibleUsers(db: Db, viewer: UserRow): Set<number> | null {
  // The system bots are in none of the organization's groups (cross-realm bots in Zulip, where only
  // guests are ever limited): they see everyone.
  if (isSystemBot(viewer)) return null;
  const groupId = getRealmById(db, viewer.realm_id)?.can_access_all_users_group as number | null | undefined;
  if (groupId === null || groupId === undefined || isUserInGroup(db, viewer.id, groupId)) return null;
  const rows = stmt(
    db,
    `SELECT ? AS id
     UNION SELECT id FROM user WHERE realm_id = ? AND bot_type IS NOT NULL
     UNION SELECT s2.user_id FROM subscription s1 JOIN subscription s2 ON s2.stream_id = s1.stream_id AND s2.active = 1
       WHERE s1.user_id = ? AND s1.active = 1
     UNION SELECT m2.user_id FROM direct_group_member m1 JOIN direct_group_member m2 ON m2.group_id = m1.group_id
       WHERE m1.user_id = ?`,
  ).all(viewer.id, viewer.realm_id, viewer.id, viewer.id) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

/** Zulip's check_can_access_user: oneself and bots always; everyone else as accessibleUsers says. */
export function canAccessUser(db: Db, viewer: UserRow, target: UserRow): boolean {
  if (viewer.id === target.id || target.bot_type !== null) return true;
  return accessibleUsers(db, viewer)?.has(target.id) ?? true;
}

/**
 * Zulip's check_sender_can_access_recipients: a direct message (sent now, scheduled, or being typed)
 * may only address users the sender can access. Otherwise a guest could reach anyone, and the
 * conversation it started would make them accessible.
 */
export function checkSenderCanAccessRecipients(db: Db, sender: UserRow, recipients: readonly UserRow[]): void {
  const access = accessibleUsers(db, sender);
  if (access === null) return;
  for (const u of recipients) {
    if (u.bot_type === null && !access.has(u.id)) throw errors.badRequest('You do not have permission to access some of the recipients.');
  }
}

/**
 * Active users who may access `subject` (Zulip's get_user_ids_who_can_access_user): who hears about
 * changes to them. Everyone when the organization does not limit access or the subject is a bot.
 */
export function userIdsWhoCanAccess(db: Db, subject: UserRow): number[] {
  const users = (stmt(db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1 ORDER BY id').all(subject.realm_id) as { id: number }[]).map((r) => r.id);
  const hidden = new Set(userIdsWhoCannotAccess(db, subject, users));
  return users.filter((id) => !hidden.has(id));
}

/** Of `ids`, those who may not access `subject` (a message's recipients who must not see its sender, say). */
export function userIdsWhoCannotAccess(db: Db, subject: UserRow, ids: readonly number[]): number[] {
  const groupId = getRealmById(db, subject.realm_id)?.can_access_all_users_group as number | null | undefined;
  if (subject.bot_type !== null || groupId === null || groupId === undefined) return [];
  // One member set for all (a send asks this of every recipient).
  const members = groupMemberSet(db, groupId);
  const outside = ids.filter((id) => id !== subject.id && !members.has(id));
  if (outside.length === 0) return [];
  // Those sharing a channel or a conversation with the subject may access it, as may the group's members.
  const sharing = new Set(
    (
      stmt(
        db,
        `SELECT s2.user_id AS id FROM subscription s1 JOIN subscription s2 ON s2.stream_id = s1.stream_id AND s2.active = 1
           WHERE s1.user_id = ? AND s1.active = 1
         UNION SELECT m2.user_id FROM direct_group_member m1 JOIN direct_group_member m2 ON m2.group_id = m1.group_id
           WHERE m1.user_id = ?`,
      ).all(subject.id, subject.id) as { id: number }[]
    ).map((r) => r.id),
  );
  return outside.filter((id) => !sharing.has(id));
}

/** What formatMessages needs to hide the senders `viewer` may not access (FormatOptions.senderAccess). */
export function senderAccessFor(app: App, viewer: UserRow): { accessible: ReadonlySet<number> | null; domain: string } {
  return { accessible: accessibleUsers(app.db, viewer), domain: fakeEmailDomain(app) };
}

/** How a user the viewer may not access is named and pictured (Zulip's INACCESSIBLE_USER_NAME, get_avatar_for_inaccessible_user). */
export const UNKNOWN_USER_NAME = 'Unknown user';
export const UNKNOWN_USER_AVATAR_URL = '/static/images/unknown-user-avatar.png';

/** Zulip's stand-in for a user the viewer may not access (get_data_for_inaccessible_user). */
export function inaccessibleUser(userId: number, host: string, nowIso: string): Record<string, unknown> {
  return {
    email: `user${userId}@${host}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_bot: false,
    role: 400,
    is_active: true,
    full_name: UNKNOWN_USER_NAME,
    timezone: '',
    date_joined: nowIso,
    delivery_email: null,
    avatar_url: UNKNOWN_USER_AVATAR_URL,
    profile_data: {},
  };
}

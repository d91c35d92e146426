// Which users a user may access (Zulip's can_access_all_users_group): members of that group see
// everyone; others see themselves, the subscribers of their channels and their direct-message
// partners. User lists show the rest as "Unknown user" placeholders.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { isUserInGroup } from './groups';
import { getRealmById } from './realm';
import type { UserRow } from './users';

/** Ids of the users `viewer` may access, or null for everyone. */
export function accessibleUsers(db: Db, viewer: UserRow): Set<number> | null {
  const groupId = getRealmById(db, viewer.realm_id)?.can_access_all_users_group as number | null | undefined;
  if (groupId === null || groupId === undefined || isUserInGroup(db, viewer.id, groupId)) return null;
  const rows = stmt(
    db,
    `SELECT ? AS id
     UNION SELECT s2.user_id FROM subscription s1 JOIN subscription s2 ON s2.stream_id = s1.stream_id AND s2.active = 1
       WHERE s1.user_id = ? AND s1.active = 1
     UNION SELECT m2.user_id FROM direct_group_member m1 JOIN direct_group_member m2 ON m2.group_id = m1.group_id
       WHERE m1.user_id = ?`,
  ).all(viewer.id, viewer.id, viewer.id) as { id: number }[];
  return new Set(rows.map((r) => r.id));
}

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
    full_name: 'Unknown user',
    timezone: '',
    date_joined: nowIso,
    delivery_email: null,
    avatar_url: '/static/images/unknown-user-avatar.png',
    profile_data: {},
  };
}

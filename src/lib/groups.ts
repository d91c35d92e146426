// User groups as permission holders: recursive membership through subgroups, and group-setting
// values (a group id, or an anonymous {direct_members, direct_subgroups} group) as Zulip models them.
import * as v from 'valibot';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { errors } from '../http/errors';
import { zInt } from '../http/params';
import { NOT_SYSTEM_BOT_SQL } from './users';

/** A group-setting value as the API takes and shows it. */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/** valibot schema for a group-setting parameter. */
export const groupSettingSchema = v.union(
  [
    zInt({ min: 0 }),
    v.strictObject({
      direct_members: v.array(zInt({ min: 0 })),
      direct_subgroups: v.array(zInt({ min: 0 })),
    }),
  ],
  '{var_name} is not a valid group setting value',
);

/** Whether active user `userId` belongs to group `groupId`, directly or through subgroups. */
export function isUserInGroup(db: Db, userId: number, groupId: number): boolean {
  // Permission checks ask this on every send: answered from the member set of the group (below).
  return groupMemberSet(db, groupId).has(userId);
}

/** The active members of `groupId`, recursively, kept until a membership, subgroup or user row changes. */
export function groupMemberSet(db: Db, groupId: number): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(db, 'groupMembers', GROUP_TABLES).get(groupId, () => new Set(groupMemberIds(db, groupId)));
}

const GROUP_TABLES = ['user_group_member', 'user_group_subgroup', 'user'] as const;

/** Ids of the active users in group `groupId`, recursively. */
export function groupMemberIds(db: Db, groupId: number): number[] {
  return watchedCache<number, number[]>(db, 'groupMemberIds', GROUP_TABLES).get(groupId, () =>
    Object.freeze(
      (
        stmt(
          db,
          `WITH RECURSIVE g(id) AS (
             SELECT ? UNION SELECT s.subgroup_id FROM user_group_subgroup s JOIN g ON s.supergroup_id = g.id
           )
           SELECT DISTINCT m.user_id AS id FROM user_group_member m JOIN g ON m.group_id = g.id JOIN user u ON u.id = m.user_id
           WHERE u.is_active = 1 ORDER BY m.user_id`,
        ).all(groupId) as { id: number }[]
      ).map((r) => r.id),
    ) as number[],
  );
}

interface GroupRow {
  id: number;
  realm_id: number;
  name: string | null;
  named: number;
  is_system_group: number;
  deactivated: number;
}

export function findGroup(db: Db, realmId: number, id: number): GroupRow | null {
  return (stmt(db, 'SELECT * FROM user_group WHERE realm_id = ? AND id = ?').get(realmId, id) as GroupRow | undefined) ?? null;
}

/**
 * The API form of the group-setting value stored as group `groupId`. Every channel and group object
 * carries a dozen of these (/register formats every channel twice): kept in memory until a group, a
 * membership or a subgroup changes; frozen, as it is shared.
 */
export function groupSettingForApi(db: Db, groupId: number): GroupSettingValue {
  return watchedCache<number, GroupSettingValue>(db, 'groupSettingForApi', ['user_group', 'user_group_member', 'user_group_subgroup']).get(groupId, () =>
    readGroupSetting(db, groupId),
  );
}

function readGroupSetting(db: Db, groupId: number): GroupSettingValue {
  const g = stmt(db, 'SELECT named FROM user_group WHERE id = ?').get(groupId) as { named: number } | undefined;
  if (!g || g.named) return groupId;
  const members = (stmt(db, 'SELECT user_id FROM user_group_member WHERE group_id = ? ORDER BY user_id').all(groupId) as { user_id: number }[]).map(
    (r) => r.user_id,
  );
  const subgroups = (
    stmt(db, 'SELECT subgroup_id FROM user_group_subgroup WHERE supergroup_id = ? ORDER BY subgroup_id').all(groupId) as { subgroup_id: number }[]
  ).map((r) => r.subgroup_id);
  return Object.freeze({ direct_members: Object.freeze(members) as number[], direct_subgroups: Object.freeze(subgroups) as number[] });
}

export interface GroupSettingRules {
  allowInternet?: boolean;
  allowNobody?: boolean;
  allowEveryone?: boolean;
}

/**
 * Stores a group-setting value and returns the group id to keep in the setting column: a named group's
 * own id, or a new anonymous group. An anonymous value with exactly one subgroup and no members is
 * that subgroup, as in Zulip.
 */
export function storeGroupSetting(
  db: Db,
  realmId: number,
  settingName: string,
  value: GroupSettingValue,
  now: number,
  rules: GroupSettingRules = {},
): number {
  const checkGroup = (id: number) => {
    const g = findGroup(db, realmId, id);
    if (!g || !g.named) throw errors.badRequest('Invalid user group ID: {id}', { id });
    if (g.is_system_group) {
      if (g.name === 'role:internet' && !rules.allowInternet) {
        throw errors.badRequest("'{setting_name}' setting cannot be set to 'role:internet' group.", { setting_name: settingName });
      }
      if (g.name === 'role:nobody' && rules.allowNobody === false) {
        throw errors.badRequest("'{setting_name}' setting cannot be set to 'role:nobody' group.", { setting_name: settingName });
      }
      if (g.name === 'role:everyone' && rules.allowEveryone === false) {
        throw errors.badRequest("'{setting_name}' setting cannot be set to 'role:everyone' group.", { setting_name: settingName });
      }
    }
    return id;
  };
  if (typeof value === 'number') return checkGroup(value);
  const members = [...new Set(value.direct_members)].sort((a, b) => a - b);
  const subgroups = [...new Set(value.direct_subgroups)].sort((a, b) => a - b);
  if (members.length === 0 && subgroups.length === 1) return checkGroup(subgroups[0]);
  for (const id of subgroups) checkGroup(id);
  for (const id of members) {
    // Not the system bots (cross-realm in Zulip, outside the organization's groups).
    const u = stmt(db, `SELECT is_active FROM user u WHERE realm_id = ? AND id = ? AND ${NOT_SYSTEM_BOT_SQL}`).get(realmId, id) as { is_active: number } | undefined;
    if (!u) throw errors.badRequest('Invalid user ID: {id}', { id });
  }
  if (members.length === 0 && subgroups.length === 0) {
    const nobody = stmt(db, "SELECT id FROM user_group WHERE realm_id = ? AND name = 'role:nobody'").get(realmId) as { id: number };
    if (rules.allowNobody === false) {
      throw errors.badRequest("'{setting_name}' setting cannot be set to 'role:nobody' group.", { setting_name: settingName });
    }
    return nobody.id;
  }
  const id = Number(
    stmt(db, 'INSERT INTO user_group (realm_id, name, named, date_created) VALUES (?, NULL, 0, ?)').run(realmId, now).lastInsertRowid,
  );
  const addMember = stmt(db, 'INSERT INTO user_group_member (group_id, user_id) VALUES (?, ?)');
  for (const m of members) addMember.run(id, m);
  const addSub = stmt(db, 'INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)');
  for (const s of subgroups) addSub.run(id, s);
  return id;
}

// Read side of named user groups: lookups, membership lists, the API dictionary of GET /user_groups
// and the register state, and where a group is in use (deactivation objections).
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { groupSettingForApi } from './groups';
import { STREAM_GROUP_SETTINGS } from './streams';
import { REALM_CHANGEABLE_GROUP_SETTINGS } from './realm-settings';

/** The group settings every named group carries, with Zulip's rules and creation defaults. */
export const GROUP_SETTINGS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;
export type GroupSetting = (typeof GROUP_SETTINGS)[number];

/** Zulip's UserGroup.GROUP_PERMISSION_SETTINGS: default value and whether role:everyone is allowed. */
export const GROUP_SETTING_RULES: Record<GroupSetting, { default: string; allowEveryone: boolean }> = {
  can_add_members_group: { default: 'group_creator', allowEveryone: false },
  can_join_group: { default: 'role:nobody', allowEveryone: false },
  can_leave_group: { default: 'role:everyone', allowEveryone: true },
  can_manage_group: { default: 'group_creator', allowEveryone: false },
  can_mention_group: { default: 'role:everyone', allowEveryone: true },
  can_remove_members_group: { default: 'role:nobody', allowEveryone: false },
};

export const MAX_GROUP_NAME_LENGTH = 100;
export const INVALID_GROUP_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

export interface UserGroupRow {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  named: number;
  is_system_group: number;
  deactivated: number;
  date_created: number | null;
  creator_id: number | null;
  can_add_members_group: number;
  can_join_group: number;
  can_leave_group: number;
  can_manage_group: number;
  can_mention_group: number;
  can_remove_members_group: number;
}

/** A named group (system or user-defined) of the realm by id, or null (anonymous groups are not groups). */
export function findNamedGroup(db: Db, realmId: number, id: number): UserGroupRow | null {
  return (stmt(db, 'SELECT * FROM user_group WHERE realm_id = ? AND id = ? AND named = 1').get(realmId, id) as UserGroupRow | undefined) ?? null;
}

/** A named group by exact name. */
export function findGroupByName(db: Db, realmId: number, name: string): UserGroupRow | null {
  return (stmt(db, 'SELECT * FROM user_group WHERE realm_id = ? AND name = ?').get(realmId, name) as UserGroupRow | undefined) ?? null;
}

/** Direct members of a group; deactivated users are left out unless asked for. */
export function directMemberIds(db: Db, groupId: number, opts: { includeDeactivated?: boolean } = {}): number[] {
  const sql = opts.includeDeactivated
    ? 'SELECT user_id AS id FROM user_group_member WHERE group_id = ? ORDER BY user_id'
    : 'SELECT m.user_id AS id FROM user_group_member m JOIN user u ON u.id = m.user_id WHERE m.group_id = ? AND u.is_active = 1 ORDER BY m.user_id';
  return (stmt(db, sql).all(groupId) as { id: number }[]).map((r) => r.id);
}

/** Direct subgroups of a group. */
export function directSubgroupIds(db: Db, groupId: number): number[] {
  return (stmt(db, 'SELECT subgroup_id AS id FROM user_group_subgroup WHERE supergroup_id = ? ORDER BY subgroup_id').all(groupId) as { id: number }[]).map(
    (r) => r.id,
  );
}

/** Every group reachable below `groupId` through subgroups (not counting itself). */
export function recursiveSubgroupIds(db: Db, groupId: number): number[] {
  return (
    stmt(
      db,
      `WITH RECURSIVE g(id) AS (
         SELECT subgroup_id FROM user_group_subgroup WHERE supergroup_id = ?
         UNION SELECT s.subgroup_id FROM user_group_subgroup s JOIN g ON s.supergroup_id = g.id
       ) SELECT id FROM g ORDER BY id`,
    ).all(groupId) as { id: number }[]
  ).map((r) => r.id);
}

/** Whether the user is a direct member (deactivated users are never members). */
export function isDirectMember(db: Db, groupId: number, userId: number): boolean {
  return (
    stmt(db, 'SELECT 1 FROM user_group_member m JOIN user u ON u.id = m.user_id WHERE m.group_id = ? AND m.user_id = ? AND u.is_active = 1').get(
      groupId,
      userId,
    ) !== undefined
  );
}

/** The API dictionary of a named group (GET /user_groups, register, user_group add events). */
export function formatGroup(db: Db, g: UserGroupRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: g.id,
    name: g.name,
    description: g.description,
    date_created: g.date_created ?? null,
    creator_id: g.creator_id ?? null,
    members: directMemberIds(db, g.id),
    direct_subgroup_ids: directSubgroupIds(db, g.id),
    is_system_group: g.is_system_group === 1,
    deactivated: g.deactivated === 1,
  };
  for (const s of GROUP_SETTINGS) out[s] = groupSettingForApi(db, g[s]);
  return out;
}

/** Named groups of the realm in id order. */
export function listGroups(db: Db, realmId: number, opts: { includeDeactivated: boolean }): Record<string, unknown>[] {
  const rows = stmt(db, 'SELECT * FROM user_group WHERE realm_id = ? AND named = 1 ORDER BY id').all(realmId) as UserGroupRow[];
  return rows.filter((g) => opts.includeDeactivated || !g.deactivated).map((g) => formatGroup(db, g));
}

/** Whether a setting holding group `settingGroupId` uses `groupId` (itself, or as a direct subgroup of an anonymous value). */
function settingUses(db: Db, settingGroupId: number | null, groupId: number): boolean {
  if (settingGroupId === null) return false;
  if (settingGroupId === groupId) return true;
  return (
    stmt(
      db,
      `SELECT 1 FROM user_group g JOIN user_group_subgroup s ON s.supergroup_id = g.id
       WHERE g.id = ? AND g.named = 0 AND s.subgroup_id = ?`,
    ).get(settingGroupId, groupId) !== undefined
  );
}

// The organization's group settings, in the (alphabetical) order objections list them.
const REALM_SETTING_COLUMNS = [...REALM_CHANGEABLE_GROUP_SETTINGS].sort();

/**
 * Where a group is in use (Zulip's objections of CANNOT_DEACTIVATE_GROUP_IN_USE, in its order): as a
 * subgroup of active named groups, in active channels' settings, other active groups' settings, and
 * organization settings.
 */
export function groupUsage(db: Db, realmId: number, groupId: number): Record<string, unknown>[] {
  const objections: Record<string, unknown>[] = [];
  const supergroupIds = (
    stmt(
      db,
      `SELECT g.id FROM user_group_subgroup s JOIN user_group g ON g.id = s.supergroup_id
       WHERE s.subgroup_id = ? AND g.named = 1 AND g.deactivated = 0 ORDER BY g.id`,
    ).all(groupId) as { id: number }[]
  ).map((r) => r.id);
  if (supergroupIds.length) objections.push({ type: 'subgroup', supergroup_ids: supergroupIds });
  const streams = stmt(db, 'SELECT * FROM stream WHERE realm_id = ? AND deactivated = 0 ORDER BY id').all(realmId) as Record<string, number | null>[];
  for (const s of streams) {
    const settings = STREAM_GROUP_SETTINGS.filter((c) => settingUses(db, s[c] ?? null, groupId));
    if (settings.length) objections.push({ type: 'channel', channel_id: s.id, settings });
  }
  const groups = stmt(db, 'SELECT * FROM user_group WHERE realm_id = ? AND named = 1 AND deactivated = 0 AND id != ? ORDER BY id').all(
    realmId,
    groupId,
  ) as UserGroupRow[];
  for (const g of groups) {
    const settings = GROUP_SETTINGS.filter((c) => settingUses(db, g[c], groupId));
    if (settings.length) objections.push({ type: 'user_group', group_id: g.id, settings });
  }
  const realm = stmt(db, 'SELECT * FROM realm WHERE id = ?').get(realmId) as Record<string, number | null>;
  const realmSettings = REALM_SETTING_COLUMNS.filter((c) => settingUses(db, realm[c] ?? null, groupId));
  if (realmSettings.length) objections.push({ type: 'realm', settings: realmSettings });
  return objections;
}

// User groups: create, edit, membership and subgroups, deactivation, and the system groups that
// follow roles. check* validates and checks access inside the write; do* writes and queues events.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { groupSettingForApi, isUserInGroup, storeGroupSetting, type GroupSettingValue } from '../lib/groups';
import { getRealmById, systemGroupId } from '../lib/realm';
import { ROLE, systemGroupForRole } from '../lib/roles';
import {
  directMemberIds,
  directSubgroupIds,
  findGroupByName,
  findNamedGroup,
  formatGroup,
  GROUP_SETTING_RULES,
  GROUP_SETTINGS,
  groupUsage,
  INVALID_GROUP_NAME_PREFIXES,
  MAX_GROUP_NAME_LENGTH,
  recursiveSubgroupIds,
  type GroupSetting,
  type UserGroupRow,
} from '../lib/user-groups';
import { isBot, isGuest, NOT_SYSTEM_BOT_SQL, type UserRow } from '../lib/users';
import { activeUserIds } from './users';

export type SettingChange = { new: GroupSettingValue; old?: GroupSettingValue } | GroupSettingValue;

/** Zulip's require_member_or_admin: guests and bots are refused (bots only where Zulip lets them in). */
export function requireMemberOrAdmin(user: UserRow, opts: { allowBots?: boolean } = {}): void {
  if (isGuest(user)) throw errors.notForGuests();
  if (isBot(user) && !opts.allowBots) throw errors.notForBots();
}

/** Zulip's check_user_group_name; `exceptId` is the group being renamed. */
export function checkGroupName(app: App, realmId: number, name: string): string {
  if (name.trim() === '') throw errors.badRequest("User group name can't be empty!");
  if ([...name].length > MAX_GROUP_NAME_LENGTH) {
    throw errors.badRequest('User group name cannot exceed {max_length} characters.', { max_length: MAX_GROUP_NAME_LENGTH });
  }
  for (const prefix of INVALID_GROUP_NAME_PREFIXES) {
    if (name.startsWith(prefix)) throw errors.badRequest("User group name cannot start with '{prefix}'.", { prefix });
  }
  if (findGroupByName(app.db, realmId, name)) throw errors.badRequest("User group '{group_name}' already exists.", { group_name: name });
  return name;
}

/** A named group for reading: unknown ids and anonymous groups are "Invalid user group". */
export function accessGroupForRead(app: App, user: UserRow, groupId: number): UserGroupRow {
  const g = findNamedGroup(app.db, user.realm_id, groupId);
  if (!g) throw errors.badRequest('Invalid user group');
  return g;
}

/** Whether the user holds `setting` on the group, counting the managers (group and organization). */
function hasGroupPermission(app: App, user: UserRow, g: UserGroupRow, setting: GroupSetting): boolean {
  const realm = getRealmById(app.db, user.realm_id);
  if (realm && typeof realm.can_manage_all_groups === 'number' && isUserInGroup(app.db, user.id, realm.can_manage_all_groups)) return true;
  if (isUserInGroup(app.db, user.id, g.can_manage_group)) return true;
  return setting !== 'can_manage_group' && isUserInGroup(app.db, user.id, g[setting]);
}

/** Zulip's access_user_group_for_update: system groups are never edited directly. */
export function accessGroupForUpdate(
  app: App,
  user: UserRow,
  groupId: number,
  setting: GroupSetting,
  opts: { allowDeactivated?: boolean } = {},
): UserGroupRow {
  const g = accessGroupForRead(app, user, groupId);
  if (g.deactivated && !opts.allowDeactivated) throw errors.badRequest('User group is deactivated.');
  if (g.is_system_group) throw errors.insufficientPermission();
  if (!hasGroupPermission(app, user, g, setting)) throw errors.insufficientPermission();
  return g;
}

function userIdsToUsers(app: App, realmId: number, ids: number[]): number[] {
  for (const id of ids) {
    // Not the system bots: in Zulip they are cross-realm, members of none of the organization's groups.
    const u = stmt(app.db, `SELECT is_active FROM user u WHERE realm_id = ? AND id = ? AND ${NOT_SYSTEM_BOT_SQL}`).get(realmId, id) as { is_active: number } | undefined;
    if (!u || !u.is_active) throw errors.badRequest('Invalid user ID: {user_id}', { user_id: id });
  }
  return [...new Set(ids)];
}

function groupIdsAsSubgroups(app: App, realmId: number, ids: number[]): number[] {
  for (const id of ids) {
    const g = findNamedGroup(app.db, realmId, id);
    if (!g) throw errors.badRequest('Invalid user group ID: {group_id}', { group_id: id });
    if (g.deactivated) throw errors.badRequest('User group is deactivated.');
  }
  return [...new Set(ids)];
}

function sendToRealm(app: App, realmId: number, event: Record<string, unknown> & { type: string }): void {
  app.batch.onCommit(() => app.events.send(event, activeUserIds(app, realmId)));
}

function storeSetting(app: App, realmId: number, setting: GroupSetting, value: GroupSettingValue, now: number): number {
  // Deactivated groups cannot be a setting's value or part of it (Zulip's for_setting access).
  for (const id of typeof value === 'number' ? [value] : value.direct_subgroups) {
    if (findNamedGroup(app.db, realmId, id)?.deactivated) throw errors.badRequest('User group is deactivated.');
  }
  return storeGroupSetting(app.db, realmId, setting, value, now, {
    allowInternet: false,
    allowNobody: true,
    allowEveryone: GROUP_SETTING_RULES[setting].allowEveryone,
  });
}

export interface NewUserGroup {
  name: string;
  description: string;
  members: number[];
  subgroups: number[];
  settings: Partial<Record<GroupSetting, GroupSettingValue>>;
}

/** POST /user_groups/create → the new group's id. */
export function doCreateUserGroup(app: App, user: UserRow, spec: NewUserGroup): number {
  requireMemberOrAdmin(user);
  return app.batch.write(() => {
    const realm = getRealmById(app.db, user.realm_id);
    if (!realm || typeof realm.can_create_groups !== 'number' || !isUserInGroup(app.db, user.id, realm.can_create_groups)) {
      throw errors.insufficientPermission();
    }
    const name = checkGroupName(app, user.realm_id, spec.name);
    const members = userIdsToUsers(app, user.realm_id, spec.members);
    const subgroups = groupIdsAsSubgroups(app, user.realm_id, spec.subgroups);
    const now = nowSeconds(app.clock);
    const settingIds = {} as Record<GroupSetting, number>;
    for (const s of GROUP_SETTINGS) {
      const given = spec.settings[s];
      const def = GROUP_SETTING_RULES[s].default;
      const value: GroupSettingValue =
        given !== undefined
          ? given
          : def === 'group_creator'
            ? { direct_members: [user.id], direct_subgroups: [] }
            : systemGroupId(app.db, user.realm_id, def);
      settingIds[s] = storeSetting(app, user.realm_id, s, value, now);
    }
    const id = Number(
      stmt(
        app.db,
        `INSERT INTO user_group (realm_id, name, description, named, is_system_group, deactivated, date_created, creator_id,
           can_add_members_group, can_join_group, can_leave_group, can_manage_group, can_mention_group, can_remove_members_group)
         VALUES (?, ?, ?, 1, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        user.realm_id,
        name,
        spec.description,
        now,
        user.id,
        settingIds.can_add_members_group,
        settingIds.can_join_group,
        settingIds.can_leave_group,
        settingIds.can_manage_group,
        settingIds.can_mention_group,
        settingIds.can_remove_members_group,
      ).lastInsertRowid,
    );
    const addMember = stmt(app.db, 'INSERT INTO user_group_member (group_id, user_id) VALUES (?, ?)');
    for (const m of members) addMember.run(id, m);
    const addSub = stmt(app.db, 'INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)');
    for (const s of subgroups) addSub.run(id, s);
    const group = formatGroup(app.db, findNamedGroup(app.db, user.realm_id, id) as UserGroupRow);
    sendToRealm(app, user.realm_id, { type: 'user_group', op: 'add', group });
    return id;
  });
}

function normalizeSetting(v: GroupSettingValue): string {
  if (typeof v === 'number') return JSON.stringify(v);
  const members = [...new Set(v.direct_members)].sort((a, b) => a - b);
  const subgroups = [...new Set(v.direct_subgroups)].sort((a, b) => a - b);
  if (members.length === 0 && subgroups.length === 1) return JSON.stringify(subgroups[0]);
  return JSON.stringify({ direct_members: members, direct_subgroups: subgroups });
}

export interface UserGroupChange {
  name?: string;
  description?: string;
  settings: Partial<Record<GroupSetting, SettingChange>>;
}

/** PATCH /user_groups/{id}: name, description and group settings ({new, old}). Deactivated groups may be edited. */
export function doUpdateUserGroup(app: App, user: UserRow, groupId: number, change: UserGroupChange): void {
  requireMemberOrAdmin(user);
  if (change.name === undefined && change.description === undefined && Object.keys(change.settings).length === 0) {
    throw errors.badRequest('No new data supplied');
  }
  app.batch.write(() => {
    const g = accessGroupForUpdate(app, user, groupId, 'can_manage_group', { allowDeactivated: true });
    if (change.name !== undefined && change.name !== g.name) {
      const name = checkGroupName(app, user.realm_id, change.name);
      stmt(app.db, 'UPDATE user_group SET name = ? WHERE id = ?').run(name, g.id);
      const event: Record<string, unknown> & { type: string } = { type: 'user_group', op: 'update', group_id: g.id, data: { name } };
      // zulip-compat: the registry hides a deactivated group's rename from clients that dropped it.
      if (g.deactivated) event.deactivated = true;
      sendToRealm(app, user.realm_id, event);
    }
    if (change.description !== undefined && change.description !== g.description) {
      stmt(app.db, 'UPDATE user_group SET description = ? WHERE id = ?').run(change.description, g.id);
      sendToRealm(app, user.realm_id, { type: 'user_group', op: 'update', group_id: g.id, data: { description: change.description } });
    }
    const now = nowSeconds(app.clock);
    for (const s of GROUP_SETTINGS) {
      const raw = change.settings[s];
      if (raw === undefined) continue;
      const req = typeof raw === 'object' && 'new' in raw ? raw : { new: raw as GroupSettingValue };
      const current = groupSettingForApi(app.db, g[s]);
      if (req.old !== undefined && normalizeSetting(req.old) !== normalizeSetting(current)) {
        throw new JsonableError("'old' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
      }
      if (normalizeSetting(req.new) === normalizeSetting(current)) continue;
      const id = storeSetting(app, user.realm_id, s, req.new, now);
      // Column names come from the constant GROUP_SETTINGS list, never from input.
      app.db.prepare(`UPDATE user_group SET ${s} = ? WHERE id = ?`).run(id, g.id);
      sendToRealm(app, user.realm_id, { type: 'user_group', op: 'update', group_id: g.id, data: { [s]: groupSettingForApi(app.db, id) } });
    }
  });
}

function addMembers(app: App, g: UserGroupRow, userIds: number[]): void {
  const existing = new Set(directMemberIds(app.db, g.id));
  for (const id of userIds) {
    if (existing.has(id)) throw errors.badRequest('User {user_id} is already a member of this group', { user_id: id });
  }
  // Deactivated users keep their rows; re-adding one only needs the row to exist.
  const ins = stmt(app.db, 'INSERT OR IGNORE INTO user_group_member (group_id, user_id) VALUES (?, ?)');
  for (const id of userIds) ins.run(g.id, id);
  sendToRealm(app, g.realm_id, { type: 'user_group', op: 'add_members', group_id: g.id, user_ids: userIds });
}

function removeMembers(app: App, g: UserGroupRow, userIds: number[]): void {
  const existing = new Set(directMemberIds(app.db, g.id));
  for (const id of userIds) {
    if (!existing.has(id)) throw errors.badRequest("There is no member '{user_id}' in this user group", { user_id: id });
  }
  const del = stmt(app.db, 'DELETE FROM user_group_member WHERE group_id = ? AND user_id = ?');
  for (const id of userIds) del.run(g.id, id);
  sendToRealm(app, g.realm_id, { type: 'user_group', op: 'remove_members', group_id: g.id, user_ids: userIds });
}

function addSubgroups(app: App, g: UserGroupRow, ids: number[]): void {
  const existing = new Set(directSubgroupIds(app.db, g.id));
  for (const id of ids) {
    if (existing.has(id)) throw errors.badRequest('User group {group_id} is already a subgroup of this group.', { group_id: id });
  }
  for (const id of ids) {
    if (id === g.id || recursiveSubgroupIds(app.db, id).includes(g.id)) {
      throw errors.badRequest('User group {user_group_id} is already a subgroup of one of the passed subgroups.', { user_group_id: g.id });
    }
  }
  const ins = stmt(app.db, 'INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)');
  for (const id of ids) ins.run(g.id, id);
  sendToRealm(app, g.realm_id, { type: 'user_group', op: 'add_subgroups', group_id: g.id, direct_subgroup_ids: ids });
}

function removeSubgroups(app: App, g: UserGroupRow, ids: number[]): void {
  const existing = new Set(directSubgroupIds(app.db, g.id));
  for (const id of ids) {
    if (!existing.has(id)) throw errors.badRequest('User group {group_id} is not a subgroup of this group.', { group_id: id });
  }
  const del = stmt(app.db, 'DELETE FROM user_group_subgroup WHERE supergroup_id = ? AND subgroup_id = ?');
  for (const id of ids) del.run(g.id, id);
  sendToRealm(app, g.realm_id, { type: 'user_group', op: 'remove_subgroups', group_id: g.id, direct_subgroup_ids: ids });
}

/** Access for adding users: self-join through can_join_group, else can_add_members_group. */
function accessForAdd(app: App, user: UserRow, groupId: number, ids: number[]): UserGroupRow {
  if (ids.length === 1 && ids[0] === user.id) {
    try {
      return accessGroupForUpdate(app, user, groupId, 'can_join_group');
    } catch (e) {
      if (!(e instanceof JsonableError) || e.message !== 'Insufficient permission') throw e;
    }
  }
  return accessGroupForUpdate(app, user, groupId, 'can_add_members_group');
}

/** Access for removing users: self-leave through can_leave_group, else can_remove_members_group. */
function accessForRemove(app: App, user: UserRow, groupId: number, ids: number[]): UserGroupRow {
  if (ids.length === 1 && ids[0] === user.id) {
    try {
      return accessGroupForUpdate(app, user, groupId, 'can_leave_group');
    } catch (e) {
      if (!(e instanceof JsonableError) || e.message !== 'Insufficient permission') throw e;
    }
  }
  return accessGroupForUpdate(app, user, groupId, 'can_remove_members_group');
}

export interface MembershipChange {
  add: number[];
  delete: number[];
  addSubgroups: number[];
  deleteSubgroups: number[];
}

/** POST /user_groups/{id}/members: users and (newer Zulip) subgroups, applied atomically. */
export function doUpdateGroupMembers(app: App, user: UserRow, groupId: number, change: MembershipChange): void {
  requireMemberOrAdmin(user);
  if (!change.add.length && !change.delete.length && !change.addSubgroups.length && !change.deleteSubgroups.length) {
    throw errors.badRequest('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
  }
  app.batch.write(() => {
    if (change.add.length) {
      const g = accessForAdd(app, user, groupId, change.add);
      addMembers(app, g, userIdsToUsers(app, user.realm_id, change.add));
    }
    if (change.delete.length) {
      const ids = [...new Set(change.delete)];
      for (const id of ids) {
        if (!stmt(app.db, 'SELECT 1 FROM user WHERE realm_id = ? AND id = ?').get(user.realm_id, id)) {
          throw errors.badRequest('Invalid user ID: {user_id}', { user_id: id });
        }
      }
      removeMembers(app, accessForRemove(app, user, groupId, ids), ids);
    }
    if (change.addSubgroups.length || change.deleteSubgroups.length) {
      updateSubgroups(app, user, groupId, { add: change.addSubgroups, delete: change.deleteSubgroups }, { allowDeactivated: false });
    }
  });
}

function updateSubgroups(app: App, user: UserRow, groupId: number, change: { add: number[]; delete: number[] }, opts: { allowDeactivated: boolean }) {
  if (change.add.length) {
    const ids = groupIdsAsSubgroups(app, user.realm_id, change.add);
    addSubgroups(app, accessGroupForUpdate(app, user, groupId, 'can_add_members_group', opts), ids);
  }
  if (change.delete.length) {
    const ids = groupIdsAsSubgroups(app, user.realm_id, change.delete);
    removeSubgroups(app, accessGroupForUpdate(app, user, groupId, 'can_remove_members_group', opts), ids);
  }
}

/** POST /user_groups/{id}/subgroups: allowed on deactivated groups and for bots (Zulip FL 391, 496). */
export function doUpdateSubgroups(app: App, user: UserRow, groupId: number, change: { add: number[]; delete: number[] }): void {
  requireMemberOrAdmin(user, { allowBots: true });
  if (!change.add.length && !change.delete.length) {
    throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
  }
  app.batch.write(() => updateSubgroups(app, user, groupId, change, { allowDeactivated: true }));
}

/** POST /user_groups/{id}/deactivate: refused while any setting uses the group. */
export function doDeactivateUserGroup(app: App, user: UserRow, groupId: number): void {
  requireMemberOrAdmin(user);
  app.batch.write(() => {
    const g = accessGroupForUpdate(app, user, groupId, 'can_manage_group');
    const objections = groupUsage(app.db, user.realm_id, g.id);
    if (objections.length) {
      throw new JsonableError('Cannot deactivate user group in use.', { code: 'CANNOT_DEACTIVATE_GROUP_IN_USE', data: { objections } });
    }
    stmt(app.db, 'UPDATE user_group SET deactivated = 1 WHERE id = ?').run(g.id);
    // The registry gives clients with include_deactivated_groups the update and the others the remove.
    sendToRealm(app, user.realm_id, { type: 'user_group', op: 'update', group_id: g.id, data: { deactivated: true } });
    sendToRealm(app, user.realm_id, { type: 'user_group', op: 'remove', group_id: g.id });
  });
}

/**
 * Moves a user's direct system-group membership from `oldRole`'s group to `newRole`'s, with Zulip's
 * events (do_change_user_role: remove_members, add_members, then the full-members update when the
 * member role is involved). A new user (`oldRole` null) gets add_members only (do_create_user), sent
 * after the caller's realm_user add.
 */
export function syncSystemGroupsForRole(app: App, target: UserRow, oldRole: number | null, newRole: number): void {
  const before = oldRole === null ? null : systemGroupForRole(oldRole);
  const after = systemGroupForRole(newRole);
  if (before !== after) {
    if (before !== null) {
      const gid = systemGroupId(app.db, target.realm_id, before);
      stmt(app.db, 'DELETE FROM user_group_member WHERE group_id = ? AND user_id = ?').run(gid, target.id);
    }
    const gid = systemGroupId(app.db, target.realm_id, after);
    stmt(app.db, 'INSERT OR IGNORE INTO user_group_member (group_id, user_id) VALUES (?, ?)').run(gid, target.id);
    // As Zulip's do_change_user_role (remove, then add) and do_create_user (add, after realm_user add).
    if (before !== null) {
      sendToRealm(app, target.realm_id, { type: 'user_group', op: 'remove_members', group_id: systemGroupId(app.db, target.realm_id, before), user_ids: [target.id] });
    }
    sendToRealm(app, target.realm_id, { type: 'user_group', op: 'add_members', group_id: gid, user_ids: [target.id] });
  }
  if (newRole === ROLE.MEMBER || oldRole === ROLE.MEMBER) updateFullMembersGroup(app, target.realm_id, [target.id]);
}

/**
 * Zulip's is_provisional_member for a member: the account is fewer whole days old than the
 * organization's waiting_period_threshold.
 */
export function isProvisionalMember(now: number, dateJoined: number, thresholdDays: number): boolean {
  return Math.floor((now - dateJoined) / 86400) < thresholdDays;
}

/**
 * Zulip's update_users_in_full_members_system_group: role:fullmembers holds directly exactly the
 * direct members of role:members with the member role who are past the waiting period. Looks at
 * `userIds` only when given, else at everyone. Removals, then additions, each one user_group event
 * to the whole organization.
 */
export function updateFullMembersGroup(app: App, realmId: number, userIds: readonly number[] | null): void {
  const realm = getRealmById(app.db, realmId);
  if (!realm) return;
  const threshold = realm.waiting_period_threshold as number;
  const now = nowSeconds(app.clock);
  const full = systemGroupId(app.db, realmId, 'role:fullmembers');
  const members = systemGroupId(app.db, realmId, 'role:members');
  const only = userIds === null ? '' : ` AND u.id IN (SELECT value FROM json_each(?))`;
  const args = userIds === null ? [] : [JSON.stringify(userIds)];
  const directOf = (gid: number) =>
    stmt(app.db, `SELECT u.id, u.role, u.date_joined FROM user_group_member m JOIN user u ON u.id = m.user_id WHERE m.group_id = ?${only} ORDER BY u.id`).all(
      gid,
      ...args,
    ) as { id: number; role: number; date_joined: number }[];
  const fullNow = directOf(full);
  const fullIds = new Set(fullNow.map((u) => u.id));
  const provisional = (u: { date_joined: number }) => isProvisionalMember(now, u.date_joined, threshold);
  const removed = fullNow.filter((u) => u.role !== ROLE.MEMBER || provisional(u)).map((u) => u.id);
  const added = directOf(members)
    .filter((u) => !fullIds.has(u.id) && !provisional(u))
    .map((u) => u.id);
  if (removed.length) {
    const del = stmt(app.db, 'DELETE FROM user_group_member WHERE group_id = ? AND user_id = ?');
    for (const id of removed) del.run(full, id);
    sendToRealm(app, realmId, { type: 'user_group', op: 'remove_members', group_id: full, user_ids: removed });
  }
  if (added.length) {
    const ins = stmt(app.db, 'INSERT OR IGNORE INTO user_group_member (group_id, user_id) VALUES (?, ?)');
    for (const id of added) ins.run(full, id);
    sendToRealm(app, realmId, { type: 'user_group', op: 'add_members', group_id: full, user_ids: added });
  }
}

/**
 * Zulip's promote_new_full_members (a daily job there; here with the hourly retention job): members
 * whose waiting period ended since the last run join role:fullmembers (and any stale row leaves).
 */
export function promoteNewFullMembers(app: App): void {
  const realm = getRealmById(app.db, app.realmId());
  if (!realm || !realm.waiting_period_threshold) return;
  app.batch.write(() => updateFullMembersGroup(app, realm.id, null));
}

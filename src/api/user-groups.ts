// User groups: create, list, edit, members and subgroups, membership queries, deactivation.
import * as v from 'valibot';
import {
  accessGroupForRead,
  doCreateUserGroup,
  doDeactivateUserGroup,
  doUpdateGroupMembers,
  doUpdateSubgroups,
  doUpdateUserGroup,
  requireMemberOrAdmin,
  type SettingChange,
} from '../actions/user-groups';
import { p, zInt } from '../http/params';
import { route } from '../http/route';
import { groupMemberIds, groupSettingSchema, isUserInGroup, type GroupSettingValue } from '../lib/groups';
import { directMemberIds, directSubgroupIds, GROUP_SETTINGS, listGroups, recursiveSubgroupIds, type GroupSetting } from '../lib/user-groups';
import { accessUserById } from '../lib/users';

const ids = () => p.json(v.array(zInt())).default([]);

const createSettingParams = Object.fromEntries(GROUP_SETTINGS.map((s) => [s, p.json(groupSettingSchema).optional()])) as Record<
  GroupSetting,
  ReturnType<typeof p.json<typeof groupSettingSchema>>
>;

const changeSchema = v.union([v.strictObject({ new: groupSettingSchema, old: v.optional(groupSettingSchema) }), groupSettingSchema]);
const updateSettingParams = Object.fromEntries(GROUP_SETTINGS.map((s) => [s, p.json(changeSchema).optional()])) as Record<
  GroupSetting,
  ReturnType<typeof p.json<typeof changeSchema>>
>;

function pickSettings<T>(params: Record<string, unknown>): Partial<Record<GroupSetting, T>> {
  const out: Partial<Record<GroupSetting, T>> = {};
  for (const s of GROUP_SETTINGS) if (params[s] !== undefined) out[s] = params[s] as T;
  return out;
}

export const userGroupRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/user_groups/create',
    auth: 'user',
    params: {
      name: p.str(),
      description: p.str(),
      members: p.json(v.array(zInt())),
      subgroups: ids(),
      ...createSettingParams,
    },
    handle({ app, user, params }) {
      const groupId = doCreateUserGroup(app, user, {
        name: params.name,
        description: params.description,
        members: params.members,
        subgroups: params.subgroups,
        settings: pickSettings<GroupSettingValue>(params),
      });
      return { group_id: groupId };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/user_groups',
    auth: 'user',
    params: { include_deactivated_groups: p.bool().default(false) },
    handle({ app, user, params }) {
      requireMemberOrAdmin(user);
      return { user_groups: listGroups(app.db, user.realm_id, { includeDeactivated: params.include_deactivated_groups }) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/user_groups/{user_group_id:int}',
    auth: 'user',
    params: { name: p.str().optional(), description: p.str().optional(), ...updateSettingParams },
    handle({ app, user, params, path }) {
      doUpdateUserGroup(app, user, Number(path.user_group_id), {
        name: params.name,
        description: params.description,
        settings: pickSettings<SettingChange>(params),
      });
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/user_groups/{user_group_id:int}/members',
    auth: 'user',
    params: { add: ids(), delete: ids(), add_subgroups: ids(), delete_subgroups: ids() },
    handle({ app, user, params, path }) {
      doUpdateGroupMembers(app, user, Number(path.user_group_id), {
        add: params.add,
        delete: params.delete,
        addSubgroups: params.add_subgroups,
        deleteSubgroups: params.delete_subgroups,
      });
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/user_groups/{user_group_id:int}/members',
    auth: 'user',
    params: { direct_member_only: p.bool().default(false) },
    handle({ app, user, params, path }) {
      requireMemberOrAdmin(user);
      const g = accessGroupForRead(app, user, Number(path.user_group_id));
      return { members: params.direct_member_only ? directMemberIds(app.db, g.id) : groupMemberIds(app.db, g.id) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/user_groups/{user_group_id:int}/members/{user_id:int}',
    auth: 'user',
    params: { direct_member_only: p.bool().default(false) },
    handle({ app, user, params, path }) {
      requireMemberOrAdmin(user);
      const g = accessGroupForRead(app, user, Number(path.user_group_id));
      // Bots can be queried (Zulip FL 458); deactivated users are never members (FL 303).
      const target = accessUserById(app.db, user, Number(path.user_id), { allowBots: true, allowDeactivated: true });
      const member = !target.is_active
        ? false
        : params.direct_member_only
          ? directMemberIds(app.db, g.id).includes(target.id)
          : isUserInGroup(app.db, target.id, g.id);
      return { is_user_group_member: member };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/user_groups/{user_group_id:int}/subgroups',
    auth: 'user',
    params: { add: ids(), delete: ids() },
    handle({ app, user, params, path }) {
      doUpdateSubgroups(app, user, Number(path.user_group_id), { add: params.add, delete: params.delete });
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/user_groups/{user_group_id:int}/subgroups',
    auth: 'user',
    params: { direct_subgroup_only: p.bool().default(false) },
    handle({ app, user, params, path }) {
      requireMemberOrAdmin(user);
      const g = accessGroupForRead(app, user, Number(path.user_group_id));
      return { subgroups: params.direct_subgroup_only ? directSubgroupIds(app.db, g.id) : recursiveSubgroupIds(app.db, g.id) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/user_groups/{user_group_id:int}/deactivate',
    auth: 'user',
    handle({ app, user, path }) {
      doDeactivateUserGroup(app, user, Number(path.user_group_id));
      return {};
    },
  }),
];

// Users: the caller's own record, lookups, and the administrative basics (create, deactivate,
// reactivate, change name and role).
import * as v from 'valibot';
import { doUpdateUserByAdmin } from '../actions/profile-fields';
import { doCreateUserByAdmin, doDeactivateUser, doReactivateUser } from '../actions/users';
import { errors } from '../http/errors';
import { p, zInt } from '../http/params';
import { JsonFields, route } from '../http/route';
import { readCached } from '../lib/read-cache';
import { profileDataSchema } from '../lib/profile-fields';
import { ROLES } from '../lib/roles';
import { accessibleUsers, inaccessibleUser } from '../lib/access';
import { nowSeconds } from '../lib/clock';
import { fakeEmailDomain } from '../lib/user-emails';
import {
  accessUserByEmail,
  accessUserById,
  formatOwnUser,
  formatUser,
  isoTime,
  listUsers,
  profileData,
  type UserRow,
} from '../lib/users';
import type { Db } from '../db/open';

const lookupParams = {
  client_gravatar: p.bool().default(true),
  include_custom_profile_fields: p.bool().default(false),
};

/** `u` as `viewer` may see it (lookups check access first; see accessUserById). */
function present(db: Db, viewer: UserRow, u: UserRow, opts: { client_gravatar: boolean; include_custom_profile_fields: boolean }) {
  return formatUser(u, viewer, {
    clientGravatar: opts.client_gravatar,
    profileData: opts.include_custom_profile_fields ? profileData(db, u.id) : undefined,
  });
}

export const userRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/users/me',
    auth: 'user',
    // The hottest read of all (clients and bots call it to check their credentials): answered from
    // text cached until the next write.
    handle: ({ app, user }) => readCached(app, `users/me:${user.id}`, () => new JsonFields(JSON.stringify(formatOwnUser(app.db, user)))),
  }),
  route({
    method: 'GET',
    path: '/api/v1/users',
    auth: 'user',
    params: { ...lookupParams, user_ids: p.json(v.array(zInt())).optional() },
    handle({ app, user, params }) {
      let users = listUsers(app.db, user.realm_id);
      if (params.user_ids) {
        const wanted = new Set(params.user_ids);
        users = users.filter((u) => wanted.has(u.id));
      }
      const access = accessibleUsers(app.db, user);
      const domain = fakeEmailDomain(app);
      const now = isoTime(nowSeconds(app.clock));
      return {
        members: users.map((u) => (access && !access.has(u.id) ? inaccessibleUser(u.id, domain, now) : present(app.db, user, u, params))),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{user_id:int}',
    auth: 'user',
    params: lookupParams,
    handle({ app, user, params, path }) {
      const target = accessUserById(app.db, user, Number(path.user_id), { allowDeactivated: true, allowBots: true });
      return { user: present(app.db, user, target, params) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{email}',
    auth: 'user',
    params: lookupParams,
    handle({ app, user, params, path }) {
      const target = accessUserByEmail(app, user, path.email, { allowDeactivated: true, allowBots: true });
      return { user: present(app.db, user, target, params) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users',
    auth: 'user',
    params: { email: p.str(), password: p.str(), full_name: p.str() },
    handle({ app, user, params }) {
      return { user_id: doCreateUserByAdmin(app, user, params.email, params.password, params.full_name) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/{user_id:int}',
    auth: 'user',
    params: { deactivation_notification_comment: p.str({ max: 2000 }).optional() },
    handle({ app, user, path }) {
      doDeactivateUser(app, user, Number(path.user_id));
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/{user_id:int}/reactivate',
    auth: 'user',
    handle({ app, user, path }) {
      doReactivateUser(app, user, Number(path.user_id));
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/users/{user_id:int}',
    auth: 'user',
    params: {
      full_name: p.str().optional(),
      role: p.json(v.pipe(zInt(), v.check((r) => ROLES.includes(r), 'Invalid {var_name}: Value error, Not in the list of possible values'))).optional(),
      profile_data: p.json(profileDataSchema).optional(),
      new_email: p.str().optional(),
    },
    handle({ app, user, params, path }) {
      doUpdateUserByAdmin(app, user, Number(path.user_id), {
        fullName: params.full_name,
        role: params.role,
        profileData: params.profile_data,
        newEmail: params.new_email,
      });
      return {};
    },
  }),
];

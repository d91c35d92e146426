// Muted users: POST/DELETE /users/me/muted_users/{muted_user_id}.
import { doMuteUser, doUnmuteUser } from '../actions/muted-users';
import { route } from '../http/route';

export const mutedUserRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/users/me/muted_users/{muted_user_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doMuteUser(app, user, Number(path.muted_user_id));
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/muted_users/{muted_user_id:int}',
    auth: 'user',
    handle({ app, user, path }) {
      doUnmuteUser(app, user, Number(path.muted_user_id));
      return {};
    },
  }),
];

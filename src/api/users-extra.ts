// More user routes: DELETE /users/me (deactivate own account), GET /users/{id}/channels (FL 440) and
// GET /bots/{id}/api_key (FL 463).
import { getBotApiKey } from '../actions/bots';
import { doDeactivateOwnUser } from '../actions/users';
import { errors } from '../http/errors';
import { route } from '../http/route';
import { accessibleUsers } from '../lib/access';
import { isSubscribed, visibleStreams } from '../lib/streams';
import { accessUserById } from '../lib/users';

export const userExtraRoutes = [
  route({
    method: 'DELETE',
    path: '/api/v1/users/me',
    auth: 'user',
    handle({ app, user }) {
      doDeactivateOwnUser(app, user);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{user_id:int}/channels',
    auth: 'user',
    handle({ app, user, path }) {
      const target = accessUserById(app.db, user, Number(path.user_id), { allowBots: true, allowDeactivated: true });
      const access = accessibleUsers(app.db, user);
      if (access && !access.has(target.id)) throw errors.insufficientPermission();
      // Only channels the caller may see: a private channel's existence is not leaked.
      const ids = visibleStreams(app.db, user)
        .filter((s) => isSubscribed(app.db, target.id, s.id))
        .map((s) => s.id);
      return { subscribed_channel_ids: ids };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/bots/{bot_id:int}/api_key',
    auth: 'user',
    handle: ({ app, user, path }) => ({ api_key: getBotApiKey(app, user, Number(path.bot_id)) }),
  }),
];

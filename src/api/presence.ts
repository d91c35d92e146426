// Presence: POST /users/me/presence, GET /realm/presence, GET /users/{user_id_or_email}/presence.
import { doUpdatePresence } from '../actions/presence';
import { errors } from '../http/errors';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';
import { accessibleUserIds, legacyPresence, presenceRowOf, presencesForUser } from '../lib/presence';
import { findUserByEmail, findUserById, isBot, type UserRow } from '../lib/users';
import type { App } from '../app';

function userPresence(app: App, viewer: UserRow, target: UserRow | null, idOrEmail: string) {
  const visible = target ? accessibleUserIds(app, viewer) : null;
  if (!target || (visible && !visible.has(target.id))) throw errors.noSuchUser();
  if (isBot(target)) throw errors.badRequest('Presence is not supported for bot users.');
  const row = target.is_active && target.presence_enabled ? presenceRowOf(app, target) : null;
  if (!row) throw errors.badRequest('No presence data for {user_id_or_email}', { user_id_or_email: idOrEmail });
  return { presence: legacyPresence(row) };
}

export const presenceRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/users/me/presence',
    auth: 'user',
    params: {
      // Required, but checked after the bot check (Zulip's human_users_only runs first).
      status: p.str().optional(),
      ping_only: p.bool().default(false),
      last_update_id: p.int().optional(),
      history_limit_days: p.int().optional(),
      new_user_input: p.bool().default(false),
      slim_presence: p.bool().default(false),
    },
    handle({ app, user, params }) {
      if (isBot(user)) throw errors.notForBots();
      if (params.status === undefined) throw errors.missing('status');
      if (params.status !== 'active' && params.status !== 'idle') throw errors.badRequest('Invalid status: {status}', { status: params.status });
      doUpdatePresence(app, user, params.status);
      if (params.ping_only) return {};
      // zulip-compat: sending last_update_id always selects the modern format.
      const modern = params.slim_presence || params.last_update_id !== undefined;
      const result = presencesForUser(app, user, {
        modern,
        lastUpdateId: params.last_update_id ?? null,
        historyLimitDays: params.history_limit_days ?? null,
      });
      return { ...result, server_timestamp: app.clock.nowMs() / 1000 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/realm/presence',
    auth: 'user',
    handle({ app, user }) {
      const { presences } = presencesForUser(app, user, { modern: false, lastUpdateId: null, historyLimitDays: null });
      return { presences, server_timestamp: app.clock.nowMs() / 1000 };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{user_id:int}/presence',
    auth: 'user',
    handle: ({ app, user, path }) => userPresence(app, user, findUserById(app.db, user.realm_id, Number(path.user_id)), path.user_id),
  }),
  route({
    method: 'GET',
    path: '/api/v1/users/{email}/presence',
    auth: 'user',
    handle: ({ app, user, path }) => userPresence(app, user, findUserByEmail(app.db, user.realm_id, path.email), path.email),
  }),
];

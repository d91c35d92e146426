// GET /health: a readiness check for supervisors (systemd, CI, load balancers). No credentials, never
// rate limited, never cached; 200 when the database can be read and written, 503 when it cannot.
import { errors } from '../http/errors';
import { publicRoute } from '../http/route';
import { checkDatabase } from '../lib/health';
import { PARLEY_VERSION } from '../version';

/** Zulip's envelope (Zulip serves GET /health too) plus the server's state. */
export const healthRoutes = [
  publicRoute({
    method: 'GET',
    path: '/health',
    operational: true,
    handle({ app }) {
      const database = checkDatabase(app);
      const state = { status: database === 'ok' ? 'ok' : 'error', version: PARLEY_VERSION, database };
      if (database === 'ok') return state;
      throw errors.serverNotReady(database === 'unavailable' ? 'Cannot query the database' : 'Cannot write to the database', state);
    },
  }),
];

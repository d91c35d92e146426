// Bot storage: PUT, GET and DELETE /bot_storage (bots only).
import * as v from 'valibot';
import { doRemoveBotStorage, doSetBotStorage, getBotStorage } from '../actions/bot-storage';
import { p } from '../http/params';
import { route } from '../http/route';

const keys = () => p.json(v.array(v.string('{var_name} is not a string'), '{var_name} is not a list')).optional();

export const botStorageRoutes = [
  route({
    method: 'PUT',
    path: '/api/v1/bot_storage',
    auth: 'user',
    params: {
      storage: p.json(
        v.pipe(
          v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), '{var_name} is not a dict'),
          v.record(v.string(), v.string('{var_name} is not a string')),
        ),
      ),
    },
    handle({ app, user, params }) {
      doSetBotStorage(app, user, params.storage);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/bot_storage',
    auth: 'user',
    params: { keys: keys() },
    handle: ({ app, user, params }) => ({ storage: getBotStorage(app, user, params.keys) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/bot_storage',
    auth: 'user',
    params: { keys: keys() },
    handle({ app, user, params }) {
      doRemoveBotStorage(app, user, params.keys);
      return {};
    },
  }),
];

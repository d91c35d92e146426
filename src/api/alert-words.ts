// Alert words: GET/POST/DELETE /users/me/alert_words; each answers with the whole list.
import * as v from 'valibot';
import { doAddAlertWords, doRemoveAlertWords, listAlertWords } from '../actions/alert-words';
import { p } from '../http/params';
import { route } from '../http/route';

const words = p.json(v.array(v.string('{var_name} is not a string'), '{var_name} is not a list'));

export const alertWordRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/users/me/alert_words',
    auth: 'user',
    handle: ({ app, user }) => ({ alert_words: listAlertWords(app, user.id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/users/me/alert_words',
    auth: 'user',
    params: { alert_words: words },
    handle: ({ app, user, params }) => ({ alert_words: doAddAlertWords(app, user, params.alert_words) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/users/me/alert_words',
    auth: 'user',
    params: { alert_words: words },
    handle: ({ app, user, params }) => ({ alert_words: doRemoveAlertWords(app, user, params.alert_words) }),
  }),
];

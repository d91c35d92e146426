// Alert words: GET/POST/DELETE /users/me/alert_words; each answers with the whole list.
import * as v from 'valibot';
import { doAddAlertWords, doRemoveAlertWords, listAlertWords, MAX_ALERT_WORDS } from '../actions/alert-words';
import { p } from '../http/params';
import { route } from '../http/route';

// A list longer than anyone may keep is refused before its items are read.
const words = p.list(v.string('{var_name} is not a string'), { max: MAX_ALERT_WORDS });

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

// Code playgrounds: POST /realm/playgrounds, DELETE /realm/playgrounds/{playground_id} (administrators).
import { doAddPlayground, doRemovePlayground, MAX_PLAYGROUND_NAME_LENGTH, MAX_PLAYGROUND_URL_TEMPLATE_LENGTH, MAX_PYGMENTS_LANGUAGE_LENGTH } from '../actions/playgrounds';
import { p } from '../http/params';
import { route, type AnyRoute } from '../http/route';

export const playgroundRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/realm/playgrounds',
    auth: 'user',
    requires: 'admin',
    // In Zulip's order of parsing: name, url_template, then pygments_language (capped at 40).
    params: {
      name: p.str({ max: MAX_PLAYGROUND_NAME_LENGTH }),
      url_template: p.str({ max: MAX_PLAYGROUND_URL_TEMPLATE_LENGTH }),
      pygments_language: p.str({ max: MAX_PYGMENTS_LANGUAGE_LENGTH }),
    },
    handle({ app, user, params }) {
      const id = doAddPlayground(app, user, { name: params.name, pygmentsLanguage: params.pygments_language, urlTemplate: params.url_template });
      return { id };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/realm/playgrounds/{playground_id:int}',
    auth: 'user',
    requires: 'admin',
    handle({ app, user, path }) {
      doRemovePlayground(app, user, Number(path.playground_id));
      return {};
    },
  }),
];

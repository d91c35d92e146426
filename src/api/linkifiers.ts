// Linkifiers: GET /realm/linkifiers, POST /realm/filters, PATCH/DELETE /realm/filters/{filter_id},
// PATCH /realm/linkifiers (reorder).
import * as v from 'valibot';
import { doAddLinkifier, doRemoveLinkifier, doReorderLinkifiers, doUpdateLinkifier, type LinkifierInput } from '../actions/linkifiers';
import { errors } from '../http/errors';
import { isAdmin, type UserRow } from '../lib/users';
import { p, zInt, zStr } from '../http/params';
import { route, type AnyRoute } from '../http/route';
import { formatLinkifier, listLinkifiers } from '../lib/linkifiers';

// pattern and url_template are required, but checked after the administrator check (Zulip's
// require_realm_admin runs before its parameter parsing).
const linkifierParams = {
  pattern: p.str().optional(),
  url_template: p.str().optional(),
  example_input: p.str().optional(),
  reverse_template: p.str().optional(),
  alternative_url_templates: p.json(v.array(zStr())).optional(),
};

type LinkifierParams = { pattern?: string; url_template?: string; example_input?: string; reverse_template?: string; alternative_url_templates?: string[] };

function toInput(user: UserRow, params: LinkifierParams): LinkifierInput {
  if (!isAdmin(user)) throw errors.adminRequired();
  if (params.pattern === undefined) throw errors.missing('pattern');
  if (params.url_template === undefined) throw errors.missing('url_template');
  return {
    pattern: params.pattern,
    urlTemplate: params.url_template,
    // An empty string clears the optional fields (PATCH keeps those not given).
    exampleInput: params.example_input === '' ? null : params.example_input,
    reverseTemplate: params.reverse_template === '' ? null : params.reverse_template,
    alternativeUrlTemplates: params.alternative_url_templates,
  };
}

export const linkifierRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/realm/linkifiers',
    auth: 'user',
    handle: ({ app, user }) => ({ linkifiers: listLinkifiers(app.db, user.realm_id).map(formatLinkifier) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/realm/filters',
    auth: 'user',
    requires: 'admin',
    params: linkifierParams,
    handle: ({ app, user, params }) => ({ id: doAddLinkifier(app, user, toInput(user, params)) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/realm/filters/{filter_id:int}',
    auth: 'user',
    requires: 'admin',
    params: linkifierParams,
    handle({ app, user, params, path }) {
      doUpdateLinkifier(app, user, Number(path.filter_id), toInput(user, params));
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/realm/filters/{filter_id:int}',
    auth: 'user',
    requires: 'admin',
    handle({ app, user, path }) {
      doRemoveLinkifier(app, user, Number(path.filter_id));
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/realm/linkifiers',
    auth: 'user',
    requires: 'admin',
    params: { ordered_linkifier_ids: p.json(v.array(zInt())) },
    handle({ app, user, params }) {
      doReorderLinkifiers(app, user, params.ordered_linkifier_ids);
      return {};
    },
  }),
];

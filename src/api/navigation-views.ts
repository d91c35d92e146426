// Navigation views: GET/POST /navigation_views, PATCH/DELETE /navigation_views/{fragment} (the
// fragment is the rest of the path, slashes included: "narrow/is/starred").
import {
  doAddNavigationView,
  doRemoveNavigationView,
  doUpdateNavigationView,
  MAX_NAVIGATION_VIEW_FRAGMENT_LENGTH,
  MAX_NAVIGATION_VIEW_NAME_LENGTH,
} from '../actions/navigation-views';
import { errors } from '../http/errors';
import { codePoints, p } from '../http/params';
import { route, type AnyRoute } from '../http/route';
import { listNavigationViews } from '../lib/navigation-views';

// Stripped, then at least one character (Zulip's StringConstraints(strip_whitespace=True, min_length=1)).
const name = () => p.str({ strip: true, min: 1, max: MAX_NAVIGATION_VIEW_NAME_LENGTH });

/** The fragment from the path, stripped as Zulip's view does, within Parley's bound. */
function pathFragment(raw: string): string {
  const fragment = raw.trim();
  if (fragment === '') throw errors.badRequest('{var_name} cannot be blank', { var_name: 'fragment' });
  if (codePoints(fragment) > MAX_NAVIGATION_VIEW_FRAGMENT_LENGTH) {
    throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', { var_name: 'fragment', max_length: MAX_NAVIGATION_VIEW_FRAGMENT_LENGTH });
  }
  return fragment;
}

export const navigationViewRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/navigation_views',
    auth: 'user',
    handle: ({ app, user }) => ({ navigation_views: listNavigationViews(app.db, user.id) }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/navigation_views',
    auth: 'user',
    params: {
      fragment: p.str({ strip: true, min: 1, max: MAX_NAVIGATION_VIEW_FRAGMENT_LENGTH }),
      is_pinned: p.bool(),
      name: name().optional(),
    },
    handle({ app, user, params }) {
      doAddNavigationView(app, user, { fragment: params.fragment, isPinned: params.is_pinned, name: params.name });
      return {};
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/navigation_views/{fragment...}',
    auth: 'user',
    params: { is_pinned: p.bool().optional(), name: name().optional() },
    handle({ app, user, params, path }) {
      doUpdateNavigationView(app, user, pathFragment(path.fragment), { isPinned: params.is_pinned, name: params.name });
      return {};
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/navigation_views/{fragment...}',
    auth: 'user',
    handle({ app, user, path }) {
      doRemoveNavigationView(app, user, pathFragment(path.fragment));
      return {};
    },
  }),
];

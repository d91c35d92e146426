// Navigation views (Zulip's NavigationView): a user's settings for the built-in views of the left
// sidebar (pinned or hidden) and their named custom views, keyed by URL fragment.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { registerStateProvider } from '../events/state';

/** The views Zulip's web app has built in: they take no custom name (Zulip's BUILT_IN_VIEW_FRAGMENTS). */
export const BUILT_IN_VIEW_FRAGMENTS: readonly string[] = [
  'inbox',
  'recent',
  'feed',
  'drafts',
  'narrow/has/reaction/sender/me',
  'narrow/is/mentioned',
  'narrow/is/starred',
];

/** The API object (Zulip's NavigationViewDict). */
export interface NavigationView {
  fragment: string;
  is_pinned: boolean;
  name: string | null;
}

interface Row {
  fragment: string;
  is_pinned: number;
  name: string | null;
}

const toView = (r: Row): NavigationView => ({ fragment: r.fragment, is_pinned: r.is_pinned === 1, name: r.name });

/** The user's navigation views in creation order. */
export function listNavigationViews(db: Db, userId: number): NavigationView[] {
  return (stmt(db, 'SELECT fragment, is_pinned, name FROM navigation_view WHERE user_id = ? ORDER BY id').all(userId) as Row[]).map(toView);
}

/** The user's view at `fragment`, if any. */
export function findNavigationView(db: Db, userId: number, fragment: string): NavigationView | undefined {
  const row = stmt(db, 'SELECT fragment, is_pinned, name FROM navigation_view WHERE user_id = ? AND fragment = ?').get(userId, fragment) as Row | undefined;
  return row && toView(row);
}

registerStateProvider('navigation_views', (app, user) => ({ navigation_views: listNavigationViews(app.db, user.id) }));

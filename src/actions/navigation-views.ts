// Navigation views: add, update, remove; each change sends a `navigation_view` event to the owner's
// own queues (Zulip's zerver/views/navigation_views.py and zerver/actions/navigation_views.py).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { BUILT_IN_VIEW_FRAGMENTS, findNavigationView, type NavigationView } from '../lib/navigation-views';
import type { UserRow } from '../lib/users';

/** Parley's bounds (Zulip has none): every view is in every /register of its owner. */
export const MAX_NAVIGATION_VIEWS = 1000;
export const MAX_NAVIGATION_VIEW_FRAGMENT_LENGTH = 2000;
export const MAX_NAVIGATION_VIEW_NAME_LENGTH = 100;

const isBuiltIn = (fragment: string) => BUILT_IN_VIEW_FRAGMENTS.includes(fragment);
const alreadyExists = () => errors.badRequest('Navigation view already exists.');
const builtInNamed = () => errors.badRequest('Built-in views cannot have a custom name.');
const notFound = () => new JsonableError('Navigation view does not exist.', { status: 404 });

function nameTaken(app: App, user: UserRow, name: string): boolean {
  return stmt(app.db, 'SELECT 1 FROM navigation_view WHERE user_id = ? AND name = ?').get(user.id, name) !== undefined;
}

/** POST /navigation_views: settings for a built-in view, or a named custom view. */
export function doAddNavigationView(app: App, user: UserRow, view: { fragment: string; isPinned: boolean; name?: string }): void {
  if (isBuiltIn(view.fragment)) {
    if (view.name !== undefined) throw builtInNamed();
  } else if (view.name === undefined) {
    throw errors.badRequest('Custom views must have a valid name.');
  }
  app.batch.write(() => {
    if (findNavigationView(app.db, user.id, view.fragment)) throw alreadyExists();
    if (view.name !== undefined && nameTaken(app, user, view.name)) throw alreadyExists();
    const count = (stmt(app.db, 'SELECT count(*) AS n FROM navigation_view WHERE user_id = ?').get(user.id) as { n: number }).n;
    if (count >= MAX_NAVIGATION_VIEWS) throw errors.badRequest('You can have at most {max} navigation views.', { max: MAX_NAVIGATION_VIEWS });
    stmt(app.db, 'INSERT INTO navigation_view (user_id, fragment, is_pinned, name) VALUES (?, ?, ?, ?)').run(
      user.id,
      view.fragment,
      view.isPinned ? 1 : 0,
      view.name ?? null,
    );
    const added: NavigationView = { fragment: view.fragment, is_pinned: view.isPinned, name: view.name ?? null };
    app.batch.onCommit(() => app.events.send({ type: 'navigation_view', op: 'add', navigation_view: added }, [user.id]));
  });
}

/**
 * PATCH /navigation_views/{fragment}: changes what is given. zulip-compat: a name is refused when any
 * of the user's views has it (the view itself too), and a request changing nothing still succeeds
 * with an update event whose data is empty.
 */
export function doUpdateNavigationView(app: App, user: UserRow, fragment: string, change: { isPinned?: boolean; name?: string }): void {
  if (isBuiltIn(fragment) && change.name !== undefined) throw builtInNamed();
  app.batch.write(() => {
    if (change.name !== undefined && nameTaken(app, user, change.name)) throw alreadyExists();
    if (!findNavigationView(app.db, user.id, fragment)) throw notFound();
    const data: { name?: string; is_pinned?: boolean } = {};
    if (change.name !== undefined) {
      stmt(app.db, 'UPDATE navigation_view SET name = ? WHERE user_id = ? AND fragment = ?').run(change.name, user.id, fragment);
      data.name = change.name;
    }
    if (change.isPinned !== undefined) {
      stmt(app.db, 'UPDATE navigation_view SET is_pinned = ? WHERE user_id = ? AND fragment = ?').run(change.isPinned ? 1 : 0, user.id, fragment);
      data.is_pinned = change.isPinned;
    }
    app.batch.onCommit(() => app.events.send({ type: 'navigation_view', op: 'update', fragment, data }, [user.id]));
  });
}

/** DELETE /navigation_views/{fragment}. */
export function doRemoveNavigationView(app: App, user: UserRow, fragment: string): void {
  app.batch.write(() => {
    const res = stmt(app.db, 'DELETE FROM navigation_view WHERE user_id = ? AND fragment = ?').run(user.id, fragment);
    if (res.changes === 0) throw notFound();
    app.batch.onCommit(() => app.events.send({ type: 'navigation_view', op: 'remove', fragment }, [user.id]));
  });
}

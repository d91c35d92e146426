// Saved snippets: create, edit, delete; each change sends a `saved_snippets` event to the owner's own
// queues (Zulip's zerver/actions/saved_snippets.py). Another user's snippet does not exist.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { findSavedSnippet, type SavedSnippet } from '../lib/saved-snippets';
import type { UserRow } from '../lib/users';

/** Parley's bound (Zulip has none): every snippet is in every /register of its owner. */
export const MAX_SAVED_SNIPPETS = 1000;

function snippetNotFound(): JsonableError {
  return new JsonableError('Saved snippet does not exist.', { status: 404 });
}

/** POST /saved_snippets: title and content come stripped and checked by the route. */
export function doCreateSavedSnippet(app: App, user: UserRow, title: string, content: string): number {
  return app.batch.write(() => {
    const count = (stmt(app.db, 'SELECT count(*) AS n FROM saved_snippet WHERE user_id = ?').get(user.id) as { n: number }).n;
    if (count >= MAX_SAVED_SNIPPETS) throw errors.badRequest('You can have at most {max} saved snippets.', { max: MAX_SAVED_SNIPPETS });
    const dateCreated = nowSeconds(app.clock);
    const id = Number(
      stmt(app.db, 'INSERT INTO saved_snippet (user_id, title, content, date_created) VALUES (?, ?, ?, ?)').run(user.id, title, content, dateCreated)
        .lastInsertRowid,
    );
    const snippet: SavedSnippet = { id, title, content, date_created: dateCreated };
    app.batch.onCommit(() => app.events.send({ type: 'saved_snippets', op: 'add', saved_snippet: snippet }, [user.id]));
    return id;
  });
}

/** PATCH /saved_snippets/{id}: changes what is given (at least one of title and content). */
export function doEditSavedSnippet(app: App, user: UserRow, id: number, change: { title?: string; content?: string }): void {
  app.batch.write(() => {
    const old = findSavedSnippet(app.db, user.id, id);
    if (!old) throw snippetNotFound();
    const snippet: SavedSnippet = { ...old, title: change.title ?? old.title, content: change.content ?? old.content };
    stmt(app.db, 'UPDATE saved_snippet SET title = ?, content = ? WHERE id = ?').run(snippet.title, snippet.content, id);
    app.batch.onCommit(() => app.events.send({ type: 'saved_snippets', op: 'update', saved_snippet: snippet }, [user.id]));
  });
}

/** DELETE /saved_snippets/{id}. */
export function doDeleteSavedSnippet(app: App, user: UserRow, id: number): void {
  app.batch.write(() => {
    const res = stmt(app.db, 'DELETE FROM saved_snippet WHERE id = ? AND user_id = ?').run(id, user.id);
    if (res.changes === 0) throw snippetNotFound();
    app.batch.onCommit(() => app.events.send({ type: 'saved_snippets', op: 'remove', saved_snippet_id: id }, [user.id]));
  });
}

// Saved snippets (Zulip's SavedSnippet): the API object, a user's list and the `saved_snippets`
// register state. A snippet is its owner's alone.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { registerStateProvider } from '../events/state';

/** The API object (Zulip's SavedSnippet.to_api_dict); date_created in whole seconds. */
export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

/** The user's saved snippets in creation order. */
export function listSavedSnippets(db: Db, userId: number): SavedSnippet[] {
  return stmt(db, 'SELECT id, title, content, date_created FROM saved_snippet WHERE user_id = ? ORDER BY id').all(userId) as SavedSnippet[];
}

/** One of the user's snippets; undefined for a missing one and for another user's. */
export function findSavedSnippet(db: Db, userId: number, id: number): SavedSnippet | undefined {
  return stmt(db, 'SELECT id, title, content, date_created FROM saved_snippet WHERE id = ? AND user_id = ?').get(id, userId) as SavedSnippet | undefined;
}

registerStateProvider('saved_snippets', (app, user) => ({ saved_snippets: listSavedSnippets(app.db, user.id) }));

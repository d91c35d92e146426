// Code playgrounds (Zulip's RealmPlayground): the API object, the organization's list and its
// `realm_playgrounds` register state.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { registerStateProvider } from '../events/state';

/** The API object (Zulip's RealmPlaygroundDict). */
export interface Playground {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

/** The organization's playgrounds in creation order (Zulip's get_realm_playgrounds). */
export function listPlaygrounds(db: Db, realmId: number): Playground[] {
  return stmt(db, 'SELECT id, name, pygments_language, url_template FROM realm_playground WHERE realm_id = ? ORDER BY id').all(realmId) as Playground[];
}

registerStateProvider('realm_playgrounds', (app, user) => ({ realm_playgrounds: listPlaygrounds(app.db, user.realm_id) }));

// Who has consented to their private data being exported (allow_private_data_export): Zulip's
// realm_export_consent event, sent to the human administrators when a person's consent changes or
// when a person comes back (do_reactivate_user), so that their list of consents stays right.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { ROLE } from '../lib/roles';
import type { UserRow } from '../lib/users';

/** Zulip's get_human_admin_users: the active human owners and administrators (who hear about exports and consents). */
export function humanAdminIds(app: App, realmId: number): number[] {
  return stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL AND role <= ? ORDER BY id').pluck().all(realmId, ROLE.ADMINISTRATOR) as number[];
}

/** Inside a write: the realm_export_consent event for a person (never a bot), after the commit. */
export function notifyExportConsent(app: App, user: UserRow, consented: boolean): void {
  if (user.bot_type !== null) return;
  app.batch.onCommit(() => app.events.send({ type: 'realm_export_consent', user_id: user.id, consented }, humanAdminIds(app, user.realm_id)));
}

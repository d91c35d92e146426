// Recording a login. An API-created (or imported) account's date_joined is its creation time until
// its first login, which then becomes date_joined and is announced as a realm_user update.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { userIdsWhoCanAccess } from '../lib/access';
import { nowSeconds } from '../lib/clock';
import { isoTime, type UserRow } from '../lib/users';
import { updateFullMembersGroup } from './user-groups';

/** Notes a successful password login for `user`. */
export function doRecordLogin(app: App, user: UserRow): void {
  app.batch.write(() => {
    const now = nowSeconds(app.clock);
    if (user.first_login_pending) {
      stmt(app.db, 'UPDATE user SET date_joined = ?, first_login_pending = 0, last_login = ? WHERE id = ?').run(now, now, user.id);
      app.batch.onCommit(() =>
        app.events.send(
          { type: 'realm_user', op: 'update', person: { user_id: user.id, date_joined: isoTime(now) } },
          userIdsWhoCanAccess(app.db, user),
        ),
      );
      // The waiting period for role:fullmembers counts from the new date_joined.
      updateFullMembersGroup(app, user.realm_id, [user.id]);
    } else {
      stmt(app.db, 'UPDATE user SET last_login = ? WHERE id = ?').run(now, user.id);
    }
  });
}

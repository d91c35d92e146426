// Creating and (de)activating the organization.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { nowSeconds } from '../lib/clock';
import { NOBODY_GROUP, ROLE, SYSTEM_GROUPS } from '../lib/roles';
import { findRealm } from '../lib/realm';
import { REALM_CHANGEABLE_GROUP_SETTINGS, REALM_GROUP_SETTING_RULES } from '../lib/realm-settings';
import { doCreateUser, type CreatedUser } from './users';

export interface NewRealm {
  name: string;
  ownerEmail: string;
  /** null: no password (the demo sets a precomputed hash itself). */
  ownerPassword: string | null;
  ownerFullName: string;
  stringId?: string;
}

const SYSTEM_GROUP_DESCRIPTIONS: Record<string, string> = {
  'role:internet': 'Everyone on the internet',
  'role:everyone': 'Everyone including guests',
  'role:members': 'Everyone except guests',
  'role:fullmembers': 'Members of this organization, not including new accounts and guests',
  'role:moderators': 'Moderators of this organization, including administrators',
  'role:administrators': 'Administrators of this organization, including owners',
  'role:owners': 'Owners of this organization',
  'role:nobody': 'Nobody',
};

/** Creates the organization, its system groups and its owner. Fails if one exists already. */
export function doCreateRealm(app: App, spec: NewRealm): { realmId: number; owner: CreatedUser } {
  return app.batch.write(() => {
    if (findRealm(app.db)) throw new Error('this data dir already has an organization');
    const now = nowSeconds(app.clock);
    const realmId = Number(
      stmt(app.db, 'INSERT INTO realm (string_id, name, date_created) VALUES (?, ?, ?)').run(spec.stringId ?? '', spec.name, now)
        .lastInsertRowid,
    );
    const ids: Record<string, number> = {};
    const insertGroup = stmt(
      app.db,
      'INSERT INTO user_group (realm_id, name, description, named, is_system_group, date_created) VALUES (?, ?, ?, 1, 1, ?)',
    );
    for (const name of [...SYSTEM_GROUPS, NOBODY_GROUP]) {
      ids[name] = Number(insertGroup.run(realmId, name, SYSTEM_GROUP_DESCRIPTIONS[name], now).lastInsertRowid);
    }
    // Each system group contains the next smaller one: owners ⊂ administrators ⊂ ... ⊂ internet.
    const nest = stmt(app.db, 'INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (?, ?)');
    for (let i = 0; i + 1 < SYSTEM_GROUPS.length; i++) nest.run(ids[SYSTEM_GROUPS[i]], ids[SYSTEM_GROUPS[i + 1]]);
    // System groups' own permission settings: managed by administrators, mentionable by everyone.
    stmt(
      app.db,
      `UPDATE user_group SET can_add_members_group = ?, can_join_group = ?, can_leave_group = ?, can_manage_group = ?,
         can_mention_group = ?, can_remove_members_group = ? WHERE realm_id = ? AND is_system_group = 1`,
    ).run(ids[NOBODY_GROUP], ids[NOBODY_GROUP], ids[NOBODY_GROUP], ids[NOBODY_GROUP], ids['role:everyone'], ids[NOBODY_GROUP], realmId);
    const setGroup = (column: string, groupId: number) =>
      // column names come from the constant table in lib/realm-settings, never from input
      app.db.prepare(`UPDATE realm SET ${column} = ? WHERE id = ?`).run(groupId, realmId);
    // Each setting starts at Zulip's default_group_name, what server_supported_permission_settings
    // reports (Zulip's test_do_create_realm checks the same).
    for (const column of REALM_CHANGEABLE_GROUP_SETTINGS) setGroup(column, ids[REALM_GROUP_SETTING_RULES[column].defaultGroupName]);
    const owner = doCreateUser(app, {
      realmId,
      email: spec.ownerEmail,
      password: spec.ownerPassword,
      fullName: spec.ownerFullName,
      role: ROLE.OWNER,
      acting: null,
    });
    return { realmId, owner };
  });
}

/** Deactivates or reactivates the organization (CLI, on a stopped server). */
export function doSetRealmDeactivated(app: App, deactivated: boolean): void {
  app.batch.write(() => {
    stmt(app.db, 'UPDATE realm SET deactivated = ? WHERE id = ?').run(deactivated ? 1 : 0, app.realmId());
  });
}

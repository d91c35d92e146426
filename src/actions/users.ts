// User administration: create, deactivate, reactivate, change name and role.
// check* validates inside the write; do* writes and queues events with onCommit.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { userIdsWhoCanAccess } from '../lib/access';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { ROLE } from '../lib/roles';
import { hashPassword, newApiKey } from '../lib/secrets';
import {
  accessUserById,
  activeOwnerIds,
  botAudience,
  findUserByDeliveryEmail,
  findUserById,
  isAdmin,
  isBot,
  isOwner,
  type UserRow,
} from '../lib/users';
import { checkFullName, checkPasswordStrength, isDeliverableEmail, isValidEmail } from '../lib/validate';
import { revokeInvitationsOf } from './invites';
import { removeUserPushRegistrations } from './push';
import { applyRealmUserDefaults } from './realm-defaults';
import { syncSystemGroupsForRole } from './user-groups';
import { announceUserCreated, roleChanged } from './user-access';
import { apiEmailOf } from '../lib/user-emails';
import { checkUniqueName } from '../lib/realm-settings';
import { notifyExportConsent } from './export-consent';

export interface NewUser {
  realmId: number;
  email: string;
  password: string | null;
  fullName: string;
  role: number;
  botType?: number | null;
  botOwnerId?: number | null;
  /** The administrator creating the account; null for the CLI and sign-up. */
  acting: UserRow | null;
  /** API-created and imported accounts: date_joined moves to the first login. */
  firstLoginPending?: boolean;
  /**
   * A system bot (actions/system-bots.ts): Zulip's cross-realm bots belong to no organization, so no
   * realm_user event announces it and it joins none of the organization's groups.
   */
  systemBot?: boolean;
}

export interface CreatedUser {
  userId: number;
  email: string;
  apiKey: string;
}

/** Ids of every active user of the realm: who hears about realm-wide changes. */
export function activeUserIds(app: App, realmId: number): number[] {
  return (stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1').all(realmId) as { id: number }[]).map((r) => r.id);
}

/** Validates a new account's email, name and password as POST /users does. Returns the clean name. */
export function checkCreateUser(
  app: App,
  realmId: number,
  email: string,
  password: string | null,
  fullName: string,
  opts: { minNameLength?: number } = {},
): string {
  const name = checkFullName(fullName, { minLength: opts.minNameLength });
  if (!isValidEmail(email)) throw errors.badRequest('Bad name or username');
  if (findUserByDeliveryEmail(app.db, realmId, email)) throw errors.badRequest('Email is already in use.');
  if (password !== null) checkPasswordStrength(password);
  return name;
}

/** Creates a user (or bot) and puts them in the system group of their role. */
export function doCreateUser(app: App, spec: NewUser): CreatedUser {
  return app.batch.write(() => {
    // Names typed by an administrator get Zulip's 2-character minimum; without an acting user (the
    // CLI) the owner's name may default to a one-letter email local part.
    const fullName = checkCreateUser(app, spec.realmId, spec.email, spec.password, spec.fullName, {
      minNameLength: spec.acting ? undefined : 1,
    });
    // System bots are made on first use; in Zulip they belong to no organization, so no name rule applies.
    const systemBot = spec.botType !== undefined && spec.botType !== null && (spec.botOwnerId ?? null) === null;
    if (!systemBot) checkUniqueName(app.db, spec.realmId, fullName, null);
    const apiKey = newApiKey();
    const now = nowSeconds(app.clock);
    const userId = Number(
      stmt(
        app.db,
        `INSERT INTO user (realm_id, email, delivery_email, full_name, password_hash, api_key, role, bot_type, bot_owner_id,
           date_joined, first_login_pending)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        spec.realmId,
        spec.email,
        spec.email,
        fullName,
        spec.password === null ? null : hashPassword(spec.password),
        apiKey,
        spec.role,
        spec.botType ?? null,
        spec.botOwnerId ?? null,
        now,
        spec.firstLoginPending ? 1 : 0,
      ).lastInsertRowid,
    );
    // New humans start from the organization's defaults (PATCH /realm/user_settings_defaults).
    if (spec.botType === null || spec.botType === undefined) applyRealmUserDefaults(app, { id: userId, realm_id: spec.realmId } as UserRow);
    let row = findUserById(app.db, spec.realmId, userId) as UserRow;
    // A default that hides addresses gives the new user a placeholder API email (lib/user-emails.ts).
    const apiEmail = apiEmailOf(app, row);
    if (apiEmail !== row.email) {
      stmt(app.db, 'UPDATE user SET email = ? WHERE id = ?').run(apiEmail, userId);
      row = { ...row, email: apiEmail };
    }
    // As Zulip's do_create_user: realm_user add, then the system groups' add_members.
    if (!spec.systemBot) {
      announceUserCreated(app, row);
      syncSystemGroupsForRole(app, row, null, spec.role);
    }
    return { userId, email: spec.email, apiKey };
  });
}

/** POST /users: administrators create accounts with a password. */
export function doCreateUserByAdmin(app: App, acting: UserRow, email: string, password: string, fullName: string): number {
  if (!isAdmin(acting)) throw errors.adminRequired();
  // An address people give is checked as Django's validator does (doCreateUser's check is looser:
  // it also makes bots' and system bots' addresses from the server's host name); the name first.
  checkUniqueName(app.db, acting.realm_id, checkFullName(fullName), null);
  if (!isDeliverableEmail(email)) throw errors.badRequest('Bad name or username');
  return doCreateUser(app, {
    realmId: acting.realm_id,
    email,
    password,
    fullName,
    role: ROLE.MEMBER,
    acting,
    firstLoginPending: true,
  }).userId;
}

/** DELETE /users/{id}: deactivates a human account; the last owner cannot be deactivated. */
export function doDeactivateUser(app: App, acting: UserRow, targetId: number): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  app.batch.write(() => {
    const target = accessUserById(app.db, acting, targetId, { forAdmin: true });
    if (isOwner(target) && !isOwner(acting)) throw errors.ownerRequired();
    if (isOwner(target) && activeOwnerIds(app.db, target.realm_id).length <= 1) {
      // zulip-compat: this endpoint answers a plain BAD_REQUEST (its OpenAPI example); only
      // DELETE /users/me uses CANNOT_DEACTIVATE_LAST_USER with is_last_owner and entity.
      throw errors.badRequest('Cannot deactivate the only organization owner');
    }
    deactivateAccount(app, target);
  });
}

/** DELETE /users/me: deactivates the caller; not the organization's only user or only owner. */
export function doDeactivateOwnUser(app: App, user: UserRow): void {
  app.batch.write(() => {
    const active = stmt(app.db, 'SELECT count(*) AS n FROM user WHERE realm_id = ? AND is_active = 1').get(user.realm_id) as { n: number };
    if (active.n === 1) throw errors.cannotDeactivateLast('user', false);
    if (isOwner(user) && activeOwnerIds(app.db, user.realm_id).length <= 1) throw errors.cannotDeactivateLast('organization owner', true);
    deactivateAccount(app, user);
  });
}

/** POST /users/{id}/reactivate: an account that is already active is left as it is. */
export function doReactivateUser(app: App, acting: UserRow, targetId: number): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  app.batch.write(() => {
    const target = accessUserById(app.db, acting, targetId, { allowDeactivated: true, allowBots: true, forAdmin: true });
    // zulip-compat: reactivate_user_backend has no "already active" check and answers success.
    // Zulip's do_reactivate_user then re-runs the activation (an audit-log row, a repeated
    // is_active: true update); nothing changes here, so no event is sent.
    if (target.is_active) return;
    setActive(app, target, true);
    // Zulip's do_reactivate_user: administrators' consent lists learn the person is back.
    notifyExportConsent(app, target, (target as { allow_private_data_export?: number }).allow_private_data_export === 1);
  });
}

/**
 * Deactivates an account inside the caller's write. A person's active bots go first, as in Zulip's
 * do_deactivate_user: a bot must not keep acting (and reaching its owner's private channels) once its
 * owner is gone; reactivating the person does not bring them back. Bots' owners and administrators
 * also hear a realm_bot update. The person's invitations and links are revoked, as Zulip's are.
 */
export function deactivateAccount(app: App, target: UserRow): void {
  if (!isBot(target)) {
    revokeInvitationsOf(app, target);
    const bots = stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND bot_owner_id = ? AND bot_type IS NOT NULL AND is_active = 1 ORDER BY id').all(
      target.realm_id,
      target.id,
    ) as UserRow[];
    for (const bot of bots) {
      // zulip-compat: with a new key, which Zulip does not give. The person knew the old one, and an
      // administrator may reactivate the bot (an integration others rely on): its key must not let
      // someone who has left read what the bot can.
      const apiKey = newApiKey();
      stmt(app.db, 'UPDATE user SET api_key = ? WHERE id = ?').run(apiKey, bot.id);
      deactivateAccount(app, bot);
      app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: apiKey } }, botAudience(app.db, bot)));
    }
  }
  setActive(app, target, false);
  if (isBot(target)) {
    // The audience is taken at commit: a bot deactivated with its owner is reported to administrators only.
    app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: target.id, is_active: false } }, botAudience(app.db, target)));
  }
}

function setActive(app: App, target: UserRow, active: boolean): void {
  stmt(app.db, 'UPDATE user SET is_active = ? WHERE id = ?').run(active ? 1 : 0, target.id);
  if (!active) stmt(app.db, 'DELETE FROM session WHERE user_id = ?').run(target.id);
  app.batch.onCommit(() =>
    app.events.send(
      { type: 'realm_user', op: 'update', person: { user_id: target.id, is_active: active } },
      userIdsWhoCanAccess(app.db, target),
    ),
  );
}

/** PATCH /users/{id}: full name and role (the people issue adds profile data and email). */
export function doUpdateUser(app: App, acting: UserRow, targetId: number, change: { fullName?: string; role?: number }): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  app.batch.write(() => {
    const target = accessUserById(app.db, acting, targetId, { allowDeactivated: true, allowBots: true, forAdmin: true });
    const notify: Record<string, unknown>[] = [];
    if (change.role !== undefined && change.role !== target.role) {
      if ((change.role === ROLE.OWNER || isOwner(target)) && !isOwner(acting)) throw errors.ownerRequired();
      if (isOwner(target) && activeOwnerIds(app.db, target.realm_id).length <= 1 && target.is_active) {
        throw errors.badRequest('The owner permission cannot be removed from the only organization owner.');
      }
      stmt(app.db, 'UPDATE user SET role = ? WHERE id = ?').run(change.role, target.id);
      // As in Zulip, the realm_user event goes first, then the system groups' remove_members/add_members.
      const person = { user_id: target.id, role: change.role };
      app.batch.onCommit(() => app.events.send({ type: 'realm_user', op: 'update', person }, userIdsWhoCanAccess(app.db, target)));
      roleChanged(app, target, target.role);
      syncSystemGroupsForRole(app, target, target.role, change.role);
    }
    // zulip-compat: an empty or all-whitespace full_name is ignored, not refused.
    if (change.fullName !== undefined && change.fullName.trim() !== '' && change.fullName !== target.full_name) {
      const name = checkFullName(change.fullName);
      checkUniqueName(app.db, target.realm_id, name, target.id);
      if (name !== target.full_name) {
        stmt(app.db, 'UPDATE user SET full_name = ? WHERE id = ?').run(name, target.id);
        notify.push({ user_id: target.id, full_name: name });
      }
    }
    // Only those who can access the user hear of it (Zulip's get_user_ids_who_can_access_user).
    const recipients = () => userIdsWhoCanAccess(app.db, target);
    for (const person of notify) app.batch.onCommit(() => app.events.send({ type: 'realm_user', op: 'update', person }, recipients()));
  });
}

/**
 * POST /users/me/api_key/regenerate: a new key; the old one stops working at once (the auth cache
 * follows the user table), and the user's E2EE push registrations go with it (FL 492).
 */
export function doRegenerateApiKey(app: App, user: UserRow): string {
  const apiKey = newApiKey();
  app.batch.write(() => {
    stmt(app.db, 'UPDATE user SET api_key = ? WHERE id = ?').run(apiKey, user.id);
    removeUserPushRegistrations(app, user.id);
    if (user.bot_owner_id !== null) {
      const ownerId = user.bot_owner_id;
      app.batch.onCommit(() => app.events.send({ type: 'realm_bot', op: 'update', bot: { user_id: user.id, api_key: apiKey } }, [ownerId]));
    }
  });
  return apiKey;
}

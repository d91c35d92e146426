// PATCH /settings: personal settings, name, password, the start of an email change (and its
// confirmation link), and administrators' bulk changes through target_users.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { userIdsWhoCanAccess } from '../lib/access';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { sendEmail } from '../lib/email';
import { findGroup, groupMemberIds } from '../lib/groups';
import { getRealmById, type RealmRow } from '../lib/realm';
import { checkPassword, hashPassword, randomAlnum } from '../lib/secrets';
import {
  editedSettings,
  isValidTimezone,
  LANGUAGES,
  MAX_EMAIL_BATCHING_PERIOD_SECONDS,
  NOTIFICATION_SOUNDS,
  SETTINGS,
  settingValue,
} from '../lib/settings';
import { findUserByDeliveryEmail, findUserByEmail, findUserById, isAdmin, isBot, type UserRow } from '../lib/users';
import { checkFullName, PASSWORD_MIN_LENGTH, realmEmailProblem } from '../lib/validate';
import { checkUniqueName } from '../lib/realm-settings';
import { deleteOtherSessions } from './sessions';
import { changeDeliveryEmail, emailVisibilityChanged } from './user-access';
import { notifyExportConsent } from './export-consent';

export interface TargetUsers {
  user_ids?: number[];
  group_ids?: number[];
  skip_if_already_edited?: boolean;
}

export interface SettingsChange {
  fullName?: string;
  email?: string;
  oldPassword?: string;
  newPassword?: string;
  /** The web session making the change (kept when the password changes; every other one ends). */
  sessionToken?: string | null;
  /** Setting name → API value, only the settings the request named. */
  settings: Record<string, unknown>;
  targetUsers?: TargetUsers;
}

/** Email-change confirmation links stay valid this long (Zulip's default confirmation validity). */
export const EMAIL_CHANGE_VALIDITY_SECONDS = 24 * 60 * 60;
/** Zulip's email_change_by_user rule: at most 2 requests per hour. */
const EMAIL_CHANGES_PER_HOUR = 2;

function realmExtra(app: App, realmId: number): Record<string, unknown> {
  try {
    const v = JSON.parse(String(getRealmById(app.db, realmId)?.extra_settings ?? '{}'));
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

/** Zulip's per-setting checks that are not simple enumerations, in its order. */
function checkSettingValues(settings: Record<string, unknown>): void {
  const lang = settings.default_language;
  if (lang !== undefined && !(String(lang) in LANGUAGES)) throw errors.badRequest('Invalid default_language');
  const sound = settings.notification_sound;
  if (sound !== undefined && sound !== 'none' && !NOTIFICATION_SOUNDS.includes(String(sound))) {
    throw errors.badRequest("Invalid notification sound '{notification_sound}'", { notification_sound: sound });
  }
  const period = settings.email_notifications_batching_period_seconds;
  if (period !== undefined && (Number(period) <= 0 || Number(period) > MAX_EMAIL_BATCHING_PERIOD_SECONDS)) {
    throw errors.badRequest('Invalid email batching period: {seconds} seconds', { seconds: period });
  }
  const tz = settings.timezone;
  if (tz !== undefined && !isValidTimezone(String(tz))) {
    throw errors.badRequest('Invalid {var_name}: Value error, Not a recognized time zone', { var_name: 'timezone' });
  }
}

const toColumn = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** Writes one setting of one user and queues its events. Returns false when the value is unchanged. */
function applySetting(app: App, user: UserRow, name: string, value: unknown): boolean {
  if (settingValue(user, name) === value) return false;
  // `name` is a key of SETTINGS, never request text: safe to splice into SQL.
  stmt(app.db, `UPDATE user SET "${name}" = ? WHERE id = ?`).run(toColumn(value), user.id);
  if (name === 'email_address_visibility') emailVisibilityChanged(app, user, user.email_address_visibility);
  if (name === 'allow_private_data_export') notifyExportConsent(app, user, value === true);
  if (name === 'enable_drafts_synchronization' && value === false) {
    // zulip-compat: drafts are deleted without drafts events; clients keep their local copies.
    stmt(app.db, 'DELETE FROM draft WHERE user_id = ?').run(user.id);
  }
  const event: Record<string, unknown> = { type: 'user_settings', op: 'update', property: name, value };
  if (name === 'default_language') event.language_name = LANGUAGES[String(value)];
  app.batch.onCommit(() => app.events.send({ ...event, type: 'user_settings' }, [user.id]));
  if (name === 'timezone') {
    app.batch.onCommit(() =>
      app.events.send(
        { type: 'realm_user', op: 'update', person: { email: user.email, user_id: user.id, timezone: value } },
        userIdsWhoCanAccess(app.db, user),
      ),
    );
  }
  if (name === 'presence_enabled') {
    // zulip-compat: the deprecated user_status `away` mirrors presence_enabled.
    app.batch.onCommit(() =>
      app.events.send({ type: 'user_status', user_id: user.id, away: value === false }, userIdsWhoCanAccess(app.db, user)),
    );
  }
  return true;
}

/** The users target_users selects: listed ids plus every active member of the listed groups; humans only. */
function resolveTargets(app: App, acting: UserRow, t: TargetUsers): UserRow[] {
  const ids = new Set<number>();
  for (const id of t.user_ids ?? []) {
    const u = findUserById(app.db, acting.realm_id, id);
    if (!u || isBot(u)) throw errors.badRequest('Invalid user ID: {id}', { id });
    if (!u.is_active) throw errors.badRequest('User is deactivated');
    ids.add(id);
  }
  for (const gid of t.group_ids ?? []) {
    const g = findGroup(app.db, acting.realm_id, gid);
    if (!g) throw errors.badRequest('Invalid user group ID: {id}', { id: gid });
    for (const id of groupMemberIds(app.db, gid)) ids.add(id);
  }
  const out: UserRow[] = [];
  for (const id of [...ids].sort((a, b) => a - b)) {
    const u = findUserById(app.db, acting.realm_id, id);
    if (u && u.is_active && !isBot(u)) out.push(u);
  }
  return out;
}

/** PATCH /settings. `ignore` reports unchanged settings as ignored parameters. */
export function doChangeSettings(app: App, acting: UserRow, change: SettingsChange, ignore: (name: string) => void): void {
  if (isBot(acting)) throw errors.notForBots();
  checkSettingValues(change.settings);
  if (change.targetUsers) {
    doChangeOthersSettings(app, acting, change, ignore);
    return;
  }
  app.batch.write(() => {
    const user = findUserById(app.db, acting.realm_id, acting.id) as UserRow;
    const extra = realmExtra(app, user.realm_id);
    if (change.newPassword !== undefined) {
      // zulip-compat: a missing old_password is checked like a wrong one.
      if (!checkPassword(change.oldPassword ?? '', user.password_hash)) throw errors.badRequest('Wrong password!');
      if (change.newPassword.length < PASSWORD_MIN_LENGTH) throw errors.badRequest('New password is too weak!');
      stmt(app.db, 'UPDATE user SET password_hash = ? WHERE id = ?').run(hashPassword(change.newPassword), user.id);
      deleteOtherSessions(app, user.id, change.sessionToken ?? null);
    }
    const newEmail = change.email?.trim();
    if (newEmail !== undefined && newEmail !== '' && newEmail.toLowerCase() !== user.delivery_email.toLowerCase()) {
      startEmailChange(app, user, newEmail, extra);
    }
    if (change.fullName !== undefined && change.fullName !== user.full_name && change.fullName.trim() !== '') {
      // zulip-compat: with name changes disabled, a non-administrator's new name is silently dropped.
      if (!(extra.name_changes_disabled === true && !isAdmin(user))) {
        const name = checkFullName(change.fullName);
        checkUniqueName(app.db, user.realm_id, name, user.id);
        if (name !== user.full_name) {
          stmt(app.db, 'UPDATE user SET full_name = ? WHERE id = ?').run(name, user.id);
          app.batch.onCommit(() =>
            app.events.send(
              { type: 'realm_user', op: 'update', person: { user_id: user.id, full_name: name } },
              userIdsWhoCanAccess(app.db, user),
            ),
          );
        }
      }
    }
    const edited = editedSettings(user);
    let editedChanged = false;
    for (const [name, value] of Object.entries(change.settings)) {
      if (applySetting(app, user, name, value)) {
        if (!edited.has(name)) {
          edited.add(name);
          editedChanged = true;
        }
      } else {
        ignore(name);
      }
    }
    if (editedChanged) stmt(app.db, 'UPDATE user SET edited_settings = ? WHERE id = ?').run(JSON.stringify([...edited].sort()), user.id);
  });
}

function doChangeOthersSettings(app: App, acting: UserRow, change: SettingsChange, ignore: (name: string) => void): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  for (const [name, given] of [
    ['full_name', change.fullName],
    ['email', change.email],
    ['old_password', change.oldPassword],
    ['new_password', change.newPassword],
  ] as const) {
    if (given !== undefined) throw errors.incompatible(['target_users', name]);
  }
  const t = change.targetUsers as TargetUsers;
  app.batch.write(() => {
    const targets = resolveTargets(app, acting, t);
    for (const [name, value] of Object.entries(change.settings)) {
      let changed = false;
      for (const u of targets) {
        const fresh = findUserById(app.db, acting.realm_id, u.id) as UserRow;
        if (t.skip_if_already_edited && editedSettings(fresh).has(name)) continue;
        if (applySetting(app, fresh, name, value)) changed = true;
      }
      if (!changed) ignore(name);
    }
  });
}

function startEmailChange(app: App, user: UserRow, newEmail: string, extra: Record<string, unknown>): void {
  if (extra.email_changes_disabled === true && !isAdmin(user)) {
    throw errors.badRequest('Email address changes are disabled in this organization.');
  }
  // As Zulip's validate_email_change_request: the organization's rules for addresses apply (its
  // allowed domains), so a member cannot move their account outside them.
  const problem = realmEmailProblem(app.db, getRealmById(app.db, user.realm_id) as RealmRow, newEmail);
  if (problem) throw errors.badRequest(problem);
  if (findUserByDeliveryEmail(app.db, user.realm_id, newEmail) || findUserByEmail(app.db, user.realm_id, newEmail)) {
    throw errors.badRequest('Email is already in use.');
  }
  const now = nowSeconds(app.clock);
  const recent = stmt(app.db, 'SELECT created FROM email_change WHERE user_id = ? AND created > ? ORDER BY created').all(user.id, now - 3600) as {
    created: number;
  }[];
  if (recent.length >= EMAIL_CHANGES_PER_HOUR) {
    const retryAfter = Math.max(1, recent[0].created + 3600 - now);
    throw errors.rateLimited(retryAfter);
  }
  const key = randomAlnum(24).toLowerCase();
  stmt(app.db, 'INSERT INTO email_change (user_id, new_email, confirmation_key, created, expires) VALUES (?, ?, ?, ?, ?)').run(
    user.id,
    newEmail,
    key,
    now,
    now + EMAIL_CHANGE_VALIDITY_SECONDS,
  );
  const realm = getRealmById(app.db, user.realm_id);
  const link = `${app.publicUrl}/accounts/confirm_new_email/${key}`;
  app.batch.onCommit(() =>
    sendEmail(app, {
      to: newEmail,
      subject: 'Verify your new email address',
      text:
        `Hi ${user.full_name},\n\n` +
        `We received a request to change the email address for your account on ${realm?.name ?? 'Parley'} (${app.publicUrl}) ` +
        `from ${user.delivery_email} to ${newEmail}.\n\n` +
        `To confirm this change, open this link:\n${link}\n\n` +
        `The link is valid for 24 hours. If you did not request this change, you can ignore this email.\n`,
    }),
  );
}

export type EmailConfirmResult =
  | { ok: true; oldEmail: string; newEmail: string }
  | { ok: false; reason: 'invalid' | 'expired' | 'used' | 'taken' | 'deactivated' | 'disabled' };

/** GET /accounts/confirm_new_email/{key}: applies a pending email change. */
export function doConfirmEmailChange(app: App, key: string): EmailConfirmResult {
  return app.batch.write((): EmailConfirmResult => {
    const row = stmt(app.db, 'SELECT * FROM email_change WHERE confirmation_key = ?').get(key) as
      | { id: number; user_id: number; new_email: string; expires: number; used: number }
      | undefined;
    if (!row) return { ok: false, reason: 'invalid' };
    if (row.used) return { ok: false, reason: 'used' };
    if (row.expires < nowSeconds(app.clock)) return { ok: false, reason: 'expired' };
    const user = stmt(app.db, 'SELECT * FROM user WHERE id = ?').get(row.user_id) as UserRow | undefined;
    if (!user || !user.is_active) return { ok: false, reason: 'deactivated' };
    // As Zulip's confirm_email_change: turned off since the request, the change is not made (the link
    // stays unused here, so it works again if the setting is turned back on before it expires).
    if (realmExtra(app, user.realm_id).email_changes_disabled === true && !isAdmin(user)) return { ok: false, reason: 'disabled' };
    const other = findUserByDeliveryEmail(app.db, user.realm_id, row.new_email) ?? findUserByEmail(app.db, user.realm_id, row.new_email);
    if (other && other.id !== user.id) return { ok: false, reason: 'taken' };
    stmt(app.db, 'UPDATE email_change SET used = 1 WHERE id = ?').run(row.id);
    changeDeliveryEmail(app, user, row.new_email);
    return { ok: true, oldEmail: user.delivery_email, newEmail: row.new_email };
  });
}

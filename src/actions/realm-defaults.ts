// Organization defaults for new users' personal settings (PATCH /realm/user_settings_defaults). Changed
// values live in realm.extra_settings under REALM_DEFAULTS_KEY, over the user table's column defaults
// (src/events/state.ts merges them the same way for register); doCreateUser copies them to new humans.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { getRealmById } from '../lib/realm';
import { MAX_EMAIL_BATCHING_PERIOD_SECONDS, NOTIFICATION_SOUNDS, SETTINGS, type SettingDef } from '../lib/settings';
import { isAdmin, type UserRow } from '../lib/users';

/** The realm.extra_settings key holding the changed defaults (not a realm_* setting of its own). */
export const REALM_DEFAULTS_KEY = 'user_settings_defaults';

// zulip-compat: the endpoint takes the personal settings except these (OpenAPI 10.2's parameter list).
const NOT_DEFAULTS = new Set(['timezone', 'default_language', 'enable_login_emails', 'enable_marketing_emails']);

/** Settings PATCH /realm/user_settings_defaults accepts, with their types. */
export const REALM_DEFAULT_SETTINGS: Readonly<Record<string, SettingDef>> = Object.fromEntries(
  Object.entries(SETTINGS).filter(([name]) => !NOT_DEFAULTS.has(name)),
);

/** The realm's stored defaults (only the ones an administrator changed). */
export function storedRealmDefaults(app: App, realmId: number): Record<string, unknown> {
  try {
    const extra = JSON.parse(String(getRealmById(app.db, realmId)?.extra_settings ?? '{}')) as Record<string, unknown>;
    const d = extra?.[REALM_DEFAULTS_KEY];
    return d && typeof d === 'object' && !Array.isArray(d) ? (d as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function checkValues(settings: Record<string, unknown>): void {
  const sound = settings.notification_sound;
  if (sound !== undefined && sound !== 'none' && !NOTIFICATION_SOUNDS.includes(String(sound))) {
    throw errors.badRequest("Invalid notification sound '{notification_sound}'", { notification_sound: sound });
  }
  const period = settings.email_notifications_batching_period_seconds;
  if (period !== undefined && (Number(period) <= 0 || Number(period) > MAX_EMAIL_BATCHING_PERIOD_SECONDS)) {
    throw errors.badRequest('Invalid email batching period: {seconds} seconds', { seconds: period });
  }
}

/**
 * PATCH /realm/user_settings_defaults: stores the changed values and sends one update event per
 * changed setting. `current` gives the effective defaults (as register shows them); values equal to
 * them are not stored and send nothing.
 */
export function doUpdateRealmUserDefaults(
  app: App,
  acting: UserRow,
  settings: Record<string, unknown>,
  current: (realmId: number) => Record<string, unknown>,
): void {
  if (!isAdmin(acting)) throw errors.adminRequired();
  checkValues(settings);
  app.batch.write(() => {
    const realm = getRealmById(app.db, acting.realm_id);
    let extra: Record<string, unknown> = {};
    try {
      extra = JSON.parse(String(realm?.extra_settings ?? '{}')) ?? {};
    } catch {
      extra = {};
    }
    const stored = { ...storedRealmDefaults(app, acting.realm_id) };
    const effective = current(acting.realm_id);
    const changed: [string, unknown][] = [];
    for (const [name, value] of Object.entries(settings)) {
      if (effective[name] === value) continue;
      stored[name] = value;
      changed.push([name, value]);
    }
    if (changed.length === 0) return;
    extra[REALM_DEFAULTS_KEY] = stored;
    stmt(app.db, 'UPDATE realm SET extra_settings = ? WHERE id = ?').run(JSON.stringify(extra), acting.realm_id);
    const recipients = () =>
      (stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1').all(acting.realm_id) as { id: number }[]).map((r) => r.id);
    for (const [property, value] of changed) {
      app.batch.onCommit(() => app.events.send({ type: 'realm_user_settings_defaults', op: 'update', property, value }, recipients()));
    }
  });
}

/** Copies the realm's changed defaults onto a just-created user (inside the creating write). */
export function applyRealmUserDefaults(app: App, user: UserRow): void {
  const stored = storedRealmDefaults(app, user.realm_id);
  const names = Object.keys(stored);
  if (names.length === 0) return;
  const columns = new Set((app.db.prepare('PRAGMA table_info(user)').all() as { name: string }[]).map((c) => c.name));
  for (const name of names) {
    // Only known settings with a column: safe to splice into SQL.
    if (!columns.has(name) || !(name in REALM_DEFAULT_SETTINGS)) continue;
    const value = stored[name];
    stmt(app.db, `UPDATE user SET "${name}" = ? WHERE id = ?`).run(typeof value === 'boolean' ? (value ? 1 : 0) : (value as string | number), user.id);
  }
}

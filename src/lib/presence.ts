// Presence read side: Zulip's modern ({active_timestamp, idle_timestamp} by user id) and legacy
// ({website, aggregated} by email) formats, the update-id protocol, and who may see whom when the
// server limits presence to accessible users (CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE).
import type { App } from '../app';
import { accessibleUsers } from './access';
import { stmt } from '../db/stmt';
import { nowSeconds } from './clock';
import { isUserInGroup } from './groups';
import { getRealmById } from './realm';
import type { UserRow } from './users';

/** Zulip's PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS: "active" if active this close to the last connection. */
export const LEGACY_ACTIVITY_OFFSET_SECONDS = 70;
export const DEFAULT_PRESENCE_HISTORY_DAYS = 14;
/** Zulip's PRESENCE_UPDATE_MIN_FREQ_SECONDS: timestamps this fresh are not rewritten. */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Zulip's OFFLINE_THRESHOLD_SECS: a user last active longer ago than this counts as offline. */
export const OFFLINE_THRESHOLD_SECONDS = 140;

export interface PresenceRow {
  user_id: number;
  email: string;
  date_joined: number;
  last_active_time: number | null;
  last_connected_time: number | null;
  last_update_id: number;
}

/** Modern entry; a missing time reads as the user's join time, as in Zulip. */
export function modernPresence(r: Pick<PresenceRow, 'last_active_time' | 'last_connected_time' | 'date_joined'>): {
  active_timestamp: number;
  idle_timestamp: number;
} {
  // Whole seconds, as Zulip's datetime_to_timestamp gives: a time stored with a fraction (an import
  // of Zulip's float timestamps, a hand-edited row) must not reach clients that read an integer.
  return { active_timestamp: Math.trunc(r.last_active_time ?? r.date_joined), idle_timestamp: Math.trunc(r.last_connected_time ?? r.date_joined) };
}

/** The legacy "website" entry (client, status, timestamp, pushable). */
export function legacyClientPresence(r: Pick<PresenceRow, 'last_active_time' | 'last_connected_time' | 'date_joined'>): {
  client: string;
  status: 'active' | 'idle';
  timestamp: number;
  pushable: boolean;
} {
  const { active_timestamp: active, idle_timestamp: connected } = modernPresence(r);
  const isActive = active + LEGACY_ACTIVITY_OFFSET_SECONDS >= connected;
  return { client: 'website', status: isActive ? 'active' : 'idle', timestamp: isActive ? active : connected, pushable: false };
}

/** Zulip's legacy presence entry: "website" plus the same without pushable as "aggregated". */
export function legacyPresence(r: Pick<PresenceRow, 'last_active_time' | 'last_connected_time' | 'date_joined'>): Record<string, unknown> {
  const website = legacyClientPresence(r);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

function presenceDisabled(app: App, realmId: number): boolean {
  try {
    return JSON.parse(String(getRealmById(app.db, realmId)?.extra_settings ?? '{}')).presence_disabled === true;
  } catch {
    return false;
  }
}

/**
 * Ids of the users `viewer` may see in presence, or null for everyone: the server setting
 * (CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE) decides whether the organization's access limits
 * apply to presence at all.
 */
export function accessibleUserIds(app: App, viewer: UserRow): Set<number> | null {
  if (!app.config.accessLimitsPresence) return null;
  return accessibleUsers(app.db, viewer);
}

/** Who hears about `subject`'s presence: active users, limited to those who can access them. */
export function presenceRecipients(app: App, subject: UserRow): number[] {
  const users = stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL').all(subject.realm_id) as UserRow[];
  if (!app.config.accessLimitsPresence) return users.map((u) => u.id);
  return users.filter((u) => u.id === subject.id || (accessibleUserIds(app, u)?.has(subject.id) ?? true)).map((u) => u.id);
}

export interface PresenceQuery {
  modern: boolean;
  /** The client's last_update_id; null when it sent none. */
  lastUpdateId: number | null;
  /** null: the default window. */
  historyLimitDays: number | null;
}

/** Zulip's get_presences_for_realm: the presences map and presence_last_update_id. */
export function presencesForUser(
  app: App,
  viewer: UserRow,
  q: PresenceQuery,
): { presences: Record<string, unknown>; presence_last_update_id: number } {
  if (presenceDisabled(app, viewer.realm_id)) return { presences: {}, presence_last_update_id: q.lastUpdateId ?? -1 };
  const incremental = q.lastUpdateId !== null && q.lastUpdateId > 0;
  // zulip-compat: history_limit_days is ignored when fetching updates after a positive last_update_id.
  const since = incremental ? null : nowSeconds(app.clock) - (q.historyLimitDays ?? DEFAULT_PRESENCE_HISTORY_DAYS) * 86400;
  const rows = stmt(
    app.db,
    `SELECT p.user_id, u.email, u.date_joined, p.last_active_time, p.last_connected_time, p.last_update_id
     FROM presence p JOIN user u ON u.id = p.user_id
     WHERE p.realm_id = ? AND u.is_active = 1 AND u.bot_type IS NULL AND u.presence_enabled = 1
       AND (? IS NULL OR p.last_update_id > ?)
       AND (? IS NULL OR coalesce(p.last_connected_time, p.last_active_time, 0) >= ?)
     ORDER BY p.user_id`,
  ).all(viewer.realm_id, incremental ? q.lastUpdateId : null, q.lastUpdateId, since, since) as PresenceRow[];
  const visible = accessibleUserIds(app, viewer);
  let lastUpdateId = -1;
  const presences: Record<string, unknown> = {};
  for (const r of rows) {
    lastUpdateId = Math.max(lastUpdateId, r.last_update_id);
    if (visible && !visible.has(r.user_id)) continue;
    if (q.modern) presences[String(r.user_id)] = modernPresence(r);
    else presences[r.email] = legacyPresence(r);
  }
  if (rows.length === 0 && q.lastUpdateId !== null) lastUpdateId = q.lastUpdateId;
  return { presences, presence_last_update_id: lastUpdateId };
}

/**
 * POST /register's presences in the modern format as JSON built by SQLite (700 rows as objects and
 * then as JSON cost ~1 ms), the same text presencesForUser's answer serialises to; null where that
 * answer needs JavaScript: presence disabled, or a viewer with limited access. Times are whole seconds
 * in both (CAST truncates as modernPresence's Math.trunc does).
 */
export function presencesJsonForUser(app: App, viewer: UserRow, historyLimitDays: number | null): { json: string; lastUpdateId: number } | null {
  if (presenceDisabled(app, viewer.realm_id) || accessibleUserIds(app, viewer) !== null) return null;
  const since = nowSeconds(app.clock) - (historyLimitDays ?? DEFAULT_PRESENCE_HISTORY_DAYS) * 86400;
  const row = stmt(
    app.db,
    `SELECT json_group_object(p.user_id, json_object(
              'active_timestamp', CAST(coalesce(p.last_active_time, u.date_joined) AS INTEGER),
              'idle_timestamp', CAST(coalesce(p.last_connected_time, u.date_joined) AS INTEGER)) ORDER BY p.user_id) AS json,
            coalesce(max(p.last_update_id), -1) AS last
     FROM presence p JOIN user u ON u.id = p.user_id
     WHERE p.realm_id = ? AND u.is_active = 1 AND u.bot_type IS NULL AND u.presence_enabled = 1
       AND coalesce(p.last_connected_time, p.last_active_time, 0) >= ?`,
  ).get(viewer.realm_id, since) as { json: string; last: number };
  return { json: row.json, lastUpdateId: row.last };
}

/** One user's presence row (GET /users/{id}/presence), or null if they never reported any. */
export function presenceRowOf(app: App, user: UserRow): PresenceRow | null {
  return (
    (stmt(
      app.db,
      `SELECT p.user_id, u.email, u.date_joined, p.last_active_time, p.last_connected_time, p.last_update_id
       FROM presence p JOIN user u ON u.id = p.user_id WHERE p.user_id = ?`,
    ).get(user.id) as PresenceRow | undefined) ?? null
  );
}

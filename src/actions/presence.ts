// POST /users/me/presence: records the caller's presence (Zulip's do_update_user_presence) and
// announces a user coming online, in both the legacy and the modern event form.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { nowSeconds } from '../lib/clock';
import { getRealmById } from '../lib/realm';
import {
  legacyClientPresence,
  modernPresence,
  OFFLINE_THRESHOLD_SECONDS,
  PRESENCE_UPDATE_MIN_FREQ_SECONDS,
  presenceRecipients,
} from '../lib/presence';
import { isBot, type UserRow } from '../lib/users';

export type PresenceStatus = 'active' | 'idle';

interface Row {
  last_active_time: number | null;
  last_connected_time: number | null;
}

/** Records a presence report; rewrites timestamps only when stale, with a new realm update id. */
export function doUpdatePresence(app: App, user: UserRow, status: PresenceStatus): void {
  if (isBot(user)) throw errors.notForBots();
  app.batch.write(() => {
    const now = nowSeconds(app.clock);
    const old = stmt(app.db, 'SELECT last_active_time, last_connected_time FROM presence WHERE user_id = ?').get(user.id) as Row | undefined;
    const created = old === undefined;
    let active = old?.last_active_time ?? null;
    let connected = old?.last_connected_time ?? null;
    const wasIdleOrOffline =
      active === null || now - active > OFFLINE_THRESHOLD_SECONDS || (connected !== null && active + 70 < connected);
    let changed = created;
    if (connected === null || now - connected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
      connected = now;
      changed = true;
    }
    if (status === 'active' && (active === null || now - active > PRESENCE_UPDATE_MIN_FREQ_SECONDS)) {
      active = now;
      changed = true;
    }
    if (!changed) return;
    // The realm's sequence orders every presence change (the last_update_id protocol).
    stmt(app.db, 'UPDATE realm SET presence_last_update_id = presence_last_update_id + 1 WHERE id = ?').run(user.realm_id);
    const updateId = (stmt(app.db, 'SELECT presence_last_update_id AS id FROM realm WHERE id = ?').get(user.realm_id) as { id: number }).id;
    stmt(
      app.db,
      `INSERT INTO presence (user_id, realm_id, last_active_time, last_connected_time, last_update_id) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET last_active_time = excluded.last_active_time,
         last_connected_time = excluded.last_connected_time, last_update_id = excluded.last_update_id`,
    ).run(user.id, user.realm_id, active, connected, updateId);
    const becameOnline = status === 'active' && wasIdleOrOffline;
    if (!(created || becameOnline) || !user.presence_enabled || realmPresenceDisabled(app, user.realm_id)) return;
    const entry = { last_active_time: active, last_connected_time: connected, date_joined: user.date_joined };
    const event = {
      type: 'presence',
      user_id: user.id,
      email: user.email,
      server_timestamp: app.clock.nowMs() / 1000,
      presence: { website: legacyClientPresence(entry) },
      presences: { [String(user.id)]: modernPresence(entry) },
    };
    app.batch.onCommit(() => app.events.send(event, presenceRecipients(app, user)));
  });
}

function realmPresenceDisabled(app: App, realmId: number): boolean {
  try {
    return JSON.parse(String(getRealmById(app.db, realmId)?.extra_settings ?? '{}')).presence_disabled === true;
  } catch {
    return false;
  }
}

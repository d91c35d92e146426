// The user's logged-in devices as clients see them (Zulip 12, feature level 468): the `devices` of
// POST /register and the fields of `device` update events. One home for the wire shape of a device.
//
// Parley hands a registration to the push service's delivery queue, which retries until it is
// delivered, so a registered token is reported as registered at once: push_token_id is set,
// pending_push_token_id and push_registration_error_code stay null.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { registerStateProvider } from '../events/state';

export interface DeviceRow {
  id: number;
  push_key_id: number | null;
  token_id: string | null;
  token_updated: number | null;
}

export interface DeviceInfo {
  push_key_id: number | null;
  push_token_id: string | null;
  pending_push_token_id: string | null;
  push_token_last_updated_timestamp: number | null;
  push_registration_error_code: string | null;
}

/** token_id in its canonical base64 (Zulip re-encodes the 8 bytes it stores as an integer). */
export const canonicalTokenId = (tokenId: string) => Buffer.from(tokenId, 'base64').toString('base64');

export function deviceInfo(d: DeviceRow): DeviceInfo {
  return {
    push_key_id: d.push_key_id,
    push_token_id: d.token_id === null ? null : canonicalTokenId(d.token_id),
    pending_push_token_id: null,
    push_token_last_updated_timestamp: d.token_id === null ? null : d.token_updated,
    push_registration_error_code: null,
  };
}

/** The user's devices, keyed by id (as a string: a JSON object key). */
export function userDevices(db: Db, userId: number): Record<string, DeviceInfo> {
  const rows = stmt(
    db,
    `SELECT d.id, p.push_key_id, p.token_id, p.token_updated
     FROM client_device d LEFT JOIN push_device p ON p.device_id = d.id
     WHERE d.user_id = ? ORDER BY d.id`,
  ).all(userId) as DeviceRow[];
  const out: Record<string, DeviceInfo> = {};
  for (const r of rows) out[String(r.id)] = deviceInfo(r);
  return out;
}

registerStateProvider('device', (app, user) => ({ devices: userDevices(app.db, user.id) }));

// The user's logged-in devices as clients see them (Zulip 12, feature level 468): the `devices` of
// POST /register and the fields of `device` update events. One home for the wire shape of a device.
//
// A token is pending (pending_push_token_id) from its registration until the push service
// acknowledges it (push_token_id) or refuses it (push_registration_error_code), as in Zulip.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { registerStateProvider } from '../events/state';

export interface DeviceRow {
  id: number;
  push_key_id: number | null;
  token_id: string | null;
  token_updated: number | null;
  registered_token_id: string | null;
  registration_error: string | null;
}

/** The columns of push_device a DeviceRow reads (with the device id as `id`). */
export const DEVICE_COLUMNS = 'push_key_id, token_id, token_updated, registered_token_id, registration_error';

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
  const pending = d.token_id !== null && d.token_id !== d.registered_token_id;
  return {
    push_key_id: d.push_key_id,
    push_token_id: d.registered_token_id === null ? null : canonicalTokenId(d.registered_token_id),
    pending_push_token_id: pending ? canonicalTokenId(d.token_id as string) : null,
    push_token_last_updated_timestamp: d.token_id === null ? null : d.token_updated,
    push_registration_error_code: pending ? d.registration_error : null,
  };
}

/** The user's devices, keyed by id (as a string: a JSON object key). */
export function userDevices(db: Db, userId: number): Record<string, DeviceInfo> {
  const rows = stmt(
    db,
    `SELECT d.id, p.push_key_id, p.token_id, p.token_updated, p.registered_token_id, p.registration_error
     FROM client_device d LEFT JOIN push_device p ON p.device_id = d.id
     WHERE d.user_id = ? ORDER BY d.id`,
  ).all(userId) as DeviceRow[];
  const out: Record<string, DeviceInfo> = {};
  for (const r of rows) out[String(r.id)] = deviceInfo(r);
  return out;
}

registerStateProvider('device', (app, user) => ({ devices: userDevices(app.db, user.id) }));

// Read side of invitations: lookups by id and by link key, whether a link can still be used, and the
// Invite objects of GET /invites.
import crypto from 'node:crypto';
import type { App } from '../app';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { nowSeconds } from './clock';
import { isAdmin, type UserRow } from './users';

export const INVITE_STATUS = { PENDING: 0, USED: 1, REVOKED: 2 } as const;

export interface InvitationRow {
  id: number;
  realm_id: number;
  email: string | null;
  referrer_id: number;
  invited_as: number;
  confirmation_key: string;
  created: number;
  expires: number | null;
  status: number;
  multiuse: number;
  include_realm_default_subscriptions: number;
  notify_referrer_on_join: number;
  welcome_message_custom_text: string | null;
  stream_ids: string;
  group_ids: string;
  /** A multi-use link's sign-up awaiting email confirmation: the link's id (not listed, not counted). */
  registration_of: number | null;
}

const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new link key: 24 random lowercase letters and digits, like Zulip's confirmation keys. */
export function newInvitationKey(): string {
  let out = '';
  while (out.length < 24) {
    for (const b of crypto.randomBytes(32)) {
      if (b < 252) out += KEY_ALPHABET[b % 36];
      if (out.length === 24) break;
    }
  }
  return out;
}

/** The sign-up link of an invitation. */
export const invitationLink = (app: App, key: string) => `${app.publicUrl}/join/${key}/`;

/** An invitation by id (sign-ups waiting for their confirmation are not invitations anyone manages). */
export function findInvitation(db: Db, realmId: number, id: number, multiuse: boolean): InvitationRow | null {
  return (
    (stmt(db, 'SELECT * FROM invitation WHERE realm_id = ? AND id = ? AND multiuse = ? AND registration_of IS NULL').get(realmId, id, multiuse ? 1 : 0) as
      | InvitationRow
      | undefined) ?? null
  );
}

export function findInvitationByKey(db: Db, key: string): InvitationRow | null {
  return (stmt(db, 'SELECT * FROM invitation WHERE confirmation_key = ?').get(key) as InvitationRow | undefined) ?? null;
}

export type InvitationState = 'valid' | 'expired' | 'used' | 'revoked';

/** Whether the link can still be used at `now` (seconds). Multi-use links are never "used". */
export function invitationState(row: InvitationRow, now: number): InvitationState {
  if (row.status === INVITE_STATUS.REVOKED) return 'revoked';
  if (row.status === INVITE_STATUS.USED && !row.multiuse) return 'used';
  if (row.expires !== null && row.expires <= now) return 'expired';
  return 'valid';
}

export const invitationStreamIds = (row: InvitationRow) => JSON.parse(row.stream_ids) as number[];
export const invitationGroupIds = (row: InvitationRow) => JSON.parse(row.group_ids) as number[];

/** The Invite object of GET /invites (key order as Zulip's dataclasses). */
export function formatInvite(app: App, row: InvitationRow): Record<string, unknown> {
  if (row.multiuse) {
    return {
      invited_by_user_id: row.referrer_id,
      invited: row.created,
      expiry_date: row.expires,
      id: row.id,
      link_url: invitationLink(app, row.confirmation_key),
      invited_as: row.invited_as,
      is_multiuse: true,
    };
  }
  return {
    email: row.email,
    invited_by_user_id: row.referrer_id,
    invited: row.created,
    expiry_date: row.expires,
    id: row.id,
    invited_as: row.invited_as,
    is_multiuse: false,
    notify_referrer_on_join: row.notify_referrer_on_join === 1,
  };
}

/**
 * Unexpired, unused, unrevoked invitations `user` can manage: an administrator's are the whole
 * organization's, anyone else's are their own. Email invitations first, then links, each by id.
 */
export function listInvites(app: App, user: UserRow): Record<string, unknown>[] {
  const now = nowSeconds(app.clock);
  const rows = (
    isAdmin(user)
      ? stmt(app.db, 'SELECT * FROM invitation WHERE realm_id = ? AND status = 0 AND registration_of IS NULL ORDER BY multiuse, id').all(user.realm_id)
      : stmt(app.db, 'SELECT * FROM invitation WHERE realm_id = ? AND status = 0 AND registration_of IS NULL AND referrer_id = ? ORDER BY multiuse, id').all(
          user.realm_id,
          user.id,
        )
  ) as InvitationRow[];
  return rows.filter((r) => invitationState(r, now) === 'valid').map((r) => formatInvite(app, r));
}

/** Email invitations created in the realm after `since` (for the daily limit). */
export function countRecentInvitations(db: Db, realmId: number, since: number): number {
  return (stmt(db, 'SELECT count(*) AS n FROM invitation WHERE realm_id = ? AND multiuse = 0 AND registration_of IS NULL AND created > ?').get(realmId, since) as { n: number }).n;
}

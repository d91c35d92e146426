// What every part of the export shares: the id maps that stand in for Zulip's recipient table
// (Parley has none: channels and direct-message groups are addressed directly), the clients, the
// system groups by name, and the small conversions (dates to floats, 0/1 to booleans).
import crypto from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ExportFilter } from './filter';
import { CROSS_REALM_BOT_EMAILS } from './zulip-format';

export type Db = Database.Database;
export type Row = Record<string, any>;

export const secs = (t: number | null | undefined): number | null => (t === null || t === undefined ? null : Number(t));
export const bool = (v: unknown): boolean => v === 1 || v === true;
export const nbool = (v: unknown): boolean | null => (v === null || v === undefined ? null : bool(v));

/** Zulip's get_direct_message_group_hash: SHA-1 of the sorted, distinct ids joined by ",". */
export const huddleHash = (ids: number[]): string =>
  crypto
    .createHash('sha1')
    .update([...new Set(ids)].sort((a, b) => a - b).join(','))
    .digest('hex');

/** What every part of the export needs: the id maps that stand in for Zulip's recipient table. */
export interface Context {
  realm: Row;
  realmId: number;
  /** Every account of the realm (small: one row per person or bot). */
  users: Map<number, Row>;
  /** System bots (Zulip's cross-realm bots) by user id → Zulip's default address. */
  crossRealm: Map<number, string>;
  personalRecipient: Map<number, number>;
  streamRecipient: Map<number, number>;
  /** Parley direct_group id → its members. */
  directGroups: Map<number, number[]>;
  /** Group-DM member sets (sorted, joined) → huddle id (a Parley direct_group id, or a new one for scheduled messages). */
  huddles: Map<string, { id: number; members: number[]; recipient: number }>;
  clients: Map<string, number>;
  groupByName: Map<string, number>;
  nextRecipient: number;
  /** What an API export of a given type leaves out (filter.ts); null: everything goes in (the CLI). */
  filter: ExportFilter | null;
}

export function buildContext(db: Db, realm: Row): Context {
  const realmId = realm.id as number;
  const users = new Map<number, Row>();
  for (const u of db.prepare('SELECT * FROM user WHERE realm_id = ? ORDER BY id').all(realmId) as Row[]) users.set(u.id, u);
  const crossRealm = new Map<number, string>();
  for (const u of users.values()) {
    if (u.bot_type === null || u.bot_owner_id !== null) continue;
    const local = String(u.email).slice(0, String(u.email).lastIndexOf('@')).toLowerCase().replace(/\+.*$/, '');
    if (local === 'notification-bot') crossRealm.set(u.id, CROSS_REALM_BOT_EMAILS.notification);
    else if (local === 'welcome-bot') crossRealm.set(u.id, CROSS_REALM_BOT_EMAILS.welcome);
  }
  const ctx: Context = {
    realm,
    realmId,
    users,
    crossRealm,
    personalRecipient: new Map(),
    streamRecipient: new Map(),
    directGroups: new Map(),
    huddles: new Map(),
    clients: new Map(),
    groupByName: new Map(),
    nextRecipient: 1,
    filter: null,
  };
  for (const id of users.keys()) ctx.personalRecipient.set(id, ctx.nextRecipient++);
  for (const s of db.prepare('SELECT id FROM stream WHERE realm_id = ? ORDER BY id').all(realmId) as { id: number }[]) ctx.streamRecipient.set(s.id, ctx.nextRecipient++);
  for (const r of db.prepare('SELECT m.group_id, m.user_id FROM direct_group_member m JOIN direct_group g ON g.id = m.group_id WHERE g.realm_id = ? ORDER BY m.group_id, m.user_id').all(realmId) as { group_id: number; user_id: number }[]) {
    let list = ctx.directGroups.get(r.group_id);
    if (!list) ctx.directGroups.set(r.group_id, (list = []));
    list.push(r.user_id);
  }
  for (const [groupId, members] of ctx.directGroups) if (members.length >= 3) huddleFor(ctx, members, groupId);
  // Zulip's sending_client: "API" for rows that need one (statuses, scheduled messages) where Parley
  // keeps none; the names messages were sent with are added as the messages are written
  // (clientId), before realm.json lists them: a DISTINCT over the whole history would scan it once more.
  ctx.clients.set('API', 1);
  for (const g of db.prepare('SELECT id, name FROM user_group WHERE realm_id = ? AND name IS NOT NULL').all(realmId) as { id: number; name: string }[]) ctx.groupByName.set(g.name, g.id);
  return ctx;
}

/** Zulip's client id of a client name, given at its first use. */
export function clientId(ctx: Context, name: string): number {
  let id = ctx.clients.get(name);
  if (id === undefined) ctx.clients.set(name, (id = ctx.clients.size + 1));
  return id;
}

/** The huddle of a member set of three or more, made (with a new id past Parley's) if no message made it yet. */
export function huddleFor(ctx: Context, members: number[], id?: number): { id: number; members: number[]; recipient: number } {
  const sorted = [...new Set(members)].sort((a, b) => a - b);
  const key = sorted.join(',');
  let h = ctx.huddles.get(key);
  if (!h) {
    const newId = id ?? Math.max(0, ...[...ctx.directGroups.keys()], ...[...ctx.huddles.values()].map((x) => x.id)) + 1;
    h = { id: newId, members: sorted, recipient: ctx.nextRecipient++ };
    ctx.huddles.set(key, h);
  }
  return h;
}

/** Zulip's recipient of a direct message: the other person's personal recipient, one's own for a note to self, the huddle's for three or more. */
export function directRecipient(ctx: Context, members: number[], senderId: number): number {
  const set = [...new Set(members)];
  if (set.length >= 3) return huddleFor(ctx, set).recipient;
  const other = set.find((u) => u !== senderId) ?? senderId;
  const r = ctx.personalRecipient.get(other);
  if (r === undefined) throw new Error(`direct message to user ${other}, who is not in the organization`);
  return r;
}

export function groupId(ctx: Context, value: number | null, fallbackName: string): number {
  if (value !== null && value !== undefined) return value;
  const id = ctx.groupByName.get(fallbackName);
  if (id === undefined) throw new Error(`the organization has no ${fallbackName} group`);
  return id;
}

export type Put = (name: string, source: Buffer | { file: string; size: number }) => Promise<void>;

// What an export of a given type leaves out, as Zulip's export.py decides it for the exports
// organization administrators ask for over the API (RealmExport.type):
// - public (1): every channel's settings and members, but only the messages of public channels; no
//   scheduled messages, no group DMs, no one's private data (keepPrivate); the real address of a
//   person who shows it to nobody is replaced by their placeholder address (admins could not read it
//   either), and that account becomes a mirror dummy.
// - full with member consent (2): also the private-channel messages and direct messages that a
//   consenting person (an active human with allow_private_data_export, get_consented_user_ids) can
//   read, the group DMs they are in, and their private data: per-user message rows, scheduled
//   messages, private rows, settings, channel preferences. The others are mirror dummies.
// `parley export` on the command line exports everything (Zulip's manage.py export) and has no filter.
import type { Db } from './context';
import { realmUserSettingsDefaults } from '../events/state';

/** Zulip's RealmExport.EXPORT_PUBLIC and EXPORT_FULL_WITH_CONSENT (the types the API may ask for). */
export const EXPORT_TYPE = { PUBLIC: 1, FULL_WITH_CONSENT: 2 } as const;
export type ExportType = (typeof EXPORT_TYPE)[keyof typeof EXPORT_TYPE];

export interface ExportFilter {
  type: ExportType;
  /** Zulip's get_consented_user_ids (empty for a public export: no one's private data goes in). */
  consented: ReadonlySet<number>;
  /** Channels all of whose messages go in: public ones, and for a consent export the private ones with shared history that a consenting person is subscribed to. */
  openStreams: ReadonlySet<number>;
  /** People whose real address is replaced by their placeholder (visibility "nobody", not consenting). */
  hiddenAddresses: ReadonlySet<number>;
  /** The personal settings a new account starts with (the organization's defaults for new users): what people who did not consent get. */
  settingDefaults: Readonly<Record<string, unknown>>;
  /** Filled as messages are written: the exported ones (reactions and attachments follow them). */
  keptMessages: Set<number>;
  /** Filled as realm.json is written: the exported scheduled messages (their attachments follow them). */
  keptScheduled: Set<number>;
}

/** The filter of an export of `type` over the snapshot `db`. */
export function buildFilter(db: Db, realmId: number, type: ExportType): ExportFilter {
  const ids = (sql: string) => new Set(db.prepare(sql).pluck().all(realmId) as number[]);
  const consented =
    type === EXPORT_TYPE.FULL_WITH_CONSENT
      ? ids('SELECT id FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL AND allow_private_data_export = 1')
      : new Set<number>();
  const openStreams = ids('SELECT id FROM stream WHERE realm_id = ? AND invite_only = 0');
  if (type === EXPORT_TYPE.FULL_WITH_CONSENT) {
    const shared = db
      .prepare(
        `SELECT DISTINCT s.stream_id, s.user_id FROM subscription s JOIN stream c ON c.id = s.stream_id
         WHERE c.realm_id = ? AND c.invite_only = 1 AND c.history_public_to_subscribers = 1 AND s.active = 1`,
      )
      .all(realmId) as { stream_id: number; user_id: number }[];
    for (const r of shared) if (consented.has(r.user_id)) openStreams.add(r.stream_id);
  }
  // 4 is EMAIL_ADDRESS_VISIBILITY_NOBODY: the only setting under which administrators cannot read an
  // address. Zulip's custom_fetch_user_profile replaces it for every person whose private data is not
  // exported: everyone in a public export, those who did not consent in a consent export.
  const hiddenAddresses = ids('SELECT id FROM user WHERE realm_id = ? AND bot_type IS NULL AND email_address_visibility = 4');
  for (const id of consented) hiddenAddresses.delete(id);
  return { type, consented, openStreams, hiddenAddresses, settingDefaults: newUserDefaults(db, realmId), keptMessages: new Set(), keptScheduled: new Set() };
}

/**
 * What a new account of the organization starts with, as Zulip's RealmUserDefault: the
 * organization's defaults for new users (realmUserSettingsDefaults: PATCH
 * /realm/user_settings_defaults over the column defaults), over every other column's default.
 */
function newUserDefaults(db: Db, realmId: number): Record<string, unknown> {
  return { ...columnDefaults(db, 'user'), ...realmUserSettingsDefaults(db, realmId) };
}

/** A table's column defaults as values (SQLite keeps each as SQL text: 'en', 0, NULL). */
function columnDefaults(db: Db, table: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of db.prepare('SELECT name, dflt_value FROM pragma_table_info(?)').all(table) as { name: string; dflt_value: string | null }[]) {
    const d = c.dflt_value;
    if (d === null || /^null$/i.test(d)) out[c.name] = null;
    else if (/^'.*'$/s.test(d)) out[c.name] = d.slice(1, -1).replace(/''/g, "'");
    else if (/^-?\d+(\.\d+)?$/.test(d)) out[c.name] = Number(d);
  }
  return out;
}

/**
 * Whether a person's private data goes in: their private rows (Zulip's limit_to_consenting_users:
 * alert words, topic settings, muted people, status, snippets, views, a bot's storage and services),
 * their personal settings and their channel preferences. Only consenting people's in a filtered
 * export (no one's in a public one); everyone's without a filter (the command line).
 */
export function keepPrivate(f: ExportFilter | null, userId: number): boolean {
  return f === null || f.consented.has(userId);
}

/** Zulip's custom_fetch_direct_message_groups: a group DM goes in only with a consenting member (none in a public export). */
export function keepDirectGroup(f: ExportFilter | null, members: readonly number[]): boolean {
  return f === null || members.some((u) => f.consented.has(u));
}

/**
 * Whether a message goes in: a message of an open channel always; otherwise (a private channel with
 * protected history, a direct message) only in a consent export, when a consenting person has it
 * (`holders`: the users with a per-user row of it).
 */
export function keepMessage(f: ExportFilter, streamId: number | null, holders: readonly number[]): boolean {
  if (streamId !== null && f.openStreams.has(streamId)) return true;
  if (f.type !== EXPORT_TYPE.FULL_WITH_CONSENT) return false;
  return holders.some((u) => f.consented.has(u));
}

/** Whether a person's per-user message rows go in (a consent export keeps only the consenting people's). */
export function keepUserMessages(f: ExportFilter, userId: number): boolean {
  return f.type !== EXPORT_TYPE.FULL_WITH_CONSENT || f.consented.has(userId);
}

/** Zulip's get_exportable_scheduled_message_ids: none in a public export, the consenting senders' in a consent export. */
export function keepScheduled(f: ExportFilter, senderId: number): boolean {
  return f.type === EXPORT_TYPE.FULL_WITH_CONSENT && f.consented.has(senderId);
}

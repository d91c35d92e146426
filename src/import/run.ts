// `parley import`: the framework every importer runs in. The data directory must hold no database;
// the importer writes a new one in a staging directory (src/import/staging.ts), which becomes the
// data directory's only when everything succeeded. Any failure removes the staging directory: the
// data directory is left as it was. Prints what it imported and each account's credentials: the API
// key, and for people a one-time link to set a password (src/actions/password-links.ts).
import path from 'node:path';
import { createApp, type App } from '../app';
import { boundUrl, type Config } from '../config';
import { doCreatePasswordLink, passwordLinkPath } from '../actions/password-links';
import { stmt } from '../db/stmt';
import { checkEmptyTarget, commitStaging, createStaging, discardStaging } from './staging';
import { NOT_SYSTEM_BOT_SQL } from '../lib/users';

export const IMPORT_FORMATS = ['slack', 'zulip'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ImportedAccount {
  user_id: number;
  email: string;
  full_name: string;
  role: number;
  is_bot: boolean;
  is_active: boolean;
  api_key: string;
  /** A one-time link to set a password (people only; bots log in with their API key). */
  set_password_url?: string;
}

export interface ImportReport {
  realm_id: number;
  /** Counts of what was imported (users, channels, messages, ...). */
  imported: Record<string, number>;
  warnings: string[];
  accounts: ImportedAccount[];
}

/** What an importer reports: the new organization's id, counts of what it imported, warnings. */
export interface ImportResult {
  realmId: number;
  counts: Record<string, number>;
  warnings: string[];
}

/**
 * An importer: reads the export `file` (opening and closing it itself) and creates the organization
 * in `app`, whose database is new and empty (in the staging directory). It throws ImportError for
 * anything wrong with the export; whatever it wrote is then thrown away with the staging directory.
 */
export type Importer = (app: App, file: string, opts: { realmName: string }) => Promise<ImportResult>;

/** The importer of `format`, loaded only by this command (not by every start of the server). */
async function loadImporter(format: ImportFormat): Promise<Importer> {
  switch (format) {
    case 'slack':
      return (await import('./slack/import')).importSlackExport;
    case 'zulip':
      return (await import('./zulip/import')).importZulipExport;
  }
}

/** Imports `file` (of `format`) into `config.dataDir`, all or nothing. */
export async function runImport(config: Config, format: ImportFormat, file: string, opts: { realmName: string }): Promise<ImportReport> {
  const importer = await loadImporter(format);
  const dataDir = path.resolve(config.dataDir);
  checkEmptyTarget(dataDir);
  const staging = createStaging(dataDir);
  let app: App | null = null;
  try {
    // No log, no external services: nothing runs but the import.
    app = createApp({ ...config, dataDir: staging }, { logSink: null });
    const result = await importer(app, path.resolve(file), opts);
    const base = (config.externalUrl ?? boundUrl(config)).replace(/\/$/, '');
    const accounts = (
      stmt(app.db, `SELECT u.id, u.email, u.full_name, u.role, u.bot_type, u.is_active, u.api_key FROM user u WHERE u.realm_id = ? AND ${NOT_SYSTEM_BOT_SQL} ORDER BY u.id`).all(
        result.realmId,
      ) as { id: number; email: string; full_name: string; role: number; bot_type: number | null; is_active: number; api_key: string }[]
    ).map((u): ImportedAccount => {
      const account: ImportedAccount = { user_id: u.id, email: u.email, full_name: u.full_name, role: u.role, is_bot: u.bot_type !== null, is_active: u.is_active === 1, api_key: u.api_key };
      // Imported people have no password: each gets a link to set one, as an invitation would.
      if (account.is_active && !account.is_bot) account.set_password_url = base + passwordLinkPath(doCreatePasswordLink(app as App, u.id));
      return account;
    });
    app.batch.commit();
    // The WAL folded into the database file, so that the one file moved into place holds everything.
    app.db.pragma('wal_checkpoint(TRUNCATE)');
    app.close();
    app = null;
    commitStaging(staging, dataDir);
    return { realm_id: result.realmId, imported: result.counts, warnings: result.warnings, accounts };
  } catch (err) {
    try {
      app?.close();
    } finally {
      discardStaging(staging);
    }
    throw err;
  }
}

// What the parts of the Zulip importer share: the new organization, where the unpacked export is, and
// the maps that stand in for Zulip's recipient table (Parley addresses channels and conversations
// directly), plus the small conversions (float seconds, booleans) and the one row writer.
import type { App } from '../../app';
import { stmt } from '../../db/stmt';
import { ImportError } from '../errors';

export type Row = Record<string, unknown>;

export type Recipient = { stream: number } | { user: number } | { huddle: number };

export interface ZulipImport {
  app: App;
  realmId: number;
  /** The unpacked export's top directory. */
  root: string;
  warnings: string[];
  /** Messages (or edit histories) whose HTML was not kept but rendered again from their Markdown (rendered-html.ts). */
  rerendered: number;
  counts: Record<string, number>;
  recipients: Map<number, Recipient>;
  /** Zulip huddle id → its members (from the huddle's subscriptions). */
  huddleMembers: Map<number, number[]>;
  /** A Zulip user id (a cross-realm bot's among them) → the Parley account. */
  users: Map<number, number>;
  /** zerver_client id → name (a message's `client`). */
  clients: Map<number, string>;
  /** Direct-message conversations made so far, by sorted member ids. */
  directGroups: Map<string, number>;
  /**
   * URLs of files the import had to move, old → new (root-relative: "/user_uploads/<path_id>",
   * "/user_avatars/<realm>/emoji/images/<file>"): Zulip's are kept where Parley can serve them;
   * messages linking the others are rewritten.
   */
  linkChanges: Map<string, string>;
}

/** Whole seconds from Zulip's float seconds (null stays null). */
export const secs = (v: unknown): number | null => (typeof v === 'number' ? Math.floor(v) : null);
/** SQLite 0/1 from a JSON boolean (absent: the column's default given). */
export const bit = (v: unknown, dflt: 0 | 1 = 0): 0 | 1 => (v === true ? 1 : v === false ? 0 : dflt);
export const nbit = (v: unknown): 0 | 1 | null => (v === true ? 1 : v === false ? 0 : null);

/**
 * Inserts a row into a Parley table. The column names are always the importer's own (constants in
 * this code, or Parley's setting names), never keys read from the export; values are bound.
 */
export function insertRow(app: App, table: string, row: Row): number {
  const cols = Object.keys(row);
  const sql = `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
  return Number(stmt(app.db, sql).run(...cols.map((c) => row[c] as never)).lastInsertRowid);
}

/** Runs `fn`, turning a database refusal (a duplicate, a dangling reference) into an ImportError naming `where`. */
export function described<T>(where: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const e = err as Error & { code?: string };
    if (typeof e.code === 'string' && e.code.startsWith('SQLITE_')) throw new ImportError(`${where}: ${e.message}`);
    // A value of a kind no column takes (an object or a list where the check knows no type).
    if (err instanceof TypeError && /can only bind/.test(e.message)) throw new ImportError(`${where}: a value is not a number, string or null`);
    throw err;
  }
}

/** The list `table` of a file's object (absent: empty; the checker has refused other shapes). */
export const rowsOf = (data: Row, table: string): Row[] => (Array.isArray(data[table]) ? (data[table] as Row[]) : []);

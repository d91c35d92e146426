// Forward-only migrations tracked with PRAGMA user_version. A new database gets schema.sql whole and
// the newest version number; an older one runs each later step in order, in one transaction.
import type Database from 'better-sqlite3';
import { schemaSql } from './schema-source';

type Db = Database.Database;

/** Steps that move a database from version N-1 to N (index 0 moves 1 → 2). schema.sql is version 1 + steps. */
const STEPS: ((db: Db) => void)[] = [];

export const SCHEMA_VERSION = 1 + STEPS.length;

/** Creates or upgrades the schema. */
export function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`database schema version ${version} is newer than this Parley (${SCHEMA_VERSION})`);
  }
  if (version === SCHEMA_VERSION) return;
  db.transaction(() => {
    if (version === 0) {
      db.exec(schemaSql());
    } else {
      for (let v = version; v < SCHEMA_VERSION; v++) STEPS[v - 1](db);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

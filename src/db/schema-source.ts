// The text of schema.sql. The bundle inlines it at build time (build.mjs defines PARLEY_SCHEMA_SQL);
// from source it is read next to the project root.
import fs from 'node:fs';
import path from 'node:path';

declare const PARLEY_SCHEMA_SQL: string | undefined;

/** The whole schema as SQL text. */
export function schemaSql(): string {
  if (typeof PARLEY_SCHEMA_SQL === 'string') return PARLEY_SCHEMA_SQL;
  return fs.readFileSync(path.join(__dirname, '..', '..', 'schema.sql'), 'utf8');
}

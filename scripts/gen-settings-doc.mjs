// Regenerates the texts made from the settings registry (src/settings.ts): README.md's settings table
// (between its two marker comments) and packaging/parley.toml (the default /etc/parley.toml).
//
//   node --import tsx scripts/gen-settings-doc.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { readmeSettingsTable, defaultConfigToml, replaceSettingsTable } = await import(path.join(root, 'src', 'cli', 'settings-doc.ts'));

const readme = path.join(root, 'README.md');
fs.writeFileSync(readme, replaceSettingsTable(fs.readFileSync(readme, 'utf8'), readmeSettingsTable()));
fs.writeFileSync(path.join(root, 'packaging', 'parley.toml'), defaultConfigToml());
console.log('wrote README.md (settings table) and packaging/parley.toml');

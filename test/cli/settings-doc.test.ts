// The texts made from the settings registry stay equal to it: README.md's settings table, the default
// configuration file in packaging/, and every PARLEY_* variable the server reads is in the table
// (regenerate with `node --import tsx scripts/gen-settings-doc.mjs`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { currentSettingsTable, defaultConfigToml, readmeSettingsTable } from '../../src/cli/settings-doc';
import { OTHER_ENV, SETTINGS } from '../../src/settings';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (p: string) => fs.readFileSync(path.join(ROOT, p), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

describe('the settings registry', () => {
  it('is the README settings table', () => {
    assert.equal(currentSettingsTable(read('README.md')), readmeSettingsTable(), 'run node --import tsx scripts/gen-settings-doc.mjs');
  });

  it('is packaging/parley.toml, which parses and sets only the service values', () => {
    const text = read('packaging/parley.toml');
    assert.equal(text, defaultConfigToml(), 'run node --import tsx scripts/gen-settings-doc.mjs');
    assert.deepEqual({ ...parse(text) }, { data_dir: '/var/lib/parley', host: '0.0.0.0', cache_dir: '/var/cache/parley' });
    // Every other setting is there, commented, and valid once uncommented.
    const uncommented = parse(text.replace(/^# (\w+ = )/gm, '$1'));
    assert.deepEqual(Object.keys(uncommented).sort(), SETTINGS.map((s) => s.key).sort());
  });

  it('names every PARLEY_* environment variable the server reads', () => {
    const documented = new Set([...SETTINGS.map((s) => s.env), ...OTHER_ENV.map((o) => o.env)]);
    const read = new Set<string>();
    for (const file of sources('src')) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/process\.env(?:\.(PARLEY_\w+)|\[['"](PARLEY_\w+)['"]\])/g)) read.add(m[1] ?? m[2]);
      if (/process\.env\[(?!['"])/.test(text) && file !== path.join('src', 'settings.ts')) read.add(`computed name in ${file}`);
    }
    assert.deepEqual([...read].filter((v) => !documented.has(v)), []);
  });

  it('has unique keys, variables and flags, in the naming scheme', () => {
    for (const field of ['key', 'env', 'flag'] as const) {
      const values = SETTINGS.map((s) => s[field]);
      assert.equal(new Set(values).size, values.length, field);
    }
    for (const s of SETTINGS) {
      assert.equal(s.env, `PARLEY_${s.key.toUpperCase()}`, s.key);
      assert.equal(s.flag, s.key.replace(/_/g, '-'), s.key);
    }
  });
});

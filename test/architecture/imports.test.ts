// The layering of DESIGN.md, checked on the import lines: api → actions → lib → db; http serves api
// and main; only actions send events.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const src = path.join(__dirname, '..', '..', 'src');

function files(dir: string): string[] {
  return fs.readdirSync(path.join(src, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** Top-level src/ areas a file imports (relative imports only). */
function importedAreas(file: string): string[] {
  const text = fs.readFileSync(path.join(src, file), 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^(?:import|export)[^'"]*from\s+'(\.[^']+)'/gm)) {
    const target = path.normalize(path.join(path.dirname(file), m[1]));
    out.add(target.split(path.sep)[0]);
  }
  return [...out];
}

// Areas each area must not import.
const FORBIDDEN: Record<string, string[]> = {
  db: ['api', 'actions', 'lib', 'http', 'events'],
  lib: ['api', 'actions'],
  actions: ['api'],
  http: ['api', 'actions'],
  events: ['api', 'actions'],
};

describe('import layering', () => {
  for (const [area, forbidden] of Object.entries(FORBIDDEN)) {
    it(`src/${area} imports none of ${forbidden.join(', ')}`, () => {
      const bad = files(area).flatMap((f) => importedAreas(f).filter((a) => forbidden.includes(a)).map((a) => `${f} → ${a}`));
      assert.deepEqual(bad, []);
    });
  }

  it('only actions send events', () => {
    const senders = [...files('api'), ...files('lib'), ...files('http'), ...files('db')].filter((f) =>
      /\.events\.send\(/.test(fs.readFileSync(path.join(src, f), 'utf8')),
    );
    assert.deepEqual(senders, []);
  });
});

describe('handlers are declarations', () => {
  it('src/api holds no SQL', () => {
    const withSql = files('api').filter((f) => /\bstmt\(|\.prepare\(|\bdb\.exec\(/.test(fs.readFileSync(path.join(src, f), 'utf8')));
    assert.deepEqual(withSql, []);
  });
});

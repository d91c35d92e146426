// The web client is its own program (DESIGN.md): it talks to Parley only through the public API, so
// nothing under web/ imports from the server's src/ (or from anything but itself and its UI library).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..', '..');
const web = path.join(root, 'web', 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Bare packages the web client may import. */
const PACKAGES = new Set(['preact', 'preact/hooks', 'preact/jsx-runtime']);

describe('web/ imports', () => {
  it('reach only web/src and the UI library', () => {
    const bad: string[] = [];
    const all = files(web);
    assert.ok(all.length > 10, 'found the web sources');
    for (const file of all) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) {
        const spec = m[1] ?? m[2] ?? m[3];
        const where = path.relative(root, file);
        if (spec.startsWith('.')) {
          const target = path.resolve(path.dirname(file), spec);
          if (!target.startsWith(web + path.sep)) bad.push(`${where} → ${spec}`);
        } else if (!PACKAGES.has(spec)) bad.push(`${where} → ${spec}`);
      }
    }
    assert.deepEqual(bad, []);
  });
});

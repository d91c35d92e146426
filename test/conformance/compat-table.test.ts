// docs/compatibility.md must list every route the router serves: either as a served Zulip endpoint or
// in the Parley-only table (regenerate with `node --import tsx scripts/gen-compat.mjs`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { allRoutes } from '../../src/api';

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'compatibility.md');
const shape = (p: string) => p.replace(/^\/api\/v1(?=\/)/, '').replace(/\{[^}]*\}/g, '{}');

describe('docs/compatibility.md', () => {
  it('lists every route of the route table', () => {
    const text = fs.readFileSync(DOC, 'utf8');
    const listed = new Set<string>();
    for (const line of text.split('\n')) {
      // | METHOD | `path` | operationId | yes | notes |   (Zulip endpoints, served)
      const zulip = /^\| ([A-Z]+) \| `([^`]+)` \| [^|]* \| yes \|/.exec(line);
      if (zulip) listed.add(`${zulip[1]} ${shape(zulip[2])}`);
      // | METHOD | `path` | notes |   (Parley-only routes)
      const own = /^\| ([A-Z]+) \| `([^`]+)` \| [^|]* \|$/.exec(line);
      if (own) listed.add(`${own[1]} ${shape(own[2])}`);
    }
    const missing = allRoutes.map((r) => `${r.method} ${r.path}`).filter((k) => !listed.has(k.replace(/ .*/, '') + ' ' + shape(k.replace(/^\S+ /, ''))));
    assert.deepEqual(missing, [], 'routes missing from docs/compatibility.md: run node --import tsx scripts/gen-compat.mjs');
  });

  it('gives the reason for every Zulip endpoint Parley does not serve', () => {
    const unexplained = fs
      .readFileSync(DOC, 'utf8')
      .split('\n')
      .filter((line) => /^\| [A-Z]+ \| `[^`]+` \| [^|]* \| no \|/.test(line) && !/not served: (?!REASON MISSING)\S/.test(line));
    assert.deepEqual(unexplained, [], 'add the reason to NOT_SERVED_REASONS in scripts/gen-compat.mjs');
  });

  it('keeps the hand-written known differences section', () => {
    assert.match(fs.readFileSync(DOC, 'utf8'), /^## Known differences$/m);
  });
});

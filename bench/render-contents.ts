// The renderer alone on the send benchmark's contents (bench/send-content.ts), beside a floor: run by
// hand, `node --import tsx bench/render-contents.ts` (N=5000 contents, 7 rounds, medians of the last 5).
//  renderMessage:  as a send calls it (the organization's context: mentions, channels, emoji from SQLite)
//  renderMarkdown: the renderer with lookups answered from memory
//  commonmark:     markdown-it's own CommonMark renderer, no Zulip syntax and no lookups: what any
//                  renderer built on markdown-it spends on these contents at least
// BEFORE=DIR also times DIR/src/lib's renderMessage and renderMarkdown (another worktree, on this
// database), interleaved with these.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { loadMarkdownIt } from '../src/lazy';
import { renderMarkdown, type RenderContext } from '../src/lib/markdown';
import { renderMessage } from '../src/lib/render';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { sendContent, type ContentKind } from './send-content';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-render-'));
const config = configFromEnv({});
config.dataDir = dir;
const app = createApp(config);
const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
const mentionable: string[] = [];
for (let i = 1; i < 50; i++) {
  doCreateUser(app, { realmId, email: `user${i}@bench.example.com`, password: null, fullName: `User ${i}`, role: ROLE.MEMBER, acting: null });
  mentionable.push(`User ${i}`);
}
const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
doCreateChannel(app, ownerRow, realmId, { name: 'bench' });
app.batch.commit();

const memoryCtx: RenderContext = {
  userByName: (name) => (mentionable.includes(name) ? { id: 1 + mentionable.indexOf(name), full_name: name } : null),
  userById: () => null,
  groupByName: () => null,
  streamByName: (name) => (name === 'bench' ? { id: 1, name } : null),
  linkifiers: [],
};
const MarkdownIt = loadMarkdownIt();
const commonmark = new MarkdownIt('commonmark');
/* eslint-disable @typescript-eslint/no-require-imports */
const before = process.env.BEFORE
  ? {
      renderMarkdown: (require(path.resolve(process.env.BEFORE, 'src/lib/markdown.ts')) as { renderMarkdown: typeof renderMarkdown }).renderMarkdown,
      renderMessage: (require(path.resolve(process.env.BEFORE, 'src/lib/render.ts')) as { renderMessage: typeof renderMessage }).renderMessage,
    }
  : null;
/* eslint-enable @typescript-eslint/no-require-imports */

const N = Number(process.env.N ?? 5000);
const kinds: ContentKind[] = ['plain', 'flat', 'mix'];
const contents = new Map(kinds.map((k) => [k, Array.from({ length: N }, (_, i) => sendContent(k, i, { mentionable, channel: 'bench' }))]));
const ways: [string, (c: string) => unknown][] = [
  ['renderMessage', (c) => renderMessage(app, realmId, c, ownerRow)],
  ...(before ? [['renderMessage before', (c: string) => before.renderMessage(app, realmId, c, ownerRow)] as [string, (c: string) => unknown]] : []),
  ['renderMarkdown', (c) => renderMarkdown(c, memoryCtx)],
  ...(before ? [['renderMarkdown before', (c: string) => before.renderMarkdown(c, memoryCtx)] as [string, (c: string) => unknown]] : []),
  ['commonmark', (c) => commonmark.render(c)],
];
const times = new Map<string, number[]>();
for (let round = 0; round < 7; round++) {
  for (const [name, f] of ways) {
    for (const k of kinds) {
      const cs = contents.get(k) as string[];
      const c0 = process.cpuUsage();
      for (const c of cs) f(c);
      const u = process.cpuUsage(c0);
      if (round >= 2) times.set(`${name}|${k}`, [...(times.get(`${name}|${k}`) ?? []), (u.user + u.system) / cs.length]);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`CPU µs per content, median of 5 rounds of ${N} (load average ${os.loadavg()[0].toFixed(2)}):`);
console.log(`  ${''.padEnd(22)}${kinds.map((k) => k.padStart(8)).join('')}`);
for (const [name] of ways) console.log(`  ${name.padEnd(22)}${kinds.map((k) => median(times.get(`${name}|${k}`) as number[]).toFixed(1).padStart(8)).join('')}`);
app.close();
fs.rmSync(dir, { recursive: true, force: true });

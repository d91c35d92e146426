// The renderer's floor for the send benchmarks: markdown-it's own CommonMark renderer (no Zulip syntax,
// no lookups) on the same contents (bench/send-content.ts), in this process. Any renderer built on
// markdown-it spends at least this on them; the difference between mix and flat at the floor is
// what Markdown itself costs over the same length of text.
import os from 'node:os';
import { loadMarkdownIt } from '../src/lazy';
import { sendContent, type ContentKind, type MixContext } from './send-content';

/** CPU µs per content of markdown-it's CommonMark renderer: median of 5 rounds of `n` (after 2 unmeasured). */
export function commonmarkFloor(kinds: readonly ContentKind[], mix: MixContext, n = 3000): Map<ContentKind, number> {
  const MarkdownIt = loadMarkdownIt();
  const md = new MarkdownIt('commonmark');
  const contents = new Map(kinds.map((k) => [k, Array.from({ length: n }, (_, i) => sendContent(k, i, mix))]));
  const times = new Map<ContentKind, number[]>(kinds.map((k) => [k, []]));
  for (let round = 0; round < 7; round++) {
    for (const k of kinds) {
      const cs = contents.get(k) as string[];
      const c0 = process.cpuUsage();
      for (const c of cs) md.render(c);
      const u = process.cpuUsage(c0);
      if (round >= 2) (times.get(k) as number[]).push((u.user + u.system) / cs.length);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  return new Map(kinds.map((k) => [k, median(times.get(k) as number[])]));
}

/** One line: the floor per content, and mix − flat at the floor when both are there. */
export function floorLine(floor: Map<ContentKind, number>): string {
  const parts = [...floor].map(([k, us]) => `${k} ${us.toFixed(1)}`);
  const mix = floor.get('mix');
  const flat = floor.get('flat');
  const markup = mix !== undefined && flat !== undefined ? `; mix − flat ${(mix - flat).toFixed(1)} µs` : '';
  return `floor: markdown-it's CommonMark renderer alone, CPU µs per content (load average ${os.loadavg()[0].toFixed(2)}): ${parts.join(', ')}${markup}`;
}

// Message contents for the send benchmarks (bench/messages.ts send, bench/send-inprocess.ts).
//  plain: one line of text.
//  mix:   what chat looks like: a plain line, then each of ten kinds of formatting in about one
//         message in five (independently, so most messages combine a few and some have none): bold
//         and italics, inline code, a fenced code block, a link, an @-mention of a subscriber, a
//         #channel link, an emoji, a quote, a list, a Markdown link with text.
//  flat:  the mix with every markup character a letter and every line break a space: as long as
//         the mix, one plain paragraph (what the mix costs by its length alone).
// Every message carries its counter, so no cache of rendered content can decide the result.

export type ContentKind = 'plain' | 'mix' | 'flat';

export interface MixContext {
  /** Full names of subscribers of the channel (for @-mentions). */
  mentionable: readonly string[];
  /** A channel name the sender can read (for #channel links). */
  channel: string;
}

// A fixed-seed generator: every run sends the same sequence.
function pick(i: number, k: number): number {
  let x = Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(k + 1, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d);
  x = Math.imul(x ^ (x >>> 12), 0x297a2d39);
  return (x ^ (x >>> 15)) >>> 0;
}

const PARTS: ((i: number, c: MixContext) => string)[] = [
  (i) => `that is **really important** and *slightly urgent* (item ${i})`,
  (i) => `run \`npm test -- --grep case${i}\` before merging`,
  (i) => '```ts\nconst answer = compute(' + i + ');\nconsole.log(answer);\n```',
  (i) => `see https://example.com/issues/${i} for the details`,
  (i, c) => `@**${c.mentionable[i % c.mentionable.length]}** can you take a look?`,
  (i, c) => `moved from #**${c.channel}** earlier today (${i})`,
  () => `sounds good :smile:`,
  (i) => `> the build broke on step ${i}\n\nI think it is fixed now`,
  (i) => `- first thing ${i}\n- second thing\n- third thing`,
  (i) => `the [design notes](https://example.com/notes/${i}) explain it`,
];

/** The content of message `i` of the given kind. */
export function sendContent(kind: ContentKind, i: number, c: MixContext): string {
  if (kind === 'plain') return `load test message plain ${i}`;
  if (kind === 'flat') return sendContent('mix', i, c).replace(/[*`#@:>\-\[\]()_~.\/]/g, 'x').replace(/\n/g, ' ');
  const lines = [`message ${i} of the load test`];
  for (let k = 0; k < PARTS.length; k++) if (pick(i, k) % 5 === 0) lines.push(PARTS[k](i, c));
  return lines.join('\n');
}

// Linkifier cost (run by hand: `node --import tsx bench/linkifiers.ts`), in process, no HTTP:
//  1. The security review's pattern (?P<id>(a+)+) on a near-miss (n a's then a letter): JavaScript's
//     RegExp, as linkifiers were compiled before RE2, against RE2 (re2js) as messages and topics use it.
//  2. The worst patterns RE2 accepts here (programs filled up to MAX_PROGRAM_SIZE) and some real
//     linkifiers, on the longest message (10,000 characters) and a 60-character topic.
//  3. topic_links for a page of 1,000 messages with distinct topics: the first fetch (computed) and the
//     next (looked up).
// Times are the median of several runs, in milliseconds of CPU (the process's; the work is on one
// thread), which other work on the machine disturbs less than wall time.
import os from 'node:os';
import { doCreateRealm } from '../src/actions/realm';
import { createApp } from '../src/app';
import { configFromEnv } from '../src/config';
import { realmTopicLinks } from '../src/lib/linkifiers';
import { MAX_RENDER_INPUT, prepareLinkifierPattern, renderMarkdown, topicLinks, type Linkifier, type RenderContext } from '../src/lib/markdown';
import { compileRe2, MAX_PROGRAM_SIZE } from '../src/lib/re2';

const context = (linkifiers: Linkifier[]): RenderContext => ({
  userByName: () => null,
  userById: () => null,
  groupByName: () => null,
  streamByName: () => null,
  linkifiers,
});

/** Median of `runs` timings of fn, in ms of this thread's CPU (after one untimed run). */
function median(fn: () => void, runs = 5): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.cpuUsage();
    fn();
    const d = process.cpuUsage(t);
    times.push((d.user + d.system) / 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));

// 1. The ReDoS pattern.
const redos = '(?P<id>(a+)+)';
// How src/lib/markdown.ts compiled a linkifier before RE2 (a JavaScript RegExp, backtracking).
const before = new RegExp(
  `(?<linkifier_before_match>^|\\s|\\u0085|\\p{Z}|['"(,:<])(?<linkifier_actual_match>${redos.replace(/\(\?P</g, '(?<')})(?<linkifier_after_match>$|[^\\p{L}\\p{N}])`,
  'gdu',
);
const nested = [{ pattern: redos, url_template: 'https://e.com/{id}' }];
console.log(`1. ${redos} on n a's then "b" (then " aa", a match, so that RE2 must search for the groups)`);
console.log('   one linkifier search with RegExp (before); with RE2, rendering the message and topic_links (after)');
console.log('   n        before (RegExp)   after: message   with a match   topic   with a match');
// Past 26 the RegExp is not run: each further character doubles its time.
let at26 = 0;
for (const n of [16, 18, 20, 22, 24, 25, 26, 60, 1000, MAX_RENDER_INPUT - 4]) {
  const text = `${'a'.repeat(n)}b`;
  if (n === 26) {
    at26 = median(() => {
      before.lastIndex = 0;
      before.exec(text);
    }, 3);
  }
  const old =
    n < 26
      ? ms(
          median(() => {
            before.lastIndex = 0;
            before.exec(text);
          }, 3),
        )
      : n === 26
        ? ms(at26)
        : `${ms(at26)} × 2^${n - 26}`;
  const message = median(() => renderMarkdown(text, context(nested)));
  const matched = median(() => renderMarkdown(`${text} aa`, context(nested)));
  const topic = n <= 60 ? ms(median(() => topicLinks(text, nested))) : '';
  const topicMatched = n <= 57 ? ms(median(() => topicLinks(`${text} aa`, nested))) : '';
  console.log(
    `   ${String(n).padEnd(8)} ${old.padStart(15)}   ${ms(message).padStart(14)}   ${ms(matched).padStart(12)}   ${topic.padStart(5)}   ${topicMatched.padStart(12)}`,
  );
}

// 2. The worst that is accepted.
/** The largest k for which shape(k), wrapped as messages use it, fits MAX_PROGRAM_SIZE. */
function largest(shape: (k: number) => string): string {
  let k = 1;
  const fits = (n: number) => {
    try {
      compileRe2(prepareLinkifierPattern(shape(n)));
      return true;
    } catch {
      return false;
    }
  };
  while (fits(k * 2)) k *= 2;
  for (let step = k / 2; step >= 1; step /= 2) if (fits(k + step)) k += step;
  return shape(k);
}
const everyWordMatches = `${'a'.repeat(59)} `.repeat(Math.floor(MAX_RENDER_INPUT / 60));
const oneNearMiss = `${'a'.repeat(MAX_RENDER_INPUT - 1)}b`;
const patterns: [string, string][] = [
  ['\\pL*\\pL*… filling the limit', largest((k) => `(?P<id>${'\\pL*'.repeat(k)})`)],
  ['(a*)(a*)… filling the limit', largest((k) => `(?P<id>${'(?:a*)'.repeat(k)})`)],
  ['[^ ]*[^ ]*… filling the limit', largest((k) => `(?P<id>${'[^ ]*'.repeat(k)})`)],
  ['.*?.*?… filling the limit', largest((k) => `(?P<id>${'.*?'.repeat(k)})`)],
  ['(a|b)?(a|b)?… filling the limit', largest((k) => `(?P<id>${'(?:a|b)?'.repeat(k)})`)],
  ['[a-z]{k} filling the limit', largest((k) => `(?P<id>[a-z]{${k}})`)],
  ['issue #N (real)', '#(?P<id>[0-9]+)'],
  ['commit hash [0-9a-f]{7,40} (real)', '(?P<id>[0-9a-f]{7,40})'],
  ['org/repo#N (real)', '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)'],
  [
    "Zulip's seven-group test pattern (real)",
    'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
  ],
];
console.log(`\n2. Accepted patterns (program limit ${MAX_PROGRAM_SIZE}) on the longest message and a 60-character topic`);
console.log('   pattern                                   program   every word matches   one near-miss   topic');
for (const [label, pattern] of patterns) {
  const l = [{ pattern, url_template: 'https://e.com/{id}' }];
  const size = compileRe2(prepareLinkifierPattern(pattern)).programSize();
  const words = median(() => renderMarkdown(everyWordMatches, context(l)), 3);
  const miss = median(() => renderMarkdown(oneNearMiss, context(l)), 3);
  const topic = median(() => topicLinks(`${'a'.repeat(59)}b`, l));
  console.log(`   ${label.padEnd(41)} ${String(size).padStart(7)}   ${ms(words).padStart(18)}   ${ms(miss).padStart(13)}   ${ms(topic).padStart(5)}`);
}

// 3. topic_links of a page of messages.
const config = configFromEnv({});
config.dataDir = ':memory:';
const app = createApp(config);
const { realmId } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
const add = app.db.prepare('INSERT INTO linkifier (realm_id, pattern, url_template, "order") VALUES (?, ?, ?, ?)');
const five = ['#(?P<id>[0-9]+)', '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', 'CVE-(?P<year>\\d{4})-(?P<id>\\d{4,7})', '(?P<key>[A-Z]{2,5}-[0-9]+)', 'PR (?P<id>[0-9]+)'];
five.forEach((p, i) => add.run(realmId, p, 'https://e.com/{id}', i));
const topics = Array.from({ length: 1000 }, (_, i) => `bug #${i} in zulip/zulip#${i} (ABC-${i})`);
const fetchPage = () => {
  const linker = realmTopicLinks(app.db, realmId);
  for (const t of topics) linker(t);
};
const cpu = (fn: () => void) => {
  const t = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
};
const cold = cpu(fetchPage);
const warm = cpu(fetchPage);
console.log(`\n3. topic_links of 1,000 messages with distinct topics, 5 linkifiers: first fetch ${ms(cold)} ms, next ${ms(warm)} ms`);
console.log(`\n(node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os.loadavg()[0]!.toFixed(2)})`);
// The realm's writes are still queued for the next turn; nothing here needs them kept.
process.exit(0);

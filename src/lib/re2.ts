// Linkifier patterns run on RE2, as Zulip's do (zerver/models/linkifiers.py compiles them with re2):
// matching takes time linear in the text whatever the pattern. JavaScript's backtracking RegExp took
// seconds on `(?P<id>(a+)+)` and a 30-character message, doubling with each character, and every
// request waited (one process). The engine is re2js, a pure-JavaScript port of RE2 (through Go's
// regexp): no native addon to embed in the executable, and loaded only when a realm has linkifiers
// (src/lazy.ts). Its syntax is RE2's: (?P<name>...) groups, \pL classes and inline flags as written.
import type { Matcher, RE2JS } from 're2js';
import { loadRe2js } from '../lazy';

export type Re2 = RE2JS;
export type Re2Matcher = Matcher;

// re2js reports Go's regexp/syntax error codes; Zulip shows RE2's (C++) texts, RegexpStatus::CodeText.
const RE2_CODE_TEXTS: Record<string, string> = {
  'missing closing )': 'missing )',
  'missing closing ]': 'missing ]',
  'trailing backslash at end of expression': 'trailing \\',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid named capture': 'invalid named capture group',
};

/**
 * The largest program (re2js instructions, with the wrapping messages add) a linkifier may compile
 * to. RE2 bounds the time to match by the text's length times the program's size, and refuses a
 * program past its memory budget ("pattern too large - compile failed", about 87,000 instructions).
 * In JavaScript a step costs up to ~0.1 µs per instruction, so ours is smaller, and a message's
 * linkifier work is bounded too (MAX_LINKIFIER_WORK_PER_MESSAGE in lib/markdown.ts): the costliest
 * shapes this admits take at most ~40 ms on the longest message (bench/linkifiers.ts). Real
 * linkifiers fit: `#(?P<id>[0-9]+)` is 19, a commit hash `[0-9a-f]{7,40}` 89, Zulip's seven-group
 * test pattern 80.
 */
export const MAX_PROGRAM_SIZE = 100;

/** RE2's message ("missing ): (foo") for an error re2js threw. */
function re2Message(err: unknown): string {
  const e = err as { error?: unknown; input?: unknown; message?: unknown };
  if (typeof e.error !== 'string') return String(e.message ?? err);
  const code = e.error;
  const arg = typeof e.input === 'string' ? e.input : '';
  if (code === 'expression too large') return 'pattern too large - compile failed';
  // Go reads (?<= and (?<! as a malformed (?<name>; RE2 names the look-behind operator.
  if (code === 'invalid named capture' && /^\(\?<[=!]/.test(arg)) return `invalid perl operator: ${arg.slice(0, 4)}`;
  const text = RE2_CODE_TEXTS[code] ?? code;
  return arg === '' ? text : `${text}: ${arg}`;
}

// Compiled patterns by source. Every rendered message and topic applies the realm's linkifiers, and a
// compile costs about a millisecond (the \pZ-style tables), so each pattern is compiled once. A memo
// of a pure function, shared by every App in the process; bounded, oldest dropped first. Refusals
// are remembered too: a stored pattern that no longer compiles is skipped without retrying.
const compiled = new Map<string, Re2 | Error>();
const MAX_COMPILED = 128;

/** Compiles an RE2 pattern (memoised); throws Error with RE2's message when RE2 would refuse it. */
export function compileRe2(pattern: string): Re2 {
  let entry = compiled.get(pattern);
  if (entry === undefined) {
    try {
      const re = loadRe2js().RE2JS.compile(pattern);
      entry = re.programSize() > MAX_PROGRAM_SIZE ? new Error('pattern too large - compile failed') : re;
    } catch (err) {
      entry = new Error(re2Message(err));
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(pattern, entry);
  }
  if (entry instanceof Error) throw new Error(entry.message);
  return entry;
}

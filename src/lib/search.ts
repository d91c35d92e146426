// Full-text search terms: how a search operand becomes an FTS5 query and which words of a message it
// matched (for highlights). The narrow's SQL is src/lib/narrow.ts; the index is message_fts (schema.sql).
// Full-text search as Zulip's PostgreSQL search (zulip.english_us_search): English stemming (FTS5's
// porter tokenizer over unicode61, schema.sql), stop words left out of the query, every remaining word
// required, and "quoted phrases" also matched as written. No prefix matching: Zulip has none.

/** Zulip's zulip_english.stop: words a search ignores (and never highlights). */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself
  they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having
  do does did doing a an the and but if or because as until while of at by for with about against between into through during
  before after above below to from up down in out on off over under again further then once here there when where why how all any
  both each few more most other some such no nor not only own same so than too very s t can will just don should now
  b c d e f g h j k l m n o p q r u v w x y z`.split(/\s+/),
);

/** Tokens as FTS5's unicode61 tokenizer cuts them: runs of letters, numbers and private-use characters. */
export const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

/** A token folded as unicode61 with remove_diacritics 2 folds it: lower case, without diacritics. */
function fold(token: string): string {
  if (/^[\0-\x7f]*$/.test(token)) return token.toLowerCase();
  return token.normalize('NFD').replace(/\p{Mn}/gu, '').normalize('NFC').toLowerCase();
}

const isVowel = (c: string, yIsVowel: boolean) => c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u' || (yIsVowel && c === 'y');

/** Where the first vowels-then-consonants run of s[from, to) ends, or -1 (SQLite's fts5PorterGobbleVC). */
function gobbleVC(s: string, from: number, to: number, prevCons: boolean): number {
  let cons = prevCons;
  let i = from;
  for (; i < to; i++) if (!(cons = !isVowel(s[i], cons))) break;
  for (i++; i < to; i++) if ((cons = !isVowel(s[i], cons))) return i + 1;
  return -1;
}
type Cond = (s: string, n: number) => boolean;
const mGt0: Cond = (s, n) => gobbleVC(s, 0, n, false) >= 0;
const mGt1: Cond = (s, n) => {
  const k = gobbleVC(s, 0, n, false);
  return k >= 0 && gobbleVC(s, k, n, true) >= 0;
};
const mEq1: Cond = (s, n) => {
  const k = gobbleVC(s, 0, n, false);
  return k >= 0 && gobbleVC(s, k, n, true) < 0;
};
const oStar: Cond = (s, n) => {
  if ('wxy'.includes(s[n - 1])) return false;
  let mask = 0;
  let cons = false;
  for (let i = 0; i < n; i++) mask = (mask << 1) + Number((cons = !isVowel(s[i], cons)));
  return (mask & 7) === 5;
};
const mGt1AndSOrT: Cond = (s, n) => (s[n - 1] === 's' || s[n - 1] === 't') && mGt1(s, n);
const hasVowel: Cond = (s, n) => {
  for (let i = 0; i < n; i++) if (isVowel(s[i], i > 0)) return true;
  return false;
};

/** Suffix rules: [suffix, replacement, condition on the stem]; the first suffix that fits decides. */
type Rule = [string, string, Cond];
const STEP2: Rule[] = (
  [
    ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['logi', 'log'], ['bli', 'ble'],
    ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate'],
    ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'],
  ] as const
).map(([a, b]) => [a, b, mGt0]);
const STEP3: Rule[] = (
  [['ical', 'ic'], ['ness', ''], ['icate', 'ic'], ['iciti', 'ic'], ['ful', ''], ['ative', ''], ['alize', 'al']] as const
).map(([a, b]) => [a, b, mGt0]);
const STEP4: Rule[] = [
  ...['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent'].map((a): Rule => [a, '', mGt1]),
  ['ion', '', mGt1AndSOrT],
  ...['ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'].map((a): Rule => [a, '', mGt1]),
];
const STEP1B2: Rule[] = ([['at', 'ate'], ['bl', 'ble'], ['iz', 'ize']] as const).map(([a, b]) => [a, b, () => true]);

/** Applies the first rule whose suffix ends s (leaving a stem); whether it changed s. */
function applyRules(s: string, rules: Rule[]): [string, boolean] {
  for (const [suffix, out, cond] of rules) {
    if (s.length > suffix.length && s.endsWith(suffix)) {
      const n = s.length - suffix.length;
      return cond(s, n) ? [s.slice(0, n) + out, true] : [s, false];
    }
  }
  return [s, false];
}

/**
 * SQLite's porter stemmer (fts5PorterCb) over a string of single bytes (the UTF-8 of a folded token,
 * as latin1): the same stem FTS5 indexes and queries, so that highlights agree with matches.
 */
function porter(word: string): string {
  if (word.length > 64 || word.length < 3) return word;
  let s = word;
  // Step 1a.
  if ((s.length > 4 && s.endsWith('sses')) || (s.length > 3 && s.endsWith('ies'))) s = s.slice(0, -2);
  else if (s.endsWith('s') && !s.endsWith('ss')) s = s.slice(0, -1);
  // Step 1b.
  let stripped = false;
  if (s.length > 3 && s.endsWith('eed')) {
    if (mGt0(s, s.length - 3)) s = s.slice(0, -1);
  } else {
    for (const suffix of ['ed', 'ing']) {
      if (s.length > suffix.length && s.endsWith(suffix)) {
        if (hasVowel(s, s.length - suffix.length)) [s, stripped] = [s.slice(0, -suffix.length), true];
        break;
      }
    }
  }
  if (stripped) {
    const [t, grown] = applyRules(s, STEP1B2);
    s = t;
    if (!grown) {
      const c = s[s.length - 1];
      if (!isVowel(c, false) && !'lsz'.includes(c) && c === s[s.length - 2]) s = s.slice(0, -1);
      else if (mEq1(s, s.length) && oStar(s, s.length)) s += 'e';
    }
  }
  // Step 1c.
  if (s.endsWith('y') && hasVowel(s, s.length - 1)) s = s.slice(0, -1) + 'i';
  // Steps 2 to 4.
  for (const rules of [STEP2, STEP3, STEP4]) s = applyRules(s, rules)[0];
  // Step 5.
  const n = s.length;
  if (s[n - 1] === 'e' && (mGt1(s, n - 1) || (mEq1(s, n - 1) && !oStar(s, n - 1)))) s = s.slice(0, -1);
  if (s.length > 1 && s.endsWith('ll') && mGt1(s, s.length - 1)) s = s.slice(0, -1);
  return s;
}

/** The indexed form of a token: folded and stemmed as the full-text index does. */
export function stem(token: string): string {
  const folded = fold(token);
  if (/^[\0-\x7f]*$/.test(folded)) return porter(folded);
  return Buffer.from(porter(Buffer.from(folded, 'utf8').toString('latin1')), 'latin1').toString('utf8');
}

/** A search operand as Zulip reads it: the words that must occur (stop words left out), and the "quoted phrases". */
export function parseSearch(operand: string): { words: string[]; phrases: string[] } {
  const words = (operand.match(TOKEN) ?? []).filter((w) => !STOP_WORDS.has(w.toLowerCase()));
  const phrases = (operand.match(/"[^"]+"|\S+/g) ?? []).filter((t) => t.length > 1 && t.startsWith('"') && t.endsWith('"')).map((t) => t.slice(1, -1));
  return { words, phrases };
}

/** An FTS5 query requiring every word (each a quoted string: the tokenizer stems it as it stems the index). */
export function ftsQuery(words: string[]): string {
  return words.map((w) => `"${w}"`).join(' AND ');
}

// The Aho–Corasick automaton (src/lib/aho-corasick.ts) against a plain indexOf scan: the same
// patterns found at the same places, each pattern once, for table cases and seeded random ones.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AhoCorasick } from '../../src/lib/aho-corasick';
import { prng } from '../helpers/prng';

/** Every (start, end) of `pattern` in `text`, overlapping ones included. */
function occurrences(text: string, pattern: string): [number, number][] {
  const out: [number, number][] = [];
  for (let i = text.indexOf(pattern); i !== -1; i = text.indexOf(pattern, i + 1)) out.push([i, i + pattern.length]);
  return out;
}

/** The patterns (by value) that occur at an accepted place, sorted. */
function naive(patterns: string[], text: string, accept: (s: number, e: number) => boolean): string[] {
  return [...new Set(patterns.filter((p) => p !== '' && occurrences(text, p).some(([s, e]) => accept(s, e))))].sort();
}

function automaton(patterns: string[], text: string, accept: (s: number, e: number) => boolean): string[] {
  const ac = new AhoCorasick(patterns.map((p) => [p, p] as const));
  return [...new Set(ac.matches(text, accept).flat())].sort();
}

const anywhere = () => true;

describe('AhoCorasick', () => {
  const cases: [string, string[], string, string[]][] = [
    ['no patterns', [], 'anything', []],
    ['empty text', ['a'], '', []],
    ['empty pattern ignored', ['', 'b'], 'abc', ['b']],
    ['classic he/she/his/hers', ['he', 'she', 'his', 'hers'], 'ushers', ['he', 'hers', 'she']],
    ['nested suffixes', ['a', 'aa', 'aaa', 'aaaa'], 'aaa', ['a', 'aa', 'aaa']],
    ['failure across a mismatch', ['abcd', 'bce'], 'abce', ['bce']],
    ['pattern inside another', ['castle', 'sandcastle', 'and'], 'sandcastle', ['and', 'castle', 'sandcastle']],
    ['non-ASCII and astral', ['énorme', '😀x'], 'très énorme 😀x', ['énorme', '😀x']],
    ['duplicates carry both values', ['x', 'x'], 'x', ['x']],
  ];
  for (const [name, patterns, text, expected] of cases) {
    it(`finds every pattern: ${name}`, () => {
      assert.deepEqual(automaton(patterns, text, anywhere), expected);
      assert.deepEqual(naive(patterns, text, anywhere), expected);
    });
  }

  it('reports a pattern once, at the first place accept allows', () => {
    const ac = new AhoCorasick([['ab', 1] as const]);
    const asked: [number, number][] = [];
    const found = ac.matches('ab ab ab', (s, e) => {
      asked.push([s, e]);
      return s === 3;
    });
    assert.deepEqual(found, [[1]]);
    assert.deepEqual(asked, [
      [0, 2],
      [3, 5],
    ]);
  });

  it('stops at the first accepted match when asked', () => {
    const ac = new AhoCorasick([['b', 'b'] as const, ['ab', 'ab'] as const, ['c', 'c'] as const]);
    assert.deepEqual(ac.matches('abc', anywhere, { first: true }), [['ab']]);
    assert.deepEqual(ac.matches('abc', (s) => s > 0, { first: true }), [['b']]);
    assert.deepEqual(ac.matches('abc', () => false, { first: true }), []);
  });

  it('keeps every value of a pattern given twice', () => {
    const ac = new AhoCorasick([['rome', 7] as const, ['rome', 9] as const, ['castle', 7] as const]);
    assert.deepEqual(ac.matches('rome', anywhere), [[7, 9]]);
  });

  it('agrees with indexOf on seeded random patterns, texts and boundaries', () => {
    const rand = prng(14);
    const alphabet = 'ab c.';
    const word = (max: number) => Array.from({ length: 1 + Math.floor(rand() * max) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    for (let round = 0; round < 300; round++) {
      const patterns = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => word(5));
      const text = word(60);
      const accept = (s: number, e: number) => (s === 0 || text[s - 1] === ' ') && (e === text.length || text[e] === ' ' || text[e] === '.');
      assert.deepEqual(automaton(patterns, text, accept), naive(patterns, text, accept), JSON.stringify({ patterns, text }));
      // Telling it where matches may end changes nothing but the work.
      const ends = Uint8Array.from({ length: text.length + 1 }, (_, e) => (e === text.length || text[e] === ' ' || text[e] === '.' ? 1 : 0));
      const ac = new AhoCorasick(patterns.map((p) => [p, p] as const));
      assert.deepEqual([...new Set(ac.matches(text, accept, { ends }).flat())].sort(), naive(patterns, text, accept));
      assert.deepEqual(automaton(patterns, text, anywhere), naive(patterns, text, anywhere), JSON.stringify({ patterns, text }));
    }
  });
});

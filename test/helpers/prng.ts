// A small deterministic pseudo-random generator (mulberry32): the same seed gives the same sequence, so
// a fuzz run or a benchmark's seeded organization can be repeated exactly.

/** Numbers in [0, 1) from `seed`. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

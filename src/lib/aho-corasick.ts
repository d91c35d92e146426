// An Aho–Corasick automaton: finds every occurrence of many fixed strings in one pass over a text, in
// time linear in the text (plus the matches reported), however many strings there are. Zulip matches
// alert words with one (pyahocorasick, built per realm); a loop of indexOf per word per recipient
// costs words × recipients passes instead, seconds for a long list and a long message.
//
// Strings are compared as UTF-16 code units, so callers fold case (toLowerCase) on both sides first.

/**
 * The transitions: an open-addressing hash table from (node, code unit) to child node, in typed
 * arrays. (A Map keyed by node × 2^16 + unit works, but its keys leave the small-integer range past
 * 32,768 nodes and it is then several times slower to build and to read.)
 */
class Edges {
  private readonly mask: number;
  private readonly nodes: Int32Array;
  private readonly units: Uint16Array;
  private readonly children: Int32Array;

  /** A table for at most `capacity` transitions, kept at most half full. */
  constructor(capacity: number) {
    let size = 1024;
    while (size < capacity * 2) size *= 2;
    this.mask = size - 1;
    this.nodes = new Int32Array(size).fill(-1);
    this.units = new Uint16Array(size);
    this.children = new Int32Array(size);
  }

  private slot(node: number, unit: number): number {
    // A full mix (murmur3's finalizer): sequential node ids with a few units otherwise cluster in
    // the low bits, and linear probing then slows down with the table's size.
    let h = Math.imul(node, 0x9e3779b1) ^ unit;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & this.mask;
  }

  /** The child of `node` by `unit`, or -1. */
  get(node: number, unit: number): number {
    const { nodes, units, mask } = this;
    for (let i = this.slot(node, unit); ; i = (i + 1) & mask) {
      const n = nodes[i];
      if (n === -1) return -1;
      if (n === node && units[i] === unit) return this.children[i];
    }
  }

  /** Adds a transition known to be absent. */
  set(node: number, unit: number, child: number): void {
    const { nodes, mask } = this;
    let i = this.slot(node, unit);
    while (nodes[i] !== -1) i = (i + 1) & mask;
    nodes[i] = node;
    this.units[i] = unit;
    this.children[i] = child;
  }
}

/** An automaton over `patterns`, each carrying a value; built once, then read by any number of scans. */
export class AhoCorasick<T> {
  private readonly edges: Edges;
  // Per node (0 is the root): its depth (the length of the string it spells), its failure link (the
  // longest proper suffix that is also a prefix of some pattern), its dictionary link (the nearest
  // node on the failure chain that ends a pattern; 0 if none), and the values of the patterns it ends.
  // Sized for the worst case (one node per pattern character) up front.
  private readonly depth: Int32Array;
  private readonly fail: Int32Array;
  private readonly dict: Int32Array;
  // (Values through an index: a sparse array of lists would fall back to slow dictionary elements.)
  private readonly valueIndex: Int32Array;
  private readonly valueLists: T[][] = [];
  // Children as linked lists, for the breadth-first pass that computes the links.
  private readonly firstChild: Int32Array;
  private readonly nextSibling: Int32Array;
  private readonly unit: Uint16Array;
  // Scan stamps: a pattern reported in the current scan is not reported again.
  private readonly seen: Float64Array;
  private scanId = 0;
  private nodeCount = 1;

  constructor(patterns: Iterable<readonly [string, T]>) {
    const list = [...patterns];
    let capacity = 1;
    for (const [pattern] of list) capacity += pattern.length;
    this.edges = new Edges(capacity);
    this.depth = new Int32Array(capacity);
    this.fail = new Int32Array(capacity);
    this.dict = new Int32Array(capacity);
    this.firstChild = new Int32Array(capacity).fill(-1);
    this.nextSibling = new Int32Array(capacity).fill(-1);
    this.unit = new Uint16Array(capacity);
    this.seen = new Float64Array(capacity);
    this.valueIndex = new Int32Array(capacity).fill(-1);
    for (const [pattern, value] of list) this.add(pattern, value);
    this.link();
  }

  /** Number of nodes (a measure of the memory used: one per distinct prefix). */
  get size(): number {
    return this.nodeCount;
  }

  private add(pattern: string, value: T): void {
    if (pattern.length === 0) return;
    let node = 0;
    for (let i = 0; i < pattern.length; i++) {
      const u = pattern.charCodeAt(i);
      let child = this.edges.get(node, u);
      if (child === -1) {
        child = this.nodeCount++;
        this.depth[child] = this.depth[node] + 1;
        this.nextSibling[child] = this.firstChild[node];
        this.unit[child] = u;
        this.firstChild[node] = child;
        this.edges.set(node, u, child);
      }
      node = child;
    }
    if (this.valueIndex[node] === -1) this.valueIndex[node] = this.valueLists.push([]) - 1;
    this.valueLists[this.valueIndex[node]].push(value);
  }

  private link(): void {
    const queue = new Int32Array(this.nodeCount);
    let tail = 0;
    for (let c = this.firstChild[0]; c !== -1; c = this.nextSibling[c]) queue[tail++] = c;
    for (let head = 0; head < tail; head++) {
      const node = queue[head];
      for (let c = this.firstChild[node]; c !== -1; c = this.nextSibling[c]) {
        const u = this.unit[c];
        let f = this.fail[node];
        let target = this.edges.get(f, u);
        while (target === -1 && f !== 0) {
          f = this.fail[f];
          target = this.edges.get(f, u);
        }
        // From the root, a child's own edge is not a proper suffix.
        const fc = target !== -1 && target !== c ? target : 0;
        this.fail[c] = fc;
        this.dict[c] = this.valueIndex[fc] !== -1 ? fc : this.dict[fc];
        queue[tail++] = c;
      }
    }
  }

  /**
   * The values of every pattern that occurs in `text` at a place `accept(start, end)` allows (end
   * exclusive), each pattern once, in the order first accepted; with `first`, only the first one (when
   * every pattern carries the same value, the answer is known then); `ends` may say in advance where
   * accept would refuse every end. Linear in the text: each position follows at most as many
   * dictionary links as there are pattern lengths ending there.
   */
  matches(text: string, accept: (start: number, end: number) => boolean, opts: { first?: boolean; ends?: Uint8Array } = {}): T[][] {
    const out: T[][] = [];
    const first = opts.first === true;
    // Where a match may end (1) or not (0), by end offset: the patterns ending elsewhere are not
    // looked at, which saves following their links where no boundary is.
    const ends = opts.ends;
    const stamp = ++this.scanId;
    const { edges, fail, dict, valueIndex, valueLists, depth, seen } = this;
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const u = text.charCodeAt(i);
      for (;;) {
        const next = edges.get(node, u);
        if (next !== -1) {
          node = next;
          break;
        }
        if (node === 0) break;
        node = fail[node];
      }
      if (ends !== undefined && ends[i + 1] === 0) continue;
      for (let t = valueIndex[node] !== -1 ? node : dict[node]; t !== 0; t = dict[t]) {
        if (seen[t] === stamp) continue;
        if (accept(i + 1 - depth[t], i + 1)) {
          seen[t] = stamp;
          out.push(valueLists[valueIndex[t]]);
          if (first) return out;
        }
      }
    }
    return out;
  }
}

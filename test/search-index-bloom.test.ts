/**
 * The skip index's items and filter bits must not depend on how they are computed: summaries built
 * by one version of the builder are probed by the next. The builder hashes items without making
 * their texts (ItemSet); these checks hold it to the item texts and to the filter's original hash.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { bucketMayHold, buildBloom, buildSliceBlooms, COMMON_IN_SLICES, hashItem, ItemSet } from '../src/features/logs/store/blocks/bloom.js';
import { addLogItems, GRAM_MIN_WORD, gramsOf, MAX_GRAMS_PER_LOG, MAX_PATH_CHARS, needOf, pathOf, pathText, ROOT, type GramSet } from '../src/features/logs/store/blocks/items.js';
import { parseQuery } from '../src/features/logs/query/index.js';
import { eachWord, fold, isWordChar, wordsOf } from '../src/features/logs/query/text.js';
import { KEYS, LONG_KEYS, randomLog } from './query-arbitraries.js';

/** MurmurHash3 (32 bits) over UTF-16 code units, as the filter has hashed items from the start. */
function reference(s: string, seed: number): number {
  let h = (seed ^ s.length) >>> 0;
  for (let i = 0; i < s.length; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

it('hashes an item as it always has', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (item) => {
      expect(hashItem(item)).toEqual({ bucket: reference(item, 0x9747b28c), bits: reference(item, 0x5bd1e995) });
    }),
    { numRuns: 2000 },
  );
});

it("builds the same filters from a block's item hashes as from its item texts, and finds the same words as wordsOf", () => {
  const logs = fc.sample(randomLog, { numRuns: 400, seed: 16 }).map((l) => ({ source: l.source ?? null, message: l.message, metadata: l.metadata === undefined ? null : JSON.stringify(l.metadata) }));
  let gramsSeen = 0;
  for (let i = 0; i < logs.length; i += 40) {
    const texts = new Set<string>();
    const hashed = new ItemSet();
    const gramTexts: GramSet = { items: new Set<string>(), complete: true };
    const gramHashes: GramSet = { items: new ItemSet(), complete: true };
    const block = logs.slice(i, i + 40);
    for (const log of block) expect(addLogItems(log, hashed, gramHashes)).toBe(addLogItems(log, texts, gramTexts));
    expect(hashed.size).toBe(texts.size);
    expect(buildBloom(hashed, hashed.size).bytes.equals(buildBloom(texts, texts.size).bytes)).toBe(true);
    const [a, b] = [gramHashes.items as ItemSet, gramTexts.items as Set<string>];
    expect(a.size).toBe(b.size);
    expect(buildBloom(a, a.size, 8).bytes.equals(buildBloom(b, b.size, 8).bytes)).toBe(true);
    expect([...b].every((g) => g.startsWith('g:'))).toBe(true);
    gramsSeen += b.size;
  }
  // The vocabulary holds ids long enough to give grams.
  expect(gramsSeen).toBeGreaterThan(0);
});

/** The grams a message gives (texts). */
function gramsGiven(message: string): { grams: Set<string>; complete: boolean } {
  const grams: GramSet = { items: new Set<string>(), complete: true };
  expect(addLogItems({ source: null, message, metadata: null }, new Set(), grams)).toBe(true);
  return { grams: grams.items as Set<string>, complete: grams.complete };
}

it('asks a substring search only for grams that every message holding it gave (never a miss)', () => {
  const idChar = fc.constantFrom(...'abcdef0123456789_XYZ');
  const around = fc.array(fc.constantFrom(' ', '-', '=', 'é', 'e\u0301', '\u0301', 'İ', '😀', 'ab', 'Q', '_', '.', 'req_'), { maxLength: 6 }).map((a) => a.join(''));
  const id = fc.array(idChar, { minLength: 8, maxLength: 70 }).map((a) => a.join(''));
  let asked = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(around, id), { minLength: 1, maxLength: 4 }), around, fc.nat(), fc.nat(), fc.boolean(), (parts, tail, x, y, shout) => {
      const message = parts.map(([a, w]) => a + w).join('') + tail;
      const given = gramsGiven(message).grams;
      // A legacy q: a raw substring (SQL matches it ASCII-case-insensitively); a phrase: a substring of the folded message.
      const folded = fold(message);
      for (const text of [message, folded]) {
        const from = x % text.length;
        const to = from + 1 + (y % (text.length - from));
        let q = text.slice(from, to);
        if (shout) q = q.toUpperCase() === q.toLowerCase() ? q : q.replace(/[a-z]/g, (c) => c.toUpperCase());
        if (text === message && !/^[\x00-\x7f]*$/.test(q)) continue;
        for (const g of gramsOf(fold(q))) {
          asked++;
          expect(given.has(g), `${JSON.stringify(message)} q=${JSON.stringify(q)} ${g}`).toBe(true);
        }
      }
    }),
    { numRuns: 4000, seed: 16 },
  );
  expect(asked).toBeGreaterThan(1000);
  // The trap the last character is left out for: SQL finds q in the raw message, but NFC joins the
  // e and the combining accent after it into é in the folded one.
  const ids = Array.from({ length: 200 }, (_, i) => `req_${hashItem(`a${i}`).bucket.toString(16)}${hashItem(`b${i}`).bits.toString(16)}e`);
  for (const id of ['req_c0ffee5eed42d00e', 'c0ffee5eed42d00ee', ...ids]) {
    const given = gramsGiven(`x ${id}\u0301 y`).grams;
    const q = gramsOf(fold(id.toUpperCase()));
    expect(q.length).toBeGreaterThan(0);
    for (const g of q) expect(given.has(g), g).toBe(true);
  }
});

it('gives a few grams per long word, none for short words, and gives up past the cap', () => {
  expect(gramsOf('c0ffee5eed42d00d')).toEqual([]);
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const { grams, complete } = gramsGiven(`GET /v1/orders 200 trace_id=${traceId} span=00f067aa0ba902b ok`);
  expect(complete).toBe(true);
  // trace_id's 32 characters and nothing of the shorter words.
  expect(grams.size).toBeGreaterThanOrEqual(2);
  expect(grams.size).toBeLessThanOrEqual(8);
  for (const g of grams) expect(traceId).toContain(g.slice(2));
  expect(gramsOf(traceId).every((g) => grams.has(g))).toBe(true);
  expect(GRAM_MIN_WORD).toBeLessThanOrEqual(traceId.length / 2);
  // A long base64 word gives more than a log may: the block keeps no gram filter.
  let blob = '';
  for (let i = 0; blob.length < 20_000; i++) blob += hashItem(String(i)).bucket.toString(36);
  const past = gramsGiven(`payload ${blob} end`);
  expect(past.complete).toBe(false);
  expect(past.grams.size).toBe(MAX_GRAMS_PER_LOG + 1);
});

it('takes the words of a text as wordsOf does', () => {
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.array(fc.constantFrom('a', 'Z', '_', '9', ' ', '-', 'é', 'e\u0301', 'İ', '\u212A', '😀', '٣', '\ud800', 'ß', '.'), { maxLength: 20 }).map((cs) => cs.join('')));
  fc.assert(
    fc.property(text, (message) => {
      const items = new Set<string>();
      expect(addLogItems({ source: null, message, metadata: null }, items)).toBe(true);
      expect([...items].sort()).toEqual([...new Set(wordsOf(fold(message)).map((w) => 'w:' + w))].sort());
    }),
    { numRuns: 3000 },
  );
});

it('has one definition of a word: wordsOf, eachWord and isWordChar are the word class /[\\p{L}\\p{M}\\p{Nd}_]/u, for every BMP code point', () => {
  const WORDS = /[\p{L}\p{M}\p{Nd}_]+/gu;
  const ONE = /^[\p{L}\p{M}\p{Nd}_]$/u;
  for (let cp = 0; cp < 0x10000; cp++) {
    const c = String.fromCharCode(cp);
    if (isWordChar(c) !== ONE.test(c)) throw new Error(`U+${cp.toString(16)}: isWordChar says ${isWordChar(c)}`);
  }
  for (const c of ['😀', '𝐀', '𝟘', '𐐀', '\u{e0100}', '\u{1f3fb}']) expect(isWordChar(c), c).toBe(ONE.test(c));
  expect(isWordChar('ab')).toBe(false);
  expect(isWordChar('')).toBe(false);
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.array(fc.constantFrom('a', 'Z', '_', '9', ' ', '-', 'é', 'e\u0301', 'İ', '\u212A', '😀', '𝐀', '٣', '\ud800', '\udc00', 'ß', '.', '\u0000'), { maxLength: 30 }).map((cs) => cs.join('')));
  fc.assert(
    fc.property(text, (t) => {
      const folded = fold(t);
      expect(wordsOf(folded)).toEqual(folded.match(WORDS) ?? []);
      const spans: string[] = [];
      expect(eachWord(folded, (from, to) => void spans.push(folded.slice(from, to)))).toBe(true);
      expect(spans).toEqual(wordsOf(folded));
    }),
    { numRuns: 3000 },
  );
  // It stops when told to.
  let seen = 0;
  expect(eachWord('a b c', () => ++seen < 2)).toBe(false);
  expect(seen).toBe(2);
});

/** The `p:` items of a log with this metadata. */
function pathItems(metadata: unknown): string[] {
  const items = new Set<string>();
  expect(addLogItems({ source: null, message: '', metadata: JSON.stringify(metadata) }, items)).toBe(true);
  return [...items].filter((i) => i.startsWith('p:')).sort();
}

it("names a path by one function for the log and the query: nested or flat, empty keys, dots, NFC or NFD, past 512 characters", () => {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYS, ...LONG_KEYS) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) });
  fc.assert(
    fc.property(fc.array(key, { minLength: 1, maxLength: 5 }), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), (keys, joins) => {
      // The same text cut into keys otherwise: neighbouring keys joined into one with a dot.
      const cut: string[] = [];
      keys.forEach((k, i) => (i > 0 && joins[i] ? (cut[cut.length - 1] += '.' + k) : cut.push(k)));
      const name = pathText(pathOf(keys) as Exclude<ReturnType<typeof pathOf>, typeof ROOT>);
      expect(pathText(pathOf(cut) as Exclude<ReturnType<typeof pathOf>, typeof ROOT>)).toBe(name);
      const joined = keys.join('.');
      if (joined.length <= MAX_PATH_CHARS) expect(name).toBe(joined);
      else expect(name.length).toBeLessThan(40);
      // The log's side: nested objects along the cut give the path's name (and its parents').
      let nested: unknown = 'v';
      for (let i = cut.length - 1; i >= 0; i--) nested = { [cut[i]!]: nested };
      expect(pathItems(nested)).toContain('p:' + name);
      // The query's side asks for exactly that item.
      const quoted = cut.map((k) => `"${k.replace(/["\\]/g, (c) => '\\' + c)}"`).join('.');
      if (`@${quoted}:*`.length <= 2000) expect(needOf(parseQuery(`@${quoted}:*`).root)).toMatchObject({ kind: 'item', item: 'p:' + name });
    }),
    { numRuns: 1000 },
  );
  // The empty key is a key, not the root; NFC and NFD are different keys, as the predicate has them.
  expect(pathItems({ '': 1 })).toEqual(['p:']);
  expect(pathItems({ '': { y: 1 } })).toEqual(['p:', 'p:.y']);
  expect(pathItems({ y: 1 })).toEqual(['p:y']);
  expect(pathItems({ 'café': 1, 'cafe\u0301': 2 })).toEqual(['p:cafe\u0301', 'p:café'].sort());
  // A long path costs its own items a hash, not the log its items.
  expect(pathItems({ ['x'.repeat(600)]: { a: 1 }, b: 2 })).toHaveLength(3);
});

it("puts each item in the filters of the slices it was added in, or in the common filter when it is in four or more", () => {
  const mayHold = (bloom: { buckets: number; bytes: Buffer }, item: string) => {
    const h = hashItem(item);
    const at = (h.bucket % bloom.buckets) * 32;
    return bucketMayHold(bloom.bytes.subarray(at, at + 32), h);
  };
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 15 }), fc.string({ minLength: 1, maxLength: 8 })), { minLength: 1, maxLength: 300 }), (adds) => {
      const set = new ItemSet();
      const slicesOf = new Map<string, Set<number>>();
      for (const [slice, item] of adds) {
        set.slice = slice;
        set.add('', item);
        slicesOf.set(item, (slicesOf.get(item) ?? new Set()).add(slice));
      }
      const { slices, common } = buildSliceBlooms(set, 16);
      expect(slices).toHaveLength(16);
      for (const [item, holding] of slicesOf) {
        // Never a miss: the slices that hold it say so, or the common filter does.
        for (const i of holding) expect(mayHold(slices[i]!, item) || mayHold(common, item), item).toBe(true);
        if (holding.size >= COMMON_IN_SLICES) expect(mayHold(common, item), item).toBe(true);
      }
    }),
    { numRuns: 300, seed: 16 },
  );
  // And the filters rule out: an item in one slice only is absent from the common filter and, at
  // 12 bits per item, from nearly every other slice's.
  const set = new ItemSet();
  for (let i = 0; i < 4096; i++) {
    set.slice = i >> 8;
    set.add('', `id-${i}`);
    set.add('', 'everywhere');
  }
  const { slices, common } = buildSliceBlooms(set, 16);
  expect(mayHold(common, 'everywhere')).toBe(true);
  let elsewhere = 0;
  for (let i = 0; i < 4096; i += 16) {
    expect(mayHold(slices[i >> 8]!, `id-${i}`)).toBe(true);
    for (let s = 0; s < 16; s++) if (s !== i >> 8 && (mayHold(slices[s]!, `id-${i}`) || mayHold(common, `id-${i}`))) elsewhere++;
  }
  expect(elsewhere / (256 * 15)).toBeLessThan(0.02);
});

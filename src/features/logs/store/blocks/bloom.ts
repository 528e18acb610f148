/**
 * The skip index's bloom filter: a split-block bloom filter (as Parquet's), hashed in the app so that
 * both engines hold the same bits. The filter is an array of 32-byte buckets, each eight 32-bit
 * words; an item sets one bit in each word of one bucket. A probe therefore needs the bytes of one
 * bucket only, which is what lets SQL hand back 32 bytes per block and item instead of the filter.
 */

export const BUCKET_BYTES = 32;
/** Bits per distinct item in a block's filter: ~0.1–0.5 % false positives at this load. */
export const BITS_PER_ITEM = 16;
/**
 * Bits per distinct item in a slice's filter (blocks/store.ts): ~0.5 % false positives. A slice is
 * probed only once its block's filter said "maybe", so its filter only has to narrow the read.
 */
export const SLICE_BITS_PER_ITEM = 12;
/**
 * Bits per distinct gram in a block's gram filter (items.ts GRAM_CHARS): ~3 % false positives for
 * one gram, but a searched id gives several, each of which the block must hold.
 */
export const GRAM_BITS_PER_ITEM = 8;
const SALT = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31];

/** The two hashes the last hashPair computed (module state: no object per item). */
let pairBucket = 0;
let pairBits = 0;

/**
 * MurmurHash3's mixing over UTF-16 code units (the item's text as JS holds it), 32 bits, with two
 * seeds at once: of `prefix` followed by `s[from, to)`, exactly as of that concatenation, without
 * making it. The results are left in pairBucket and pairBits.
 */
function hashPair(prefix: string, s: string, from: number, to: number): void {
  const length = prefix.length + to - from;
  let a = (BUCKET_SEED ^ length) >>> 0;
  let b = (BITS_SEED ^ length) >>> 0;
  for (let i = -prefix.length; i < to - from; i++) {
    let k = Math.imul(i < 0 ? prefix.charCodeAt(prefix.length + i) : s.charCodeAt(from + i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    a ^= k;
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    b ^= k;
    b = (b << 13) | (b >>> 19);
    b = (Math.imul(b, 5) + 0xe6546b64) | 0;
  }
  pairBucket = fmix(a);
  pairBits = fmix(b);
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const BUCKET_SEED = 0x9747b28c;
const BITS_SEED = 0x5bd1e995;

/** An item's two hashes: `bucket` picks the bucket (modulo the filter's bucket count), `bits` the bit in each word. */
export interface ItemHash {
  bucket: number;
  bits: number;
}

export function hashItem(item: string): ItemHash {
  hashPair('', item, 0, item.length);
  return { bucket: pairBucket, bits: pairBits };
}

/**
 * The distinct items of a block, kept as their two hashes (what the filter needs of them) in an
 * open-addressing table: adding an item makes no string and no object, which is most of what
 * summarising costs. Two items with the same two hashes set the same bits, so keeping one of them
 * loses nothing. An item is `prefix` followed by `text[from, to)` (see items.ts for the kinds).
 * Each item also keeps the slices (0–15) it was added in: set `slice` before adding a log's items.
 */
export class ItemSet {
  #buckets = new Uint32Array(1024);
  #bits = new Uint32Array(1024);
  #slices = new Uint16Array(1024);
  #used = new Uint8Array(1024);
  #size = 0;
  /** The slice the items added next belong to (0–15). */
  slice = 0;

  get size(): number {
    return this.#size;
  }

  add(prefix: string, text: string, from = 0, to = text.length): void {
    hashPair(prefix, text, from, to);
    this.#insert(pairBucket, pairBits, 1 << this.slice);
  }

  #insert(bucket: number, bits: number, slices: number): void {
    if ((this.#size + 1) * 2 > this.#used.length) this.#grow();
    const mask = this.#used.length - 1;
    for (let i = (bucket ^ Math.imul(bits, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      if (this.#used[i] === 0) {
        this.#used[i] = 1;
        this.#buckets[i] = bucket;
        this.#bits[i] = bits;
        this.#slices[i] = slices;
        this.#size++;
        return;
      }
      if (this.#buckets[i] === bucket && this.#bits[i] === bits) {
        this.#slices[i]! |= slices;
        return;
      }
    }
  }

  #grow(): void {
    const [buckets, bits, slices, used] = [this.#buckets, this.#bits, this.#slices, this.#used];
    this.#buckets = new Uint32Array(used.length * 2);
    this.#bits = new Uint32Array(used.length * 2);
    this.#slices = new Uint16Array(used.length * 2);
    this.#used = new Uint8Array(used.length * 2);
    this.#size = 0;
    for (let i = 0; i < used.length; i++) if (used[i] === 1) this.#insert(buckets[i]!, bits[i]!, slices[i]!);
  }

  /** Calls `fn` with every item's two hashes and the slices it was added in (bit i: slice i). */
  each(fn: (bucket: number, bits: number, slices: number) => void): void {
    for (let i = 0; i < this.#used.length; i++) if (this.#used[i] === 1) fn(this.#buckets[i]!, this.#bits[i]!, this.#slices[i]!);
  }
}

/** The eight (word, bit) masks an item sets in its bucket. */
function masks(bits: number): number[] {
  return SALT.map((salt) => 1 << (Math.imul(bits, salt) >>> 27));
}

/** Buckets for a filter of `items` distinct items (at least one). */
export function bucketsFor(items: number, bitsPerItem = BITS_PER_ITEM): number {
  return Math.max(1, Math.ceil((items * bitsPerItem) / (BUCKET_BYTES * 8)));
}

export type Bloom = { buckets: number; bytes: Buffer };

/** A filter being built: room for `count` items at `bitsPerItem`; `set` adds an item by its two hashes. */
class FilterWords {
  readonly buckets: number;
  readonly words: Uint32Array;

  constructor(count: number, bitsPerItem: number) {
    this.buckets = bucketsFor(count, bitsPerItem);
    this.words = new Uint32Array(this.buckets * 8);
  }

  set(bucket: number, bits: number): void {
    const base = (bucket % this.buckets) * 8;
    for (let i = 0; i < 8; i++) this.words[base + i]! |= 1 << (Math.imul(bits, SALT[i]!) >>> 27);
  }

  /** Little-endian words on every machine, so the bytes are the same everywhere. */
  bloom(): Bloom {
    const bytes = Buffer.alloc(this.buckets * BUCKET_BYTES);
    for (let i = 0; i < this.words.length; i++) bytes.writeUInt32LE(this.words[i]!, i * 4);
    return { buckets: this.buckets, bytes };
  }
}

/** A filter holding every item of `items` (texts, or an ItemSet's hashes). */
export function buildBloom(items: Iterable<string> | ItemSet, count: number, bitsPerItem = BITS_PER_ITEM): Bloom {
  const filter = new FilterWords(count, bitsPerItem);
  if (items instanceof ItemSet) items.each((bucket, bits) => filter.set(bucket, bits));
  else
    for (const item of items) {
      const h = hashItem(item);
      filter.set(h.bucket, h.bits);
    }
  return filter.bloom();
}

/** An item in at least this many of a block's slices is a common one (see buildSliceBlooms). */
export const COMMON_IN_SLICES = 4;

/** Set bits of a 16-bit mask. */
function popcount(m: number): number {
  m = m - ((m >> 1) & 0x5555);
  m = (m & 0x3333) + ((m >> 2) & 0x3333);
  m = (m + (m >> 4)) & 0x0f0f;
  return (m + (m >> 8)) & 0x1f;
}

/**
 * The slices' filters of a block's items (ItemSet.slice): slice i's filter holds the items added in
 * slice i that are in fewer than COMMON_IN_SLICES slices; the common ones (a level's word, a path,
 * a status code: in most slices) go once into `common`, whose "maybe" means "every slice may".
 * A needle is rare, so it is in its slices' filters, and the common items do not fill them. Two
 * passes over the items: one to size the filters, one to fill them.
 */
export function buildSliceBlooms(items: ItemSet, slices: number): { slices: Bloom[]; common: Bloom } {
  const counts = new Array<number>(slices).fill(0);
  let common = 0;
  items.each((_bucket, _bits, m) => {
    if (popcount(m) >= COMMON_IN_SLICES) common++;
    else for (let rest = m; rest !== 0; rest &= rest - 1) counts[31 - Math.clz32(rest & -rest)]!++;
  });
  const filters = counts.map((count) => new FilterWords(Math.max(1, count), SLICE_BITS_PER_ITEM));
  const commonFilter = new FilterWords(Math.max(1, common), BITS_PER_ITEM);
  items.each((bucket, bits, m) => {
    if (popcount(m) >= COMMON_IN_SLICES) commonFilter.set(bucket, bits);
    else for (let rest = m; rest !== 0; rest &= rest - 1) filters[31 - Math.clz32(rest & -rest)]!.set(bucket, bits);
  });
  return { slices: filters.map((f) => f.bloom()), common: commonFilter.bloom() };
}

/** Whether the 32 bytes of an item's bucket may hold it (false: certainly not). */
export function bucketMayHold(bucket: Uint8Array, h: ItemHash): boolean {
  if (bucket.length !== BUCKET_BYTES) return true;
  const view = new DataView(bucket.buffer, bucket.byteOffset, bucket.byteLength);
  const m = masks(h.bits);
  for (let i = 0; i < 8; i++) if ((view.getUint32(i * 4, true) & m[i]!) === 0) return false;
  return true;
}

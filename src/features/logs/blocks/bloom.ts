/**
 * The skip index's bloom filter: a split-block bloom filter (as Parquet's), hashed in the app so that
 * both engines hold the same bits. The filter is an array of 32-byte buckets, each eight 32-bit
 * words; an item sets one bit in each word of one bucket. A probe therefore needs the bytes of one
 * bucket only, which is what lets SQL hand back 32 bytes per block and item instead of the filter.
 */

export const BUCKET_BYTES = 32;
/** Bits per distinct item: ~0.1–0.5 % false positives at this load. */
const BITS_PER_ITEM = 16;
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
 */
export class ItemSet {
  #buckets = new Uint32Array(1024);
  #bits = new Uint32Array(1024);
  #used = new Uint8Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(prefix: string, text: string, from = 0, to = text.length): void {
    hashPair(prefix, text, from, to);
    this.#insert(pairBucket, pairBits);
  }

  #insert(bucket: number, bits: number): void {
    if ((this.#size + 1) * 2 > this.#used.length) this.#grow();
    const mask = this.#used.length - 1;
    for (let i = (bucket ^ Math.imul(bits, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      if (this.#used[i] === 0) {
        this.#used[i] = 1;
        this.#buckets[i] = bucket;
        this.#bits[i] = bits;
        this.#size++;
        return;
      }
      if (this.#buckets[i] === bucket && this.#bits[i] === bits) return;
    }
  }

  #grow(): void {
    const [buckets, bits, used] = [this.#buckets, this.#bits, this.#used];
    this.#buckets = new Uint32Array(used.length * 2);
    this.#bits = new Uint32Array(used.length * 2);
    this.#used = new Uint8Array(used.length * 2);
    this.#size = 0;
    for (let i = 0; i < used.length; i++) if (used[i] === 1) this.#insert(buckets[i]!, bits[i]!);
  }

  /** Calls `fn` with every item's two hashes. */
  each(fn: (bucket: number, bits: number) => void): void {
    for (let i = 0; i < this.#used.length; i++) if (this.#used[i] === 1) fn(this.#buckets[i]!, this.#bits[i]!);
  }
}

/** The eight (word, bit) masks an item sets in its bucket. */
function masks(bits: number): number[] {
  return SALT.map((salt) => 1 << (Math.imul(bits, salt) >>> 27));
}

/** Buckets for a filter of `items` distinct items (at least one). */
export function bucketsFor(items: number): number {
  return Math.max(1, Math.ceil((items * BITS_PER_ITEM) / (BUCKET_BYTES * 8)));
}

/** A filter holding every item of `items` (texts, or an ItemSet's hashes). */
export function buildBloom(items: Iterable<string> | ItemSet, count: number): { buckets: number; bytes: Buffer } {
  const buckets = bucketsFor(count);
  const words = new Uint32Array(buckets * 8);
  const set = (bucket: number, bits: number) => {
    const base = (bucket % buckets) * 8;
    for (let i = 0; i < 8; i++) words[base + i]! |= 1 << (Math.imul(bits, SALT[i]!) >>> 27);
  };
  if (items instanceof ItemSet) items.each(set);
  else
    for (const item of items) {
      const h = hashItem(item);
      set(h.bucket, h.bits);
    }
  // Little-endian words on every machine, so the bytes are the same everywhere.
  const bytes = Buffer.alloc(buckets * BUCKET_BYTES);
  for (let i = 0; i < words.length; i++) bytes.writeUInt32LE(words[i]!, i * 4);
  return { buckets, bytes };
}

/** Whether the 32 bytes of an item's bucket may hold it (false: certainly not). */
export function bucketMayHold(bucket: Uint8Array, h: ItemHash): boolean {
  if (bucket.length !== BUCKET_BYTES) return true;
  const view = new DataView(bucket.buffer, bucket.byteOffset, bucket.byteLength);
  const m = masks(h.bits);
  for (let i = 0; i < 8; i++) if ((view.getUint32(i * 4, true) & m[i]!) === 0) return false;
  return true;
}

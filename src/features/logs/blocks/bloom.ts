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

/** MurmurHash3's mixing over UTF-16 code units (the item's text as JS holds it), 32 bits. */
function hash32(s: string, seed: number): number {
  let h = (seed ^ s.length) >>> 0;
  for (let i = 0; i < s.length; i++) {
    let k = s.charCodeAt(i);
    k = Math.imul(k, 0xcc9e2d51);
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

/** An item's two hashes: `bucket` picks the bucket (modulo the filter's bucket count), `bits` the bit in each word. */
export interface ItemHash {
  bucket: number;
  bits: number;
}

export function hashItem(item: string): ItemHash {
  return { bucket: hash32(item, 0x9747b28c), bits: hash32(item, 0x5bd1e995) };
}

/** The eight (word, bit) masks an item sets in its bucket. */
function masks(bits: number): number[] {
  return SALT.map((salt) => 1 << (Math.imul(bits, salt) >>> 27));
}

/** Buckets for a filter of `items` distinct items (at least one). */
export function bucketsFor(items: number): number {
  return Math.max(1, Math.ceil((items * BITS_PER_ITEM) / (BUCKET_BYTES * 8)));
}

/** A filter holding every item of `items`. */
export function buildBloom(items: Iterable<string>, count: number): { buckets: number; bytes: Buffer } {
  const buckets = bucketsFor(count);
  const words = new Uint32Array(buckets * 8);
  for (const item of items) {
    const h = hashItem(item);
    const base = (h.bucket % buckets) * 8;
    const m = masks(h.bits);
    for (let i = 0; i < 8; i++) words[base + i]! |= m[i]!;
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

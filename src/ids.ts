import { randomBytes } from 'node:crypto';

/** Crockford's base32: URL-safe, no ambiguous letters, and sorts like the numbers it encodes. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix = 'usr' | 'proj' | 'alt' | 'alh' | 'dlv' | 'log' | 'psub' | 'rtf' | 'rt' | 'dst' | 'ses' | 'inv' | 'viw';

/**
 * A prefixed, time-sortable id: 48 bits of milliseconds then 80 random bits, 26 characters
 * (the ULID layout). Ids made later sort after ids made earlier, to the millisecond.
 */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let bits = 0;
  let value = 0;
  let rand = '';
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rand += ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return `${prefix}_${time}${rand}`;
}

const ID_SHAPE = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` has the shape of an id with this prefix. Anything else cannot exist. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);
}

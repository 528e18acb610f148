import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { seal, sha256Hex, unseal } from '../../secrets.js';

/**
 * Project API keys: `llk_` + 32 base62 characters of randomness (190 bits) + 6 base62 characters
 * of checksum, GitHub-style. The prefix and the shape let secret scanners recognise a Loglane key.
 *
 * The checksum is keyed: an HMAC-SHA256 of the first 36 characters under a key derived from the
 * server's secret (SECRET_KEY, purpose `api-key-checksum`), so nobody without that secret can make
 * up a key that passes it, and a made-up key is refused without a database lookup. Keys made before
 * the checksum was keyed carry a CRC32 instead, which anyone can compute: those are told apart by
 * the checksum's value (a CRC32 is below 2^32; a keyed checksum is placed at 2^32 or above, in the
 * 52.5 billion values six base62 characters have left), and the projects service lets one reach
 * the database only when it is the digest of a key that was handed out (see projects/service.ts).
 */
export const API_KEY_PREFIX = 'llk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
/** The values six base62 characters can write. */
const CHECKSUM_SPACE = 62 ** CHECKSUM_CHARS;
/** Every CRC32 checksum is below this; every keyed checksum at or above it. */
const LEGACY_SPACE = 2 ** 32;
export const API_KEY_PATTERN = /^llk_[0-9A-Za-z]{38}$/;

function base62Random(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: dropping bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function encode(n: number): string {
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function decode(text: string): number {
  let n = 0;
  for (const c of text) n = n * 62 + BASE62.indexOf(c);
  return n;
}

/** The CRC32 checksum keys were made with before it was keyed: kept to recognise those keys. */
function legacyChecksumValue(body: string): number {
  return crc32(body);
}

export function legacyChecksum(body: string): string {
  return encode(legacyChecksumValue(body));
}

/** The keyed checksum of a key's first 36 characters, as a number in [2^32, 62^6). */
function keyedChecksumValue(checksumKey: Buffer, body: string): number {
  const mac = createHmac('sha256', checksumKey).update(body).digest();
  // 48 bits reduced modulo the ~2^35.6 values left: the bias is under 2 in 10,000.
  return LEGACY_SPACE + (mac.readUIntBE(0, 6) % (CHECKSUM_SPACE - LEGACY_SPACE));
}

/** How a key's checksum holds: `keyed` (made by a server with this secret), `legacy` (a CRC32 one) or `none`. */
export type ApiKeyChecksum = 'keyed' | 'legacy' | 'none';

export interface ApiKeyFormat {
  /** A new key, with a keyed checksum. */
  generate(): string;
  /**
   * Which checksum the key carries, if any holds; `none` also for text that is not key-shaped.
   * Costs a CRC32 or one HMAC, never a database lookup. The comparison is of whole numbers, so
   * how long it takes says nothing about which characters of a guess were right.
   */
  checksumOf(key: string): ApiKeyChecksum;
}

/** The key format under `checksumKey` (secrets.ts deriveKey(secret, 'api-key-checksum')). */
export function apiKeyFormat(checksumKey: Buffer): ApiKeyFormat {
  return {
    generate() {
      const body = API_KEY_PREFIX + base62Random(RANDOM_CHARS);
      return body + encode(keyedChecksumValue(checksumKey, body));
    },
    checksumOf(key) {
      if (!isWellFormedApiKey(key)) return 'none';
      const body = key.slice(0, -CHECKSUM_CHARS);
      const value = decode(key.slice(-CHECKSUM_CHARS));
      if (value < LEGACY_SPACE) return legacyChecksumValue(body) === value ? 'legacy' : 'none';
      return keyedChecksumValue(checksumKey, body) === value ? 'keyed' : 'none';
    },
  };
}

/**
 * A key with the CRC32 checksum keys had before it was keyed: what servers made until then. Kept
 * for tests that stand for such a key (no server makes one now).
 */
export function legacyApiKey(): string {
  const body = API_KEY_PREFIX + base62Random(RANDOM_CHARS);
  return body + legacyChecksum(body);
}

/**
 * True when the text has the shape of a key (`llk_` and 38 base62 characters), as a secret
 * scanner checks it. Whether its checksum holds needs the server's secret: ApiKeyFormat.checksumOf.
 */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** The lookup digest stored beside the project. */
export const hashApiKey = (key: string): string => sha256Hex(key);

/** The first 8 and last 4 characters with an ellipsis between: `llk_AbCd…wXyZ`. */
export function maskApiKey(key: string): string {
  return `${key.slice(0, 8)}…${key.slice(-4)}`;
}

/** The API key sealed with the project id as associated data (secrets.ts seal): a copy on another project's row does not open. */
export function encryptApiKey(encryptionKey: Buffer, projectId: string, apiKey: string): string {
  return seal(encryptionKey, projectId, apiKey);
}

/** Throws when the ciphertext was made with another key or for another project. */
export function decryptApiKey(encryptionKey: Buffer, projectId: string, stored: string): string {
  return unseal(encryptionKey, projectId, stored);
}

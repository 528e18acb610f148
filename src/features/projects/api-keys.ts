import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { seal, sha256Hex, unseal } from '../../secrets.js';

/**
 * Project API keys: `llk_` + 32 base62 characters of randomness (190 bits) + 6 base62 characters
 * of CRC32 checksum, GitHub-style. The prefix lets secret scanners recognise a Loglane key; the
 * checksum lets them (and us) drop a mistyped or made-up key without a database lookup.
 */
export const API_KEY_PREFIX = 'llk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
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

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = API_KEY_PREFIX + base62Random(RANDOM_CHARS);
  return body + checksum(body);
}

/** True when the text has the shape of a key and its checksum holds. Checks no database. */
export function isWellFormedApiKey(key: string): boolean {
  if (!API_KEY_PATTERN.test(key)) return false;
  const body = key.slice(0, -CHECKSUM_CHARS);
  return checksum(body) === key.slice(-CHECKSUM_CHARS);
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

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';

export const SECRET_KEY_FILE = 'secret.key';

/**
 * The server's master secret: SECRET_KEY when set; on SQLite without it, the key kept in
 * DATA_DIR/secret.key, generated with mode 0600 on first start.
 */
export function resolveSecretKey(config: Pick<Config, 'secretKey' | 'dataDir' | 'engine'>): { key: string; generated: boolean; file?: string } {
  if (config.secretKey !== undefined) return { key: config.secretKey, generated: false };
  if (config.engine === 'postgres') throw new Error('SECRET_KEY is required with PostgreSQL');
  const file = path.join(config.dataDir, SECRET_KEY_FILE);
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    if (key.length < 32) throw new Error(`${file} holds a key shorter than 32 characters; delete it to have a new one generated`);
    return { key, generated: false, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32).toString('hex');
  // 'wx' fails if another process created the file first; then use theirs.
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { key: fs.readFileSync(file, 'utf8').trim(), generated: false, file };
    throw err;
  }
  return { key, generated: true, file };
}

/**
 * Purpose-bound 256-bit subkeys, so no two uses share a key (the JWT key, the API-key encryption
 * key, the key of API keys' checksums, …).
 */
export type KeyPurpose = 'jwt-signing' | 'api-key-encryption' | 'api-key-checksum' | 'webhook-secret-encryption';

export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'loglane', `loglane:${purpose}:v1`, 32));
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A URL-safe random token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}


/**
 * AES-256-GCM with a random 96-bit nonce; `owner` (the id of the row it belongs to) is the
 * associated data, so a ciphertext copied onto another row does not open.
 * Stored form: `v1.<nonce>.<ciphertext>.<tag>`, each part base64url.
 */
export function seal(key: Buffer, owner: string, text: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(owner));
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return ['v1', nonce, ciphertext, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** What seal() sealed; throws when the ciphertext was made with another key or for another owner. */
export function unseal(key: Buffer, owner: string, stored: string): string {
  const [version, nonce, ciphertext, tag] = stored.split('.');
  if (version !== 'v1' || !nonce || !ciphertext || !tag) throw new Error('unknown ciphertext format');
  // A pinned 16-byte tag: Node would otherwise accept a truncated one.
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(owner));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

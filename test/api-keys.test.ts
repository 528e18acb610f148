/**
 * API keys that cannot be forged cheaply, and the SQLite connection lock. A key's checksum was a
 * CRC32, so anyone could compute keys that passed it, and each cost a database lookup; now it is
 * keyed with the server's secret, and a key with only a CRC32 (the keys handed out before) reaches
 * the database only when its digest is one of a key handed out. Kysely's SQLite lock woke every
 * waiter on each release (N queued queries, N²/2 wakeups); ours hands over to one at a time.
 */
import { createHook } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/connect.js';
import { FairMutex } from '../src/db/mutex.js';
import { apiKeyFormat, encryptApiKey, hashApiKey, isWellFormedApiKey, legacyApiKey, legacyChecksum } from '../src/features/projects/api-keys.js';
import { replaceApiKey } from '../src/features/projects/repository.js';
import { KEY_LOOKUP_BATCH } from '../src/features/projects/service.js';
import { deriveKey, resolveSecretKey } from '../src/secrets.js';
import { createProject, describeEngines, ingest, ISSUED_SECRETS, signup, startServer, useServer, type TestServer } from './harness.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const format = apiKeyFormat(deriveKey('a server secret of at least thirty-two characters', 'api-key-checksum'));
const checksumValue = (key: string) => [...key.slice(-6)].reduce((n, c) => n * 62 + BASE62.indexOf(c), 0);
const randomChars = (n: number) => Array.from({ length: n }, () => BASE62[Math.floor(Math.random() * 62)]).join('');

describe('the key format', () => {
  it('new keys carry the llk_ prefix, 38 base62 characters and a keyed checksum placed above every CRC32; 1,000 are unique', () => {
    const keys = Array.from({ length: 1000 }, () => format.generate());
    expect(new Set(keys).size).toBe(1000);
    for (const key of keys) {
      expect(key).toMatch(/^llk_[0-9A-Za-z]{38}$/);
      expect(isWellFormedApiKey(key)).toBe(true);
      expect(format.checksumOf(key)).toBe('keyed');
      expect(checksumValue(key)).toBeGreaterThanOrEqual(2 ** 32);
    }
  });

  it('a key made under another secret, or with a changed character, has no checksum that holds', () => {
    const other = apiKeyFormat(deriveKey('another server secret, also thirty-two characters', 'api-key-checksum'));
    const key = format.generate();
    expect(other.checksumOf(key)).toBe('none');
    for (let i = 4; i < key.length; i++) {
      const changed = key.slice(0, i) + (key[i] === 'Z' ? 'Y' : 'Z') + key.slice(i + 1);
      expect(format.checksumOf(changed), changed).toBe('none');
    }
  });

  it('a CRC32 key (the old format, which anyone can compute) is told apart: legacy, never keyed', () => {
    for (let i = 0; i < 1000; i++) {
      const forged = legacyApiKey();
      expect(checksumValue(forged)).toBeLessThan(2 ** 32);
      expect(format.checksumOf(forged)).toBe('legacy');
    }
    const body = `llk_${randomChars(32)}`;
    expect(format.checksumOf(body + legacyChecksum(body))).toBe('legacy');
  });

  it('10,000 made-up keys of the right shape with a checksum in the keyed range: none holds', () => {
    let held = 0;
    for (let i = 0; i < 10_000; i++) {
      let key: string;
      do key = `llk_${randomChars(38)}`;
      while (checksumValue(key) < 2 ** 32);
      if (format.checksumOf(key) !== 'none') held++;
    }
    expect(held).toBe(0);
  });

  it('text that is not key-shaped has no checksum', () => {
    for (const text of ['', 'llk_', 'llk_short', `llk_${'a'.repeat(39)}`, `LLK_${'a'.repeat(38)}`, `llk_${'a'.repeat(37)}-`]) expect(format.checksumOf(text)).toBe('none');
  });
});

describe('the connection lock', () => {
  it('hands over to one waiter at a time, in arrival order: 10,000 waiters, 10,000 wakeups', async () => {
    const mutex = new FairMutex();
    const order: number[] = [];
    const n = 10_000;
    const all = Array.from({ length: n }, (_, i) =>
      mutex.lock().then(() => {
        order.push(i);
        mutex.unlock();
      }),
    );
    expect(mutex.waiting).toBe(n - 1);
    await Promise.all(all);
    expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(mutex.wakeups).toBe(n - 1);
    expect(mutex.waiting).toBe(0);
    // Free again: the next caller takes it at once.
    await mutex.lock();
    mutex.unlock();
  });

  /** Promises made while `work` runs: every wakeup of a waiter, and every await, makes one. */
  async function promisesMadeBy(work: () => Promise<unknown>): Promise<number> {
    let made = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === 'PROMISE') made++;
      },
    });
    hook.enable();
    try {
      await work();
    } finally {
      hook.disable();
    }
    return made;
  }

  it('N queries queued at once on SQLite cost work in proportion to N, not N² (counted in promises made)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-lock-'));
    const database = openDatabase({ engine: 'sqlite', dataDir, databaseUrl: undefined, databasePoolSize: 1 });
    try {
      await sql`select 1`.execute(database.db);
      const burst = (n: number) => promisesMadeBy(() => Promise.all(Array.from({ length: n }, () => sql`select 1`.execute(database.db))));
      const small = await burst(250);
      const large = await burst(1000);
      console.log(`[connection lock] promises made: 250 queries ${small}, 1,000 queries ${large}`);
      // Four times the queries: about four times the work when each costs the same, sixteen times when each release wakes every waiter.
      expect(large / small).toBeLessThan(6);
    } finally {
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** A key as this server would make it (its checksum keyed with the server's secret), stored nowhere. */
function serverFormat(s: TestServer) {
  return apiKeyFormat(deriveKey(resolveSecretKey(s.config).key, 'api-key-checksum'));
}

/** Replaces the project's key with `key`, digest and ciphertext, as the server stores one. */
async function storeKey(s: TestServer, projectId: string, key: string): Promise<void> {
  const sealed = encryptApiKey(deriveKey(resolveSecretKey(s.config).key, 'api-key-encryption'), projectId, key);
  await replaceApiKey(s.database.db, projectId, { hash: hashApiKey(key), ciphertext: sealed }, s.clock.now());
}

describeEngines('API key checks', (engine) => {
  const s = useServer(engine);
  const lookups = () => s.app.services.projects.keyLookups();

  it('made-up keys are refused without a query: 1,000 with a valid CRC32, 1,000 of the right shape with a wrong checksum', async () => {
    const before = lookups();
    for (let i = 0; i < 1000; i++) {
      expect(await s.app.services.projects.verifyApiKey(legacyApiKey())).toEqual({ ok: false, reason: 'unknown' });
      expect(await s.app.services.projects.verifyApiKey(`llk_${randomChars(38)}`)).toMatchObject({ ok: false });
    }
    const after = lookups();
    expect(after.statements - before.statements).toBe(0);
    expect(after.keys - before.keys).toBe(0);
    // The set of keys handed out without a keyed checksum was read at start; not again within 30 s.
    expect(after.scans - before.scans).toBe(0);
  });

  it('keyCouldExist answers at once and with no query which keys surely are no project\'s', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const projects = s.app.services.projects;
    // Brings the set of keys handed out without a keyed checksum up to date, if it is due.
    await projects.verifyApiKey(legacyApiKey());
    const before = lookups();
    expect(projects.keyCouldExist(p.apiKey)).toBe(true);
    expect(projects.keyCouldExist(serverFormat(s).generate())).toBe(true);
    for (let i = 0; i < 100; i++) expect(projects.keyCouldExist(legacyApiKey())).toBe(false);
    for (const text of ['', 'llk_short', `llk_${randomChars(38)}`, p.apiKey.slice(0, -1) + (p.apiKey.endsWith('a') ? 'b' : 'a')]) expect(projects.keyCouldExist(text), text).toBe(false);
    expect(lookups()).toEqual(before);
  });

  it('a key with a keyed checksum that is no project\'s costs one query, then is remembered as unknown', async () => {
    const key = serverFormat(s).generate();
    const before = lookups();
    expect(await s.app.services.projects.verifyApiKey(key)).toEqual({ ok: false, reason: 'unknown' });
    expect(await s.app.services.projects.verifyApiKey(key)).toEqual({ ok: false, reason: 'unknown' });
    expect(lookups().statements - before.statements).toBe(1);
    s.clock.advance(31_000);
    expect(await s.app.services.projects.verifyApiKey(key)).toEqual({ ok: false, reason: 'unknown' });
    expect(lookups().statements - before.statements).toBe(2);
  });

  it('50 concurrent checks of one key share one lookup', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const before = lookups();
    const checks = await Promise.all(Array.from({ length: 50 }, () => s.app.services.projects.verifyApiKey(p.apiKey)));
    for (const check of checks) expect(check).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
    expect(lookups().statements - before.statements).toBe(1);
  });

  it(`verifyApiKeys looks ${KEY_LOOKUP_BATCH * 2 + 200} keys up ${KEY_LOOKUP_BATCH} to a statement, made-up ones in none`, async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const unknown = Array.from({ length: KEY_LOOKUP_BATCH * 2 + 199 }, () => serverFormat(s).generate());
    const forged = Array.from({ length: 500 }, legacyApiKey);
    const before = lookups();
    const found = await s.app.services.projects.verifyApiKeys([...unknown, p.apiKey, ...forged, p.apiKey]);
    const after = lookups();
    expect(after.statements - before.statements).toBe(3);
    expect(after.keys - before.keys).toBe(KEY_LOOKUP_BATCH * 2 + 200);
    expect(found.get(p.apiKey)).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
    for (const key of [...unknown, ...forged]) expect(found.get(key)).toEqual({ ok: false, reason: 'unknown' });
  });

  it('on a node whose SECRET_KEY is not the one the keys were made under (the secret was lost), those keys still work, and made-up keys still cost no query', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const b = await startServer(engine, { shareWith: s, env: { SECRET_KEY: 'a new secret, since the old one was lost: 32+ chars' } });
    try {
      expect(await b.app.services.projects.verifyApiKey(p.apiKey)).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
      const before = b.app.services.projects.keyLookups();
      for (let i = 0; i < 200; i++) {
        expect((await b.app.services.projects.verifyApiKey(legacyApiKey())).ok).toBe(false);
        expect((await b.app.services.projects.verifyApiKey(serverFormat(s).generate())).ok).toBe(false);
      }
      expect(b.app.services.projects.keyLookups()).toEqual(before);
    } finally {
      await b.close();
    }
  });

  it('a key without a keyed checksum stored by a node that still makes them is taken once the set is brought up to date (at most 30 s)', async () => {
    const a = await signup(s);
    const p = await createProject(s, a);
    const old = legacyApiKey();
    ISSUED_SECRETS.add(old);
    await storeKey(s, p.id, old);
    s.clock.advance(31_000);
    const before = lookups();
    expect(await s.app.services.projects.verifyApiKey(old)).toEqual({ ok: true, projectId: p.id, userId: a.id, plan: 'free' });
    expect((await ingest(s, old, [{ message: 'from an old key' }])).status).toBe(202);
    expect(lookups().scans - before.scans).toBe(1);

    // Rotated on this node, it leaves the set: refused with no query.
    const rotated = await s.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: a.accessToken });
    expect(rotated.status).toBe(200);
    ISSUED_SECRETS.add(rotated.body.apiKey);
    const after = lookups();
    expect(await s.app.services.projects.verifyApiKey(old)).toEqual({ ok: false, reason: 'unknown' });
    expect(lookups()).toEqual(after);
  });
});

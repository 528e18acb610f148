import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { decryptApiKey } from '../src/features/projects/api-keys.js';
import { deriveKey, resolveSecretKey } from '../src/secrets.js';
import { createProject, describeEngines, setPlan, signup, useServer } from './harness.js';

describeEngines('secrets at rest and in logs', (engine) => {
  const s = useServer(engine);

  /** Every row of every table, as one string. */
  async function dump(): Promise<string> {
    const db = s.database.db;
    const tables = ['users', 'refresh_tokens', 'login_throttle', 'projects'] as const;
    const rows = await Promise.all(tables.map((t) => db.selectFrom(t).selectAll().execute()));
    return JSON.stringify(rows);
  }

  it('passwords are stored as argon2id PHC strings with m=19456, t=2, p=1', async () => {
    const a = await signup(s);
    const row = await s.database.db.selectFrom('users').select('password_hash').where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
  });

  it('refresh tokens are stored only as SHA-256 digests, and no secret appears in the database', async () => {
    const a = await signup(s);
    const login = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
    const refreshed = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
    // The API (not the console) answers with the refresh token in the body: both are checked there.
    expect(login.body.refreshToken).toEqual(expect.any(String));
    expect(refreshed.body.refreshToken).toEqual(expect.any(String));
    const issued = [a.refreshToken, login.body.refreshToken!, refreshed.body.refreshToken!];
    const rows = await s.database.db.selectFrom('refresh_tokens').select('token_hash').where('user_id', '=', a.id).execute();
    expect(rows.map((r) => r.token_hash).sort()).toEqual(issued.map((t) => createHash('sha256').update(t).digest('hex')).sort());

    const everything = await dump();
    for (const secret of [a.password, ...issued, a.accessToken, login.body.accessToken]) expect(everything).not.toContain(secret);
  });

  it('API keys are stored only as a SHA-256 digest and an AES-256-GCM ciphertext bound to the project', async () => {
    const a = await signup(s);
    await setPlan(s, a.id, 'starter');
    const p1 = await createProject(s, a, 'one');
    const p2 = await createProject(s, a, 'two');
    const rotated = (await s.request('POST', `/v1/projects/${p1.id}/rotate-key`, { token: a.accessToken })).body.apiKey as string;
    const everything = await dump();
    for (const key of [p1.apiKey, p2.apiKey, rotated]) {
      const secret = key.slice(4);
      for (let i = 0; i + 8 <= secret.length; i++) expect(everything).not.toContain(secret.slice(i, i + 8));
    }
    const rows = await s.database.db.selectFrom('projects').select(['id', 'api_key_hash', 'api_key_ciphertext']).where('user_id', '=', a.id).orderBy('created_at').execute();
    expect(rows[0]!.api_key_hash).toBe(createHash('sha256').update(rotated).digest('hex'));
    expect(rows[1]!.api_key_ciphertext).toMatch(/^v1\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
    // The ciphertext decrypts with the derived key for its own project only.
    const key = deriveKey(resolveSecretKey(s.config).key, 'api-key-encryption');
    expect(decryptApiKey(key, rows[1]!.id, rows[1]!.api_key_ciphertext)).toBe(p2.apiKey);
    expect(() => decryptApiKey(key, rows[0]!.id, rows[1]!.api_key_ciphertext)).toThrow();
    expect(() => decryptApiKey(deriveKey('another secret of at least 32 characters', 'api-key-encryption'), rows[1]!.id, rows[1]!.api_key_ciphertext)).toThrow();
  });

  it('request logs never contain passwords, tokens or authorization headers', async () => {
    const a = await signup(s);
    await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
    await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: 'a wrong password' } });
    await s.request('GET', '/v1/auth/me', { token: a.accessToken });
    await s.request('GET', `/v1/auth/me?token=${a.refreshToken}&api_key=${a.password}`, { token: a.accessToken });
    const p = await createProject(s, a);
    await s.request('GET', `/v1/projects/${p.id}`, { token: a.accessToken });
    const rotated = (await s.request('POST', `/v1/projects/${p.id}/rotate-key`, { token: a.accessToken })).body.apiKey;
    await s.request('POST', '/v1/auth/logout', { token: a.accessToken, body: { refreshToken: a.refreshToken } });
    const logs = s.logs.join('');
    expect(logs).toContain('/v1/auth/me'); // the request log is there…
    for (const secret of [a.password, 'a wrong password', a.accessToken, a.refreshToken, p.apiKey, rotated]) expect(logs).not.toContain(secret); // …without secrets
  });
});

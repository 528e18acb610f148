import { expect, it } from 'vitest';
import { describeEngines, errorOf, signup, uniqueEmail, useServer } from './harness.js';

describeEngines('login throttling', (engine) => {
  const s = useServer(engine, { env: { LOGIN_MAX_ATTEMPTS: '3', LOGIN_WINDOW: '10m', LOGIN_MAX_ATTEMPTS_PER_IP: '8' } });

  const login = (email: string, password: string) => s.request('POST', '/v1/auth/login', { body: { email, password } });

  it('after LOGIN_MAX_ATTEMPTS failures the email gets 429 with Retry-After, even with the right password, until the window passes', async () => {
    const a = await signup(s);
    for (let i = 0; i < 3; i++) expect((await login(a.email, 'wrong password')).status).toBe(401);

    const limited = await login(a.email, a.password);
    expect(limited.status).toBe(429);
    expect(errorOf(limited).code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);

    // Another email is unaffected.
    const b = await signup(s);
    expect((await login(b.email, b.password)).status).toBe(200);

    s.clock.advance(10 * 60_000 + 1_000);
    expect((await login(a.email, a.password)).status).toBe(200);
  });

  it('successful logins never count, and one resets the email\'s failures', async () => {
    const a = await signup(s);
    for (let round = 0; round < 3; round++) {
      expect((await login(a.email, 'wrong password')).status).toBe(401);
      expect((await login(a.email, 'wrong password')).status).toBe(401);
      expect((await login(a.email, a.password)).status).toBe(200);
    }
  });

  it('the email limit counts unknown emails the same way, and is case-insensitive', async () => {
    s.clock.advance(11 * 60_000); // a fresh window for this address
    const ghost = uniqueEmail('ghost');
    for (let i = 0; i < 3; i++) expect((await login(i % 2 ? ghost.toUpperCase() : ghost, 'whatever1')).status).toBe(401);
    const res = await login(` ${ghost}`, 'whatever1');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('failures from one address across many emails trip the per-IP limit', async () => {
    s.clock.advance(11 * 60_000); // a fresh window for this address
    const a = await signup(s);
    for (let i = 0; i < 8; i++) expect((await login(uniqueEmail('spray'), 'password1')).status).toBe(401);
    const res = await login(a.email, a.password);
    expect(res.status).toBe(429);
    expect(errorOf(res).code).toBe('RATE_LIMITED');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    s.clock.advance(11 * 60_000);
    expect((await login(a.email, a.password)).status).toBe(200);
  });
});

import { expect, it } from 'vitest';
import { describeEngines, errorOf, signup, uniqueEmail, useServer } from './harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEngines('accounts', (engine) => {
  const s = useServer(engine);

  it('signup returns 201 with the user and a token pair, trims and lower-cases the email', async () => {
    const email = uniqueEmail('Mixed');
    const res = await s.request('POST', '/v1/auth/signup', { body: { email: `  ${email.toUpperCase()} `, password: 'correct horse' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(Object.keys(res.body.user).sort()).toEqual(['createdAt', 'email', 'id']);
    expect(res.body.user.id).toMatch(/^usr_[0-9a-z]{26}$/);
    expect(res.body.user.email).toBe(email.toLowerCase());
    expect(res.body.user.createdAt).toMatch(ISO);
    expect(res.body.refreshToken).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(res.body.accessToken.split('.')).toHaveLength(3);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('signup ignores server-owned fields in the body', async () => {
    const res = await s.request('POST', '/v1/auth/signup', {
      body: { email: uniqueEmail(), password: 'correct horse', id: 'usr_mine', createdAt: '2000-01-01T00:00:00.000Z', plan: 'enterprise' },
    });
    expect(res.status).toBe(201);
    expect(res.body.user.id).not.toBe('usr_mine');
    expect(res.body.user.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    const me = await s.request('GET', '/v1/auth/me', { token: res.body.accessToken });
    expect(me.body.subscription.plan).toBe('free');
  });

  it('signup refuses a taken email, compared case-insensitively, with 409 EMAIL_TAKEN', async () => {
    const a = await signup(s);
    const res = await s.request('POST', '/v1/auth/signup', { body: { email: a.email.toUpperCase(), password: 'another password' } });
    expect(res.status).toBe(409);
    expect(errorOf(res).code).toBe('EMAIL_TAKEN');
  });

  it('signup validates email and password with 400 VALIDATION_ERROR and details', async () => {
    const cases: [unknown, string][] = [
      [{ email: 'not-an-email', password: 'long enough' }, '/email'],
      [{ email: uniqueEmail(), password: 'short' }, '/password'],
      [{ email: uniqueEmail(), password: 'x'.repeat(257) }, '/password'],
      [{ password: 'long enough' }, '/email'],
      [{ email: uniqueEmail() }, '/password'],
      [{ email: uniqueEmail(), password: 12345678 }, '/password'],
      [{ email: ['a@b.co'], password: 'long enough' }, '/email'],
    ];
    for (const [body, path] of cases) {
      const res = await s.request('POST', '/v1/auth/signup', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = errorOf(res);
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details).toEqual([expect.objectContaining({ path })]);
    }
  });

  it('accepts a long unicode password exactly as typed', async () => {
    const password = '🔒密码'.repeat(16);
    const a = await signup(s, { password });
    const ok = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password } });
    expect(ok.status).toBe(200);
    const trailing = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: `${password} ` } });
    expect(trailing.status).toBe(401);
  });

  it('login returns 200 with the user and a new token pair', async () => {
    const a = await signup(s);
    const res = await s.request('POST', '/v1/auth/login', { body: { email: ` ${a.email.toUpperCase()}`, password: a.password } });
    expect(res.status).toBe(200);
    expect(res.body.user).toEqual({ id: a.id, email: a.email, createdAt: expect.stringMatching(ISO) });
    expect(res.body.refreshToken).not.toBe(a.refreshToken);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('unknown email and wrong password answer the same 401 INVALID_CREDENTIALS', async () => {
    const a = await signup(s);
    const wrong = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: 'not the password' } });
    const unknown = await s.request('POST', '/v1/auth/login', { body: { email: uniqueEmail('nobody'), password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const strip = (r: typeof wrong) => ({ ...errorOf(r), requestId: undefined });
    expect(strip(wrong)).toEqual(strip(unknown));
    expect(errorOf(wrong).code).toBe('INVALID_CREDENTIALS');
    expect([...wrong.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort());
  });

  it('an unknown email costs an argon2 verification, like a wrong password', async () => {
    const a = await signup(s);
    const time = async (email: string) => {
      const t0 = performance.now();
      await s.request('POST', '/v1/auth/login', { body: { email, password: 'not the password' }, headers: { 'x-forwarded-for': '10.0.0.1' } });
      return performance.now() - t0;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time(a.email));
      unknown.push(await time(uniqueEmail('ghost')));
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    // Skipping the hash would make the unknown-email path several times faster (no ~20-30 ms verify).
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
  });

  it('login validates its body', async () => {
    for (const body of [{}, { email: 'a@b.co' }, { email: 1, password: 'x' }, { email: 'a@b.co', password: '' }]) {
      const res = await s.request('POST', '/v1/auth/login', { body });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    }
  });

  it('refresh returns a new pair once; the old refresh token is then rejected', async () => {
    const a = await signup(s);
    const first = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(first.body.refreshToken).not.toBe(a.refreshToken);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const me = await s.request('GET', '/v1/auth/me', { token: first.body.accessToken });
    expect(me.status).toBe(200);

    const again = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(again.status).toBe(401);
    expect(errorOf(again).code).toBe('INVALID_REFRESH_TOKEN');
  });

  it('refresh with an unknown or malformed token is 401 INVALID_REFRESH_TOKEN or 400', async () => {
    const unknown = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: 'x'.repeat(43) } });
    expect(unknown.status).toBe(401);
    expect(errorOf(unknown).code).toBe('INVALID_REFRESH_TOKEN');
    for (const body of [{}, { refreshToken: '' }, { refreshToken: 42 }, { refreshToken: 'x'.repeat(600) }]) {
      const res = await s.request('POST', '/v1/auth/refresh', { body });
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe('VALIDATION_ERROR');
    }
  });

  it('reusing a used refresh token revokes its whole login, but not another login of the same user', async () => {
    const a = await signup(s);
    const other = await s.request('POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
    const rt0 = a.refreshToken;
    const rt1 = (await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: rt0 } })).body.refreshToken;
    const rt2 = (await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: rt1 } })).body.refreshToken;
    expect(rt2).toEqual(expect.any(String));

    const replay = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: rt0 } });
    expect(replay.status).toBe(401);
    expect(errorOf(replay).code).toBe('INVALID_REFRESH_TOKEN');
    const afterReplay = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: rt2 } });
    expect(afterReplay.status).toBe(401);

    const otherLogin = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: other.body.refreshToken } });
    expect(otherLogin.status).toBe(200);
  });

  it('ten parallel refreshes of one token give exactly one success', async () => {
    const a = await signup(s);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 401)).toHaveLength(9);
    for (const r of results.filter((x) => x.status === 401)) expect(errorOf(r).code).toBe('INVALID_REFRESH_TOKEN');
    // The losers presented a used token, which counts as reuse: the winner's successor is revoked too.
    const winner = results.find((r) => r.status === 200)!;
    const next = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: winner.body.refreshToken } });
    expect(next.status).toBe(401);
  });

  it('logout answers 204 and the refresh token stops working', async () => {
    const a = await signup(s);
    const res = await s.request('POST', '/v1/auth/logout', { token: a.accessToken, body: { refreshToken: a.refreshToken } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const refresh = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } });
    expect(refresh.status).toBe(401);
    expect(errorOf(refresh).code).toBe('INVALID_REFRESH_TOKEN');
    // A second logout with the same token is harmless.
    const again = await s.request('POST', '/v1/auth/logout', { token: a.accessToken, body: { refreshToken: a.refreshToken } });
    expect(again.status).toBe(204);
  });

  it('logout never revokes another user\'s refresh token', async () => {
    const a = await signup(s);
    const b = await signup(s);
    const res = await s.request('POST', '/v1/auth/logout', { token: a.accessToken, body: { refreshToken: b.refreshToken } });
    expect(res.status).toBe(204);
    const refresh = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: b.refreshToken } });
    expect(refresh.status).toBe(200);
  });

  it('logout requires an access token and a body', async () => {
    const a = await signup(s);
    const noAuth = await s.request('POST', '/v1/auth/logout', { body: { refreshToken: a.refreshToken } });
    expect(noAuth.status).toBe(401);
    expect(errorOf(noAuth).code).toBe('UNAUTHORIZED');
    const noBody = await s.request('POST', '/v1/auth/logout', { token: a.accessToken, body: {} });
    expect(noBody.status).toBe(400);
    expect(errorOf(noBody).code).toBe('VALIDATION_ERROR');
    // The token survived both refused calls.
    expect((await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: a.refreshToken } })).status).toBe(200);
  });

  it('me returns the user with the subscription', async () => {
    const a = await signup(s);
    const res = await s.request('GET', '/v1/auth/me', { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: a.id,
      email: a.email,
      createdAt: expect.stringMatching(ISO),
      subscription: { plan: 'free', status: 'active', periodEnd: expect.stringMatching(ISO) },
    });
    const end = Date.parse(res.body.subscription.periodEnd);
    expect(end).toBeGreaterThan(Date.now());
    expect(end - Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(28 * 86_400_000);
    expect(end - Date.parse(res.body.createdAt)).toBeLessThanOrEqual(31 * 86_400_000);
  });

  it('me without a token, with a malformed header or with garbage is 401 UNAUTHORIZED', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer not.a.jwt' }]) {
      const res = await s.request('GET', '/v1/auth/me', { headers });
      expect(res.status).toBe(401);
      expect(errorOf(res).code).toBe('UNAUTHORIZED');
    }
  });
});

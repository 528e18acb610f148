import { describe, expect, it } from 'vitest';
import { Api, ApiError, tokenExpiry } from './api.ts';

/** A JWT-shaped token (unsigned: the console only reads `exp`). */
function jwt(expSeconds: number, tag = 'x'): string {
  const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `${b64({ alg: 'HS256' })}.${b64({ sub: 'usr_1', exp: expSeconds, tag })}.sig`;
}

interface Call {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A scripted server: each route answers from a queue or a function, and every call is recorded,
 * so the tests see exactly what the console sent.
 */
function fakeServer(routes: Record<string, (call: Call) => Response | Promise<Response>>) {
  const calls: Call[] = [];
  const fetch = async (input: string, init: RequestInit = {}) => {
    const call: Call = { method: init.method ?? 'GET', path: input, headers: { ...(init.headers as Record<string, string>) }, body: init.body as string | undefined };
    calls.push(call);
    const handler = routes[`${call.method} ${input.split('?')[0]}`];
    if (!handler) return json(404, { error: { code: 'NOT_FOUND', message: 'no route' } });
    return handler(call);
  };
  return { fetch, calls };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

const now = 1_800_000_000_000;
const noLock = <T,>(fn: () => Promise<T>) => fn();

describe('console API client: tokens', () => {
  it('reads the expiry of a JWT', () => {
    expect(tokenExpiry(jwt(1234))).toBe(1_234_000);
    expect(tokenExpiry('not-a-jwt')).toBeUndefined();
  });

  it('asks for the refresh token as a cookie at login and keeps only the access token', async () => {
    const server = fakeServer({
      'POST /v1/auth/login': () => json(200, { user: { id: 'usr_1', email: 'a@b.c', createdAt: 'x' }, accessToken: jwt(now / 1000 + 900) }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now });
    await api.login('a@b.c', 'password1');
    expect(server.calls[0]!.headers['x-refresh-token-transport']).toBe('cookie');
    expect(api.state).toMatchObject({ status: 'signed-in', user: { email: 'a@b.c' } });
  });

  it('refreshes silently when the access token has expired and retries the request once', async () => {
    const first = jwt(now / 1000 + 900, 'first');
    let access = first;
    const server = fakeServer({
      'POST /v1/auth/login': () => json(200, { user: { id: 'usr_1', email: 'a@b.c', createdAt: 'x' }, accessToken: access }),
      'POST /v1/auth/refresh': () => {
        access = jwt(now / 1000 + 900, 'second');
        return json(200, { accessToken: access });
      },
      'GET /v1/projects': (call) =>
        call.headers.authorization === `Bearer ${access}` && access !== first
          ? json(200, { data: [] })
          : json(401, { error: { code: 'TOKEN_EXPIRED', message: 'expired' } }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now });
    await api.login('a@b.c', 'password1');
    await expect(api.get('/v1/projects')).resolves.toEqual({ data: [] });
    const paths = server.calls.map((c) => `${c.method} ${c.path}`);
    expect(paths).toEqual(['POST /v1/auth/login', 'GET /v1/projects', 'POST /v1/auth/refresh', 'GET /v1/projects']);
    // The refresh sends no token of its own: the HttpOnly cookie carries it.
    const refresh = server.calls[2]!;
    expect(JSON.parse(refresh.body!)).toEqual({});
    expect(refresh.headers['x-refresh-token-transport']).toBe('cookie');
    expect(server.calls[3]!.headers.authorization).toBe(`Bearer ${access}`);
  });

  it('replaces a token that is about to expire before sending the request', async () => {
    let clock = now;
    let n = 0;
    const server = fakeServer({
      'POST /v1/auth/login': () => json(200, { user: { id: 'usr_1', email: 'a@b.c', createdAt: 'x' }, accessToken: jwt(clock / 1000 + 60, 'a') }),
      'POST /v1/auth/refresh': () => json(200, { accessToken: jwt(clock / 1000 + 900, `r${++n}`) }),
      'GET /v1/auth/me': () => json(200, { id: 'usr_1' }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => clock, refreshMarginSeconds: 20 });
    await api.login('a@b.c', 'password1');
    await api.get('/v1/auth/me');
    expect(server.calls.filter((c) => c.path === '/v1/auth/refresh')).toHaveLength(0);
    clock += 45_000; // 15 s left: inside the margin
    await api.get('/v1/auth/me');
    expect(server.calls.map((c) => c.path)).toEqual(['/v1/auth/login', '/v1/auth/me', '/v1/auth/refresh', '/v1/auth/me']);
  });

  it('shares one refresh among concurrent requests (a refresh token is single-use)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const server = fakeServer({
      'POST /v1/auth/refresh': async () => {
        await gate;
        return json(200, { accessToken: jwt(now / 1000 + 900) });
      },
      'GET /v1/projects': () => json(200, { data: [] }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now });
    const all = Promise.all([api.get('/v1/projects'), api.get('/v1/projects'), api.get('/v1/projects')]);
    release();
    await all;
    expect(server.calls.filter((c) => c.path === '/v1/auth/refresh')).toHaveLength(1);
    expect(server.calls.filter((c) => c.path === '/v1/projects')).toHaveLength(3);
  });

  it('serialises refreshes through the cross-tab lock', async () => {
    const order: string[] = [];
    const lock = async <T,>(fn: () => Promise<T>) => {
      order.push('lock');
      const r = await fn();
      order.push('unlock');
      return r;
    };
    const server = fakeServer({ 'POST /v1/auth/refresh': () => (order.push('refresh'), json(200, { accessToken: jwt(now / 1000 + 900) })) });
    const api = new Api({ fetch: server.fetch, withLock: lock, now: () => now });
    expect(await api.refresh()).toBe(true);
    expect(order).toEqual(['lock', 'refresh', 'unlock']);
  });

  it('ends the session when the refresh is refused, and the caller sees the 401', async () => {
    const server = fakeServer({
      'POST /v1/auth/login': () => json(200, { user: { id: 'usr_1', email: 'a@b.c', createdAt: 'x' }, accessToken: jwt(now / 1000 + 900) }),
      'POST /v1/auth/refresh': () => json(401, { error: { code: 'INVALID_REFRESH_TOKEN', message: 'The refresh token is not valid.' } }),
      'GET /v1/projects': () => json(401, { error: { code: 'TOKEN_EXPIRED', message: 'The access token has expired.' } }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now });
    await api.login('a@b.c', 'password1');
    const states: string[] = [];
    api.subscribe((s) => states.push(s.status));
    const err = await api.get('/v1/projects').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('TOKEN_EXPIRED');
    expect(states).toEqual(['signed-out']);
  });

  it('restores a session after a reload from the cookie alone', async () => {
    const server = fakeServer({
      'POST /v1/auth/refresh': () => json(200, { accessToken: jwt(now / 1000 + 900) }),
      'GET /v1/auth/me': () => json(200, { id: 'usr_1', email: 'a@b.c', createdAt: 'x', subscription: { plan: 'free' } }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now, hasSession: () => true });
    await api.restore();
    expect(api.state).toEqual({ status: 'signed-in', user: { id: 'usr_1', email: 'a@b.c', createdAt: 'x' } });
  });

  it('does not call refresh at all on a first visit without a session', async () => {
    const server = fakeServer({});
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now, hasSession: () => false });
    await api.restore();
    expect(api.state.status).toBe('signed-out');
    expect(server.calls).toHaveLength(0);
  });

  it('turns error bodies into field messages', async () => {
    const server = fakeServer({
      'POST /v1/auth/signup': () => json(400, { error: { code: 'VALIDATION_ERROR', message: 'The request is invalid.', details: [{ path: '/password', message: 'must be at least 8 characters' }] } }),
    });
    const api = new Api({ fetch: server.fetch, withLock: noLock, now: () => now });
    const err = (await api.signup('a@b.c', 'short').catch((e: unknown) => e)) as ApiError;
    expect(err.fieldErrors()).toEqual({ password: 'must be at least 8 characters' });
  });
});

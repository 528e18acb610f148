/**
 * The shared auth and tenancy suite: every route that acts on a user's resource runs it.
 * For each route: no token → 401 UNAUTHORIZED; a genuine but expired token → 401 TOKEN_EXPIRED;
 * another user's resource → 404, identical (but for the request id) to the 404 of an id that
 * does not exist, and the resource is left as it was.
 */
import { expect, it } from 'vitest';
import { errorOf, expiredAccessToken, signup, type Account, type Response, type TestServer } from './harness.js';

export interface RouteCase {
  method: string;
  /** The route's path for a resource id. */
  path: (id: string) => string;
  body?: unknown;
  /** False for routes that take no resource id (a list or a create). */
  scoped?: boolean;
}

export function authAndTenancySuite(opts: {
  server: () => TestServer;
  routes: RouteCase[];
  /** Creates a resource owned by `owner` and returns its id. */
  create: (server: TestServer, owner: Account) => Promise<string>;
  /** An id of the right shape that no resource has. */
  randomId: () => string;
  /** Reads the resource as its owner, to show it was left unchanged. */
  read: (server: TestServer, owner: Account, id: string) => Promise<Response>;
}): void {
  const label = (r: RouteCase) => `${r.method} ${r.path(':id')}`;
  const withoutRequestId = (res: Response) => ({ status: res.status, error: { ...errorOf(res), requestId: undefined } });

  it('every route refuses a missing token with 401 UNAUTHORIZED and an expired one with 401 TOKEN_EXPIRED', async () => {
    const s = opts.server();
    const owner = await signup(s);
    const id = await opts.create(s, owner);
    const expired = await expiredAccessToken(s, owner.id);
    for (const route of opts.routes) {
      const none = await s.request(route.method, route.path(id), { body: route.body });
      expect(none.status, label(route)).toBe(401);
      expect(errorOf(none).code, label(route)).toBe('UNAUTHORIZED');
      const late = await s.request(route.method, route.path(id), { body: route.body, token: expired });
      expect(late.status, label(route)).toBe(401);
      expect(errorOf(late).code, label(route)).toBe('TOKEN_EXPIRED');
    }
    expect((await opts.read(s, owner, id)).status).toBe(200);
  });

  it('another user\'s resource answers exactly like one that does not exist (404), and is left unchanged', async () => {
    const s = opts.server();
    const owner = await signup(s);
    const stranger = await signup(s);
    const id = await opts.create(s, owner);
    const before = await opts.read(s, owner, id);
    for (const route of opts.routes.filter((r) => r.scoped !== false)) {
      const theirs = await s.request(route.method, route.path(id), { body: route.body, token: stranger.accessToken });
      const missing = await s.request(route.method, route.path(opts.randomId()), { body: route.body, token: stranger.accessToken });
      expect(theirs.status, label(route)).toBe(404);
      errorOf(theirs);
      expect(withoutRequestId(theirs), label(route)).toEqual(withoutRequestId(missing));
    }
    expect((await opts.read(s, owner, id)).body).toEqual(before.body);
  });
}

/**
 * What the server does for the web console, over real HTTP: the refresh-token cookie, the console's
 * files with their security and cache headers, the page fallback, and the plans table.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { describeEngines, errorOf, ISSUED_SECRETS, uniqueEmail, useServer } from './harness.js';

const COOKIE = { 'x-refresh-token-transport': 'cookie' };

/** The Set-Cookie lines of a response, by cookie name. */
function setCookies(res: { headers: Headers }): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) out.set(line.slice(0, line.indexOf('=')), line);
  return out;
}

function cookieValue(line: string | undefined): string {
  return decodeURIComponent(/^[^=]+=([^;]*)/.exec(line ?? '')?.[1] ?? '');
}

describeEngines('console over HTTP', (engine) => {
  let dir: string;

  // The console's files are written before the server starts (hooks run in the order declared).
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'loglane-console-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>Loglane test console</title><script type="module" src="/assets/app-abc123.js"></script>');
    await writeFile(path.join(dir, 'assets', 'app-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
    await writeFile(path.join(dir, 'sw.js'), 'self.addEventListener("push", () => {});');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const s = useServer(engine, () => ({ consoleDir: dir }));

  async function signupWithCookie() {
    const email = uniqueEmail('cookie');
    const res = await s.request('POST', '/v1/auth/signup', { body: { email, password: 'correct horse' }, headers: COOKIE });
    expect(res.status).toBe(201);
    const cookies = setCookies(res);
    const token = cookieValue(cookies.get('loglane_refresh'));
    ISSUED_SECRETS.add(token);
    ISSUED_SECRETS.add(res.body.accessToken);
    return { email, res, cookies, token, access: res.body.accessToken };
  }

  it('a console signup gets the refresh token only as an HttpOnly, SameSite=Strict cookie on /v1/auth', async () => {
    const { res, cookies, token } = await signupWithCookie();
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'user']);
    const line = cookies.get('loglane_refresh')!;
    expect(line).toMatch(/; Path=\/v1\/auth(;|$)/);
    expect(line).toMatch(/; HttpOnly(;|$)/);
    expect(line).toMatch(/; SameSite=Strict(;|$)/);
    expect(line).toMatch(/; Max-Age=604800(;|$)/);
    // The test server listens on 127.0.0.1, where browsers take Secure cookies over http.
    expect(line).toMatch(/; Secure(;|$)/);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    // The marker the console reads holds no secret.
    const marker = cookies.get('loglane_session')!;
    expect(cookieValue(marker)).toBe('1');
    expect(marker).not.toMatch(/HttpOnly/);
    expect(marker).toMatch(/; Path=\/(;|$)/);
  });

  it('a console login does the same, and an API login stays exactly as the spec says', async () => {
    const { email } = await signupWithCookie();
    const consoleLogin = await s.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse' }, headers: COOKIE });
    expect(consoleLogin.status).toBe(200);
    expect(consoleLogin.body.refreshToken).toBeUndefined();
    expect(cookieValue(setCookies(consoleLogin).get('loglane_refresh'))).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    ISSUED_SECRETS.add(cookieValue(setCookies(consoleLogin).get('loglane_refresh')));

    const apiLogin = await s.request('POST', '/v1/auth/login', { body: { email, password: 'correct horse' } });
    expect(apiLogin.status).toBe(200);
    expect(Object.keys(apiLogin.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(apiLogin.headers.getSetCookie()).toEqual([]);
    // The keys just checked include refreshToken, so it is there.
    ISSUED_SECRETS.add(apiLogin.body.refreshToken!);
    const apiRefresh = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: apiLogin.body.refreshToken } });
    expect(Object.keys(apiRefresh.body).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(apiRefresh.headers.getSetCookie()).toEqual([]);
    ISSUED_SECRETS.add(apiRefresh.body.refreshToken!);
  });

  it('refresh takes the cookie, replaces it, and a replayed cookie is refused and cleared', async () => {
    const { token } = await signupWithCookie();
    const first = await s.request('POST', '/v1/auth/refresh', { body: {}, headers: { cookie: `other=1; loglane_refresh=${token}` } });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['accessToken']);
    const next = cookieValue(setCookies(first).get('loglane_refresh'));
    ISSUED_SECRETS.add(next);
    expect(next).not.toBe(token);
    expect((await s.request('GET', '/v1/auth/me', { token: first.body.accessToken })).status).toBe(200);

    // The old value again is reuse: refused, the cookie cleared, and the whole login revoked.
    const replay = await s.request('POST', '/v1/auth/refresh', { body: {}, headers: { cookie: `loglane_refresh=${token}` } });
    expect(replay.status).toBe(401);
    expect(errorOf(replay).code).toBe('INVALID_REFRESH_TOKEN');
    expect(setCookies(replay).get('loglane_refresh')).toMatch(/^loglane_refresh=; .*Max-Age=0/);
    expect(setCookies(replay).get('loglane_session')).toMatch(/Max-Age=0/);
    const descendant = await s.request('POST', '/v1/auth/refresh', { body: {}, headers: { cookie: `loglane_refresh=${next}` } });
    expect(descendant.status).toBe(401);
  });

  it('refresh and logout without a token in the body or a cookie are a 400', async () => {
    const { access } = await signupWithCookie();
    const refresh = await s.request('POST', '/v1/auth/refresh', { body: {} });
    expect(refresh.status).toBe(400);
    expect(errorOf(refresh)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: '/refreshToken' }] });
    const logout = await s.request('POST', '/v1/auth/logout', { body: {}, token: access });
    expect(logout.status).toBe(400);
    expect(errorOf(logout).code).toBe('VALIDATION_ERROR');
  });

  it('logout with the cookie revokes the login and clears both cookies', async () => {
    const { token, access } = await signupWithCookie();
    const out = await s.request('POST', '/v1/auth/logout', { body: {}, token: access, headers: { cookie: `loglane_refresh=${token}` } });
    expect(out.status).toBe(204);
    expect(setCookies(out).get('loglane_refresh')).toMatch(/Max-Age=0/);
    expect(setCookies(out).get('loglane_session')).toMatch(/Max-Age=0/);
    const after = await s.request('POST', '/v1/auth/refresh', { body: {}, headers: { cookie: `loglane_refresh=${token}` } });
    expect(after.status).toBe(401);
    // Logout still needs the access token: a cookie alone does not sign anyone out.
    const anonymous = await s.request('POST', '/v1/auth/logout', { body: {}, headers: { cookie: `loglane_refresh=${token}` } });
    expect(anonymous.status).toBe(401);
  });

  it('serves the console with a strict CSP, cache headers and gzip', async () => {
    const index = await fetch(`${s.url}/`, { headers: { accept: 'text/html' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = index.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('referrer-policy')).toBe('no-referrer');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(await index.text()).toContain('Loglane test console');

    const etag = index.headers.get('etag')!;
    const again = await fetch(`${s.url}/`, { headers: { accept: 'text/html', 'if-none-match': etag } });
    expect(again.status).toBe(304);

    const asset = await fetch(`${s.url}/assets/app-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('content-security-policy')).toBe(csp);
    const sw = await fetch(`${s.url}/sw.js`);
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(await sw.text()).toContain('push');
    const raw = await import('node:http').then(
      (http) =>
        new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
          http.get(`${s.url}/assets/app-abc123.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
          }).on('error', reject);
        }),
    );
    expect(raw.encoding).toBe('gzip');
    expect(gunzipSync(raw.body).toString()).toContain('console.log');
  });

  it('answers console pages with the app, and keeps JSON 404s for the API and for missing files', async () => {
    const page = await fetch(`${s.url}/projects/proj_x/logs?level=error`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Loglane test console');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");

    for (const [p, accept] of [['/v1/nothing-here', 'text/html'], ['/v1/nothing-here', 'application/json'], ['/assets/missing-1.js', 'text/html'], ['/projects', 'application/json']] as const) {
      const res = await s.request('GET', p, { headers: { accept } });
      expect(res.status, p).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
    // The API keeps its own headers: no console CSP on JSON or on /docs.
    const api = await s.request('GET', '/healthz');
    expect(api.headers.get('content-security-policy')).toBeNull();
    const docs = await fetch(`${s.url}/docs`, { headers: { accept: 'text/html' } });
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy') ?? '').not.toBe((await fetch(`${s.url}/`)).headers.get('content-security-policy'));
  });

  it('lists the plans and their limits, smallest first, for anyone', async () => {
    const res = await s.request('GET', '/v1/plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { name: 'free', maxProjects: 1, maxAlertsPerProject: 2 },
        { name: 'starter', maxProjects: 5, maxAlertsPerProject: 10 },
        { name: 'pro', maxProjects: 20, maxAlertsPerProject: 50 },
        { name: 'enterprise', maxProjects: null, maxAlertsPerProject: null },
      ],
    });
    const doc = await s.request('GET', '/v1/openapi.json');
    expect(Object.keys(doc.body.paths)).toContain('/v1/plans');
    expect(Object.keys(doc.body.paths).filter((p) => !p.startsWith('/v1/'))).toEqual([]);
  });
});

describeEngines('console not built', (engine) => {
  const s = useServer(engine, () => ({ consoleDir: path.join(tmpdir(), `loglane-absent-${Date.now()}`) }));

  it('says how to build it instead of failing', async () => {
    const res = await fetch(`${s.url}/`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('npm run build');
    expect((await s.request('GET', '/healthz')).status).toBe(200);
  });
});

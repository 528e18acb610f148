/**
 * The server side of the web console over real HTTP, on both engines: the refresh-token cookie
 * transport (R33) including bodiless refresh and logout, when the cookie is Secure, and the served
 * console (CSP, cache headers, page fallback, HEAD) beside the API's JSON 404s, /docs and an
 * unchanged OpenAPI document. test/console-http.test.ts covers the rest (gzip, ETags, /v1/plans).
 */
import http from 'node:http';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openApiDocument } from '../src/openapi.js';
import { describeEngines, errorOf, ISSUED_SECRETS, uniqueEmail, useServer } from './harness.js';

const TRANSPORT = { 'X-Refresh-Token-Transport': 'cookie' };
const PASSWORD = 'console password';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const MISSING_TOKEN = {
  code: 'VALIDATION_ERROR',
  message: "The request body is not valid: refreshToken must have required property 'refreshToken'.",
  details: [{ path: '/refreshToken', message: "must have required property 'refreshToken'" }],
};

/** The attributes of one Set-Cookie line, names lower-cased; the cookie itself under `name`/`value`. */
function parseSetCookie(line: string): { name: string; value: string; attrs: Map<string, string | true> } {
  const [pair = '', ...rest] = line.split(';').map((p) => p.trim());
  const eq = pair.indexOf('=');
  const attrs = new Map<string, string | true>();
  for (const a of rest) {
    const i = a.indexOf('=');
    attrs.set((i < 0 ? a : a.slice(0, i)).toLowerCase(), i < 0 ? true : a.slice(i + 1));
  }
  return { name: pair.slice(0, eq), value: decodeURIComponent(pair.slice(eq + 1)), attrs };
}

function refreshCookie(res: { headers: Headers }) {
  const line = res.headers.getSetCookie().find((l) => l.startsWith('loglane_refresh='));
  return line === undefined ? undefined : parseSetCookie(line);
}

/** A raw request through node:http, which (unlike fetch) may set Host and X-Forwarded-*. */
function rawRequest(url: string, options: { method: string; path: string; headers: Record<string, string>; body?: string }) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = http.request(`${url}${options.path}`, { method: options.method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function makeConsoleDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'loglane-console-server-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>fake console</title><script type="module" src="/assets/index-Ab12Cd34.js"></script><link rel="stylesheet" href="/assets/index-Ef56Gh78.css">');
  await writeFile(path.join(dir, 'assets', 'index-Ab12Cd34.js'), 'export const fake = "console script";');
  await writeFile(path.join(dir, 'assets', 'index-Ef56Gh78.css'), 'body { color: black; }');
  await writeFile(path.join(dir, 'sw.js'), 'self.addEventListener("push", () => {}); // fake worker');
  await writeFile(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

function expectConsoleSecurityHeaders(res: { headers: Headers }, what: string) {
  expect(res.headers.get('content-security-policy'), what).toBe(CSP);
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
}

describeEngines('console server: refresh-token cookie', (engine) => {
  // A refresh lifetime other than the default, to see the cookie's Max-Age follow it.
  const s = useServer(engine, { env: { REFRESH_TOKEN_EXPIRY: '2d', TRUST_PROXY: 'true' } });

  /** Signs up in cookie mode; returns the account's access token and the cookie's refresh token. */
  async function consoleSignup() {
    const email = uniqueEmail('cookie-server');
    ISSUED_SECRETS.add(PASSWORD);
    const res = await s.request('POST', '/v1/auth/signup', { body: { email, password: PASSWORD }, headers: TRANSPORT });
    expect(res.status).toBe(201);
    const cookie = refreshCookie(res);
    expect(cookie).toBeDefined();
    ISSUED_SECRETS.add(cookie!.value).add(res.body.accessToken);
    return { email, res, cookie: cookie!, access: res.body.accessToken };
  }

  async function refreshWithCookie(token: string, init: { body?: string; contentType?: string; transport?: boolean } = {}) {
    const headers: Record<string, string> = { cookie: `theme=dark; loglane_refresh=${token}` };
    if (init.contentType) headers['content-type'] = init.contentType;
    if (init.transport) Object.assign(headers, TRANSPORT);
    const res = await fetch(`${s.url}/v1/auth/refresh`, { method: 'POST', headers, body: init.body });
    const text = await res.text();
    const next = refreshCookie(res);
    if (next?.value) ISSUED_SECRETS.add(next.value);
    const body = text ? JSON.parse(text) : undefined;
    if (body?.accessToken) ISSUED_SECRETS.add(body.accessToken);
    return { res, body, text, cookie: next };
  }

  it('signup and login with the header put the refresh token only in an HttpOnly, SameSite=Strict cookie on /v1/auth', async () => {
    const { email, res, cookie } = await consoleSignup();
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'user']);
    expect(res.body.user.email).toBe(email);
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(cookie.attrs.get('httponly')).toBe(true);
    expect(cookie.attrs.get('samesite')).toBe('Strict');
    expect(cookie.attrs.get('path')).toBe('/v1/auth');
    expect(cookie.attrs.get('max-age')).toBe(String(2 * 86_400));
    // fetch reaches the server as 127.0.0.1: loopback, where browsers keep Secure cookies over http.
    expect(cookie.attrs.get('secure')).toBe(true);
    expect(res.headers.get('cache-control')).toBe('no-store');

    const login = await s.request('POST', '/v1/auth/login', { body: { email, password: PASSWORD }, headers: TRANSPORT });
    expect(login.status).toBe(200);
    expect(Object.keys(login.body).sort()).toEqual(['accessToken', 'user']);
    const loginCookie = refreshCookie(login)!;
    ISSUED_SECRETS.add(loginCookie.value);
    expect(loginCookie.value).not.toBe(cookie.value);
    expect(loginCookie.attrs.get('httponly')).toBe(true);
    expect(loginCookie.attrs.get('path')).toBe('/v1/auth');
    // The cookie's token is a real one: it refreshes.
    expect((await refreshWithCookie(loginCookie.value)).res.status).toBe(200);
  });

  it('without the header the tokens travel in the body as the spec says, and no cookie is set', async () => {
    const email = uniqueEmail('body-mode');
    const signupRes = await s.request('POST', '/v1/auth/signup', { body: { email, password: PASSWORD } });
    expect(signupRes.status).toBe(201);
    expect(Object.keys(signupRes.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(signupRes.headers.getSetCookie()).toEqual([]);
    // The keys just checked include refreshToken, so it is there (here and below).
    ISSUED_SECRETS.add(signupRes.body.refreshToken!).add(signupRes.body.accessToken);

    const login = await s.request('POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(Object.keys(login.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(login.headers.getSetCookie()).toEqual([]);
    ISSUED_SECRETS.add(login.body.refreshToken!);

    // A body token wins over a cookie, and the answer stays in body mode without the header.
    const { cookie } = await consoleSignup();
    const refreshed = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: login.body.refreshToken }, headers: { cookie: `loglane_refresh=${cookie.value}` } });
    expect(refreshed.status).toBe(200);
    expect(Object.keys(refreshed.body).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(refreshed.headers.getSetCookie()).toEqual([]);
    ISSUED_SECRETS.add(refreshed.body.refreshToken!);
    // The cookie's token was not spent by that request.
    expect((await refreshWithCookie(cookie.value)).res.status).toBe(200);

    // A body token with the header: cookie mode for the answer.
    const viaHeader = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: refreshed.body.refreshToken }, headers: TRANSPORT });
    expect(viaHeader.status).toBe(200);
    expect(Object.keys(viaHeader.body)).toEqual(['accessToken']);
    const moved = refreshCookie(viaHeader)!;
    ISSUED_SECRETS.add(moved.value);
    expect(moved.attrs.get('httponly')).toBe(true);
    expect((await refreshWithCookie(moved.value)).res.status).toBe(200);
  });

  it('refresh from the cookie rotates it with {}, no body, or an empty JSON body; the old value is then reuse, refused with the cookie cleared', async () => {
    const { cookie } = await consoleSignup();
    const seen = [cookie.value];
    let current = cookie.value;
    for (const init of [{ body: '{}', contentType: 'application/json' }, {}, { contentType: 'application/json' }, { body: '', contentType: 'application/json; charset=utf-8' }]) {
      const { res, body, cookie: next } = await refreshWithCookie(current, init);
      expect(res.status, JSON.stringify(init)).toBe(200);
      expect(Object.keys(body)).toEqual(['accessToken']);
      expect(next!.attrs.get('httponly')).toBe(true);
      expect(next!.attrs.get('samesite')).toBe('Strict');
      expect(next!.attrs.get('path')).toBe('/v1/auth');
      expect(seen).not.toContain(next!.value);
      seen.push(next!.value);
      current = next!.value;
      expect((await s.request('GET', '/v1/auth/me', { token: body.accessToken })).status).toBe(200);
    }

    // Replaying the first cookie is reuse: 401, the cookie cleared on its path, the whole login revoked.
    const replay = await refreshWithCookie(seen[0]!);
    expect(replay.res.status).toBe(401);
    expect(errorOf({ status: replay.res.status, headers: replay.res.headers, body: replay.body, text: replay.text }).code).toBe('INVALID_REFRESH_TOKEN');
    expect(replay.cookie!.value).toBe('');
    expect(replay.cookie!.attrs.get('max-age')).toBe('0');
    expect(replay.cookie!.attrs.get('path')).toBe('/v1/auth');
    const latest = await refreshWithCookie(current);
    expect(latest.res.status).toBe(401);
    expect(latest.cookie!.attrs.get('max-age')).toBe('0');

    // A cookie the server never issued is refused the same way.
    const forged = await refreshWithCookie('not-a-token-we-issued-aaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(forged.res.status).toBe(401);
    expect(errorOf({ status: forged.res.status, headers: forged.res.headers, body: forged.body, text: forged.text }).code).toBe('INVALID_REFRESH_TOKEN');
    expect(forged.cookie!.attrs.get('max-age')).toBe('0');
  });

  it('refresh with neither a body token nor the cookie is the schema\'s 400, whatever the body looks like', async () => {
    for (const [label, init] of [
      ['{}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
      ['no body', { method: 'POST' }],
      ['empty JSON body', { method: 'POST', headers: { 'content-type': 'application/json' } }],
      ['other cookies only', { method: 'POST', headers: { cookie: 'theme=dark; loglane_session=1' } }],
    ] as const) {
      const res = await fetch(`${s.url}/v1/auth/refresh`, init as RequestInit);
      const text = await res.text();
      expect(res.status, label).toBe(400);
      const error = errorOf({ status: res.status, headers: res.headers, body: JSON.parse(text), text });
      expect({ code: error.code, message: error.message, details: error.details }, label).toEqual(MISSING_TOKEN);
      expect(res.headers.getSetCookie(), label).toEqual([]);
    }
    // Malformed bodies are still refused as before.
    const broken = await s.request('POST', '/v1/auth/refresh', { raw: '{"refreshToken":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect(errorOf(broken).code).toBe('VALIDATION_ERROR');
    const wrongType = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: 42 } });
    expect(wrongType.status).toBe(400);
    expect(errorOf(wrongType).details).toEqual([{ path: '/refreshToken', message: 'must be string' }]);
  });

  it('logout takes the cookie (with or without a body), clears it in its 204, and the token no longer refreshes', async () => {
    const a = await consoleSignup();
    const out = await fetch(`${s.url}/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${a.access}`, cookie: `loglane_refresh=${a.cookie.value}` } });
    expect(out.status).toBe(204);
    const cleared = refreshCookie(out)!;
    expect(cleared.value).toBe('');
    expect(cleared.attrs.get('max-age')).toBe('0');
    expect(cleared.attrs.get('path')).toBe('/v1/auth');
    expect((await refreshWithCookie(a.cookie.value)).res.status).toBe(401);

    // A body token: logged out too, and the answer still clears the cookie.
    const email = uniqueEmail('logout-body');
    const b = await s.request('POST', '/v1/auth/signup', { body: { email, password: PASSWORD } });
    expect(b.status).toBe(201);
    expect(b.body.refreshToken).toEqual(expect.any(String));
    ISSUED_SECRETS.add(b.body.refreshToken!).add(b.body.accessToken);
    const outB = await s.request('POST', '/v1/auth/logout', { body: { refreshToken: b.body.refreshToken }, token: b.body.accessToken });
    expect(outB.status).toBe(204);
    expect(refreshCookie(outB)!.attrs.get('max-age')).toBe('0');
    expect((await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: b.body.refreshToken } })).status).toBe(401);

    // Neither: the same 400 as before.
    const c = await consoleSignup();
    const neither = await fetch(`${s.url}/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${c.access}` } });
    expect(neither.status).toBe(400);
    expect(((await neither.json()) as { error: { details: unknown } }).error.details).toEqual(MISSING_TOKEN.details);
    // And c's login is untouched by all of the above.
    expect((await refreshWithCookie(c.cookie.value)).res.status).toBe(200);
  });

  it('marks the cookie Secure over https (behind a trusted proxy) and on loopback hosts, and not on a plain-http public host', async () => {
    const cases: [Record<string, string>, boolean][] = [
      [{ host: 'logs.example.com' }, false],
      [{ host: 'logs.example.com', 'x-forwarded-proto': 'https' }, true],
      [{ host: 'localhost:8080' }, true],
      [{ host: '127.0.0.1' }, true],
      [{ host: '[::1]:8080' }, true],
    ];
    for (const [headers, secure] of cases) {
      const res = await rawRequest(s.url, {
        method: 'POST',
        path: '/v1/auth/signup',
        headers: { ...headers, 'content-type': 'application/json', 'x-refresh-token-transport': 'cookie' },
        body: JSON.stringify({ email: uniqueEmail('secure'), password: PASSWORD }),
      });
      expect(res.status, JSON.stringify(headers)).toBe(201);
      const line = (res.headers['set-cookie'] ?? []).find((l) => l.startsWith('loglane_refresh='))!;
      const cookie = parseSetCookie(line);
      ISSUED_SECRETS.add(cookie.value).add(JSON.parse(res.text).accessToken);
      expect(cookie.attrs.get('secure') === true, JSON.stringify(headers)).toBe(secure);
      expect(cookie.attrs.get('httponly')).toBe(true);
    }
  });
});

describeEngines('console server: the served console', (engine) => {
  let dir: string;
  // The console's files are there before the server starts (hooks run in the order declared).
  beforeAll(async () => {
    dir = await makeConsoleDir();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const s = useServer(engine, () => ({ consoleDir: dir }));

  it('serves index.html, sw.js and root files with no-cache, hashed assets as immutable, all under the strict CSP', async () => {
    const index = await fetch(`${s.url}/`, { headers: { accept: 'text/html' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await index.text()).toContain('<title>fake console</title>');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expectConsoleSecurityHeaders(index, '/');

    const indexByName = await fetch(`${s.url}/index.html`);
    expect(indexByName.status).toBe(200);
    expect(indexByName.headers.get('cache-control')).toBe('no-cache');

    for (const [file, type, body] of [
      ['/assets/index-Ab12Cd34.js', /javascript/, 'console script'],
      ['/assets/index-Ef56Gh78.css', /^text\/css/, 'color: black'],
    ] as const) {
      const res = await fetch(`${s.url}${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(type);
      expect(res.headers.get('cache-control'), file).toBe('public, max-age=31536000, immutable');
      expect(await res.text()).toContain(body);
      expectConsoleSecurityHeaders(res, file);
    }

    for (const [file, type] of [['/sw.js', /javascript/], ['/favicon.svg', /^image\/svg\+xml/]] as const) {
      const res = await fetch(`${s.url}${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type'), file).toMatch(type);
      expect(res.headers.get('cache-control'), file).toBe('no-cache');
      expectConsoleSecurityHeaders(res, file);
    }
    expect(await (await fetch(`${s.url}/sw.js`)).text()).toContain('fake worker');
  });

  it('answers page paths a browser asks for with index.html (GET and HEAD), and keeps JSON 404s elsewhere', async () => {
    for (const page of ['/projects/proj_abc', '/projects/proj_abc/logs?level=error&q=timeout', '/login', '/alerts/alt_1/history']) {
      const res = await fetch(`${s.url}${page}`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
      expect(res.status, page).toBe(200);
      expect(await res.text(), page).toContain('<title>fake console</title>');
      expect(res.headers.get('cache-control'), page).toBe('no-cache');
      expectConsoleSecurityHeaders(res, page);
    }
    const head = await fetch(`${s.url}/projects/proj_abc`, { method: 'HEAD', headers: { accept: 'text/html' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/html/);
    expectConsoleSecurityHeaders(head, 'HEAD');
    expect(await head.text()).toBe('');

    // API paths keep their JSON 404 even for a browser; other paths without text/html too; and other methods.
    for (const [method, p, accept] of [
      ['GET', '/v1/unknown', 'text/html'],
      ['GET', '/v1/unknown', 'application/json'],
      ['GET', '/v1/projects/proj_x/nothing', 'text/html'],
      ['GET', '/docs/nothing-here', 'application/json'],
      ['GET', '/metrics/x', 'text/html'],
      ['GET', '/projects/proj_abc', 'application/json'],
      ['GET', '/projects/proj_abc', '*/*'],
      ['GET', '/assets/index-missing.js', '*/*'],
      ['POST', '/projects/proj_abc', 'text/html'],
    ] as const) {
      const res = await s.request(method, p, { headers: { accept } });
      const label = `${method} ${p} (${accept})`;
      expect(res.status, label).toBe(404);
      expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
      expect(errorOf(res).code, label).toBe('NOT_FOUND');
      expect(res.headers.get('content-security-policy'), label).toBeNull();
    }
  });

  it('leaves /docs and the JSON API without the console CSP, and the OpenAPI document without console routes', async () => {
    const docs = await fetch(`${s.url}/docs`, { headers: { accept: 'text/html' } });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
    expect(docs.headers.get('content-security-policy')).not.toBe(CSP);
    expect(docs.headers.get('x-frame-options')).toBeNull();

    for (const p of ['/healthz', '/v1/openapi.json', '/v1/push/vapid-public-key']) {
      const res = await s.request('GET', p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-security-policy'), p).toBeNull();
    }

    const served = await s.request('GET', '/v1/openapi.json');
    const paths = Object.keys(served.body.paths as object);
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.filter((p) => !p.startsWith('/v1/'))).toEqual([]);
    expect(paths).not.toContain('/*');
    // The same document as a server built without this console directory.
    expect(served.body).toEqual(await openApiDocument());
  });
});

describeEngines('console server: console not built', (engine) => {
  const s = useServer(engine, () => ({ consoleDir: path.join(tmpdir(), `loglane-no-console-${process.pid}-${Date.now()}`) }));

  it('explains how to build the console instead of failing, and the API is unaffected', async () => {
    for (const [p, accept] of [['/', 'text/html'], ['/', '*/*'], ['/projects/proj_abc', 'text/html']] as const) {
      const res = await fetch(`${s.url}${p}`, { headers: { accept } });
      expect(res.status, p).toBe(200);
      expect(await res.text(), p).toMatch(/not built.*npm run build/s);
    }
    const head = await fetch(`${s.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const api = await s.request('GET', '/v1/unknown', { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(errorOf(api).code).toBe('NOT_FOUND');
    expect((await s.request('GET', '/readyz')).status).toBe(200);
  });
});

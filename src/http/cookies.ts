import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's refresh-token cookie (security requirement R33): the refresh token travels in an
 * HttpOnly, SameSite=Strict cookie scoped to /v1/auth, where page scripts cannot read it. A second,
 * script-readable cookie holds no secret and only says that a session exists, so the console
 * does not try a refresh on a first visit.
 */
export const REFRESH_COOKIE = 'loglane_refresh';
export const SESSION_MARKER_COOKIE = 'loglane_session';
/** Sent by the console on signup, login and refresh to receive the refresh token as a cookie. */
export const COOKIE_TRANSPORT_HEADER = 'x-refresh-token-transport';

/** The cookies of a request, by name (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (out.has(name)) continue;
    try {
      out.set(name, decodeURIComponent(value));
    } catch {
      out.set(name, value);
    }
  }
  return out;
}

interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  httpOnly: boolean;
  secure: boolean;
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  let s = `${name}=${encodeURIComponent(value)}; Path=${o.path}; Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}; SameSite=Strict`;
  if (o.httpOnly) s += '; HttpOnly';
  if (o.secure) s += '; Secure';
  return s;
}

/** Whether the request asked for the cookie transport. */
export function wantsCookie(request: FastifyRequest): boolean {
  const v = request.headers[COOKIE_TRANSPORT_HEADER];
  return typeof v === 'string' && v.trim().toLowerCase() === 'cookie';
}

export function refreshTokenFromCookie(request: FastifyRequest): string | undefined {
  const token = parseCookies(request.headers.cookie).get(REFRESH_COOKIE);
  return token && token.length <= 512 ? token : undefined;
}

/**
 * Secure over https, and on loopback addresses, where browsers accept Secure cookies over plain
 * http. A plain-http deployment on another host gets the cookie without it (put Loglane behind
 * https).
 */
function secureContext(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const host = request.hostname.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

export function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  const secure = secureContext(request);
  reply.header('set-cookie', [
    serializeCookie(REFRESH_COOKIE, token, { path: '/v1/auth', maxAgeSeconds, httpOnly: true, secure }),
    serializeCookie(SESSION_MARKER_COOKIE, '1', { path: '/', maxAgeSeconds, httpOnly: false, secure }),
  ]);
}

export function clearRefreshCookie(request: FastifyRequest, reply: FastifyReply): void {
  const secure = secureContext(request);
  reply.header('set-cookie', [
    serializeCookie(REFRESH_COOKIE, '', { path: '/v1/auth', maxAgeSeconds: 0, httpOnly: true, secure }),
    serializeCookie(SESSION_MARKER_COOKIE, '', { path: '/', maxAgeSeconds: 0, httpOnly: false, secure }),
  ]);
}

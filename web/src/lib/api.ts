/**
 * The console's only door to the server: every call goes through the public /v1 API.
 *
 * The access token lives in memory only. The refresh token never reaches page scripts: logins ask
 * for it as an HttpOnly cookie scoped to /v1/auth (`X-Refresh-Token-Transport: cookie`), so a
 * reload restores the session by one refresh, and an expired access token is replaced silently.
 * Refreshes are single-flight within a tab and serialised across tabs (a refresh token is
 * single-use, and presenting a used one revokes the whole login).
 */

export interface ErrorBody {
  error: { code: string; message: string; requestId?: string; details?: Array<{ path?: string; message: string }> | Record<string, unknown> };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorBody['error']['details'],
    readonly requestId?: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Field-level messages keyed by the last path segment (`/condition/threshold` → `threshold`). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    if (!Array.isArray(this.details)) return out;
    for (const d of this.details) {
      const key = (d.path ?? '').split('/').filter(Boolean).pop() ?? '';
      if (key && !out[key]) out[key] = d.message;
    }
    return out;
  }
}

export interface User {
  id: string;
  email: string;
  createdAt: string;
}

export type SessionState = { status: 'unknown' } | { status: 'signed-out'; reason?: string } | { status: 'signed-in'; user: User };

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiOptions {
  fetch?: Fetch;
  /** Runs `fn` while no other tab refreshes. Defaults to the Web Locks API where there is one. */
  withLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Seconds before an access token's expiry at which it is replaced ahead of time. */
  refreshMarginSeconds?: number;
  now?: () => number;
  /** Whether a refresh cookie is likely present (so a first visit does not ask in vain). */
  hasSession?: () => boolean;
}

/**
 * The server sets a script-readable `loglane_session=1` marker beside the HttpOnly refresh cookie
 * (same lifetime, no secret in it), so the console knows whether a refresh is worth trying.
 */
export function sessionMarkerPresent(): boolean {
  return typeof document !== 'undefined' && /(?:^|;\s*)loglane_session=1(?:;|$)/.test(document.cookie);
}

const COOKIE_TRANSPORT = { 'x-refresh-token-transport': 'cookie' };

export function defaultLock<T>(fn: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  return locks ? (locks.request('loglane-refresh', fn) as Promise<T>) : fn();
}

/** The `exp` claim of a JWT in epoch milliseconds, or undefined when it cannot be read. */
export function tokenExpiry(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

async function toApiError(res: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> | undefined;
  try {
    body = (await res.json()) as Partial<ErrorBody>;
  } catch {
    body = undefined;
  }
  const retryAfter = Number(res.headers.get('retry-after')) || undefined;
  const e = body?.error;
  if (e && typeof e.code === 'string') return new ApiError(res.status, e.code, e.message, e.details, e.requestId, retryAfter);
  return new ApiError(res.status, res.status >= 500 ? 'SERVER_ERROR' : 'HTTP_ERROR', `The server answered ${res.status}. Try again in a moment.`, undefined, undefined, retryAfter);
}

export class Api {
  private accessToken: string | null = null;
  private refreshing: Promise<boolean> | null = null;
  private listeners = new Set<(s: SessionState) => void>();
  private readonly fetchFn: Fetch;
  private readonly withLock: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly margin: number;
  private readonly now: () => number;
  private readonly hasSession: () => boolean;
  state: SessionState = { status: 'unknown' };

  constructor(options: ApiOptions = {}) {
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.withLock = options.withLock ?? defaultLock;
    this.margin = (options.refreshMarginSeconds ?? 20) * 1000;
    this.now = options.now ?? Date.now;
    this.hasSession = options.hasSession ?? sessionMarkerPresent;
  }

  subscribe(listener: (s: SessionState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setState(state: SessionState): void {
    this.state = state;
    for (const l of this.listeners) l(state);
  }

  private signedOut(reason?: string): void {
    this.accessToken = null;
    if (this.state.status !== 'signed-out') this.setState({ status: 'signed-out', reason });
  }

  /** On page load: trade the refresh cookie (if any) for an access token and read the user. */
  async restore(): Promise<void> {
    if (this.hasSession() && (await this.refresh())) {
      try {
        const me = await this.get<User>('/v1/auth/me');
        this.setState({ status: 'signed-in', user: { id: me.id, email: me.email, createdAt: me.createdAt } });
        return;
      } catch {
        /* fall through */
      }
    }
    this.signedOut();
  }

  async signup(email: string, password: string): Promise<void> {
    await this.startSession('/v1/auth/signup', { email, password });
  }

  async login(email: string, password: string): Promise<void> {
    await this.startSession('/v1/auth/login', { email, password });
  }

  private async startSession(path: string, body: unknown): Promise<void> {
    const res = await this.fetchFn(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...COOKIE_TRANSPORT },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (!res.ok) throw await toApiError(res);
    const session = (await res.json()) as { user: User; accessToken: string };
    this.accessToken = session.accessToken;
    this.setState({ status: 'signed-in', user: session.user });
  }

  async logout(): Promise<void> {
    try {
      const token = await this.validToken();
      if (token) {
        await this.fetchFn('/v1/auth/logout', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: '{}',
          credentials: 'same-origin',
        });
      }
    } finally {
      this.signedOut('You have signed out.');
    }
  }

  /**
   * Ends the session in this tab without asking the server: for when the server has already ended
   * it (the password was reset, the account deleted). `reason` is shown on the sign-in page.
   */
  forget(reason: string): void {
    this.accessToken = null;
    this.setState({ status: 'signed-out', reason });
  }

  /**
   * Replaces the access token using the refresh cookie. Concurrent callers share one request;
   * other tabs wait on a lock, so a single-use token is never presented twice.
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.withLock(async () => {
      const res = await this.fetchFn('/v1/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...COOKIE_TRANSPORT },
        body: '{}',
        credentials: 'same-origin',
      });
      if (!res.ok) {
        this.accessToken = null;
        return false;
      }
      this.accessToken = ((await res.json()) as { accessToken: string }).accessToken;
      return true;
    })
      .catch(() => false)
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  /** An access token that is not about to expire, refreshing first if needed; null when signed out. */
  async validToken(): Promise<string | null> {
    if (this.refreshing) await this.refreshing;
    const token = this.accessToken;
    if (token) {
      const exp = tokenExpiry(token);
      if (exp === undefined || exp - this.margin > this.now()) return token;
    }
    return (await this.refresh()) ? this.accessToken : null;
  }

  /**
   * One authenticated request. A 401 for an expired or rejected token refreshes once and retries;
   * if that fails too, the session ends and the caller sees the 401.
   */
  async raw(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    const send = async (token: string | null) =>
      this.fetchFn(path, {
        method,
        signal: init.signal,
        credentials: 'same-origin',
        headers: {
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...init.headers,
        },
        body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      });
    let res = await send(await this.validToken());
    if (res.status === 401) {
      const code = (await res.clone().json().catch(() => ({})) as Partial<ErrorBody>).error?.code;
      if (code === 'TOKEN_EXPIRED' || code === 'UNAUTHORIZED') {
        this.accessToken = null;
        if (await this.refresh()) res = await send(this.accessToken);
        if (res.status === 401) this.signedOut('Your session has ended. Sign in again.');
      }
    }
    return res;
  }

  async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.raw(method, path, { body, signal });
    if (!res.ok) throw await toApiError(res);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.call<T>('GET', path, undefined, signal);
  }

  /** A request with a JSON body that needs no session (a password reset); undefined for an empty answer. */
  async anonymousCall<T = unknown>(method: string, path: string, body: unknown): Promise<T> {
    const res = await this.fetchFn(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
    if (!res.ok) throw await toApiError(res);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Requests that need no session (the VAPID key, plans). */
  async anonymous<T>(path: string): Promise<T> {
    const res = await this.fetchFn(path, { credentials: 'same-origin' });
    if (!res.ok) throw await toApiError(res);
    return (await res.json()) as T;
  }
}

/** A person-facing sentence for any failure. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'RATE_LIMITED' && err.retryAfter) return `${err.message} Try again in ${err.retryAfter} s.`;
    return err.message;
  }
  if (err instanceof DOMException && err.name === 'AbortError') return 'Cancelled.';
  if (err instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

/**
 * @loglane/client: a typed client for the whole Loglane /v1 API. Its request and response types
 * come from ./schema.ts, generated from the OpenAPI document the server serves, so they cannot
 * drift from the routes.
 */
import { gzipSync } from 'node:zlib';
import type { components, operations } from './schema.js';
import { SseParser } from './sse.js';

export type { components, operations, paths } from './schema.js';
export { SseParser, type SseEvent } from './sse.js';

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body an operation takes. */
export type RequestBody<K extends keyof operations> = operations[K] extends { requestBody: infer R } ? JsonOf<R> : operations[K] extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;
/** The JSON an operation answers with on success. */
export type ResponseBody<K extends keyof operations> = operations[K]['responses'] extends infer R
  ? 200 extends keyof R ? JsonOf<R[200]> : 201 extends keyof R ? JsonOf<R[201]> : 202 extends keyof R ? JsonOf<R[202]> : undefined
  : never;
/** An operation's query parameters. */
export type Query<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

export type Log = components['schemas'] extends { Log: infer L } ? L : ResponseBody<'searchLogs'>['data'][number];
export type Project = ResponseBody<'getProject'>;
export type AlertRule = ResponseBody<'getAlert'>;
export type TokenPair = { accessToken: string; refreshToken: string };

export class LoglaneError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly requestId?: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'LoglaneError';
  }
}

export interface ClientOptions {
  /** The server, e.g. `http://localhost:8080` (no /v1). */
  baseUrl: string;
  accessToken?: string;
  refreshToken?: string;
  /** A project API key, for ingestion. */
  apiKey?: string;
  /** Called whenever a login or refresh gives new tokens (to store them). */
  onTokens?: (tokens: TokenPair) => void;
  fetch?: typeof fetch;
  userAgent?: string;
}

type Auth = 'user' | 'key' | 'none';

interface Call {
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  auth?: Auth;
  apiKey?: string;
  raw?: RequestInit["body"];
  signal?: AbortSignal;
}

/**
 * Every /v1 operation by its OpenAPI operationId, and the client method that calls it. Typed with
 * `satisfies`, so an operation added to the server (and so to the regenerated schema) without a
 * method here fails the type check.
 */
export const OPERATIONS = {
  signup: 'signup',
  login: 'login',
  refresh: 'refresh',
  logout: 'logout',
  me: 'me',
  changePassword: 'changePassword',
  requestPasswordReset: 'requestPasswordReset',
  confirmPasswordReset: 'confirmPasswordReset',
  listSessions: 'listSessions',
  revokeSession: 'revokeSession',
  deleteAccount: 'deleteAccount',
  listPlans: 'listPlans',
  listProjects: 'listProjects',
  createProject: 'createProject',
  getProject: 'getProject',
  updateProject: 'updateProject',
  deleteProject: 'deleteProject',
  rotateProjectKey: 'rotateProjectKey',
  listMembers: 'listMembers',
  setMemberRole: 'setMemberRole',
  removeMember: 'removeMember',
  transferProject: 'transferProject',
  createInvitation: 'createInvitation',
  listInvitations: 'listInvitations',
  revokeInvitation: 'revokeInvitation',
  acceptInvitation: 'acceptInvitation',
  getProjectNotifications: 'getProjectNotifications',
  setProjectNotifications: 'setProjectNotifications',
  ingestLogs: 'ingestLogs',
  otlpExportLogs: 'otlpExportLogs',
  searchLogs: 'searchLogs',
  logStats: 'logStats',
  tailLogs: 'tailLogs',
  logFacets: 'logFacets',
  logFields: 'logFields',
  logContext: 'logContext',
  exportLogs: 'exportLogs',
  listViews: 'listViews',
  createView: 'createView',
  getView: 'getView',
  updateView: 'updateView',
  deleteView: 'deleteView',
  listAlerts: 'listAlerts',
  createAlert: 'createAlert',
  getAlert: 'getAlert',
  updateAlert: 'updateAlert',
  deleteAlert: 'deleteAlert',
  alertHistory: 'alertHistory',
  testAlert: 'testAlert',
  listDestinations: 'listDestinations',
  createDestination: 'createDestination',
  deleteDestination: 'deleteDestination',
  vapidPublicKey: 'vapidPublicKey',
  listPushSubscriptions: 'listPushSubscriptions',
  createPushSubscription: 'createPushSubscription',
  deletePushSubscription: 'deletePushSubscription',
} as const satisfies { [K in keyof operations]: keyof LoglaneClient };

const enc = encodeURIComponent;

export class LoglaneClient {
  readonly baseUrl: string;
  accessToken: string | undefined;
  refreshToken: string | undefined;
  apiKey: string | undefined;
  private readonly options: ClientOptions;
  private readonly fetchFn: typeof fetch;
  private refreshing: Promise<void> | undefined;

  constructor(options: ClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.accessToken = options.accessToken;
    this.refreshToken = options.refreshToken;
    this.apiKey = options.apiKey;
    this.fetchFn = options.fetch ?? fetch;
  }

  /** One request. With a user token, an expired access token is refreshed once (if a refresh token is known) and the request retried. */
  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    const res = await this.send(method, path, call);
    if (res.status === 204) return undefined as T;
    const type = res.headers.get('content-type') ?? '';
    return (type.includes('json') ? await res.json() : await res.text()) as T;
  }

  private async send(method: string, path: string, call: Call, retried = false): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...call.headers };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    const auth = call.auth ?? 'user';
    if (auth === 'user' && this.accessToken) headers.authorization = `Bearer ${this.accessToken}`;
    if (auth === 'key') {
      const key = call.apiKey ?? this.apiKey;
      if (!key) throw new LoglaneError(0, 'NO_API_KEY', 'This call needs a project API key (apiKey option).');
      headers['x-api-key'] = key;
    }
    let body: RequestInit["body"] | undefined = call.raw;
    if (body === undefined && call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await this.fetchFn(url, { method, headers, body, signal: call.signal });
    if (res.ok) return res;
    const error = await errorOf(res);
    if (!retried && auth === 'user' && error.status === 401 && error.code === 'TOKEN_EXPIRED' && this.refreshToken) {
      await this.refresh();
      return this.send(method, path, call, true);
    }
    throw error;
  }

  private setTokens(tokens: { accessToken: string; refreshToken?: string }): void {
    this.accessToken = tokens.accessToken;
    if (tokens.refreshToken) this.refreshToken = tokens.refreshToken;
    if (this.refreshToken) this.options.onTokens?.({ accessToken: tokens.accessToken, refreshToken: this.refreshToken });
  }

  // Accounts and tokens
  async signup(body: RequestBody<'signup'>): Promise<ResponseBody<'signup'>> {
    const session = await this.request<ResponseBody<'signup'>>('POST', '/v1/auth/signup', { body, auth: 'none' });
    this.setTokens(session);
    return session;
  }

  async login(body: RequestBody<'login'>): Promise<ResponseBody<'login'>> {
    const session = await this.request<ResponseBody<'login'>>('POST', '/v1/auth/login', { body, auth: 'none' });
    this.setTokens(session);
    return session;
  }

  /** Trades the refresh token for a new pair; concurrent callers share one refresh (tokens are single-use). */
  async refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      if (!this.refreshToken) throw new LoglaneError(0, 'NO_REFRESH_TOKEN', 'No refresh token: sign in first.');
      const pair = await this.request<ResponseBody<'refresh'>>('POST', '/v1/auth/refresh', { body: { refreshToken: this.refreshToken }, auth: 'none' });
      this.setTokens(pair);
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  async logout(): Promise<void> {
    if (this.refreshToken) await this.request('POST', '/v1/auth/logout', { body: { refreshToken: this.refreshToken } });
    this.accessToken = undefined;
    this.refreshToken = undefined;
  }

  me(): Promise<ResponseBody<'me'>> {
    return this.request('GET', '/v1/auth/me');
  }

  // Account care
  /** Other logins end; this one stays. */
  changePassword(body: RequestBody<'changePassword'>): Promise<void> {
    return this.request('POST', '/v1/auth/password', { body });
  }

  /** Mails a reset link if the email has an account; the answer is the same either way. */
  requestPasswordReset(body: RequestBody<'requestPasswordReset'>): Promise<ResponseBody<'requestPasswordReset'>> {
    return this.request('POST', '/v1/auth/password-reset', { body, auth: 'none' });
  }

  confirmPasswordReset(body: RequestBody<'confirmPasswordReset'>): Promise<void> {
    return this.request('POST', '/v1/auth/password-reset/confirm', { body, auth: 'none' });
  }

  listSessions(): Promise<ResponseBody<'listSessions'>> {
    return this.request('GET', '/v1/auth/sessions');
  }

  revokeSession(id: string): Promise<void> {
    return this.request('DELETE', `/v1/auth/sessions/${enc(id)}`);
  }

  /** Deletes the account for good, with every project it owns. */
  deleteAccount(body: RequestBody<'deleteAccount'>): Promise<void> {
    return this.request('DELETE', '/v1/account', { body });
  }

  listPlans(): Promise<ResponseBody<'listPlans'>> {
    return this.request('GET', '/v1/plans', { auth: 'none' });
  }

  // Projects
  listProjects(): Promise<ResponseBody<'listProjects'>> {
    return this.request('GET', '/v1/projects');
  }

  createProject(body: RequestBody<'createProject'>): Promise<ResponseBody<'createProject'>> {
    return this.request('POST', '/v1/projects', { body });
  }

  getProject(id: string): Promise<ResponseBody<'getProject'>> {
    return this.request('GET', `/v1/projects/${enc(id)}`);
  }

  updateProject(id: string, body: RequestBody<'updateProject'>): Promise<ResponseBody<'updateProject'>> {
    return this.request('PUT', `/v1/projects/${enc(id)}`, { body });
  }

  deleteProject(id: string): Promise<void> {
    return this.request('DELETE', `/v1/projects/${enc(id)}`);
  }

  rotateProjectKey(id: string): Promise<ResponseBody<'rotateProjectKey'>> {
    return this.request('POST', `/v1/projects/${enc(id)}/rotate-key`);
  }

  // Members and invitations
  listMembers(projectId: string): Promise<ResponseBody<'listMembers'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/members`);
  }

  setMemberRole(projectId: string, userId: string, body: RequestBody<'setMemberRole'>): Promise<ResponseBody<'setMemberRole'>> {
    return this.request('PUT', `/v1/projects/${enc(projectId)}/members/${enc(userId)}`, { body });
  }

  /** Removes a member; with your own user id, leaves the project. */
  removeMember(projectId: string, userId: string): Promise<void> {
    return this.request('DELETE', `/v1/projects/${enc(projectId)}/members/${enc(userId)}`);
  }

  transferProject(projectId: string, body: RequestBody<'transferProject'>): Promise<ResponseBody<'transferProject'>> {
    return this.request('POST', `/v1/projects/${enc(projectId)}/transfer`, { body });
  }

  createInvitation(projectId: string, body: RequestBody<'createInvitation'>): Promise<ResponseBody<'createInvitation'>> {
    return this.request('POST', `/v1/projects/${enc(projectId)}/invitations`, { body });
  }

  listInvitations(projectId: string): Promise<ResponseBody<'listInvitations'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/invitations`);
  }

  revokeInvitation(projectId: string, invitationId: string): Promise<void> {
    return this.request('DELETE', `/v1/projects/${enc(projectId)}/invitations/${enc(invitationId)}`);
  }

  acceptInvitation(body: RequestBody<'acceptInvitation'>): Promise<ResponseBody<'acceptInvitation'>> {
    return this.request('POST', '/v1/invitations/accept', { body });
  }

  getProjectNotifications(projectId: string): Promise<ResponseBody<'getProjectNotifications'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/notifications`);
  }

  setProjectNotifications(projectId: string, body: RequestBody<'setProjectNotifications'>): Promise<ResponseBody<'setProjectNotifications'>> {
    return this.request('PUT', `/v1/projects/${enc(projectId)}/notifications`, { body });
  }

  // Logs
  /** Sends logs with the project API key; gzip-compressed when large. */
  ingestLogs(logs: RequestBody<'ingestLogs'>, options: { apiKey?: string; idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<ResponseBody<'ingestLogs'>> {
    const json = Buffer.from(JSON.stringify(logs));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    let raw: RequestInit["body"] = json;
    if (json.length > 8192) {
      raw = gzipSync(json);
      headers['content-encoding'] = 'gzip';
    }
    return this.request('POST', '/v1/logs', { raw, headers, auth: 'key', apiKey: options.apiKey, signal: options.signal });
  }

  /** An OTLP ExportLogsServiceRequest in its JSON form (for protobuf, use an OpenTelemetry exporter). */
  otlpExportLogs(request: RequestBody<'otlpExportLogs'>, options: { apiKey?: string } = {}): Promise<ResponseBody<'otlpExportLogs'>> {
    return this.request('POST', '/v1/otlp/v1/logs', { body: request, auth: 'key', apiKey: options.apiKey });
  }

  searchLogs(projectId: string, query: Query<'searchLogs'> = {} as Query<'searchLogs'>): Promise<ResponseBody<'searchLogs'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/logs`, { query: query as Call['query'] });
  }

  /** Every page of a search, newest first. */
  async *searchAll(projectId: string, query: Query<'searchLogs'> = {} as Query<'searchLogs'>): AsyncGenerator<Log> {
    let cursor: string | null | undefined = (query as { cursor?: string }).cursor;
    do {
      const page = await this.searchLogs(projectId, { ...query, cursor: cursor ?? undefined } as Query<'searchLogs'>);
      for (const log of page.data) yield log as Log;
      cursor = page.nextCursor;
    } while (cursor);
  }

  logStats(projectId: string, query: Query<'logStats'> = {} as Query<'logStats'>): Promise<ResponseBody<'logStats'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/logs/stats`, { query: query as Call['query'] });
  }

  /** Counts of fields' values (and their numbers' statistics) over the whole range and query. */
  logFacets(projectId: string, query: Query<'logFacets'>): Promise<ResponseBody<'logFacets'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/logs/facets`, { query: query as Call['query'] });
  }

  /** The fields the selected logs hold, most common first. */
  logFields(projectId: string, query: Query<'logFields'> = {} as Query<'logFields'>): Promise<ResponseBody<'logFields'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/logs/fields`, { query: query as Call['query'] });
  }

  /** The logs around one log: `before` newest first, `after` oldest first. */
  logContext(projectId: string, logId: string, query: Partial<Query<'logContext'>> = {}): Promise<ResponseBody<'logContext'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/logs/${enc(logId)}/context`, { query: query as Call['query'] });
  }

  /** Every log a search selects, as NDJSON or CSV text, a chunk at a time as the server streams it. */
  async *exportLogs(projectId: string, query: Partial<Query<'exportLogs'>> = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<string> {
    const res = await this.send('GET', `/v1/projects/${enc(projectId)}/logs/export`, { query: query as Call['query'], signal: options.signal });
    if (!res.body) return;
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        if (text) yield text;
      }
      const rest = decoder.decode();
      if (rest) yield rest;
    } finally {
      reader.releaseLock();
      await res.body.cancel().catch(() => {});
    }
  }

  // Saved views

  listViews(projectId: string): Promise<ResponseBody<'listViews'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/views`);
  }

  createView(projectId: string, body: RequestBody<'createView'>): Promise<ResponseBody<'createView'>> {
    return this.request('POST', `/v1/projects/${enc(projectId)}/views`, { body });
  }

  getView(projectId: string, viewId: string): Promise<ResponseBody<'getView'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/views/${enc(viewId)}`);
  }

  updateView(projectId: string, viewId: string, body: RequestBody<'updateView'>): Promise<ResponseBody<'updateView'>> {
    return this.request('PUT', `/v1/projects/${enc(projectId)}/views/${enc(viewId)}`, { body });
  }

  deleteView(projectId: string, viewId: string): Promise<void> {
    return this.request('DELETE', `/v1/projects/${enc(projectId)}/views/${enc(viewId)}`);
  }

  /**
   * Live tail: yields logs as they arrive, until `signal` aborts. A dropped connection reopens
   * with the last event id, so nothing is missed or repeated.
   */
  async *tailLogs(projectId: string, query: Query<'tailLogs'> = {} as Query<'tailLogs'>, options: { signal?: AbortSignal; lastEventId?: string; onConnected?: () => void } = {}): AsyncGenerator<Log> {
    let lastEventId = options.lastEventId;
    let failures = 0;
    while (!options.signal?.aborted) {
      try {
        const res = await this.send('GET', `/v1/projects/${enc(projectId)}/logs/tail`, {
          query: query as Call['query'],
          headers: lastEventId ? { 'last-event-id': lastEventId } : {},
          signal: options.signal,
        });
        const parser = new SseParser();
        const reader = res.body!.getReader();
        let connected = false;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (!connected) {
            connected = true;
            failures = 0;
            options.onConnected?.();
          }
          for (const event of parser.push(value)) {
            if (event.id !== undefined) lastEventId = event.id;
            if (event.event === 'log') yield JSON.parse(event.data) as Log;
          }
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        // Refusals that a retry cannot fix end the tail.
        if (err instanceof LoglaneError && err.status >= 400 && err.status < 500 && err.status !== 429) throw err;
        if (++failures > 8) throw err;
      }
      if (options.signal?.aborted) return;
      await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** failures)));
    }
  }

  // Alerts
  listAlerts(query: Query<'listAlerts'> = {} as Query<'listAlerts'>): Promise<ResponseBody<'listAlerts'>> {
    return this.request('GET', '/v1/alerts', { query: query as Call['query'] });
  }

  createAlert(body: RequestBody<'createAlert'>): Promise<ResponseBody<'createAlert'>> {
    return this.request('POST', '/v1/alerts', { body });
  }

  getAlert(id: string): Promise<ResponseBody<'getAlert'>> {
    return this.request('GET', `/v1/alerts/${enc(id)}`);
  }

  updateAlert(id: string, body: RequestBody<'updateAlert'>): Promise<ResponseBody<'updateAlert'>> {
    return this.request('PUT', `/v1/alerts/${enc(id)}`, { body });
  }

  deleteAlert(id: string): Promise<void> {
    return this.request('DELETE', `/v1/alerts/${enc(id)}`);
  }

  alertHistory(id: string, query: Query<'alertHistory'> = {} as Query<'alertHistory'>): Promise<ResponseBody<'alertHistory'>> {
    return this.request('GET', `/v1/alerts/${enc(id)}/history`, { query: query as Call['query'] });
  }

  /** Sends a test notification on each of the rule's channels now; answers the outcome per channel. */
  testAlert(id: string): Promise<ResponseBody<'testAlert'>> {
    return this.request('POST', `/v1/alerts/${enc(id)}/test`);
  }

  // Destinations (webhooks and Slack) of a project
  listDestinations(projectId: string): Promise<ResponseBody<'listDestinations'>> {
    return this.request('GET', `/v1/projects/${enc(projectId)}/destinations`);
  }

  /** A webhook's `secret` is in this answer only. */
  createDestination(projectId: string, body: RequestBody<'createDestination'>): Promise<ResponseBody<'createDestination'>> {
    return this.request('POST', `/v1/projects/${enc(projectId)}/destinations`, { body });
  }

  deleteDestination(projectId: string, id: string): Promise<void> {
    return this.request('DELETE', `/v1/projects/${enc(projectId)}/destinations/${enc(id)}`);
  }

  // Push subscriptions
  vapidPublicKey(): Promise<ResponseBody<'vapidPublicKey'>> {
    return this.request('GET', '/v1/push/vapid-public-key', { auth: 'none' });
  }

  listPushSubscriptions(): Promise<ResponseBody<'listPushSubscriptions'>> {
    return this.request('GET', '/v1/push/subscriptions');
  }

  createPushSubscription(body: RequestBody<'createPushSubscription'>): Promise<ResponseBody<'createPushSubscription'>> {
    return this.request('POST', '/v1/push/subscriptions', { body });
  }

  deletePushSubscription(id: string): Promise<void> {
    return this.request('DELETE', `/v1/push/subscriptions/${enc(id)}`);
  }
}

async function errorOf(res: Response): Promise<LoglaneError> {
  const retryAfter = Number(res.headers.get('retry-after')) || undefined;
  let body: { error?: { code?: string; message?: string; details?: unknown; requestId?: string } } | undefined;
  try {
    body = (await res.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const e = body?.error;
  return new LoglaneError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? `The server answered ${res.status}.`, e?.details, e?.requestId, retryAfter);
}

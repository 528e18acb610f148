/**
 * The test harness: a real database per server (a fresh SQLite file, or a fresh PostgreSQL
 * database with a random name that is dropped afterwards), the real app listening on a real
 * port, and a small fetch-based client. Nothing here is mocked.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config, type Engine } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createLogger } from '../src/logger.js';
import { lockRow } from '../src/db/lock.js';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER } from '../src/features/accounts/tokens.js';
import { deriveKey, resolveSecretKey } from '../src/secrets.js';
import { SignJWT } from 'jose';
import type { BodyOf } from './api-types.js';

export const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** In CI (or when asked) an unreachable PostgreSQL fails the run instead of skipping its tests. */
export const PG_REQUIRED = process.env.CI === 'true' || process.env.LOGLANE_REQUIRE_PG === '1';

async function pgProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

const PG_PROBLEM = await pgProblem();
if (PG_PROBLEM && PG_REQUIRED) {
  throw new Error(`PostgreSQL is required for this run but unreachable at ${PG_ADMIN_URL}: ${PG_PROBLEM}`);
}

/** Both engines, or those LOGLANE_TEST_ENGINES lists (`sqlite`, `postgres`; `bench:hostile --engine` sets it). */
export const ENGINES: Engine[] = (process.env.LOGLANE_TEST_ENGINES ?? 'sqlite,postgres').split(',').filter((e): e is Engine => e === 'sqlite' || e === 'postgres');

/** Declares the same suite once per engine; PostgreSQL's copy is skipped, with the reason in its name, only outside CI. */
export function describeEngines(name: string, suite: (engine: Engine) => void): void {
  for (const engine of ENGINES) {
    const skip = engine === 'postgres' && PG_PROBLEM !== undefined;
    const title = skip ? `${name} [postgres] (skipped: PostgreSQL unreachable at ${PG_ADMIN_URL})` : `${name} [${engine}]`;
    describe.skipIf(skip)(title, () => suite(engine));
  }
}

export interface TestDatabase {
  engine: Engine;
  /** The environment that points Loglane at this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestDatabase(engine: Engine): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-test-'));
  if (engine === 'sqlite') {
    return { engine, env: { DATA_DIR: dataDir }, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `loglane_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    engine,
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString(), SECRET_KEY: randomBytes(32).toString('hex') },
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Real time plus an offset the test can push forward. */
export class TestClock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  engine: Engine;
  url: string;
  app: FastifyInstance;
  config: Config;
  database: Database;
  clock: TestClock;
  env: Record<string, string>;
  /** Every log line the server wrote, as text. */
  logs: string[];
  /** The body is typed as the operation's success answer (test/api-types.ts); read an error with errorOf. */
  request<M extends string, P extends string>(method: M, path: P, options?: RequestOptions): Promise<Response<BodyOf<M, P>>>;
  close(): Promise<void>;
}

export async function request(baseUrl: string, method: string, urlPath: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(baseUrl + urlPath, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if (/json/.test(res.headers.get('content-type') ?? '') && !/ndjson/.test(res.headers.get('content-type') ?? '') && text.length > 0) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * Every password, token and API key the helpers below hand out. When a server closes, its log
 * lines are searched for all of them: no secret may ever reach a log, in any test.
 */
export const ISSUED_SECRETS = new Set<string>();

function assertNoSecretsIn(logs: string[]): void {
  const text = logs.join('');
  for (const secret of ISSUED_SECRETS) {
    if (secret.length >= 8 && text.includes(secret)) throw new Error(`a secret reached the server log: ${secret.slice(0, 6)}…`);
  }
}

export interface ServerOptions {
  env?: Record<string, string>;
  clock?: TestClock;
  /** Another node on the same database and secret. */
  shareWith?: TestServer;
  consoleDir?: string;
}

/** Starts the real app on a fresh database of the given engine. */
export async function startServer(engine: Engine, options: ServerOptions = {}): Promise<TestServer> {
  const testDb: TestDatabase = options.shareWith
    ? { engine, env: options.shareWith.env, drop: async () => {} }
    : await createTestDatabase(engine);
  const env = { LOG_LEVEL: 'info', ...testDb.env, ...options.env };
  const config = loadConfig(env);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const database = openDatabase(config);
  await migrateToLatest(database.db);
  const clock = options.clock ?? options.shareWith?.clock ?? new TestClock();
  const app = await buildApp({ config, database, secretKey: resolveSecretKey(config).key, logger, clock, consoleDir: options.consoleDir });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    engine,
    url,
    app,
    config,
    database,
    clock,
    env,
    logs,
    request: (method, p, o) => request(url, method, p, o),
    async close() {
      await app.close();
      await database.close();
      await testDb.drop();
      assertNoSecretsIn(logs);
    },
  };
}

/**
 * Stands for a value a `beforeAll` makes: every property read goes to the value once it is there,
 * and reading it earlier (at collection time, outside a test) fails with `what` named.
 */
function standIn<T extends object>(what: string, current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_target, key) {
      if (key === 'then') return undefined; // never mistaken for a promise
      const value = current();
      if (value === undefined) throw new Error(`${what} is only there inside a test (it is made in beforeAll)`);
      const v = Reflect.get(value, key, value) as unknown;
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(value) : v;
    },
    set(_target, key, v) {
      const value = current();
      if (value === undefined) throw new Error(`${what} is only there inside a test (it is made in beforeAll)`);
      return Reflect.set(value, key, v, value); // a test may refresh a token: it changes the real value
    },
    has: (_target, key) => current() !== undefined && key in current()!,
    ownKeys: () => (current() ? Reflect.ownKeys(current()!) : []),
    getOwnPropertyDescriptor: (_target, key) => (current() ? { ...Reflect.getOwnPropertyDescriptor(current()!, key), configurable: true } : undefined),
  });
}

/**
 * The server of a describe block: started on a fresh database before its first test and closed
 * after its last (the database dropped, its log searched for secrets). Use the returned value as
 * the server inside tests. `options` may be a function, read when the server starts, for options
 * that depend on something another beforeAll made (a mail sink's address, a node to share with).
 */
export function useServer(engine: Engine, options: ServerOptions | (() => ServerOptions) = {}, hookTimeoutMs?: number): TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(engine, typeof options === 'function' ? options() : options);
  }, hookTimeoutMs);
  afterAll(async () => {
    const s = server;
    server = undefined;
    await s?.close();
  });
  return standIn('the server of useServer()', () => server);
}

/** An account signed up on `server` before the block's first test, on `plan` when given. */
export function useAccount(server: TestServer, options: { plan?: string } = {}): Account {
  let account: Account | undefined;
  beforeAll(async () => {
    account = await signup(server);
    if (options.plan) await setPlan(server, account.id, options.plan);
  });
  return standIn('the account of useAccount()', () => account);
}

/** A project of `account`, created before the block's first test. */
export function useProject(server: TestServer, account: Account, name = 'Test project'): { id: string; apiKey: string } {
  let project: { id: string; apiKey: string } | undefined;
  beforeAll(async () => {
    project = await createProject(server, account, name);
  });
  return standIn('the project of useProject()', () => project);
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${randomBytes(5).toString('hex')}@example.com`;
}

export interface Account {
  id: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

/** Signs up a fresh account (one per test, instead of truncating tables). */
export async function signup(server: TestServer, overrides: { email?: string; password?: string } = {}): Promise<Account> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const res = await server.request('POST', '/v1/auth/signup', { body: { email, password } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  const { user, accessToken, refreshToken } = res.body;
  if (refreshToken === undefined) throw new Error('signup answered without a refresh token in the body');
  for (const secret of [password, accessToken, refreshToken]) ISSUED_SECRETS.add(secret);
  return { id: user.id, email: user.email, password, accessToken, refreshToken };
}

/** Asserts the error body (docs/api.md, "The error body") and returns it. */
export function errorOf(res: Response): { code: string; message: string; requestId: string; details?: unknown } {
  const err = res.body?.error;
  if (!err || typeof err.code !== 'string' || typeof err.message !== 'string' || typeof err.requestId !== 'string') {
    throw new Error(`not an error body as docs/api.md describes (status ${res.status}): ${res.text}`);
  }
  if (res.headers.get('x-request-id') !== err.requestId) throw new Error('error requestId differs from the x-request-id header');
  if (/\bat .+:\d+:\d+|node_modules|SQLITE_|syntax error/i.test(res.text)) throw new Error(`error body leaks internals: ${res.text}`);
  return err;
}

/** Puts a user on a plan directly in the database (the CLI's effect, without a process). */
export async function setPlan(server: TestServer, userId: string, plan: string): Promise<void> {
  await server.database.db.updateTable('users').set({ plan }).where('id', '=', userId).execute();
}

/** A genuine access token (signed with the server's key) that expired a minute ago. */
export async function expiredAccessToken(server: TestServer, userId: string): Promise<string> {
  const key = deriveKey(resolveSecretKey(server.config).key, 'jwt-signing');
  const nowSec = Math.floor(server.clock.now() / 1000);
  return new SignJWT({ sid: 'rtf_expired' })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setSubject(userId)
    .setIssuer(ACCESS_TOKEN_ISSUER)
    .setAudience(ACCESS_TOKEN_AUDIENCE)
    .setIssuedAt(nowSec - 1000)
    .setExpirationTime(nowSec - 60)
    .sign(key);
}

export async function createProject(server: TestServer, account: Account, name = 'Test project'): Promise<{ id: string; apiKey: string }> {
  const res = await server.request('POST', '/v1/projects', { token: account.accessToken, body: { name } });
  if (res.status !== 201) throw new Error(`project create failed: ${res.status} ${res.text}`);
  ISSUED_SECRETS.add(res.body.apiKey);
  return res.body;
}

/** Sends logs with a project API key. */
export function ingest(server: TestServer, apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return server.request('POST', '/v1/logs', { body, headers: { 'x-api-key': apiKey, ...headers } });
}

/** A log as the search API answers it (GET /v1/projects/:id/logs, `data`). */
export interface StoredLog {
  id: string;
  timestamp: string;
  receivedAt: string;
  level: string;
  message: string;
  source: string | null;
  /** Any shape: tests read into it. */
  metadata: Record<string, any>;
}

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A live tail read the way the console reads it: fetch streaming with the token in a header. */
export async function openTail(server: TestServer, token: string, projectId: string, options: { query?: string; lastEventId?: string } = {}) {
  const controller = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const res = await fetch(`${server.url}/v1/projects/${projectId}/logs/tail${options.query ? `?${options.query}` : ''}`, { headers, signal: controller.signal });
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const ev: SseEvent = {};
            for (const line of frame.split('\n')) {
              if (line.startsWith(':')) ev.comment = line.slice(1).trim();
              else {
                const i = line.indexOf(':');
                const key = line.slice(0, i);
                const value = line.slice(i + 1).replace(/^ /, '');
                if (key === 'id' || key === 'event' || key === 'data') ev[key] = value;
              }
            }
            events.push(ev);
            for (const w of waiters.splice(0)) w();
          }
        }
      } catch {
        // aborted
      } finally {
        ended = true;
        for (const w of waiters.splice(0)) w();
      }
    })();
  }
  return {
    status: res.status,
    headers: res.headers,
    events,
    /** The `event: log` frames so far, parsed. */
    logs: () => events.filter((e) => e.event === 'log').map((e) => ({ sseId: e.id!, ...(JSON.parse(e.data!) as { id: string; message: string; level: string }) })),
    get ended() {
      return ended;
    },
    /** Waits until `predicate` holds for the events, or fails after `timeoutMs`. */
    async waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (ended) throw new Error('the tail ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms; events: ${JSON.stringify(events).slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          // sleep: the deadline of this wait; a new event ends it at once
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
    close: () => controller.abort(),
    body: res.ok ? undefined : await res.text(),
  };
}

export interface ServerProcess {
  child: import('node:child_process').ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output: () => string;
}

/** Starts `loglane serve` as its own process and resolves once it says where it listens. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const { spawn } = await import('node:child_process');
  const cli = path.resolve('bin/loglane.js');
  const child = spawn(process.execPath, [cli, 'serve'], { env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env } });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never leave a half-started server behind
      reject(new Error(`serve did not start:\n${out}`));
    }, 60_000); // a hang guard, wide because a busy two-core machine can take 20 s to start a process and migrate
    const onData = (d: Buffer) => {
      out += d;
      const m = /Loglane listening on (http:\/\/[^"\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, exited, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `loglane` binary (bin/loglane.js → dist/cli.js) with only `env` and PATH, and `input` on stdin. */
export function runCli(args: string[], env: Record<string, string>, input?: string | Buffer): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve('bin/loglane.js'), ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/**
 * Stalls every commit of these projects' logs until `release()`: it holds what each commit needs
 * (SQLite: the write lock, taken by the transaction's BEGIN IMMEDIATE; PostgreSQL: the projects'
 * rows, which each commit updates), from its own connection to the server's database. Let go well
 * within SQLite's busy timeout (5 s).
 */
export async function holdCommits(env: Record<string, string>, projectIds: string[]): Promise<{ release(): Promise<void> }> {
  const holder = openDatabase(loadConfig(env));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = holder.db.transaction().execute(async (tx) => {
    for (const id of projectIds) await lockRow(tx, 'projects', id);
    locked();
    await released;
  });
  await Promise.race([isLocked, holding]);
  return {
    async release() {
      release();
      await holding;
      await holder.close();
    },
  };
}

/**
 * Polls `probe` until it gives something other than undefined or false, and returns that; fails
 * after `timeoutMs`, naming `what`. For waiting on a condition instead of sleeping a fixed time.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 4000, what = 'the condition', everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    // sleep: the pause between two looks at the condition (the wait ends on the condition, not on time)
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

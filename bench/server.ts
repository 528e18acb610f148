/**
 * Runs the built server (dist/cli.js) as a child process on a fresh database, and a small
 * keep-alive HTTP client for talking to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Engine } from '../src/config.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request over `agent`; resolves once the whole answer is read. */
export function send(agent: http.Agent, url: string, method: string, headers: Record<string, string>, body?: Buffer): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: body ? { ...headers, 'content-length': String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A port nobody listens on right now: the one the OS picks for port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A fresh, empty database for one run: a temp directory, plus a randomly named database on PostgreSQL.
 * Several startServer calls on one PostgreSQL BenchDatabase make a cluster: the nodes share its
 * SECRET_KEY (so an access token from one node works on all), and starting one runs only the
 * migrations, which are idempotent and take a lock; nothing is reset.
 */
export interface BenchDatabase {
  engine: Engine;
  dataDir: string;
  /** The bench database's URL (PostgreSQL only). */
  databaseUrl: string | undefined;
  /** The SECRET_KEY every node on this database gets (PostgreSQL only; on SQLite the server makes its own in dataDir). */
  secretKey: string;
  drop(): Promise<void>;
}

export async function createDatabase(engine: Engine, pgAdminUrl: string): Promise<BenchDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-bench-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  const secretKey = randomBytes(32).toString('hex');
  if (engine === 'sqlite') return { engine, dataDir, databaseUrl: undefined, secretKey, drop: async () => removeDir() };

  const name = `loglane_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: pgAdminUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  try {
    await admin(`create database ${name}`);
  } catch (err) {
    removeDir();
    throw new Error(`cannot create a PostgreSQL database at ${pgAdminUrl}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    engine,
    dataDir,
    databaseUrl: url.toString(),
    secretKey,
    async drop() {
      removeDir();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

export interface RunningServer {
  baseUrl: string;
  /** The server's process id (node itself, not a shell), for reading /proc. */
  pid: number;
  /** Every line the server wrote: at LOG_LEVEL=warn, its warnings and errors (and crashes, on stderr). */
  output: string[];
  /** Peak resident set size so far (VmHWM), in bytes; undefined where /proc is not available. */
  peakRssBytes(): number | undefined;
  /** SIGTERM, then waits for the exit; answers the exit code (or the signal that ended it). */
  stop(): Promise<number | NodeJS.Signals>;
}

function exited(child: ChildProcess): Promise<number | NodeJS.Signals> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
}

/** Starts `node dist/cli.js serve` on `database` and waits until /readyz answers 200. */
export async function startServer(database: BenchDatabase, agent: http.Agent): Promise<RunningServer> {
  const port = await freePort();
  // Other Loglane settings in the environment (pool size, queue limit…) reach the server; the database ones are ours.
  // Benchmark accounts are on the enterprise plan, so the per-plan ingest rate limit does not cap the load.
  const env: NodeJS.ProcessEnv = { DEFAULT_PLAN: 'enterprise', ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATA_DIR: database.dataDir };
  delete env.DATABASE_URL;
  delete env.SECRET_KEY;
  if (database.databaseUrl !== undefined) {
    env.DATABASE_URL = database.databaseUrl;
    env.SECRET_KEY = database.secretKey;
  }
  // process.execPath directly (not npm or a shell), so child.pid is the server's own pid.
  // BENCH_SERVER_NODE_ARGS passes flags to the server's node (e.g. --cpu-prof to profile it).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });

  const output: string[] = [];
  const collect = (stream: NodeJS.ReadableStream) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      output.push(...lines.filter((l) => l.trim() !== ''));
    });
  };
  collect(child.stdout!);
  collect(child.stderr!);

  const baseUrl = `http://127.0.0.1:${port}`;
  const exit = exited(child);
  const running = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (!running()) {
      throw new Error(`the server exited (${await exit}) before it was ready:\n${output.slice(-20).join('\n') || '(no output)'}`);
    }
    const ready = await send(agent, `${baseUrl}/readyz`, 'GET', {}).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exit;
      throw new Error(`the server was not ready within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-20).join('\n') || '(no output)'}`);
    }
    await sleep(100);
  }

  return {
    baseUrl,
    pid: child.pid!,
    output,
    peakRssBytes() {
      try {
        const kb = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      } catch {
        return undefined;
      }
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Sends a JSON request and insists on `expected`; for the benchmarks' setup calls. */
export async function call<T>(agent: http.Agent, url: string, method: string, expected: number, token?: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await send(agent, url, method, headers, body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
  if (res.status !== expected) throw new Error(`${method} ${new URL(url).pathname} answered ${res.status} (expected ${expected}): ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as T;
}

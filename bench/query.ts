/**
 * Query-latency benchmark: how fast the searches a user (and the alert evaluator) runs all day
 * answer on a project that holds many logs.
 *
 *   npm run build --silent && npx tsx bench/query.ts [--engine sqlite|postgres|both] [--logs 1000000]
 *
 * For each engine: a fresh database, the built server (dist/cli.js) as a child process, one account
 * and project; then `--logs` generated logs (query-data.ts) loaded straight into that project's
 * rows through the engine's bulk path (SQLite: prepared inserts, 10,000 per transaction;
 * PostgreSQL: COPY, 50,000 rows per statement), spread over the last 3 days. Then each query runs
 * `--warmup` times untimed and `--runs` times timed, one at a time:
 *
 *   a  newest 100 logs                     GET /v1/projects/:id/logs?limit=100
 *   b  level + source page                 GET …/logs?limit=100&level=error&source=api
 *   c  alert window count (SQL)            count of level=error logs in a 5-minute window
 *   d  for information: q=timeout over the last hour, stats over 24 h (HTTP); GET /v1/projects/:id
 *      as the baseline every authenticated read pays; and a and b as SQL only (the repository's
 *      own query, run in this process, without HTTP, auth and the PostgreSQL time budget)
 *
 * and the plans of their SQL (EXPLAIN QUERY PLAN / EXPLAIN) are printed with the index each uses.
 * The load generator and the server share the machine, but nothing else runs while a query is timed.
 *
 * Exits 1 if a server does not start, an answer is not 200 or does not hold what was loaded; a
 * missed latency target is reported, not an error.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery, type LogEvent } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Engine } from '../src/config.js';
import { SQLITE_FILE } from '../src/db/connect.js';
import type { DatabaseSchema } from '../src/db/types.js';
import * as repo from '../src/features/logs/repository.js';
import { LogGenerator, type QueryRow } from './query-data.js';
import { createDatabase, send, startServer, type BenchDatabase, type RunningServer, call } from './server.js';
import { COMMON_USAGE, parseBenchArgs } from './options.js';

const SEED = 7;
const SPAN_MS = 3 * 86_400_000;
const HOUR_MS = 3_600_000;
const WINDOW_MS = 5 * 60_000;
const SQLITE_TX_ROWS = 10_000;
const PG_COPY_ROWS = 50_000;
/** Rows per buffer handed to a COPY stream (generation overlaps with PostgreSQL's work). */
const PG_COPY_PIECE = 1_000;
const PAGE = 100;
const LEVEL_ERROR = 4;
/** What the server's stats endpoint picks for a 24-hour range (120 buckets at most → 15m). */
const STATS_INTERVAL_MS = 15 * 60_000;

const USAGE = `Usage: npm run build --silent && npx tsx bench/query.ts [options]

  --logs <n>                       logs to load into the project (default 1000000)
  --runs <n>                       timed runs per query (default 200)
  --warmup <n>                     untimed runs before them (default 10)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  logs: number;
  runs: number;
  warmup: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
      logs: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '10' },
  });
  const whole = (raw: string, min: number) => (/^\d+$/.test(raw.replace(/[_,]/g, '')) && Number(raw.replace(/[_,]/g, '')) >= min ? Number(raw.replace(/[_,]/g, '')) : undefined);
  const logs = whole(values.logs, PAGE);
  const runs = whole(values.runs, 1);
  const warmup = whole(values.warmup, 0);
  const problems = [
    engineProblem,
    logs !== undefined ? undefined : `--logs must be a whole number of at least ${PAGE} (got "${values.logs}")`,
    runs !== undefined ? undefined : `--runs must be a whole number of at least 1 (got "${values.runs}")`,
    warmup !== undefined ? undefined : `--warmup must be a whole number (got "${values.warmup}")`,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, logs: logs!, runs: runs!, warmup: warmup!, pgAdminUrl };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/* ----------------------------------------------------------------------------------------------
 * Cleanup, also on Ctrl-C: every engine run registers how to undo what it started.
 * -------------------------------------------------------------------------------------------- */

const cleanups = new Set<() => Promise<unknown>>();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping the server and removing the bench database…\n`);
    void Promise.allSettled([...cleanups].map((c) => c())).finally(() => process.exit(130));
  });
}

/** Runs `fn` once however often it is called (from the run's finally and from a signal alike). */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= fn());
}

/* ----------------------------------------------------------------------------------------------
 * Progress while loading: a line rewritten on a terminal, else a line every 10 %.
 * -------------------------------------------------------------------------------------------- */

function loadProgress(engine: Engine, total: number) {
  const tty = process.stderr.isTTY === true;
  const start = performance.now();
  let lastDraw = 0;
  let nextTenth = 1;
  return {
    update(done: number) {
      const now = performance.now();
      const line = `  ${engine}: loading ${fmt((100 * done) / total)} %  ${fmt(done)} / ${fmt(total)} rows  ${fmt(done / ((now - start) / 1000))} rows/s`;
      if (tty) {
        if (now - lastDraw >= 200 || done === total) {
          process.stderr.write(`\r${line.padEnd(90)}`);
          lastDraw = now;
        }
      } else if (done >= (nextTenth * total) / 10) {
        process.stderr.write(`${line}\n`);
        while (nextTenth <= 10 && done >= (nextTenth * total) / 10) nextTenth++;
      }
    },
    end() {
      if (tty) process.stderr.write(`\r${' '.repeat(90)}\r`);
    },
  };
}

/* ----------------------------------------------------------------------------------------------
 * Direct access to the bench database: bulk load, the window count, EXPLAIN, and a Kysely
 * instance on which the repository's own functions run (to capture and time their SQL).
 * -------------------------------------------------------------------------------------------- */

interface Direct {
  engineVersion: string;
  /** The repository's functions run on this; `lastQuery` holds the SQL it sent last. */
  kysely: Kysely<DatabaseSchema>;
  lastQuery(): CompiledQuery | undefined;
  load(projectId: string, gen: LogGenerator, total: number, progress: (done: number) => void): Promise<void>;
  /** projects.log_count / last_seq, and what the engine does after a bulk load. */
  finishLoad(projectId: string, total: number): Promise<void>;
  /** The SQL the window count runs, in the engine's placeholder style. */
  windowCountSql: string;
  windowCount(projectId: string, level: number, from: number, to: number): Promise<number>;
  explain(sql: string, parameters: readonly unknown[]): Promise<string[]>;
  close(): Promise<void>;
}

const INSERT_COLUMNS = 'project_id, seq, ts, received_at, level, source, message, metadata';

function captureLog() {
  let last: CompiledQuery | undefined;
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') last = event.query;
    },
    lastQuery: () => last,
  };
}

function openSqliteDirect(database: BenchDatabase): Direct {
  const file = path.join(database.dataDir, SQLITE_FILE);
  const conn = new Sqlite(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('busy_timeout = 5000');
  // For loading speed only; the server keeps its own synchronous=FULL connections.
  conn.pragma('synchronous = NORMAL');
  const reader = new Sqlite(file, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  const capture = captureLog();
  const kysely = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: reader }), log: capture.log });
  const windowCountSql = 'select count(*) as n from logs where project_id = ? and level = ? and ts >= ? and ts <= ?';
  const count = conn.prepare<[string, number, number, number], { n: number }>(windowCountSql);

  return {
    engineVersion: (conn.prepare('select sqlite_version() as v').get() as { v: string }).v,
    kysely,
    lastQuery: capture.lastQuery,
    windowCountSql,
    async load(projectId, gen, total, progress) {
      const insert = conn.prepare(`insert into logs (${INSERT_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?)`);
      let seq = 0;
      const insertAll = conn.transaction((rows: QueryRow[]) => {
        for (const r of rows) insert.run(projectId, ++seq, r.ts, r.ts, r.level, r.source, r.message, r.metadata);
      });
      while (seq < total) {
        if (interrupted) throw new Error('interrupted');
        insertAll(gen.take(SQLITE_TX_ROWS));
        progress(seq);
        // Lets the progress line, signals and the server's other work through.
        await new Promise((r) => setImmediate(r));
      }
    },
    async finishLoad(projectId, total) {
      conn.prepare('update projects set log_count = ?, last_seq = ? where id = ?').run(total, total, projectId);
      // Fold the load's WAL into the database file, as it would be long after the logs arrived.
      conn.pragma('wal_checkpoint(TRUNCATE)');
    },
    async windowCount(projectId, level, from, to) {
      return count.get(projectId, level, from, to)!.n;
    },
    async explain(sql, parameters) {
      const rows = conn.prepare(`explain query plan ${sql}`).all(...parameters) as { id: number; parent: number; detail: string }[];
      const depth = new Map<number, number>([[0, -1]]);
      return rows.map((r) => {
        const d = (depth.get(r.parent) ?? -1) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d)}${r.detail}`;
      });
    },
    async close() {
      conn.close();
      await kysely.destroy();
    },
  };
}

/** COPY's text format: backslash, tab, newline and carriage return are escaped with a backslash. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

async function openPostgresDirect(database: BenchDatabase): Promise<Direct> {
  const client = new pg.Client({ connectionString: database.databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const pool = new pg.Pool({ connectionString: database.databaseUrl, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {});
  const capture = captureLog();
  const kysely = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }), log: capture.log });
  const windowCountSql = 'select count(*) as n from logs where project_id = $1 and level = $2 and ts >= $3 and ts <= $4';
  const engineVersion = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;

  return {
    engineVersion,
    kysely,
    lastQuery: capture.lastQuery,
    windowCountSql,
    async load(projectId, gen, total, progress) {
      let seq = 0;
      while (seq < total) {
        if (interrupted) throw new Error('interrupted');
        const chunkEnd = Math.min(total, seq + PG_COPY_ROWS);
        const pieces = function* () {
          while (seq < chunkEnd) {
            const rows = gen.take(Math.min(PG_COPY_PIECE, chunkEnd - seq));
            let text = '';
            for (const r of rows) text += `${projectId}\t${++seq}\t${r.ts}\t${r.ts}\t${r.level}\t${copyText(r.source)}\t${copyText(r.message)}\t${copyText(r.metadata)}\n`;
            yield Buffer.from(text);
          }
        };
        await pipeline(Readable.from(pieces()), client.query(copyFrom(`COPY logs (${INSERT_COLUMNS}) FROM STDIN`)));
        progress(seq);
      }
    },
    async finishLoad(projectId, total) {
      await client.query('update projects set log_count = $1, last_seq = $2 where id = $3', [total, total, projectId]);
      // VACUUM as well as ANALYZE: otherwise autovacuum starts on the freshly inserted million rows
      // in the middle of the timed runs; and it leaves the visibility map as it would be later on.
      await client.query('vacuum (analyze) logs');
    },
    async windowCount(projectId, level, from, to) {
      const res = await client.query<{ n: string }>({ text: windowCountSql, values: [projectId, level, from, to] });
      return Number(res.rows[0]!.n);
    },
    async explain(sql, parameters) {
      const res = await client.query<{ 'QUERY PLAN': string }>({ text: `explain ${sql}`, values: parameters as unknown[] });
      return res.rows.map((r) => r['QUERY PLAN']);
    },
    async close() {
      await client.end();
      await kysely.destroy();
    },
  };
}

/** The indexes a plan names, and whether it sorts or scans the whole table. */
function planSummary(engine: Engine, lines: string[]): { indexes: string[]; notes: string[] } {
  const indexes = new Set<string>();
  const notes = new Set<string>();
  for (const line of lines) {
    for (const m of line.matchAll(/(?:USING (?:COVERING )?INDEX|[Uu]sing|Bitmap Index Scan on) (\w+)/g)) indexes.add(m[1]!);
    if (engine === 'sqlite') {
      const temp = /USE TEMP B-TREE FOR (.+)$/.exec(line.trim());
      if (temp) notes.add(`temp B-tree for ${temp[1]}`);
      if (/^\s*SCAN logs\b/.test(line)) notes.add(/USING/.test(line) ? 'full index scan' : 'full table scan');
    } else {
      const sort = /^\s*(?:->\s*)?(Incremental Sort|Sort|HashAggregate|GroupAggregate)\s+\(/.exec(line);
      if (sort) notes.add(sort[1]!);
      if (/Seq Scan on logs/.test(line)) notes.add('sequential scan');
    }
  }
  return { indexes: [...indexes], notes: [...notes] };
}

/* ----------------------------------------------------------------------------------------------
 * Measuring.
 * -------------------------------------------------------------------------------------------- */

interface QueryResult {
  key: string;
  label: string;
  how: 'HTTP' | 'SQL';
  p50: number;
  p95: number;
  /** The p95 target from the issue, ms; undefined for the figures shown for information. */
  targetP95?: number;
  plan?: { sql: string; parameters: readonly unknown[]; lines: string[]; indexes: string[]; notes: string[] };
}

/** `warmup` untimed runs, then `runs` timed ones, one at a time; answers the sorted latencies (ms). */
async function measure(warmup: number, runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (interrupted) throw new Error('interrupted');
    const start = performance.now();
    await fn(warmup + i);
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}

interface SearchAnswer {
  data: { id: string; timestamp: string; level: string; source: string | null; message: string }[];
  nextCursor: string | null;
}

interface EngineReport {
  engine: Engine;
  engineVersion: string;
  logs: number;
  loadSeconds: number;
  loadRowsPerSec: number;
  /** update projects + checkpoint (SQLite) or VACUUM ANALYZE (PostgreSQL). */
  afterLoadSeconds: number;
  timeoutShare: number;
  queries: QueryResult[];
  serverExit: number | NodeJS.Signals | undefined;
  serverOutput: string[];
  failures: string[];
}

async function benchEngine(engine: Engine, options: Options): Promise<EngineReport> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let server: RunningServer | undefined;
  let direct: Direct | undefined;
  let serverExit: number | NodeJS.Signals | undefined;
  let report: EngineReport;
  const cleanup = once(async () => {
    await direct?.close().catch(() => {});
    agent.destroy();
    if (server) serverExit = await server.stop();
    await database.drop().catch((err: unknown) => console.error(`  could not remove the bench database: ${errorText(err)}`));
  });
  cleanups.add(cleanup);

  try {
    // 1. The server, an account and a project.
    server = await startServer(database, agent);
    const base = server.baseUrl;
    const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
    const password = randomBytes(12).toString('hex');
    const signedUp = await call<{ accessToken: string }>(agent, `${base}/v1/auth/signup`, 'POST', 201, undefined, { email, password });
    const project = await call<{ id: string; apiKey: string }>(agent, `${base}/v1/projects`, 'POST', 201, signedUp.accessToken, { name: 'query bench' });
    const projectId = project.id;

    // 2. The logs, straight into the database.
    direct = engine === 'sqlite' ? openSqliteDirect(database) : await openPostgresDirect(database);
    const endMs = Date.now();
    const gen = new LogGenerator(SEED, options.logs, endMs - SPAN_MS, endMs);
    const newest = gen.tsOf(options.logs - 1);
    const progress = loadProgress(engine, options.logs);
    const loadStart = performance.now();
    try {
      await direct.load(projectId, gen, options.logs, (done) => progress.update(done));
    } finally {
      progress.end();
    }
    const loadSeconds = (performance.now() - loadStart) / 1000;
    const afterStart = performance.now();
    await direct.finishLoad(projectId, options.logs);
    const afterLoadSeconds = (performance.now() - afterStart) / 1000;
    console.log(`${engine}: loaded ${fmt(options.logs)} logs in ${fmt(loadSeconds, 1)} s (${fmt(options.logs / loadSeconds)} rows/s), then ${engine === 'sqlite' ? 'WAL checkpoint' : 'VACUUM (ANALYZE)'} ${fmt(afterLoadSeconds, 1)} s`);

    // 3. Checks, then the timed runs. A fresh token: loading may outlast the access token's 15 minutes.
    const { accessToken } = await call<{ accessToken: string }>(agent, `${base}/v1/auth/login`, 'POST', 200, undefined, { email, password });
    const auth = { authorization: `Bearer ${accessToken}` };
    const failures: string[] = [];
    const { logCount } = await call<{ logCount: number }>(agent, `${base}/v1/projects/${projectId}`, 'GET', 200, accessToken);
    if (logCount !== options.logs) failures.push(`the project's logCount is ${fmt(logCount)}, not ${fmt(options.logs)}`);

    const logsUrl = `${base}/v1/projects/${projectId}/logs`;
    const urls = {
      newest: `${logsUrl}?limit=${PAGE}`,
      levelSource: `${logsUrl}?limit=${PAGE}&level=error&source=api`,
      q: `${logsUrl}?limit=${PAGE}&q=timeout&from=${newest - HOUR_MS}`,
      stats: `${logsUrl}/stats?from=${newest - 24 * HOUR_MS}&to=${newest}`,
    };
    const check = async (name: string, url: string, verify: (a: SearchAnswer) => string | undefined) => {
      const res = await send(agent, url, 'GET', auth);
      if (res.status !== 200) return void failures.push(`${name}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      const problem = verify(JSON.parse(res.body) as SearchAnswer);
      if (problem) failures.push(`${name}: ${problem}`);
    };
    await check('newest 100', urls.newest, (a) =>
      a.data.length !== PAGE ? `${a.data.length} logs, not ${PAGE}` : Date.parse(a.data[0]!.timestamp) !== newest ? `the first log is at ${a.data[0]!.timestamp}, not the newest one loaded (${new Date(newest).toISOString()})` : undefined,
    );
    const errorApi = Math.min(PAGE, gen.errorApiMatches);
    await check('level+source page', urls.levelSource, (a) =>
      a.data.length !== errorApi ? `${a.data.length} logs, not ${errorApi}` : a.data.some((l) => l.level !== 'error' || l.source !== 'api') ? 'a log that is not level error from api' : undefined,
    );
    await check('q=timeout', urls.q, (a) => (a.data.some((l) => !l.message.toLowerCase().includes('timeout')) ? 'a log without "timeout"' : undefined));

    let badAnswers = 0;
    let badExample = '';
    const get = (url: string) => async () => {
      const res = await send(agent, url, 'GET', auth);
      if (res.status !== 200) {
        badAnswers++;
        badExample ||= `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
      }
    };

    // Random 5-minute windows that end within the last hour of data (seeded: the same every run).
    let r = SEED;
    const windowEnds = Array.from({ length: options.warmup + options.runs }, () => {
      r = (Math.imul(r, 1_103_515_245) + 12_345) >>> 0;
      return newest - Math.floor((r / 2 ** 32) * (HOUR_MS - WINDOW_MS));
    });
    let windowTotal = 0;
    const windowCount = (i: number) => direct!.windowCount(projectId, LEVEL_ERROR, windowEnds[i]! - WINDOW_MS, windowEnds[i]!).then((n) => (windowTotal += n));

    const queries: QueryResult[] = [];
    const run = async (q: Omit<QueryResult, 'p50' | 'p95'>, fn: (i: number) => Promise<unknown>) => {
      process.stderr.write(`  ${engine}: timing ${q.label}…\n`);
      const samples = await measure(options.warmup, options.runs, fn);
      queries.push({ ...q, p50: percentile(samples, 50), p95: percentile(samples, 95) });
    };
    await run({ key: 'newest100', label: 'a  newest 100', how: 'HTTP', targetP95: 5 }, get(urls.newest));
    await run({ key: 'levelSourcePage', label: 'b  level=error&source=api, 100', how: 'HTTP', targetP95: 50 }, get(urls.levelSource));
    await run({ key: 'windowCount', label: 'c  error count, 5-min window', how: 'SQL', targetP95: 5 }, windowCount);
    await run({ key: 'qLastHour', label: 'd  q=timeout, last hour, 100', how: 'HTTP' }, get(urls.q));
    await run({ key: 'stats24h', label: 'd  stats, 24 h', how: 'HTTP' }, get(urls.stats));
    // What every authenticated read costs before its own query: token check, project lookup, a small answer.
    await run({ key: 'projectGet', label: 'baseline: GET /v1/projects/:id', how: 'HTTP' }, get(`${base}/v1/projects/${projectId}`));
    const k = direct.kysely;
    await run({ key: 'newest100Sql', label: "a' newest 100 (SQL only)", how: 'SQL' }, () => repo.findPage(k, projectId, {}, undefined, PAGE + 1));
    await run({ key: 'levelSourcePageSql', label: "b' level+source (SQL only)", how: 'SQL' }, () => repo.findPage(k, projectId, { levels: [LEVEL_ERROR], source: 'api' }, undefined, PAGE + 1));
    if (badAnswers > 0) failures.push(`${badAnswers} timed request(s) did not answer 200, e.g. ${badExample}`);
    if (windowTotal === 0) failures.push('every window count was 0: the loaded data does not reach the windows');

    // 4. The plans of the SQL behind the queries: the repository's own, captured as it runs.
    const captured = async (fn: () => Promise<unknown>) => {
      await fn();
      const q = direct!.lastQuery();
      if (!q) throw new Error('no SQL was captured');
      return { sql: q.sql, parameters: q.parameters };
    };
    const plans: Record<string, { sql: string; parameters: readonly unknown[] }> = {
      newest100: await captured(() => repo.findPage(k, projectId, {}, undefined, PAGE + 1)),
      levelSourcePage: await captured(() => repo.findPage(k, projectId, { levels: [LEVEL_ERROR], source: 'api' }, undefined, PAGE + 1)),
      windowCount: { sql: direct.windowCountSql, parameters: [projectId, LEVEL_ERROR, newest - WINDOW_MS, newest] },
      qLastHour: await captured(() => repo.findPage(k, projectId, { from: newest - HOUR_MS, q: 'timeout' }, undefined, PAGE + 1)),
      stats24h: await captured(() => repo.countByBucket(k, projectId, { from: newest - 24 * HOUR_MS, to: newest }, STATS_INTERVAL_MS)),
    };
    for (const q of queries) {
      const p = plans[q.key.replace(/Sql$/, '')];
      if (!p) continue;
      const lines = await direct.explain(p.sql, p.parameters);
      q.plan = { ...p, lines, ...planSummary(engine, lines) };
    }

    report = {
      engine,
      engineVersion: direct.engineVersion,
      logs: options.logs,
      loadSeconds,
      loadRowsPerSec: options.logs / loadSeconds,
      afterLoadSeconds,
      timeoutShare: gen.timeoutMatches / options.logs,
      queries,
      serverExit: undefined,
      serverOutput: server.output,
      failures,
    };
  } finally {
    await cleanup();
    cleanups.delete(cleanup);
  }
  report.serverExit = serverExit;
  return report;
}

/* ----------------------------------------------------------------------------------------------
 * Reporting.
 * -------------------------------------------------------------------------------------------- */

const ms = (v: number) => `${v < 10 ? fmt(v, 2) : v < 100 ? fmt(v, 1) : fmt(v)} ms`;

function verdict(q: QueryResult): string {
  if (q.targetP95 === undefined) return '(info)';
  return `< ${q.targetP95} ms ${q.p95 < q.targetP95 ? 'met' : 'MISSED'}`;
}

function printReport(r: EngineReport, options: Options): void {
  console.log(`\n${r.engine} ${r.engineVersion}: ${fmt(r.logs)} logs over 3 days in one project; loaded at ${fmt(r.loadRowsPerSec)} rows/s`);
  console.log(`  ${options.runs} timed runs per query after ${options.warmup} warm-up runs; "timeout" is in ${fmt(100 * r.timeoutShare, 1)} % of the messages\n`);
  const header = ['query', 'via', 'p50', 'p95', 'target (p95)', 'index'];
  const rows = r.queries.map((q) => [
    q.label,
    q.how,
    ms(q.p50),
    ms(q.p95),
    verdict(q),
    q.plan ? [q.plan.indexes.join(', ') || '(none)', ...q.plan.notes].join('; ') : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === 2 || i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));

  console.log(`\n  Plans (${r.engine === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'}) of the SQL behind the queries:`);
  const shown = new Set<string>();
  for (const q of r.queries) {
    if (!q.plan || shown.has(q.plan.sql)) continue;
    shown.add(q.plan.sql);
    console.log(`\n  ${q.label.replace(/ \(SQL only\)$/, '')}`);
    console.log(`    ${q.plan.sql.replace(/\s+/g, ' ')}`);
    console.log(`    -- parameters: ${JSON.stringify(q.plan.parameters)}`);
    for (const l of q.plan.lines) console.log(`    ${l}`);
  }
  // A missed target: is it the plan, or what surrounds the query?
  for (const q of r.queries) {
    if (q.targetP95 === undefined || q.p95 < q.targetP95) continue;
    const alone = r.queries.find((o) => o.key === `${q.key}Sql`);
    const plan = q.plan ? `${q.plan.indexes.join(', ') || 'no index'}${q.plan.notes.length ? ` (${q.plan.notes.join('; ')})` : ''}` : 'n/a';
    console.log(`\n  MISSED ${q.label.trim()}: p95 ${ms(q.p95)} ≥ ${q.targetP95} ms; plan: ${plan}` +
      (alone ? `; the SQL alone: p50 ${ms(alone.p50)}, p95 ${ms(alone.p95)}, so ${fmt(Math.max(0, 100 * (1 - alone.p50 / q.p50)))} % of the median is outside the query` : ''));
  }
  if (r.serverOutput.length > 0) {
    console.log(`\n  the server logged ${r.serverOutput.length} line(s) at warn or above, e.g.:`);
    for (const l of r.serverOutput.slice(0, 5)) console.log(`    ${l.slice(0, 400)}`);
  }
  if (r.serverExit !== 0) console.log(`  FAILED: the server did not stop cleanly on SIGTERM (exit ${r.serverExit})`);
  for (const f of r.failures) console.log(`  FAILED: ${f}`);
}

function resultLine(r: EngineReport, options: Options): string {
  const round = (v: number, digits: number) => Number(v.toFixed(digits));
  const queries = Object.fromEntries(
    r.queries.map((q) => [
      q.key,
      {
        via: q.how,
        p50Ms: round(q.p50, 3),
        p95Ms: round(q.p95, 3),
        ...(q.targetP95 === undefined ? {} : { targetP95Ms: q.targetP95, met: q.p95 < q.targetP95 }),
        ...(q.plan ? { indexes: q.plan.indexes, planNotes: q.plan.notes } : {}),
      },
    ]),
  );
  return `BENCH_QUERY ${JSON.stringify({
    engine: r.engine,
    engineVersion: r.engineVersion,
    node: process.version,
    cpus: os.cpus().length,
    logs: r.logs,
    runs: options.runs,
    warmup: options.warmup,
    loadSeconds: round(r.loadSeconds, 2),
    loadRowsPerSec: Math.round(r.loadRowsPerSec),
    afterLoadSeconds: round(r.afterLoadSeconds, 2),
    timeoutMatchShare: round(r.timeoutShare, 4),
    queries,
    targetsMet: r.queries.every((q) => q.targetP95 === undefined || q.p95 < q.targetP95),
    serverExit: r.serverExit ?? null,
    ok: r.failures.length === 0 && r.serverExit === 0,
  })}`;
}

let options: Options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (err) {
  console.error(`${errorText(err)}\n\n${USAGE}`);
  process.exit(2);
}

// The server inherits this process's environment (bench/server.ts): keep the loaded logs, which
// reach 3 days back, out of retention's way whatever the plan defaults are.
for (const plan of ['FREE', 'STARTER', 'PRO', 'ENTERPRISE']) process.env[`RETENTION_DAYS_${plan}`] = '3650';

console.log(`Query benchmark: ${fmt(options.logs)} logs per engine; ${os.cpus().length} CPUs, Node ${process.version}\n`);
const reports: EngineReport[] = [];
let failed = false;
for (const engine of options.engines) {
  const started = performance.now();
  try {
    const report = await benchEngine(engine, options);
    printReport(report, options);
    reports.push(report);
    if (report.failures.length > 0 || report.serverExit !== 0) failed = true;
  } catch (err) {
    console.log(`${engine}: FAILED: ${errorText(err)}`);
    failed = true;
  }
  console.log(`  (${engine}: ${fmt((performance.now() - started) / 1000)} s in all)\n`);
}
for (const r of reports) console.log(resultLine(r, options));
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}

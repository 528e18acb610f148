/**
 * Query-latency benchmark: how fast the searches a user (and the alert evaluator) runs all day
 * answer on a project that holds many logs.
 *
 *   npm run build --silent && npx tsx bench/query.ts [--engine sqlite|postgres|both] [--logs 1000000]
 *       [--days 7] [--runs 200] [--warmup 10] [--reuse]
 *
 * For each engine: a database with one account and one project holding `--logs` generated logs
 * (query-data.ts) spread evenly over the last `--days` days, loaded through the engine's bulk path
 * by bulk-load.ts; then the built server (dist/cli.js) as a child process on it. Each query runs
 * `--warmup` times untimed and `--runs` times timed, one at a time:
 *
 *   newest 100                  GET /v1/projects/:id/logs?limit=100                         < 5 ms
 *   level+source page           GET …/logs?limit=100&level=error&source=api                 < 50 ms
 *   alert window count (SQL)    count of level=error logs in a 5-minute window               < 5 ms
 *   q common / rare, 1 h        GET …/logs?limit=100&q=…&from=<newest − 1 h>                 (info)
 *   q common / rare, 24 h       GET …/logs?limit=100&q=…&from=<newest − 24 h>                < 300 ms
 *   pattern common / rare, 1 h  GET …/logs?limit=100&pattern=…&from=<newest − 1 h> (RE2)     (info)
 *   stats, 24 h                 GET …/logs/stats?from=<newest − 24 h>&to=<newest>            < 1 s
 *   baseline                    GET /v1/projects/:id, what every authenticated read pays     (info)
 *   newest 100, level+source    the repository's own SQL alone, in this process              (info)
 *
 * (targets: p95). The common term, "timeout", is in ~2 % of the messages, so its first page fills
 * after a few thousand rows; the rare one, RARE_TERM, is in 10 logs of the last hour and 10 more of
 * the last 24 hours, so its search reads every row of its range. The plans of their SQL (EXPLAIN
 * QUERY PLAN / EXPLAIN, and on PostgreSQL EXPLAIN (ANALYZE, BUFFERS) of every query slower than
 * 50 ms at p95) are printed with the index each uses. The results go to
 * bench/results/query-<engine>-<logs>.json as { engine, logs, days, queries: [{ name, p50, p95,
 * p99, target? }] } (ms; bench/chart.ts draws them).
 *
 * --reuse keeps the loaded database for the next run of the same engine, size and spread instead
 * of dropping it, so that a 10M load is done once: a SQLite data directory under
 * $TMPDIR/loglane-bench-kept/sqlite-<logs>-<days>d/, or the PostgreSQL database
 * loglane_bench_kept_<logs>_<days>d. Remove one with
 * `npx tsx bench/bulk-load.ts --engine <engine> --logs <n> --days <d> --drop` (or rm -rf / DROP DATABASE).
 *
 * The server gets QUERY_TIME_BUDGET=60s unless the environment sets it, so that slow searches are
 * measured rather than cut off at the default 5 s. Exits 1 if a server does not start, an answer is
 * not 200 or does not hold what was loaded; a missed latency target is reported, not an error.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery, type LogEvent } from 'kysely';
import pg from 'pg';
import type { Engine } from '../src/config.js';
import { SQLITE_FILE } from '../src/db/connect.js';
import type { DatabaseSchema } from '../src/db/types.js';
import * as repo from '../src/features/logs/store/repository.js';
import { postgresSql } from '../src/features/logs/store/postgres-sql.js';
import { sqliteSql } from '../src/features/logs/store/sqlite-sql.js';
import { keptLocation, prepareBenchProject, SEED, type BenchProject } from './bulk-load.js';
import { LogGenerator, RARE_PATTERN, RARE_TERM } from './query-data.js';
import { fmt, percentile, RESULTS_DIR } from './report.js';
import { send, startServer, type BenchDatabase, type RunningServer, call } from './server.js';
import { COMMON_USAGE, parseBenchArgs, optionsOrExit } from './options.js';

const HOUR_MS = 3_600_000;
const WINDOW_MS = 5 * 60_000;
const PAGE = 100;
const LEVEL_ERROR = 4;
/** What the server's stats endpoint picks for a 24-hour range (120 buckets at most → 15m). */
const STATS_INTERVAL_MS = 15 * 60_000;
/** Rows the service reads per round when it matches a pattern in the app (service.ts). */
const PATTERN_CHUNK = 2000;
/** In ~2 % of the generated messages. */
const COMMON_TERM = 'timeout';
/** Matches upstream, shard and SMTP timeouts ("timeout after 1234 ms"): ~1 % of the messages. */
const COMMON_PATTERN = 'timeout after \\d+ ms';
/** Queries at least this slow at p95 also get EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL. */
const ANALYZE_FROM_MS = 50;

const USAGE = `Usage: npm run build --silent && npx tsx bench/query.ts [options]

  --logs <n>                       logs to load into the project (default 1000000)
  --days <n>                       spread them evenly over the last n days (default 7)
  --runs <n>                       timed runs per query (default 200)
  --warmup <n>                     untimed runs before them (default 10)
  --reuse                          keep the loaded database for the next run of this engine, size
                                   and spread, and use the one a previous run kept: SQLite in
                                   ${keptLocation('sqlite', 0, 0).replace(/sqlite-0-0d$/, 'sqlite-<logs>-<days>d')}, PostgreSQL in the
                                   database ${keptLocation('postgres', 0, 0).replace('0_0d', '<logs>_<days>d')}; remove one with
                                   npx tsx bench/bulk-load.ts --engine E --logs N --days D --drop
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  logs: number;
  days: number;
  runs: number;
  warmup: number;
  reuse: boolean;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '7' },
    runs: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '10' },
    reuse: { type: 'boolean', default: false },
  });
  const whole = (raw: string, min: number) => {
    const clean = raw.replace(/[_,]/g, '');
    return /^\d+$/.test(clean) && Number(clean) >= min ? Number(clean) : undefined;
  };
  const logs = whole(values.logs, PAGE);
  const days = whole(values.days, 1);
  const runs = whole(values.runs, 1);
  const warmup = whole(values.warmup, 0);
  const problems = [
    engineProblem,
    logs !== undefined ? undefined : `--logs must be a whole number of at least ${PAGE} (got "${values.logs}")`,
    days !== undefined ? undefined : `--days must be a whole number of at least 1 (got "${values.days}")`,
    runs !== undefined ? undefined : `--runs must be a whole number of at least 1 (got "${values.runs}")`,
    warmup !== undefined ? undefined : `--warmup must be a whole number (got "${values.warmup}")`,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, logs: logs!, days: days!, runs: runs!, warmup: warmup!, reuse: values.reuse, pgAdminUrl };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/* ----------------------------------------------------------------------------------------------
 * Cleanup, also on Ctrl-C: every engine run registers how to undo what it started.
 * -------------------------------------------------------------------------------------------- */

const cleanups = new Set<() => Promise<unknown>>();
const interruption = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // `on`, not `once`: Ctrl-C reaches this process twice under tsx (from the terminal and relayed by
  // tsx's own process), and with no listener left the second would end it before the cleanup.
  process.on(signal, () => {
    if (interruption.signal.aborted) return;
    interruption.abort();
    process.stderr.write(`\n${signal}: stopping the server and removing the bench database (a kept one stays)…\n`);
    void Promise.allSettled([...cleanups].map((c) => c())).finally(() => process.exit(130));
  });
}

/** Runs `fn` once however often it is called (from the run's finally and from a signal alike). */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= fn());
}

/* ----------------------------------------------------------------------------------------------
 * Direct access to the bench database: the window count, EXPLAIN, and a Kysely instance on which
 * the repository's own functions run (to capture and time their SQL).
 * -------------------------------------------------------------------------------------------- */

interface Direct {
  engineVersion: string;
  /** The repository's functions run on this; `takeSent` answers the SQL it sent since the last call. */
  kysely: Kysely<DatabaseSchema>;
  takeSent(): CompiledQuery[];
  /** The SQL the window count runs, in the engine's placeholder style. */
  windowCountSql: string;
  windowCount(projectId: string, level: number, from: number, to: number): Promise<number>;
  explain(sql: string, parameters: readonly unknown[], analyze?: boolean): Promise<string[]>;
  /** PostgreSQL: each partition's index → the index of `logs` it belongs to. */
  indexParents: Map<string, string>;
  /** PostgreSQL: the partitions of `logs` (the default one included); 0 when it is not partitioned. */
  partitions: number;
  close(): Promise<void>;
}

function captureLog() {
  let sent: CompiledQuery[] = [];
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') sent.push(event.query);
    },
    takeSent: () => {
      const out = sent;
      sent = [];
      return out;
    },
  };
}

function openSqliteDirect(database: BenchDatabase): Direct {
  const file = path.join(database.dataDir, SQLITE_FILE);
  const conn = new Sqlite(file, { readonly: true });
  conn.pragma('busy_timeout = 5000');
  const capture = captureLog();
  const kysely = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database: new Sqlite(file, { readonly: true }) }), log: capture.log });
  const windowCountSql = 'select count(*) as n from logs where project_id = ? and level = ? and ts >= ? and ts <= ?';
  const count = conn.prepare<[string, number, number, number], { n: number }>(windowCountSql);

  return {
    engineVersion: (conn.prepare('select sqlite_version() as v').get() as { v: string }).v,
    kysely,
    takeSent: capture.takeSent,
    windowCountSql,
    indexParents: new Map(),
    partitions: 0,
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

async function openPostgresDirect(database: BenchDatabase): Promise<Direct> {
  const client = new pg.Client({ connectionString: database.databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const pool = new pg.Pool({ connectionString: database.databaseUrl, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {});
  const capture = captureLog();
  const kysely = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }), log: capture.log });
  const windowCountSql = 'select count(*) as n from logs where project_id = $1 and level = $2 and ts >= $3 and ts <= $4';
  const engineVersion = (await client.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  const parents = await client.query<{ child: string; parent: string }>(`select c.relname as child, p.relname as parent
    from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where c.relkind = 'i'`);
  const partitions = await client.query<{ n: string }>(`select count(*) as n from pg_inherits where inhparent = to_regclass('logs')`);

  return {
    engineVersion,
    kysely,
    takeSent: capture.takeSent,
    windowCountSql,
    indexParents: new Map(parents.rows.map((r) => [r.child, r.parent])),
    partitions: Number(partitions.rows[0]!.n),
    async windowCount(projectId, level, from, to) {
      const res = await client.query<{ n: string }>({ text: windowCountSql, values: [projectId, level, from, to] });
      return Number(res.rows[0]!.n);
    },
    async explain(sql, parameters, analyze = false) {
      const res = await client.query<{ 'QUERY PLAN': string }>({ text: `explain ${analyze ? '(analyze, buffers) ' : ''}${sql}`, values: parameters as unknown[] });
      return res.rows.map((r) => r['QUERY PLAN']);
    },
    async close() {
      await client.end();
      await kysely.destroy();
    },
  };
}

/** The indexes a plan names (a partition's as the index of `logs` it belongs to), and whether it sorts or scans the whole table. */
function planSummary(engine: Engine, lines: string[], indexParents: Map<string, string>): { indexes: string[]; notes: string[] } {
  const indexes = new Set<string>();
  const notes = new Set<string>();
  const partitions = new Set<string>();
  for (const line of lines) {
    for (const m of line.matchAll(/(?:USING (?:COVERING )?INDEX|[Uu]sing|Bitmap Index Scan on) (\w+)/g)) indexes.add(indexParents.get(m[1]!) ?? m[1]!);
    if (engine === 'sqlite') {
      const temp = /USE TEMP B-TREE FOR (.+)$/.exec(line.trim());
      if (temp) notes.add(`temp B-tree for ${temp[1]}`);
      if (/^\s*SCAN logs\b/.test(line)) notes.add(/USING/.test(line) ? 'full index scan' : 'full table scan');
    } else {
      const sort = /^\s*(?:->\s*)?(Incremental Sort|Sort|HashAggregate|GroupAggregate|Merge Append)\s+\(/.exec(line);
      if (sort) notes.add(sort[1]!);
      if (/Seq Scan on logs/.test(line)) notes.add('sequential scan');
      const on = / on (logs_p\d{8}|logs_default)\b/.exec(line);
      if (on) partitions.add(on[1]!);
    }
  }
  if (partitions.size > 0) notes.add(`${partitions.size} partition${partitions.size === 1 ? '' : 's'}`);
  return { indexes: [...indexes], notes: [...notes] };
}

/**
 * PostgreSQL plans over hundreds of partitions: consecutive sibling nodes that differ only in the
 * partition (and their costs and counts) are shown once, with how many more there are.
 */
function collapsePartitionRuns(lines: string[]): string[] {
  const indent = (l: string) => l.length - l.trimStart().length;
  const isNode = (l: string) => /^\s*->/.test(l);
  const blockEnd = (i: number) => {
    const k = indent(lines[i]!);
    let j = i + 1;
    while (j < lines.length && indent(lines[j]!) > k && !(isNode(lines[j]!) && indent(lines[j]!) <= k)) j++;
    return j;
  };
  const shape = (from: number, to: number) =>
    lines
      .slice(from, to)
      .join('\n')
      .replace(/logs_p\d{8}/g, 'logs_p*')
      .replace(/\blogs_\d+\b/g, 'logs_*')
      .replace(/\((?:cost|actual)[^)]*\)/g, '')
      .replace(/\d+/g, '#');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (!isNode(lines[i]!)) {
      out.push(lines[i]!);
      i++;
      continue;
    }
    const end = blockEnd(i);
    const key = shape(i, end);
    let j = end;
    let alike = 0;
    while (j < lines.length && isNode(lines[j]!) && indent(lines[j]!) === indent(lines[i]!)) {
      const next = blockEnd(j);
      if (shape(j, next) !== key) break;
      alike++;
      j = next;
    }
    if (alike === 0) {
      out.push(lines[i]!);
      i++;
      continue;
    }
    out.push(...lines.slice(i, end), `${' '.repeat(indent(lines[i]!) + 4)}… and ${alike} more like it on other partitions`);
    i = j;
  }
  return out;
}

/* ----------------------------------------------------------------------------------------------
 * Measuring.
 * -------------------------------------------------------------------------------------------- */

interface QueryResult {
  key: string;
  /** The name in the results file (bench/chart.ts labels its bars with it). */
  name: string;
  label: string;
  how: 'HTTP' | 'SQL';
  p50: number;
  p95: number;
  p99: number;
  /** The p95 target from the issue, ms; undefined for the figures shown for information. */
  targetP95?: number;
  /** The statements behind the query (stats may send several), their plans, and the indexes they use. */
  plan?: { statements: PlannedStatement[]; indexes: string[]; notes: string[] };
}

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

interface PlannedStatement extends Statement {
  lines: string[];
  /** PostgreSQL, for the slow queries: EXPLAIN (ANALYZE, BUFFERS). */
  analyzed?: string[];
}

/** `warmup` untimed runs, then `runs` timed ones, one at a time; answers the sorted latencies (ms). */
async function measure(warmup: number, runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (interruption.signal.aborted) throw new Error('interrupted');
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

interface StatsAnswer {
  buckets: { total: number }[];
}

interface EngineReport {
  engine: Engine;
  engineVersion: string;
  logs: number;
  days: number;
  reused: boolean;
  where: string;
  loadSeconds?: number;
  loadRowsPerSec?: number;
  /** update projects + checkpoint (SQLite) or VACUUM ANALYZE (PostgreSQL). */
  afterLoadSeconds?: number;
  partitions: number;
  timeoutShare: number;
  rareIn1h: number;
  rareIn24h: number;
  queries: QueryResult[];
  serverExit: number | NodeJS.Signals | undefined;
  serverOutput: string[];
  failures: string[];
}

async function benchEngine(engine: Engine, options: Options): Promise<EngineReport> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let project: BenchProject | undefined;
  let preparing: Promise<BenchProject> | undefined;
  let server: RunningServer | undefined;
  let direct: Direct | undefined;
  let serverExit: number | NodeJS.Signals | undefined;
  let report: EngineReport;
  const cleanup = once(async () => {
    await direct?.close().catch(() => {});
    agent.destroy();
    if (server) serverExit = await server.stop();
    // Interrupted while loading: the loader stops at its next piece and removes a temp database itself.
    if (!project && preparing) await preparing.then((p) => p.release(), () => {});
    await project?.release().catch((err: unknown) => console.error(`  could not remove the bench database: ${errorText(err)}`));
  });
  cleanups.add(cleanup);

  try {
    // 1. A database with the project and its logs: loaded now, or kept from an earlier --reuse run.
    preparing = prepareBenchProject({
      engine,
      logs: options.logs,
      days: options.days,
      placement: options.reuse ? { kind: 'kept' } : { kind: 'temp' },
      pgAdminUrl: options.pgAdminUrl,
      progress: true,
      signal: interruption.signal,
    });
    project = await preparing;
    const meta = project.meta;
    const where = engine === 'sqlite' ? path.join(project.database.dataDir, SQLITE_FILE) : new URL(project.database.databaseUrl!).pathname.slice(1);
    const load = project.load;
    if (load) {
      console.log(`${engine}: loaded ${fmt(load.rows)} logs in ${fmt(load.seconds, 1)} s (${fmt(load.rowsPerSec)} rows/s), then ${engine === 'sqlite' ? 'WAL checkpoint' : 'VACUUM (ANALYZE)'} ${fmt(load.finishSeconds, 1)} s${options.reuse ? `; kept in ${where}` : ''}`);
    } else {
      console.log(`${engine}: using the ${fmt(meta.logs)} logs kept in ${where} (loaded ${new Date(meta.endMs).toISOString()}${meta.load ? ` at ${fmt(meta.load.rowsPerSec)} rows/s` : ''})`);
    }

    // 2. The server on it, a fresh token (a load may outlast the access token's 15 minutes).
    server = await startServer(project.database, agent);
    const base = server.baseUrl;
    const { accessToken } = await call<{ accessToken: string }>(agent, `${base}/v1/auth/login`, 'POST', 200, undefined, { email: meta.email, password: meta.password });
    const auth = { authorization: `Bearer ${accessToken}` };
    const projectId = meta.projectId;
    direct = engine === 'sqlite' ? openSqliteDirect(project.database) : await openPostgresDirect(project.database);

    // 3. Checks: every answer must hold what was loaded.
    const gen = new LogGenerator(SEED, meta.logs, meta.startMs, meta.endMs);
    const newest = gen.tsOf(meta.logs - 1);
    const hourAgo = newest - HOUR_MS;
    const dayAgo = newest - 24 * HOUR_MS;
    const failures: string[] = [];
    const { logCount } = await call<{ logCount: number }>(agent, `${base}/v1/projects/${projectId}`, 'GET', 200, accessToken);
    if (logCount !== meta.logs) failures.push(`the project's logCount is ${fmt(logCount)}, not ${fmt(meta.logs)}`);

    const logsUrl = `${base}/v1/projects/${projectId}/logs`;
    const search = (params: Record<string, string | number>) => `${logsUrl}?${new URLSearchParams(Object.entries({ limit: PAGE, ...params }).map(([k, v]): [string, string] => [k, String(v)]))}`;
    const urls = {
      newest: search({}),
      levelSource: search({ level: 'error', source: 'api' }),
      qCommon1h: search({ q: COMMON_TERM, from: hourAgo }),
      qRare1h: search({ q: RARE_TERM, from: hourAgo }),
      qCommon24h: search({ q: COMMON_TERM, from: dayAgo }),
      qRare24h: search({ q: RARE_TERM, from: dayAgo }),
      patternCommon1h: search({ pattern: COMMON_PATTERN, from: hourAgo }),
      patternRare1h: search({ pattern: RARE_PATTERN, from: hourAgo }),
      stats: `${logsUrl}/stats?from=${dayAgo}&to=${newest}`,
      // The query language (issue 15), over this data's metadata ({host, region, reqId, responseTime}, and {path, res: {statusCode}} on api and web logs).
      queryStatus24h: search({ query: '@res.statusCode:>=500', from: dayAgo }),
      queryLevelField24h: search({ query: 'level:error @path:"/v1/orders"', from: dayAgo }),
      groupBySource24h: `${logsUrl}/stats?from=${dayAgo}&to=${newest}&groupBy=source`,
    };
    const check = async <A>(name: string, url: string, verify: (a: A) => string | undefined) => {
      const res = await send(agent, url, 'GET', auth);
      if (res.status !== 200) return void failures.push(`${name}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      const problem = verify(JSON.parse(res.body) as A);
      if (problem) failures.push(`${name}: ${problem}`);
    };
    await check<SearchAnswer>('newest 100', urls.newest, (a) =>
      a.data.length !== PAGE ? `${a.data.length} logs, not ${PAGE}` : Date.parse(a.data[0]!.timestamp) !== newest ? `the first log is at ${a.data[0]!.timestamp}, not the newest one loaded (${new Date(newest).toISOString()})` : undefined,
    );
    const errorApi = Math.min(PAGE, meta.errorApiMatches);
    await check<SearchAnswer>('level+source page', urls.levelSource, (a) =>
      a.data.length !== errorApi ? `${a.data.length} logs, not ${errorApi}` : a.data.some((l) => l.level !== 'error' || l.source !== 'api') ? 'a log that is not level error from api' : undefined,
    );
    // A common term fills its page unless the data is sparse; then the range was read to its end.
    const full = (term: string, test: (m: string) => boolean) => (a: SearchAnswer) =>
      a.data.length === 0 ? 'no log at all' : a.data.some((l) => !test(l.message)) ? `a log that does not match ${term}` : a.data.length < PAGE && a.nextCursor !== null ? `${a.data.length} logs and a next cursor` : undefined;
    const exactly = (term: string, n: number, test: (m: string) => boolean) => (a: SearchAnswer) =>
      a.data.length !== n ? `${a.data.length} logs, not the ${n} that hold ${term}` : a.data.some((l) => !test(l.message)) ? `a log without ${term}` : a.nextCursor !== null ? 'a next cursor after the last match' : undefined;
    const hasCommon = (m: string) => m.toLowerCase().includes(COMMON_TERM);
    const hasRare = (m: string) => m.includes(RARE_TERM);
    const commonPattern = new RegExp(COMMON_PATTERN);
    const rareIn1h = gen.rareSince(hourAgo);
    const rareIn24h = gen.rareSince(dayAgo);
    await check('q common, 1 h', urls.qCommon1h, full(COMMON_TERM, hasCommon));
    await check('q rare, 1 h', urls.qRare1h, exactly(RARE_TERM, rareIn1h, hasRare));
    await check('q common, 24 h', urls.qCommon24h, full(COMMON_TERM, hasCommon));
    await check('q rare, 24 h', urls.qRare24h, exactly(RARE_TERM, rareIn24h, hasRare));
    await check('pattern common, 1 h', urls.patternCommon1h, full(COMMON_PATTERN, (m) => commonPattern.test(m)));
    await check('pattern rare, 1 h', urls.patternRare1h, exactly(RARE_PATTERN, rareIn1h, hasRare));
    const inDay = gen.countSince(dayAgo);
    await check<StatsAnswer>('stats, 24 h', urls.stats, (a) => {
      const total = a.buckets.reduce((sum, b) => sum + b.total, 0);
      return total !== inDay ? `the buckets add up to ${fmt(total)} logs, not the ${fmt(inDay)} of the last 24 hours` : undefined;
    });

    // 4. The timed runs.
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
    const run = async (q: Omit<QueryResult, 'p50' | 'p95' | 'p99'>, fn: (i: number) => Promise<unknown>) => {
      process.stderr.write(`  ${engine}: timing ${q.label}…\n`);
      const samples = await measure(options.warmup, options.runs, fn);
      queries.push({ ...q, p50: percentile(samples, 50)!, p95: percentile(samples, 95)!, p99: percentile(samples, 99)! });
    };
    const k = direct.kysely;
    // The repository's queries with this engine's statements, as its store passes them.
    const ksql = engine === 'postgres' ? postgresSql : sqliteSql;
    await run({ key: 'newest100', name: 'newest 100', label: 'newest 100', how: 'HTTP', targetP95: 5 }, get(urls.newest));
    await run({ key: 'levelSourcePage', name: 'level+source page', label: 'level=error&source=api, 100', how: 'HTTP', targetP95: 50 }, get(urls.levelSource));
    await run({ key: 'windowCount', name: 'alert window count', label: 'alert window count (5 min, error)', how: 'SQL', targetP95: 5 }, windowCount);
    await run({ key: 'qCommon1h', name: 'q common 1h', label: `q=${COMMON_TERM}, last 1 h`, how: 'HTTP' }, get(urls.qCommon1h));
    await run({ key: 'qRare1h', name: 'q rare 1h', label: `q=<rare>, last 1 h (${rareIn1h} hits)`, how: 'HTTP' }, get(urls.qRare1h));
    await run({ key: 'qCommon24h', name: 'q common 24h', label: `q=${COMMON_TERM}, last 24 h`, how: 'HTTP', targetP95: 300 }, get(urls.qCommon24h));
    await run({ key: 'qRare24h', name: 'q rare 24h', label: `q=<rare>, last 24 h (${rareIn24h} hits)`, how: 'HTTP', targetP95: 300 }, get(urls.qRare24h));
    await run({ key: 'patternCommon1h', name: 'pattern common 1h', label: 'pattern=<common>, last 1 h', how: 'HTTP' }, get(urls.patternCommon1h));
    await run({ key: 'patternRare1h', name: 'pattern rare 1h', label: `pattern=<rare>, last 1 h (${rareIn1h} hits)`, how: 'HTTP' }, get(urls.patternRare1h));
    await run({ key: 'stats24h', name: 'stats 24h', label: 'stats, last 24 h', how: 'HTTP', targetP95: 1000 }, get(urls.stats));
    await run({ key: 'queryStatus24h', name: 'query @res.statusCode:>=500 24h', label: 'query=@res.statusCode:>=500, last 24 h, newest page', how: 'HTTP', targetP95: 50 }, get(urls.queryStatus24h));
    await run({ key: 'queryLevelField24h', name: 'query level+field 24h', label: 'query=level:error @path:"/v1/orders", last 24 h', how: 'HTTP', targetP95: 50 }, get(urls.queryLevelField24h));
    await run({ key: 'groupBySource24h', name: 'stats groupBy=source 24h', label: 'stats groupBy=source, last 24 h', how: 'HTTP', targetP95: 500 }, get(urls.groupBySource24h));
    // What every authenticated read costs before its own query: token check, project lookup, a small answer.
    await run({ key: 'projectGet', name: 'baseline GET project', label: 'baseline: GET /v1/projects/:id', how: 'HTTP' }, get(`${base}/v1/projects/${projectId}`));
    await run({ key: 'newest100Sql', name: 'newest 100 (SQL only)', label: 'newest 100 (SQL only)', how: 'SQL' }, () => repo.findPage(k, projectId, {}, undefined, PAGE + 1, ksql));
    await run({ key: 'levelSourcePageSql', name: 'level+source page (SQL only)', label: 'level+source (SQL only)', how: 'SQL' }, () =>
      repo.findPage(k, projectId, { levels: [LEVEL_ERROR], source: 'api' }, undefined, PAGE + 1, ksql),
    );
    if (badAnswers > 0) failures.push(`${badAnswers} timed request(s) did not answer 200, e.g. ${badExample}`);
    if (windowTotal === 0) failures.push('every window count was 0: the loaded data does not reach the windows');

    // 5. The plans of the SQL behind the queries: the repository's own, captured as it runs.
    const captured = async (fn: () => Promise<unknown>): Promise<Statement[]> => {
      direct!.takeSent();
      await fn();
      const sent = direct!.takeSent();
      if (sent.length === 0) throw new Error('no SQL was captured');
      return sent.map((q) => ({ sql: q.sql, parameters: q.parameters }));
    };
    const plans: Record<string, Statement[]> = {
      newest100: await captured(() => repo.findPage(k, projectId, {}, undefined, PAGE + 1, ksql)),
      levelSourcePage: await captured(() => repo.findPage(k, projectId, { levels: [LEVEL_ERROR], source: 'api' }, undefined, PAGE + 1, ksql)),
      windowCount: [{ sql: direct.windowCountSql, parameters: [projectId, LEVEL_ERROR, newest - WINDOW_MS, newest] }],
      qCommon1h: await captured(() => repo.findPage(k, projectId, { from: hourAgo, q: COMMON_TERM }, undefined, PAGE + 1, ksql)),
      qRare1h: await captured(() => repo.findPage(k, projectId, { from: hourAgo, q: RARE_TERM }, undefined, PAGE + 1, ksql)),
      qCommon24h: await captured(() => repo.findPage(k, projectId, { from: dayAgo, q: COMMON_TERM }, undefined, PAGE + 1, ksql)),
      qRare24h: await captured(() => repo.findPage(k, projectId, { from: dayAgo, q: RARE_TERM }, undefined, PAGE + 1, ksql)),
      // A pattern is matched in the app; the SQL is its first round of PATTERN_CHUNK rows.
      patternCommon1h: await captured(() => repo.findPage(k, projectId, { from: hourAgo }, undefined, PATTERN_CHUNK, ksql)),
      stats24h: await captured(() => repo.countByBucket(k, projectId, { from: dayAgo, to: newest }, STATS_INTERVAL_MS, ksql)),
    };
    plans.patternRare1h = plans.patternCommon1h!;
    for (const q of queries) {
      const statements = plans[q.key.replace(/Sql$/, '')];
      if (!statements) continue;
      const analyze = engine === 'postgres' && q.p95 >= ANALYZE_FROM_MS && !q.key.endsWith('Sql');
      const planned: PlannedStatement[] = [];
      for (const st of statements) {
        const lines = await direct.explain(st.sql, st.parameters);
        planned.push({ ...st, lines, ...(analyze ? { analyzed: await direct.explain(st.sql, st.parameters, true) } : {}) });
      }
      q.plan = { statements: planned, ...planSummary(engine, planned.flatMap((st) => st.lines), direct.indexParents) };
    }

    report = {
      engine,
      engineVersion: direct.engineVersion,
      logs: meta.logs,
      days: meta.days,
      reused: project.reused,
      where,
      ...(load ? { loadSeconds: load.seconds, loadRowsPerSec: load.rowsPerSec, afterLoadSeconds: load.finishSeconds } : {}),
      partitions: direct.partitions,
      timeoutShare: meta.timeoutMatches / meta.logs,
      rareIn1h,
      rareIn24h,
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
  return `< ${fmt(q.targetP95)} ms ${q.p95 < q.targetP95 ? 'met' : 'MISSED'}`;
}

function printReport(r: EngineReport, options: Options): void {
  const loaded = r.loadRowsPerSec === undefined ? 'kept from an earlier run' : `loaded at ${fmt(r.loadRowsPerSec)} rows/s`;
  console.log(`\n${r.engine} ${r.engineVersion}: ${fmt(r.logs)} logs over ${r.days} days in one project (${loaded})${r.partitions > 0 ? `; logs has ${fmt(r.partitions)} partitions` : ''}`);
  console.log(`  ${options.runs} timed runs per query after ${options.warmup} warm-up runs; "${COMMON_TERM}" is in ${fmt(100 * r.timeoutShare, 1)} % of the messages, "${RARE_TERM}" in ${r.rareIn1h} of the last hour and ${r.rareIn24h} of the last 24 h\n`);
  const header = ['query', 'via', 'p50', 'p95', 'p99', 'target (p95)', 'index'];
  const rows = r.queries.map((q) => [q.label, q.how, ms(q.p50), ms(q.p95), ms(q.p99), verdict(q), q.plan ? [q.plan.indexes.join(', ') || '(none)', ...q.plan.notes].join('; ') : '']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));

  console.log(`\n  Plans (${r.engine === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'}) of the SQL behind the queries:`);
  const shown = new Set<string>();
  for (const q of r.queries) {
    if (!q.plan) continue;
    const id = JSON.stringify(q.plan.statements.map((st) => [st.sql, st.parameters]));
    if (shown.has(id)) continue;
    shown.add(id);
    console.log(`\n  ${q.label.replace(/ \(SQL only\)$/, '')}${q.plan.statements.length > 1 ? ` (${q.plan.statements.length} statements)` : ''}`);
    for (const st of q.plan.statements) {
      console.log(`    ${st.sql.replace(/\s+/g, ' ')}`);
      console.log(`    -- parameters: ${JSON.stringify(st.parameters)}`);
      for (const l of collapsePartitionRuns(st.lines)) console.log(`    ${l}`);
      if (st.analyzed) {
        console.log('    -- EXPLAIN (ANALYZE, BUFFERS):');
        for (const l of collapsePartitionRuns(st.analyzed)) console.log(`    ${l}`);
      }
    }
  }
  // A missed target: is it the plan, or what surrounds the query?
  for (const q of r.queries) {
    if (q.targetP95 === undefined || q.p95 < q.targetP95) continue;
    const alone = r.queries.find((o) => o.key === `${q.key}Sql`);
    const plan = q.plan ? `${q.plan.indexes.join(', ') || 'no index'}${q.plan.notes.length ? ` (${q.plan.notes.join('; ')})` : ''}` : 'n/a';
    console.log(
      `\n  MISSED ${q.label.trim()}: p95 ${ms(q.p95)} ≥ ${fmt(q.targetP95)} ms; plan: ${plan}` +
        (alone ? `; the SQL alone: p50 ${ms(alone.p50)}, p95 ${ms(alone.p95)}, so ${fmt(Math.max(0, 100 * (1 - alone.p50 / q.p50)))} % of the median is outside the query` : ''),
    );
  }
  if (r.serverOutput.length > 0) {
    console.log(`\n  the server logged ${r.serverOutput.length} line(s) at warn or above, e.g.:`);
    for (const l of r.serverOutput.slice(0, 5)) console.log(`    ${l.slice(0, 400)}`);
  }
  if (r.serverExit !== 0) console.log(`  FAILED: the server did not stop cleanly on SIGTERM (exit ${r.serverExit})`);
  for (const f of r.failures) console.log(`  FAILED: ${f}`);
}

const round = (v: number, digits: number) => Number(v.toFixed(digits));

function resultLine(r: EngineReport, options: Options): string {
  const queries = Object.fromEntries(
    r.queries.map((q) => [
      q.key,
      {
        via: q.how,
        p50Ms: round(q.p50, 3),
        p95Ms: round(q.p95, 3),
        p99Ms: round(q.p99, 3),
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
    days: r.days,
    runs: options.runs,
    warmup: options.warmup,
    reused: r.reused,
    ...(r.loadSeconds === undefined ? {} : { loadSeconds: round(r.loadSeconds, 2), loadRowsPerSec: Math.round(r.loadRowsPerSec!), afterLoadSeconds: round(r.afterLoadSeconds!, 2) }),
    partitions: r.partitions,
    timeoutMatchShare: round(r.timeoutShare, 4),
    queries,
    targetsMet: r.queries.every((q) => q.targetP95 === undefined || q.p95 < q.targetP95),
    serverExit: r.serverExit ?? null,
    ok: r.failures.length === 0 && r.serverExit === 0,
  })}`;
}

/** bench/results/query-<engine>-<logs>.json, the file bench/chart.ts reads. */
function writeResultFile(r: EngineReport): string {
  const file = path.join(RESULTS_DIR, `query-${r.engine}-${r.logs}.json`);
  const data = {
    engine: r.engine,
    logs: r.logs,
    days: r.days,
    queries: r.queries.map((q) => ({ name: q.name, p50: round(q.p50, 3), p95: round(q.p95, 3), p99: round(q.p99, 3), ...(q.targetP95 === undefined ? {} : { target: q.targetP95 }) })),
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

const options = optionsOrExit(parseOptions, USAGE);

// The server inherits this process's environment (bench/server.ts): slow searches are measured, not cut off.
process.env.QUERY_TIME_BUDGET ??= '60s';

console.log(`Query benchmark: ${fmt(options.logs)} logs over ${options.days} days per engine; ${os.cpus().length} CPUs, Node ${process.version}; QUERY_TIME_BUDGET=${process.env.QUERY_TIME_BUDGET}\n`);
const reports: EngineReport[] = [];
let failed = false;
for (const engine of options.engines) {
  const started = performance.now();
  try {
    const report = await benchEngine(engine, options);
    printReport(report, options);
    reports.push(report);
    console.log(`\n  results: ${path.relative(process.cwd(), writeResultFile(report))}`);
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

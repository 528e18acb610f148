/**
 * Ingest benchmark: how many logs per second POST /v1/logs takes on each engine, next to what the
 * engine itself can bulk-insert without Loglane in front of it.
 *
 *   npm run bench:ingest -- [--engine sqlite|postgres|both] [--clients 10] [--duration 20] [--pg-url URL]
 *
 * For each engine: a fresh database, the built server (dist/cli.js) as a child process, one account
 * and project, then `--clients` keep-alive clients sending 1,000-log batches for `--duration`
 * seconds. Then the server is stopped and the same rows are inserted straight into a bare table
 * (raw.ts). The load generator runs in this process, so on a small machine it competes with the
 * server for CPU; compare figures taken on the same machine only.
 *
 * Exits 1 if a server does not start, if any answer is not 202/429/503, or if the project's
 * logCount differs from the logs acknowledged with 202 (the figures are printed all the same).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import type { Engine } from '../src/config.js';
import { generateLogs, LiveBody, toRawRow, type RawRow } from './logs.js';
import { rawPostgres, rawSqlite, type RawResult } from './raw.js';
import { createDatabase, startServer, type RunningServer, call } from './server.js';
import { progressLine, runLoad as runSharedLoad, type LoadResult } from './load.js';
import { COMMON_USAGE, parseBenchArgs, optionsOrExit } from './options.js';

const BATCH_SIZE = 1_000;
/** Distinct request bodies, serialised before timing so building JSON never limits the clients. */
const POOL_BATCHES = 50;
const RAW_MAX_SECONDS = 10;
const RAW_MAX_ROWS = 1_000_000;
/** Failure messages of one kind kept for the report; the counts stay exact. */
const MAX_EXAMPLES = 5;

const USAGE = `Usage: npm run bench:ingest -- [options]

  --clients <n>                    concurrent HTTP clients (default 10)
  --duration <seconds>             length of the timed HTTP run (default 20)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  clients: number;
  durationS: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
      clients: { type: 'string', default: '10' },
      duration: { type: 'string', default: '20' },
  });
  const clients = Number(values.clients);
  const durationS = Number(values.duration);
  const problems = [
    engineProblem,
    Number.isInteger(clients) && clients >= 1 ? undefined : `--clients must be a whole number of at least 1 (got "${values.clients}")`,
    Number.isFinite(durationS) && durationS > 0 ? undefined : `--duration must be a positive number of seconds (got "${values.duration}")`,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { engines: engines!, clients, durationS, pgAdminUrl };
}

interface Pool {
  bodies: LiveBody[];
  rawBatches: RawRow[][];
  avgLogBytes: number;
}

/**
 * The same 50,000 logs as JSON request bodies (restamped up to now at each send, like a live
 * stream) and as raw rows (timestamps spread over the last hour).
 */
function buildPool(): Pool {
  const count = POOL_BATCHES * BATCH_SIZE;
  const hourMs = 3_600_000;
  const logs = generateLogs(count, 42, Date.now() - hourMs, Math.floor(hourMs / count));
  const bodies: LiveBody[] = [];
  const rawBatches: RawRow[][] = [];
  for (let i = 0; i < count; i += BATCH_SIZE) {
    const batch = logs.slice(i, i + BATCH_SIZE);
    bodies.push(new LiveBody(batch));
    rawBatches.push(batch.map(toRawRow));
  }
  const totalBytes = bodies.reduce((sum, b) => sum + b.length, 0);
  return { bodies, rawBatches, avgLogBytes: totalBytes / count };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | undefined {
  return sorted.length === 0 ? undefined : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** `clients` keep-alive clients sending the pooled bodies to one project for the duration (bench/load.ts). */
async function runLoad(engine: Engine, server: RunningServer, agent: http.Agent, apiKey: string, pool: Pool, options: Options): Promise<LoadResult> {
  const progress = progressLine(engine, options.durationS);
  try {
    return await runSharedLoad({
      agent,
      targets: Array.from({ length: options.clients }, () => ({ node: 0, project: 0, baseUrl: server.baseUrl, apiKey })),
      nodes: 1,
      projects: 1,
      bodies: { bodies: pool.bodies, logsPerBody: BATCH_SIZE, avgLogBytes: pool.avgLogBytes },
      durationS: options.durationS,
      rate: 0,
      onTick: progress.tick,
    });
  } finally {
    progress.done();
  }
}

interface EngineReport {
  engine: Engine;
  load: LoadResult;
  raw: RawResult;
  peakRssBytes: number | undefined;
  logCount: number;
  serverExit: number | NodeJS.Signals;
  /** What the server logged at warn or above (LOG_LEVEL=warn), or wrote to stderr. */
  serverOutput: string[];
  failures: string[];
}

interface HttpMeasurement {
  projectId: string;
  load: LoadResult;
  peakRssBytes: number | undefined;
  logCount: number;
}

/** Signs up, creates the project, runs the load, then reads the peak RSS and the project's logCount. */
async function measureHttp(engine: Engine, server: RunningServer, agent: http.Agent, pool: Pool, options: Options): Promise<HttpMeasurement> {
  const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, {
    email: `bench-${randomBytes(4).toString('hex')}@example.com`,
    password: randomBytes(12).toString('hex'),
  });
  const project = await call<{ id: string; apiKey: string }>(agent, `${server.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: 'bench' });
  const load = await runLoad(engine, server, agent, project.apiKey, pool, options);
  const peakRssBytes = server.peakRssBytes();
  const { logCount } = await call<{ logCount: number }>(agent, `${server.baseUrl}/v1/projects/${project.id}`, 'GET', 200, accessToken);
  return { projectId: project.id, load, peakRssBytes, logCount };
}

async function benchEngine(engine: Engine, pool: Pool, options: Options): Promise<EngineReport> {
  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
  try {
    const server = await startServer(database, agent);
    let measured: HttpMeasurement | undefined;
    let error: unknown;
    try {
      measured = await measureHttp(engine, server, agent, pool, options);
    } catch (err) {
      error = err;
    }
    const serverExit = await server.stop();
    if (measured === undefined) {
      // Most likely the server crashed (then its exit is not 0); what it wrote says why.
      const output = server.output.slice(-20).join('\n') || '(none)';
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nThe server exited (${serverExit}). Its last output:\n${output}`);
    }
    const { projectId, load, peakRssBytes, logCount } = measured;

    const failures = [...load.failures];
    if (logCount !== load.acknowledgedLogs) failures.push(`logCount ${fmt(logCount)} differs from the ${fmt(load.acknowledgedLogs)} logs acknowledged with 202`);
    if (serverExit !== 0) failures.push(`the server did not stop cleanly on SIGTERM (exit ${serverExit})`);

    // With the server stopped, so the raw inserts have the machine to themselves.
    const rawOptions = { batches: pool.rawBatches, projectId, maxSeconds: RAW_MAX_SECONDS, maxRows: RAW_MAX_ROWS };
    const raw = engine === 'sqlite' ? rawSqlite(rawOptions) : await rawPostgres(database.databaseUrl!, rawOptions);
    // server.output is complete: the server has exited, so it includes anything logged while stopping.
    return { engine, load, raw, peakRssBytes, logCount, serverExit, serverOutput: server.output, failures };
  } finally {
    agent.destroy();
    await database.drop();
  }
}

const mb = (bytes: number) => bytes / 1e6;

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** The server's log lines reduced to "level msg: error" and counted, so 1,000 alike lines read as one. */
function groupServerOutput(lines: string[]): Map<string, number> {
  const groups = new Map<string, number>();
  for (const line of lines) {
    let key = line.slice(0, 300);
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; message?: string } };
      const err = entry.err ? `: ${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}` : '';
      key = `${PINO_LEVELS[entry.level ?? 0] ?? entry.level} "${entry.msg ?? ''}"${err}`;
    } catch {
      // Not a pino line (a crash on stderr): kept as written.
    }
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return groups;
}

function printSummary(r: EngineReport, options: Options): void {
  const { load, raw } = r;
  const logsPerSec = load.acknowledgedLogs / load.seconds;
  const ms = (v: number | undefined) => (v === undefined ? 'n/a' : `${fmt(v)} ms`);
  const s = load.statuses;
  console.log(`${r.engine}: ${options.clients} clients × ${fmt(BATCH_SIZE)}-log batches for ${fmt(load.seconds, 1)} s`);
  console.log(`  ingest      ${fmt(logsPerSec)} logs/s   ${fmt(mb(load.acknowledgedBytes) / load.seconds, 1)} MB/s   p50 ${ms(percentile(load.latencies, 50))}   p99 ${ms(percentile(load.latencies, 99))}   (202: ${s['202']}, 429: ${s['429']}, 503: ${s['503']}, other: ${s.other})`);
  console.log(`  raw insert  ${fmt(raw.rowsPerSec)} rows/s (${fmt(raw.rows)} rows in ${fmt(raw.seconds, 1)} s)   → ingest is ${fmt((100 * logsPerSec) / raw.rowsPerSec)} % of raw`);
  const rss = r.peakRssBytes === undefined ? 'n/a' : `${fmt(mb(r.peakRssBytes))} MB`;
  const count = r.logCount === load.acknowledgedLogs ? `logCount ${fmt(r.logCount)} = acknowledged ✓` : `logCount ${fmt(r.logCount)} ≠ acknowledged ${fmt(load.acknowledgedLogs)} ✗`;
  console.log(`  server peak RSS ${rss}; ${count}`);
  if (r.serverOutput.length > 0) {
    console.log(`  the server wrote ${r.serverOutput.length} line(s) at LOG_LEVEL=warn:`);
    for (const [line, count] of [...groupServerOutput(r.serverOutput)].slice(0, MAX_EXAMPLES)) console.log(`    ${count}× ${line}`);
  }
  for (const failure of r.failures) console.log(`  FAILED: ${failure}`);
}

/** Every figure, one JSON object, for the docs. */
function resultLine(r: EngineReport, options: Options, pool: Pool): string {
  const { load, raw } = r;
  const logsPerSec = load.acknowledgedLogs / load.seconds;
  const round = (v: number | undefined, digits: number) => (v === undefined ? null : Number(v.toFixed(digits)));
  return `BENCH_RESULT ${JSON.stringify({
    engine: r.engine,
    engineVersion: raw.engineVersion,
    node: process.version,
    cpus: os.cpus().length,
    clients: options.clients,
    batchSize: BATCH_SIZE,
    avgLogBytes: round(pool.avgLogBytes, 1),
    seconds: round(load.seconds, 2),
    requests: load.statuses,
    acknowledgedLogs: load.acknowledgedLogs,
    logsPerSec: round(logsPerSec, 0),
    mbPerSec: round(mb(load.acknowledgedBytes) / load.seconds, 2),
    p50Ms: round(percentile(load.latencies, 50), 1),
    p99Ms: round(percentile(load.latencies, 99), 1),
    rawRows: raw.rows,
    rawSeconds: round(raw.seconds, 2),
    rawRowsPerSec: round(raw.rowsPerSec, 0),
    ingestPctOfRaw: round((100 * logsPerSec) / raw.rowsPerSec, 1),
    serverPeakRssBytes: r.peakRssBytes ?? null,
    logCount: r.logCount,
    logCountMatches: r.logCount === load.acknowledgedLogs,
    serverExit: r.serverExit,
    ok: r.failures.length === 0,
  })}`;
}

const options = optionsOrExit(parseOptions, USAGE);

const pool = buildPool();
console.log(`Pool: ${POOL_BATCHES} distinct batches × ${fmt(BATCH_SIZE)} logs, ${fmt(pool.avgLogBytes)} bytes per log on average; ${os.cpus().length} CPUs, Node ${process.version}\n`);

const reports: EngineReport[] = [];
let failed = false;
for (const engine of options.engines) {
  try {
    const report = await benchEngine(engine, pool, options);
    printSummary(report, options);
    reports.push(report);
    if (report.failures.length > 0) failed = true;
  } catch (err) {
    console.log(`${engine}: FAILED: ${err instanceof Error ? err.message : String(err)}`);
    failed = true;
  }
  console.log();
}
for (const report of reports) console.log(resultLine(report, options, pool));
if (failed) {
  console.error('\nThe benchmark found problems (see FAILED above).');
  process.exitCode = 1;
}

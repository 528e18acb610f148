/**
 * Disk per log (issue 27): how many bytes of disk each engine spends on realistic logs, against the
 * NDJSON they arrived as.
 *
 *   npm run bench:storage -- [--engine sqlite|postgres|both] [--logs 500000] [--compact-after 5s]
 *       [--clients 4] [--settle 10] [--settle-cap 600]
 *
 * For each engine: a fresh database, the built server (dist/cli.js) started with COMPACT_AFTER set
 * to `--compact-after`, one account and project, then two phases of `--logs` realistic logs each
 * (realistic-logs.ts, seeded), sent as 1,000-log NDJSON batches by `--clients` keep-alive clients
 * (429 and 503 waited out as Retry-After says, and the batch sent again). After each phase the
 * store is left to settle, then its disk is measured:
 *
 *   SQLite      the sizes of every file in the server's DATA_DIR (the database, -wal and -shm)
 *   PostgreSQL  pg_database_size() of the bench's database
 *
 * Settled: COMPACT_AFTER has passed since the last log was sent, and then, on a server that packs
 * (it reports `storedBytes`), fewer than a block's worth of logs are left in rows (read from the
 * database) and that count has not changed for `--settle` seconds; on a server that does not, the
 * disk figure has not changed for `--settle` seconds. At most `--settle-cap` seconds.
 *
 * The figure that matters is the disk phase 2 added over phase 2's raw NDJSON (target ≤ 0.15):
 * phase 1 pays for the empty database's own size and the indexes' first pages, so phase 2 is the
 * cost of one more log. Checks (exit 1 when one fails): the project's logCount is the number of
 * logs sent; a stats count over the whole range (GET /v1/projects/:id/logs/stats) is too; and a
 * needle search, `@reqId:<id>` for a request id sent once, finds that log and no other.
 *
 * Results: bench/results/latest-storage-<engine>-<logs>.json.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { Engine } from '../src/config.js';
import { parseDuration } from '../src/duration.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { RealisticLogs } from './realistic-logs.js';
import { fmt, groupServerOutput, round, table, writeResults } from './report.js';
import { call, createDatabase, send, startServer, type BenchDatabase, type RunningServer } from './server.js';

const BATCH_SIZE = 1_000;
const SEED = 27;
/** The fleet's pace in the logs' timestamps (not the send rate): 500,000 logs span about 4 minutes. */
const LOGS_PER_SECOND = 2_000;
/** The target for disk added by phase 2 over its raw NDJSON. */
const TARGET_RATIO = 0.15;

const USAGE = `Usage: npm run bench:storage -- [options]

  --logs <n>                       logs in each of the two phases (default 500000)
  --compact-after <duration>       the server's COMPACT_AFTER (default 5s)
  --clients <n>                    concurrent keep-alive clients (default 4)
  --settle <seconds>               settled when the figure has not changed for this long (default 10)
  --settle-cap <seconds>           the longest wait for a settled store (default 600)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  logs: number;
  compactAfter: string;
  compactAfterMs: number;
  clients: number;
  settleS: number;
  settleCapS: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '500000' },
    'compact-after': { type: 'string', default: '5s' },
    clients: { type: 'string', default: '4' },
    settle: { type: 'string', default: '10' },
    'settle-cap': { type: 'string', default: '600' },
  });
  const n = (name: string, min: number) => {
    const v = Number(values[name as keyof typeof values]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be a whole number of at least ${min} (got "${String(values[name as keyof typeof values])}")`);
    return v;
  };
  if (engineProblem) throw new Error(engineProblem);
  const compactAfter = String(values['compact-after']);
  const compactAfterMs = parseDuration(compactAfter);
  if (compactAfterMs === undefined) throw new Error(`--compact-after must be a duration such as 5s or 10m (got "${compactAfter}")`);
  return { engines: engines!, logs: n('logs', BATCH_SIZE), compactAfter, compactAfterMs, clients: n('clients', 1), settleS: n('settle', 1), settleCapS: n('settle-cap', 1), pgAdminUrl };
}

/** One phase's logs, made before it is timed so that generating them never slows the sending. */
interface Phase {
  bodies: Buffer[];
  logs: number;
  rawBytes: number;
  firstMs: number;
  lastMs: number;
}

function makePhase(stream: RealisticLogs, logs: number): Phase {
  const bodies: Buffer[] = [];
  let firstMs = Number.POSITIVE_INFINITY;
  for (let made = 0; made < logs; made += BATCH_SIZE) {
    const batch = stream.batch(Math.min(BATCH_SIZE, logs - made));
    firstMs = Math.min(firstMs, Date.parse(batch.logs[0]!.timestamp));
    bodies.push(batch.ndjson);
  }
  return { bodies, logs, rawBytes: bodies.reduce((sum, b) => sum + b.length, 0), firstMs, lastMs: stream.nowMs };
}

/** A request id of a phase's middle batch, checked to occur in exactly one log of all phases. */
function pickNeedle(phases: Phase[]): string {
  const middle = phases[0]!.bodies[Math.floor(phases[0]!.bodies.length / 2)]!.toString('utf8');
  const reqId = /"reqId":"([0-9a-f-]{36})"/.exec(middle)?.[1];
  if (reqId === undefined) throw new Error('no request id in the middle batch of phase 1');
  let seen = 0;
  for (const phase of phases) {
    for (const body of phase.bodies) {
      for (let at = body.indexOf(`"reqId":"${reqId}"`); at >= 0; at = body.indexOf(`"reqId":"${reqId}"`, at + 1)) seen++;
    }
  }
  if (seen !== 1) throw new Error(`the needle ${reqId} is the reqId of ${seen} logs, not 1`);
  return reqId;
}

interface SendResult {
  accepted: number;
  seconds: number;
  retries: { '429': number; '503': number };
}

/**
 * Sends every body once, `clients` at a time; a 429 or 503 is waited out as Retry-After says and
 * the same body sent again. Any other answer, or a rejected log, stops the run: the logs sent must
 * be exactly the logs stored, or no figure means anything.
 */
async function sendPhase(label: string, server: RunningServer, agent: http.Agent, apiKey: string, phase: Phase, clients: number): Promise<SendResult> {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' };
  const result: SendResult = { accepted: 0, seconds: 0, retries: { '429': 0, '503': 0 } };
  let next = 0;
  const start = performance.now();
  let last = { at: start, accepted: 0 };
  const ticker = setInterval(() => {
    const now = performance.now();
    const rate = (result.accepted - last.accepted) / ((now - last.at) / 1000);
    last = { at: now, accepted: result.accepted };
    process.stderr.write(`  ${label}: ${fmt(result.accepted)} of ${fmt(phase.logs)} logs sent, ${fmt(rate)} logs/s now\n`);
  }, 5000);
  async function client(): Promise<void> {
    while (next < phase.bodies.length) {
      const body = phase.bodies[next++]!;
      for (;;) {
        const res = await send(agent, `${server.baseUrl}/v1/logs`, 'POST', headers, body);
        if (res.status === 202) {
          const answer = JSON.parse(res.body) as { accepted: number; rejected: { message: string }[] };
          if (answer.rejected.length > 0) throw new Error(`the server rejected ${answer.rejected.length} generated log(s), e.g.: ${answer.rejected[0]!.message}`);
          result.accepted += answer.accepted;
          break;
        }
        if (res.status !== 429 && res.status !== 503) throw new Error(`POST /v1/logs answered ${res.status}: ${res.body.slice(0, 300)}`);
        result.retries[res.status === 429 ? '429' : '503']++;
        const retryAfterS = Number(res.headers['retry-after']);
        // sleep: the server asked for this pause (Retry-After) before the batch is offered again.
        await sleep((Number.isFinite(retryAfterS) ? retryAfterS : 1) * 1000);
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: clients }, client));
  } finally {
    clearInterval(ticker);
  }
  result.seconds = (performance.now() - start) / 1000;
  return result;
}

/** Bytes on disk of the whole store. */
/**
 * Logs still in rows (not yet packed), read straight from the database: the store has settled once
 * every complete block is packed, that is fewer than a block's worth remain (INDEX_BLOCK_LOGS,
 * 4,096 by default) and that figure holds still.
 */
async function logsInRows(database: BenchDatabase, client: pg.Client | undefined): Promise<number> {
  if (client) return Number((await client.query<{ n: string }>('select count(*) as n from logs')).rows[0]!.n);
  const db = new Sqlite(path.join(database.dataDir, 'loglane.db'), { readonly: true, fileMustExist: true });
  try {
    return Number((db.prepare('select count(*) as n from logs').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

const BLOCK_LOGS = 4096;

/** Where the bytes are: the largest tables with their indexes (PostgreSQL: partitions counted in their table; SQLite: with its free pages and WAL). */
async function largestParts(database: BenchDatabase, client: pg.Client | undefined): Promise<[string, number][]> {
  if (client) {
    const { rows } = await client.query<{ name: string; bytes: string }>(`select coalesce(pi.inhparent::regclass::text, c.relname) as name, sum(pg_total_relation_size(c.oid)) as bytes
      from pg_class c join pg_namespace n on n.oid = c.relnamespace left join pg_inherits pi on pi.inhrelid = c.oid
      where n.nspname = 'public' and c.relkind = 'r' group by 1 order by 2 desc limit 6`);
    return rows.map((r) => [r.name, Number(r.bytes)]);
  }
  const file = path.join(database.dataDir, 'loglane.db');
  const db = new Sqlite(file, { readonly: true, fileMustExist: true });
  try {
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    const parts = (db.prepare(`select case when name like 'sqlite_autoindex_%' then substr(name, 18, length(name) - 19) when name like 'logs_%' then 'logs' else name end as name, sum(pgsize) as bytes from dbstat group by 1 order by 2 desc limit 6`).all() as { name: string; bytes: number }[]).map((r): [string, number] => [r.name, Number(r.bytes)]);
    parts.push(['(free pages)', Number(db.pragma('freelist_count', { simple: true })) * pageSize]);
    parts.push(['(WAL)', fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0]);
    return parts;
  } finally {
    db.close();
  }
}

async function diskBytes(database: BenchDatabase, client: pg.Client | undefined): Promise<number> {
  if (client !== undefined) {
    const { rows } = await client.query<{ n: string }>('select pg_database_size(current_database()) as n');
    return Number(rows[0]!.n);
  }
  let total = 0;
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      // A file can vanish between the listing and the stat (SQLite's journal); it then holds nothing.
      if (entry.isDirectory()) walk(file);
      else total += fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    }
  };
  walk(database.dataDir);
  return total;
}

interface Settled {
  disk: number;
  storedBytes: number | null;
  waitedS: number;
  /** False when the cap ran out before the figure held still. */
  settled: boolean;
}

/**
 * Waits until the store is done with what it was sent: COMPACT_AFTER has passed (nothing is old
 * enough to compact before), then the project's storedBytes, or the disk where the server has no
 * storedBytes, has not changed for `settleS`, sampled each second; at most `settleCapS`.
 */
async function settle(label: string, server: RunningServer, agent: http.Agent, token: string, projectId: string, database: BenchDatabase, client: pg.Client | undefined, options: Options): Promise<Settled> {
  const start = performance.now();
  // sleep: compaction takes only logs older than COMPACT_AFTER, so nothing can change before it has passed.
  await sleep(options.compactAfterMs + 1000);
  let figure = Number.NaN;
  let stillSince = performance.now();
  let storedBytes: number | null = null;
  for (;;) {
    const project = await call<{ storedBytes?: number }>(agent, `${server.baseUrl}/v1/projects/${projectId}`, 'GET', 200, token);
    storedBytes = typeof project.storedBytes === 'number' ? project.storedBytes : null;
    // Before packing (storedBytes absent), the disk figure; since, the logs left in rows.
    const rows = storedBytes === null ? undefined : await logsInRows(database, client);
    const now = rows ?? (await diskBytes(database, client));
    if (now !== figure) {
      figure = now;
      stillSince = performance.now();
    }
    const waitedS = (performance.now() - start) / 1000;
    if ((rows === undefined || rows < BLOCK_LOGS) && (performance.now() - stillSince) / 1000 >= options.settleS) return { disk: await diskBytes(database, client), storedBytes, waitedS, settled: true };
    if (waitedS >= options.settleCapS) {
      process.stderr.write(`  ${label}: not settled after ${options.settleCapS} s (${rows ?? '?'} logs still in rows); measuring as it is\n`);
      return { disk: await diskBytes(database, client), storedBytes, waitedS, settled: false };
    }
    // sleep: polling pace while the store settles.
    await sleep(1000);
  }
}

interface PhaseReport {
  logs: number;
  rawBytes: number;
  sendSeconds: number;
  logsPerSec: number;
  retries: { '429': number; '503': number };
  settleSeconds: number;
  settled: boolean;
  diskBytes: number;
  storedBytes: number | null;
}

interface EngineReport {
  engine: Engine;
  phases: PhaseReport[];
  emptyDiskBytes: number;
  /** Disk added by phase 2 over phase 2's raw NDJSON: the cost of one more log. */
  phase2Ratio: number;
  /** Disk after phase 2 over the raw NDJSON of both phases. */
  allInRatio: number;
  bytesPerLog: number;
  phase2BytesPerLog: number;
  logCount: number;
  statsCount: number;
  needle: { reqId: string; found: number };
  serverOutput: { level: string; line: string; count: number }[];
  failures: string[];
}

async function benchEngine(engine: Engine, options: Options): Promise<EngineReport> {
  // The logs' timestamps end about now, so COMPACT_AFTER applies to them as to a live stream's.
  const spanMs = ((2 * options.logs) / LOGS_PER_SECOND) * 1000;
  const stream = new RealisticLogs({ seed: SEED, startMs: Date.now() - spanMs, logsPerSecond: LOGS_PER_SECOND });
  process.stderr.write(`  ${engine}: generating 2 × ${fmt(options.logs)} logs…\n`);
  const phases = [makePhase(stream, options.logs), makePhase(stream, options.logs)];
  const needle = pickNeedle(phases);

  const database = await createDatabase(engine, options.pgAdminUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients + 1 });
  const before = process.env.COMPACT_AFTER;
  process.env.COMPACT_AFTER = options.compactAfter;
  let server: RunningServer | undefined;
  let client: pg.Client | undefined;
  try {
    server = await startServer(database, agent);
    if (database.databaseUrl !== undefined) {
      client = new pg.Client({ connectionString: database.databaseUrl });
      await client.connect();
    }
    const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, { email: `storage-${Date.now()}@example.com`, password: 'bench password' });
    const project = await call<{ id: string; apiKey: string }>(agent, `${server.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: 'storage' });
    const emptyDiskBytes = await diskBytes(database, client);

    const reports: PhaseReport[] = [];
    for (const [i, phase] of phases.entries()) {
      const label = `${engine} phase ${i + 1}`;
      const sent = await sendPhase(label, server, agent, project.apiKey, phase, options.clients);
      process.stderr.write(`  ${label}: ${fmt(sent.accepted)} logs in ${fmt(sent.seconds, 1)} s (${fmt(sent.accepted / sent.seconds)} logs/s); settling…\n`);
      const settled = await settle(label, server, agent, accessToken, project.id, database, client, options);
      process.stderr.write(`  ${label}: disk ${fmt(settled.disk / 1e6, 1)} MB after ${fmt(settled.waitedS, 1)} s${settled.storedBytes === null ? '' : `, storedBytes ${fmt(settled.storedBytes / 1e6, 1)} MB`}\n`);
      reports.push({
        logs: sent.accepted,
        rawBytes: phase.rawBytes,
        sendSeconds: sent.seconds,
        logsPerSec: sent.accepted / sent.seconds,
        retries: sent.retries,
        settleSeconds: settled.waitedS,
        settled: settled.settled,
        diskBytes: settled.disk,
        storedBytes: settled.storedBytes,
      });
    }

    const failures: string[] = [];
    const totalLogs = 2 * options.logs;
    const totalRaw = phases[0]!.rawBytes + phases[1]!.rawBytes;
    const range = { from: String(phases[0]!.firstMs), to: String(phases[1]!.lastMs) };
    const { logCount } = await call<{ logCount: number }>(agent, `${server.baseUrl}/v1/projects/${project.id}`, 'GET', 200, accessToken);
    if (logCount !== totalLogs) failures.push(`${engine}: logCount ${fmt(logCount)}, but ${fmt(totalLogs)} logs were sent`);
    const stats = await call<{ buckets: { total: number }[] }>(agent, `${server.baseUrl}/v1/projects/${project.id}/logs/stats?${new URLSearchParams(range)}`, 'GET', 200, accessToken);
    const statsCount = stats.buckets.reduce((sum, b) => sum + b.total, 0);
    if (statsCount !== totalLogs) failures.push(`${engine}: stats over the whole range count ${fmt(statsCount)}, but ${fmt(totalLogs)} logs were sent`);
    // A search that runs out of its time budget answers what it found so far with a cursor to go
    // on from: followed to the end, the answer is exact (how many pages it took is printed).
    const found: { data: { metadata: { reqId?: string } }[] } = { data: [] };
    let pages = 0;
    for (let cursor: string | null | undefined; pages === 0 || cursor; pages++) {
      const page = await call<{ data: { metadata: { reqId?: string } }[]; nextCursor?: string | null }>(agent, `${server.baseUrl}/v1/projects/${project.id}/logs?${new URLSearchParams({ ...range, query: `@reqId:${needle}`, limit: '10', ...(cursor ? { cursor } : {}) })}`, 'GET', 200, accessToken);
      found.data.push(...page.data);
      cursor = page.nextCursor;
    }
    if (pages > 1) console.log(`  ${engine}: the needle search took ${pages} pages (the first ran out of its time budget)`);
    if (found.data.length !== 1 || found.data[0]!.metadata.reqId !== needle) failures.push(`${engine}: the needle search @reqId:${needle} found ${found.data.length} log(s), not the one sent`);

    console.log(`  ${engine}: where the bytes are: ${(await largestParts(database, client)).map(([name, bytes]) => `${name} ${fmt(bytes / 1e6, 1)} MB`).join(', ')}`);
    const [p1, p2] = reports as [PhaseReport, PhaseReport];
    const output = server.output;
    const serverExit = await server.stop();
    server = undefined;
    if (serverExit !== 0) failures.push(`${engine}: the server did not stop cleanly on SIGTERM (exit ${serverExit})`);
    return {
      engine,
      phases: reports,
      emptyDiskBytes,
      phase2Ratio: (p2.diskBytes - p1.diskBytes) / p2.rawBytes,
      allInRatio: p2.diskBytes / totalRaw,
      bytesPerLog: p2.diskBytes / totalLogs,
      phase2BytesPerLog: (p2.diskBytes - p1.diskBytes) / p2.logs,
      logCount,
      statsCount,
      needle: { reqId: needle, found: found.data.length },
      // Complete: the server has exited, so this includes anything it logged while stopping.
      serverOutput: groupServerOutput(output),
      failures,
    };
  } finally {
    if (before === undefined) delete process.env.COMPACT_AFTER;
    else process.env.COMPACT_AFTER = before;
    if (server) await server.stop();
    await client?.end();
    agent.destroy();
    await database.drop();
  }
}

async function main(): Promise<void> {
  const options = optionsOrExit(parseOptions, USAGE);
  console.log(`Storage benchmark: 2 phases × ${fmt(options.logs)} realistic logs, COMPACT_AFTER=${options.compactAfter}, ${options.clients} clients; ${os.cpus().length} CPUs, Node ${process.version}`);
  const reports: EngineReport[] = [];
  const failures: string[] = [];
  for (const engine of options.engines) {
    try {
      const report = await benchEngine(engine, options);
      reports.push(report);
      failures.push(...report.failures);
      writeResults(`storage-${engine}-${options.logs}`, {
        engine,
        node: process.version,
        cpus: os.cpus().length,
        logsPerPhase: options.logs,
        compactAfter: options.compactAfter,
        clients: options.clients,
        emptyDiskBytes: report.emptyDiskBytes,
        phases: report.phases.map((p) => ({ ...p, sendSeconds: round(p.sendSeconds, 2), logsPerSec: round(p.logsPerSec, 0), settleSeconds: round(p.settleSeconds, 1) })),
        phase2Ratio: round(report.phase2Ratio, 4),
        allInRatio: round(report.allInRatio, 4),
        bytesPerLog: round(report.bytesPerLog, 1),
        phase2BytesPerLog: round(report.phase2BytesPerLog, 1),
        targetPhase2Ratio: TARGET_RATIO,
        logCount: report.logCount,
        statsCount: report.statsCount,
        needle: report.needle,
        serverOutput: report.serverOutput,
        failures: report.failures,
        ok: report.failures.length === 0,
      });
    } catch (err) {
      failures.push(`${engine}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const mb = (bytes: number) => `${fmt(bytes / 1e6, 1)} MB`;
  console.log();
  console.log(
    table(
      ['engine', 'raw phase 1', 'raw phase 2', 'disk after 1', 'disk after 2', 'phase 2 disk / raw', 'all-in disk / raw', 'bytes/log (all-in)', 'bytes/log (phase 2)', 'ingest logs/s (1, 2)'],
      reports.map((r) => {
        const [p1, p2] = r.phases as [PhaseReport, PhaseReport];
        return [
          r.engine,
          mb(p1.rawBytes),
          mb(p2.rawBytes),
          mb(p1.diskBytes),
          mb(p2.diskBytes),
          `${fmt(r.phase2Ratio, 3)} (target ≤ ${TARGET_RATIO}: ${r.phase2Ratio <= TARGET_RATIO ? 'met' : 'missed'})`,
          fmt(r.allInRatio, 3),
          fmt(r.bytesPerLog),
          fmt(r.phase2BytesPerLog),
          `${fmt(p1.logsPerSec)}, ${fmt(p2.logsPerSec)}`,
        ];
      }),
      [1, 2, 3, 4, 6, 7, 8],
    ),
  );
  for (const r of reports) {
    const unsettled = r.phases.filter((p) => !p.settled).length;
    console.log(`${r.engine}: raw NDJSON ${fmt((r.phases[0]!.rawBytes + r.phases[1]!.rawBytes) / (2 * r.phases[0]!.logs), 1)} bytes/log; empty database ${mb(r.emptyDiskBytes)}; logCount ${fmt(r.logCount)}, stats count ${fmt(r.statsCount)}, needle found ${r.needle.found}${unsettled > 0 ? `; ${unsettled} phase(s) measured before settling (cap reached)` : ''}`);
    for (const group of r.serverOutput.slice(0, 5)) console.log(`  the server wrote ${group.count}× ${group.line}`);
  }
  if (failures.length > 0) {
    console.error(`\n${failures.length} failure(s):\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

await main();

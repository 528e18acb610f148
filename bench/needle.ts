/**
 * The skip index's figures (issue 16): needle searches at volume with the index and without it,
 * what the index costs on disk, and what its builder costs ingest.
 *
 *   npm run bench:needle -- [--engine sqlite|postgres|both] [--logs 10000000] [--days 7] [--runs 40]
 *       [--warmup 3] [--reuse] [--skip-ingest] [--skip-queries] [--ingest-duration 20] [--clients 10]
 *       [--compacted]
 *
 * Queries: bench:query's data (query-data.ts; bulk-loaded, `--reuse` keeps it), whose request id
 * NEEDLE_REQ_ID is held by 5 logs spread over the whole range. The built server runs on it with
 * SEARCH_INDEX on; once its builder has caught up (timed: that is the builder's pace on a backlog)
 * each query runs `--warmup` times untimed and `--runs` times timed, and its answer is checked:
 *
 *   newest 100                         limit=100                                       < 5 ms
 *   @reqId:<needle>, 7 days            query=@reqId:req_5eed… (5 logs)                 < 50 ms
 *   bare needle word, 24 h             query=req_c0ffee… (RARE_TERM)                    < 50 ms
 *   legacy q=<needle>, 24 h            q=req_c0ffee…                                    < 300 ms
 *   absent value, 7 days               query=@reqId:req_0000…                           < 50 ms
 *   stats, 24 h                        GET …/logs/stats over the last 24 h              < 100 ms
 *
 * The server runs with COMPACT_AFTER=off unless `--compacted`: then it runs with COMPACT_AFTER
 * (default 10m), and the queries wait until the compactor has packed the backlog too (its pace is
 * timed like the builder's), so that they read packed blocks: all but the last ten minutes of the
 * loaded logs. Packing changes the database in place, so with `--reuse` the kept one stays packed.
 *
 * then the same with the server restarted with SEARCH_INDEX=off (the scan: `--off-runs` runs after
 * one warm-up, they are slow; QUERY_TIME_BUDGET=60s unless set, so that they are measured rather than cut off). The index's size is read from the database next to the logs'.
 *
 * Ingest: two fresh databases, `--clients` clients sending bench:ingest's batches for
 * `--ingest-duration` seconds, first with SEARCH_INDEX=off (no builder), then on, where the builder
 * keeps up behind the load: logs/s of both, and how far the index lags the newest log (sampled
 * every second, in logs and in seconds of ingest at the run's rate).
 *
 * Results: bench/results/latest-needle-<engine>-<logs>.json (latest-needle-ingest-<engine>.json for a
 * run with --skip-queries). Exits 1 when an answer is wrong.
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { Engine } from '../src/config.js';
import { SQLITE_FILE } from '../src/db/connect.js';
import { prepareBenchProject, SEED } from './bulk-load.js';
import { buildBodies, runLoad } from './load.js';
import { COMMON_USAGE, optionsOrExit, parseBenchArgs } from './options.js';
import { ABSENT_REQ_ID, LogGenerator, NEEDLE_LOGS, NEEDLE_REQ_ID, RARE_TERM } from './query-data.js';
import { fmt, percentile, table, writeResults } from './report.js';
import { call, createDatabase, send, startServer, type BenchDatabase, type RunningServer } from './server.js';

const HOUR_MS = 3_600_000;
const BLOCK_LOGS = 4096;
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;
/** The compactor is taken to have caught up once its packed count has not moved for this long (it packs every few seconds while due). */
const PACK_STILL_MS = 30_000;

const USAGE = `Usage: npm run bench:needle -- [options]

  --logs <n>                       logs in the project for the queries (default 10000000)
  --days <n>                       spread over the last n days (default 7)
  --runs <n>                       timed runs per query with the index (default 40)
  --warmup <n>                     untimed runs first (default 3; without the index, 1)
  --off-runs <n>                   timed runs per query without the index (default 3: they are slow;
                                   0 leaves the scan out)
  --reuse                          keep the loaded database for the next run (as bench:query)
  --skip-queries | --skip-ingest   leave out that part
  --ingest-duration <seconds>      length of each ingest run (default 20)
  --clients <n>                    clients in the ingest runs (default 10)
  --quiet <seconds>                after the ingest run with the index on: wait this long, then
                                   time --searches needle searches back to back (default 20)
  --searches <n>                   (default 25; 0 leaves the after-load searches out)
  --compacted                      let the server pack the loaded logs (COMPACT_AFTER, default 10m)
                                   and time the queries once it has (the kept database stays packed)
${COMMON_USAGE}`;

interface Options {
  engines: Engine[];
  logs: number;
  days: number;
  runs: number;
  warmup: number;
  offRuns: number;
  reuse: boolean;
  skipQueries: boolean;
  skipIngest: boolean;
  ingestDurationS: number;
  clients: number;
  compacted: boolean;
  quietS: number;
  searches: number;
  pgAdminUrl: string;
}

function parseOptions(argv: string[]): Options {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '10000000' },
    days: { type: 'string', default: '7' },
    runs: { type: 'string', default: '40' },
    warmup: { type: 'string', default: '3' },
    'off-runs': { type: 'string', default: '3' },
    reuse: { type: 'boolean', default: false },
    'skip-queries': { type: 'boolean', default: false },
    'skip-ingest': { type: 'boolean', default: false },
    'ingest-duration': { type: 'string', default: '20' },
    clients: { type: 'string', default: '10' },
    compacted: { type: 'boolean', default: false },
    quiet: { type: 'string', default: '20' },
    searches: { type: 'string', default: '25' },
  });
  const n = (name: string, min: number) => {
    const v = Number(values[name as keyof typeof values]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be a whole number of at least ${min} (got "${String(values[name as keyof typeof values])}")`);
    return v;
  };
  if (engineProblem) throw new Error(engineProblem);
  return {
    engines: engines!,
    logs: n('logs', 1000),
    days: n('days', 1),
    runs: n('runs', 1),
    warmup: n('warmup', 0),
    offRuns: n('off-runs', 0),
    reuse: values.reuse === true,
    skipQueries: values['skip-queries'] === true,
    skipIngest: values['skip-ingest'] === true,
    ingestDurationS: n('ingest-duration', 1),
    clients: n('clients', 1),
    compacted: values.compacted === true,
    quietS: n('quiet', 0),
    searches: n('searches', 0),
    pgAdminUrl,
  };
}

/** Reads the database beside the server: where its index stands, and sizes. */
interface Direct {
  /** The project's newest seq, and the last seq its summaries cover. */
  indexState(projectId: string): Promise<{ lastSeq: number; indexed: number }>;
  /** The project's summarised blocks, and how many of them are packed. */
  packState(projectId: string): Promise<{ blocks: number; packed: number }>;
  /** Bytes on disk: the logs (with their indexes) and the skip index (its two tables with theirs). */
  sizes(): Promise<{ logs: number; packs: number; index: number }>;
  close(): Promise<void>;
}

function openDirect(database: BenchDatabase): Promise<Direct> | Direct {
  if (database.engine === 'sqlite') {
    const db = new Sqlite(path.join(database.dataDir, SQLITE_FILE), { readonly: true });
    return {
      async indexState(projectId) {
        const row = db.prepare('select p.last_seq as lastSeq, (select coalesce(max(last_seq), 0) from log_blocks where project_id = p.id) as indexed from projects p where p.id = ?').get(projectId) as { lastSeq: number; indexed: number };
        return row;
      },
      async packState(projectId) {
        return db.prepare('select count(*) as blocks, count(*) filter (where packed > 0) as packed from log_blocks where project_id = ?').get(projectId) as { blocks: number; packed: number };
      },
      async sizes() {
        const rows = db.prepare(`select s.name, m.tbl_name as tbl, sum(s.pgsize) as bytes from dbstat s join sqlite_schema m on m.name = s.name group by s.name`).all() as { name: string; tbl: string; bytes: number }[];
        const sum = (tables: string[]) => rows.filter((r) => tables.includes(r.tbl)).reduce((n, r) => n + r.bytes, 0);
        return { logs: sum(['logs']), packs: sum(['log_packs']), index: sum(['log_blocks', 'log_block_blooms']) };
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: database.databaseUrl });
  return client.connect().then(() => ({
    async indexState(projectId: string) {
      const { rows } = await client.query<{ last_seq: string; indexed: string }>('select p.last_seq, (select coalesce(max(last_seq), 0) from log_blocks where project_id = p.id) as indexed from projects p where p.id = $1', [projectId]);
      return { lastSeq: Number(rows[0]!.last_seq), indexed: Number(rows[0]!.indexed) };
    },
    async packState(projectId: string) {
      const { rows } = await client.query<{ blocks: string; packed: string }>('select count(*) as blocks, count(*) filter (where packed > 0) as packed from log_blocks where project_id = $1', [projectId]);
      return { blocks: Number(rows[0]!.blocks), packed: Number(rows[0]!.packed) };
    },
    async sizes() {
      const size = async (table: string) =>
        Number(
          (
            await client.query<{ n: string }>(
              `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n from pg_class c where c.oid = $1::regclass or c.oid in (select inhrelid from pg_inherits where inhparent = $1::regclass)`,
              [table],
            )
          ).rows[0]!.n,
        );
      return { logs: await size('logs'), packs: await size('log_packs'), index: (await size('log_blocks')) + (await size('log_block_blooms')) };
    },
    async close() {
      await client.end();
    },
  }));
}

/** Starts the server with SEARCH_INDEX (and COMPACT_AFTER, when given) set as given (the server takes the bench's environment). */
async function serverWith(database: BenchDatabase, agent: http.Agent, searchIndex: 'on' | 'off', compactAfter?: string): Promise<RunningServer> {
  const settings: Record<string, string | undefined> = { SEARCH_INDEX: searchIndex, ...(compactAfter === undefined ? {} : { COMPACT_AFTER: compactAfter }) };
  const before = Object.fromEntries(Object.keys(settings).map((k) => [k, process.env[k]]));
  Object.assign(process.env, settings);
  try {
    return await startServer(database, agent);
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

interface Timed {
  key: string;
  label: string;
  index: 'on' | 'off';
  hits: number;
  p50: number;
  p95: number;
  targetP95?: number;
}

interface QueryReport {
  logs: number;
  days: number;
  catchUpSeconds: number;
  /** With --compacted: seconds from the builder's catching up until the compactor had packed the backlog, and the blocks packed. */
  packSeconds?: number;
  packedBlocks?: number;
  blocks: number;
  sizes: { logs: number; packs: number; index: number };
  timed: Timed[];
}

async function benchQueries(engine: Engine, options: Options, failures: string[]): Promise<QueryReport> {
  const project = await prepareBenchProject({ engine, logs: options.logs, days: options.days, placement: options.reuse ? { kind: 'kept' } : { kind: 'temp' }, pgAdminUrl: options.pgAdminUrl, progress: true });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const direct = await openDirect(project.database);
  let server: RunningServer | undefined;
  try {
    const meta = project.meta;
    const gen = new LogGenerator(SEED, meta.logs, meta.startMs, meta.endMs);
    const newest = gen.tsOf(meta.logs - 1);
    const dayAgo = newest - 24 * HOUR_MS;
    const rareIn24h = gen.rareSince(dayAgo);
    const queries = [
      { key: 'newest100', label: 'newest 100', params: {}, hits: 100, targetP95: 5 },
      { key: 'reqId7d', label: `@reqId:<needle>, ${options.days} days (${NEEDLE_LOGS} logs)`, params: { query: `@reqId:${NEEDLE_REQ_ID}`, from: meta.startMs }, hits: NEEDLE_LOGS, targetP95: 50 },
      { key: 'bare24h', label: `bare needle word, 24 h (${rareIn24h} logs)`, params: { query: RARE_TERM, from: dayAgo }, hits: rareIn24h, targetP95: 50 },
      { key: 'q24h', label: `legacy q=<needle>, 24 h (${rareIn24h} logs)`, params: { q: RARE_TERM, from: dayAgo }, hits: rareIn24h, targetP95: 300 },
      { key: 'absent7d', label: `absent value, ${options.days} days`, params: { query: `@reqId:${ABSENT_REQ_ID}`, from: meta.startMs }, hits: 0, targetP95: 50 },
      // hits: the buckets' total, every log of the day.
      { key: 'stats24h', label: 'stats, 24 h', path: '/stats', params: { from: dayAgo, to: newest }, hits: gen.countSince(dayAgo), targetP95: 100 },
    ];
    /** What an answer holds: a page's logs, or the buckets' total of stats. */
    const hitsOf = (body: string): number => {
      const answer = JSON.parse(body) as { data?: unknown[]; buckets?: { total: number }[] };
      return answer.data ? answer.data.length : (answer.buckets ?? []).reduce((n, b) => n + b.total, 0);
    };
    let packSeconds: number | undefined;
    let packedBlocks: number | undefined;
    const timed: Timed[] = [];
    let catchUpSeconds = 0;
    for (const index of options.offRuns > 0 ? (['on', 'off'] as const) : (['on'] as const)) {
      const started = performance.now();
      server = await serverWith(project.database, agent, index, options.compacted ? (process.env.COMPACT_AFTER ?? '10m') : 'off');
      if (index === 'on') {
        // The builder summarises the loaded backlog first: wait until it covers all but the last, incomplete block.
        for (;;) {
          const { lastSeq, indexed } = await direct.indexState(meta.projectId);
          process.stderr.write(`\r  ${engine}: index builder ${fmt(indexed)} of ${fmt(lastSeq)} logs summarised`);
          if (lastSeq - indexed < BLOCK_LOGS) break;
          if (performance.now() - started > CATCH_UP_TIMEOUT_MS) throw new Error('the index builder did not catch up within an hour');
          await new Promise((r) => setTimeout(r, 1000));
        }
        catchUpSeconds = (performance.now() - started) / 1000;
        process.stderr.write(` in ${fmt(catchUpSeconds, 1)} s\n`);
        if (options.compacted) {
          // The compactor packs summarised blocks older than COMPACT_AFTER: done once the packed count has stood still for PACK_STILL_MS.
          let last = -1;
          let stillSince = performance.now();
          for (;;) {
            const { blocks, packed } = await direct.packState(meta.projectId);
            process.stderr.write(`\r  ${engine}: compactor ${fmt(packed)} of ${fmt(blocks)} blocks packed`);
            if (packed !== last) {
              last = packed;
              stillSince = performance.now();
            } else if (packed > 0 && performance.now() - stillSince > PACK_STILL_MS) break;
            if (performance.now() - started > CATCH_UP_TIMEOUT_MS) throw new Error('the compactor did not catch up within an hour');
            await new Promise((r) => setTimeout(r, 1000));
          }
          packSeconds = (stillSince - started) / 1000 - catchUpSeconds;
          packedBlocks = last;
          process.stderr.write(` in ${fmt(packSeconds, 1)} s after the builder\n`);
        }
      }
      const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/login`, 'POST', 200, undefined, { email: meta.email, password: meta.password });
      const runs = index === 'on' ? options.runs : options.offRuns;
      const warmup = index === 'on' ? options.warmup : Math.min(1, options.warmup);
      for (const q of queries) {
        const url = `${server.baseUrl}/v1/projects/${meta.projectId}/logs${q.path ?? ''}?${new URLSearchParams({ limit: '100', ...Object.fromEntries(Object.entries(q.params).map(([k, v]) => [k, String(v)])) })}`;
        const get = () => send(agent, url, 'GET', { authorization: `Bearer ${accessToken}` });
        const answer = await get();
        const got = answer.status === 200 ? hitsOf(answer.body) : -1;
        if (got !== q.hits) failures.push(`${engine}, index ${index}, ${q.label}: ${answer.status === 200 ? `${got} logs, not ${q.hits}` : `HTTP ${answer.status}: ${answer.body.slice(0, 200)}`}`);
        process.stderr.write(`  ${engine}: index ${index}: timing ${q.label}…\n`);
        const samples: number[] = [];
        for (let i = 0; i < warmup + runs; i++) {
          const t = performance.now();
          const res = await get();
          if (res.status !== 200) failures.push(`${engine}, index ${index}, ${q.label}: HTTP ${res.status}`);
          if (i >= warmup) samples.push(performance.now() - t);
        }
        samples.sort((a, b) => a - b);
        timed.push({ key: q.key, label: q.label, index, hits: q.hits, p50: percentile(samples, 50)!, p95: percentile(samples, 95)!, ...(index === 'on' ? { targetP95: q.targetP95 } : {}) });
      }
      await server.stop();
      server = undefined;
    }
    const blocks = Math.floor((await direct.indexState(meta.projectId)).indexed / BLOCK_LOGS);
    return { logs: meta.logs, days: options.days, catchUpSeconds, packSeconds, packedBlocks, blocks, sizes: await direct.sizes(), timed };
  } finally {
    if (server) await server.stop();
    await direct.close();
    agent.destroy();
    await project.release();
  }
}

interface IngestRun {
  index: 'on' | 'off';
  logsPerSec: number;
  acknowledged: number;
  /** The most logs the summaries were behind the newest log, sampled every second, and that as seconds of this run's ingest. */
  maxLagLogs: number;
  maxLagSeconds: number;
  /** With the index on: needle searches `quietS` after the load, back to back. */
  afterLoad?: AfterLoad;
}

/** Needle searches after a full-speed load: how many of the planted logs each found, and how fast. */
interface AfterLoad {
  quietS: number;
  planted: number;
  /** Logs found by each search, in order. */
  found: number[];
  /** Of each search, whether it answered within its budget (an answer past it is a 503/timeout). */
  statuses: number[];
  p50: number;
  p95: number;
  /** Logs not yet summarised when the searches began, and when they ended. */
  lagAtStart: number;
  lagAtEnd: number;
}

/** The request id planted during the ingest run (not in the generated logs). */
const LOAD_NEEDLE = 'req_10ad5eed10ad5eed';
const LOAD_NEEDLES = 5;

/**
 * Plants LOAD_NEEDLES logs holding LOAD_NEEDLE while a load runs, spread over its first 90 %, each
 * in its own one-log request beside the load's batches.
 */
async function plantNeedles(agent: http.Agent, baseUrl: string, apiKey: string, durationS: number): Promise<number> {
  let planted = 0;
  for (let i = 0; i < LOAD_NEEDLES; i++) {
    await new Promise((r) => setTimeout(r, (durationS * 900) / LOAD_NEEDLES));
    const body = Buffer.from(JSON.stringify([{ timestamp: new Date().toISOString(), level: 'info', source: 'api', message: 'request completed', metadata: { reqId: LOAD_NEEDLE, planted: i } }]));
    for (;;) {
      const res = await send(agent, `${baseUrl}/v1/logs`, 'POST', { 'x-api-key': apiKey, 'content-type': 'application/json' }, body);
      if (res.status === 202) break;
      if (res.status !== 429 && res.status !== 503) throw new Error(`planting a needle: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    planted++;
  }
  return planted;
}

async function benchIngest(engine: Engine, options: Options, failures: string[]): Promise<IngestRun[]> {
  const bodies = buildBodies(1000);
  const out: IngestRun[] = [];
  for (const index of ['off', 'on'] as const) {
    const database = await createDatabase(engine, options.pgAdminUrl);
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.clients });
    /** The needles' and the searches' own connection, beside the load's. */
    const needleAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let server: RunningServer | undefined;
    let direct: Direct | undefined;
    try {
      server = await serverWith(database, agent, index);
      const { accessToken } = await call<{ accessToken: string }>(agent, `${server.baseUrl}/v1/auth/signup`, 'POST', 201, undefined, { email: `needle-${Date.now()}@example.com`, password: 'bench password' });
      const project = await call<{ id: string; apiKey: string }>(agent, `${server.baseUrl}/v1/projects`, 'POST', 201, accessToken, { name: 'needle ingest' });
      direct = await openDirect(database);
      const d = direct;
      let maxLagLogs = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await new Promise((r) => setTimeout(r, 1000));
          const { lastSeq, indexed } = await d.indexState(project.id);
          maxLagLogs = Math.max(maxLagLogs, lastSeq - indexed);
        }
      })();
      process.stderr.write(`  ${engine}: ingest with SEARCH_INDEX=${index} for ${options.ingestDurationS} s…\n`);
      const loadStart = Date.now();
      const planting = index === 'on' && options.searches > 0 ? plantNeedles(needleAgent, server.baseUrl, project.apiKey, options.ingestDurationS) : Promise.resolve(0);
      const load = await runLoad({ agent, targets: Array.from({ length: options.clients }, () => ({ node: 0, project: 0, baseUrl: server!.baseUrl, apiKey: project.apiKey })), nodes: 1, projects: 1, bodies, durationS: options.ingestDurationS, rate: 0 });
      const planted = await planting;
      sampling = false;
      await sampler;
      let afterLoad: AfterLoad | undefined;
      if (planted > 0) {
        // The issue's case: a full-speed load, then a short quiet, then searches back to back.
        process.stderr.write(`  ${engine}: ${options.quietS} s of quiet, then ${options.searches} searches for @reqId:${LOAD_NEEDLE}…\n`);
        await new Promise((r) => setTimeout(r, options.quietS * 1000));
        const lagOf = async () => {
          const { lastSeq, indexed } = await d.indexState(project.id);
          return lastSeq - indexed;
        };
        const lagAtStart = await lagOf();
        const url = `${server.baseUrl}/v1/projects/${project.id}/logs?${new URLSearchParams({ limit: '100', query: `@reqId:${LOAD_NEEDLE}`, from: String(loadStart - HOUR_MS) })}`;
        const found: number[] = [];
        const statuses: number[] = [];
        const samples: number[] = [];
        for (let i = 0; i < options.searches; i++) {
          const t = performance.now();
          const res = await send(needleAgent, url, 'GET', { authorization: `Bearer ${accessToken}` });
          samples.push(performance.now() - t);
          statuses.push(res.status);
          found.push(res.status === 200 ? (JSON.parse(res.body) as { data: unknown[] }).data.length : 0);
        }
        const lagAtEnd = await lagOf();
        const sorted = [...samples].sort((a, b) => a - b);
        afterLoad = { quietS: options.quietS, planted, found, statuses, p50: percentile(sorted, 50)!, p95: percentile(sorted, 95)!, lagAtStart, lagAtEnd };
        const missed = found.filter((n) => n !== planted).length;
        if (missed > 0) failures.push(`${engine}, after the load: ${missed} of ${options.searches} needle searches did not find all ${planted} planted logs (found ${found.join(', ')}; statuses ${[...new Set(statuses)].join(', ')})`);
      }
      failures.push(...load.failures.map((f) => `${engine}, ingest with index ${index}: ${f}`));
      const logsPerSec = load.acknowledgedLogs / load.seconds;
      out.push({ index, logsPerSec, acknowledged: load.acknowledgedLogs, maxLagLogs: index === 'on' ? maxLagLogs : 0, maxLagSeconds: index === 'on' ? maxLagLogs / logsPerSec : 0, ...(afterLoad ? { afterLoad } : {}) });
    } finally {
      await direct?.close();
      if (server) await server.stop();
      agent.destroy();
      needleAgent.destroy();
      await database.drop();
    }
  }
  return out;
}

async function main(): Promise<void> {
  const options = optionsOrExit(parseOptions, USAGE);
  // Slow searches (the scan, with the index off) are measured, not cut off at the default 5 s.
  process.env.QUERY_TIME_BUDGET ??= '60s';
  console.log(`Skip index benchmark: ${os.cpus().length} CPUs, Node ${process.version}`);
  const failures: string[] = [];
  for (const engine of options.engines) {
    const queries = options.skipQueries ? undefined : await benchQueries(engine, options, failures);
    const ingest = options.skipIngest ? undefined : await benchIngest(engine, options, failures);
    if (queries) {
      console.log(`\n${engine}: ${fmt(queries.logs)} logs over ${queries.days} days; the builder summarised ${fmt(queries.blocks)} blocks of the loaded backlog in ${fmt(queries.catchUpSeconds, 1)} s (from server start)`);
      if (queries.packSeconds !== undefined) console.log(`the compactor packed ${fmt(queries.packedBlocks ?? 0)} of them in a further ${fmt(queries.packSeconds, 1)} s`);
      const byKey = (key: string, index: 'on' | 'off') => queries.timed.find((t) => t.key === key && t.index === index);
      const keys = [...new Set(queries.timed.map((t) => t.key))];
      console.log(
        table(
          ['query', 'index on p50 / p95', 'index off p50 / p95', 'target (p95, on)'],
          keys.map((key) => {
            const on = byKey(key, 'on')!;
            const off = byKey(key, 'off');
            return [on.label, `${fmt(on.p50, 2)} / ${fmt(on.p95, 2)} ms`, off ? `${fmt(off.p50, 1)} / ${fmt(off.p95, 1)} ms` : 'not run', on.targetP95 === undefined ? '' : `< ${on.targetP95} ms: ${on.p95 < on.targetP95 ? 'met' : 'MISSED'}`];
          }),
          [1, 2],
        ),
      );
      const share = (100 * queries.sizes.index) / queries.sizes.logs;
      console.log(`index size ${fmt(queries.sizes.index / 1e6, 1)} MB against ${fmt(queries.sizes.logs / 1e6, 1)} MB of logs in rows (with their indexes): ${fmt(share, 2)} % (target ≤ 10 %)${queries.sizes.packs > 0 ? `; packs ${fmt(queries.sizes.packs / 1e6, 1)} MB` : ''}`);
    }
    if (ingest) {
      const [off, on] = ingest as [IngestRun, IngestRun];
      console.log(`\n${engine} ingest, ${options.clients} clients × 1,000-log batches for ${options.ingestDurationS} s each: index off ${fmt(off.logsPerSec)} logs/s, on ${fmt(on.logsPerSec)} logs/s = ${fmt((100 * on.logsPerSec) / off.logsPerSec, 1)} % (target ≥ 85 %); the index lagged at most ${fmt(on.maxLagLogs)} logs = ${fmt(on.maxLagSeconds, 1)} s of ingest (target < 30 s)`);
      const after = on.afterLoad;
      if (after) {
        const exact = after.found.filter((n) => n === after.planted).length;
        console.log(
          `after the load and ${after.quietS} s of quiet, ${after.found.length} searches for @reqId:<needle> back to back: ${exact} of ${after.found.length} found all ${after.planted} planted logs (the first found ${after.found[0]}), p50 ${fmt(after.p50, 1)} ms, p95 ${fmt(after.p95, 1)} ms (target: exact, < 50 ms); logs not yet summarised: ${fmt(after.lagAtStart)} when they began, ${fmt(after.lagAtEnd)} when they ended`,
        );
      }
    }
    // An ingest-only run is named apart: it must not take the place of the queries' figures at this size.
    writeResults(queries ? `needle-${engine}-${options.logs}` : `needle-ingest-${engine}`, { engine, node: process.version, cpus: os.cpus().length, queries, ingest, failures });
  }
  if (failures.length > 0) {
    console.error(`\n${failures.length} failure(s):\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

await main();

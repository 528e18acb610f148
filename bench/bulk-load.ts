/**
 * Fills one project with many realistic logs (query-data.ts), straight into the database through
 * each engine's bulk path, for the query benchmark and for anyone who wants a big project to try:
 *
 *   npm run build --silent && npx tsx bench/bulk-load.ts --engine sqlite|postgres --logs 10000000 --days 7
 *       [--data-dir DIR | --db-url URL] [--pg-url ADMIN_URL] [--drop]
 *
 * Without --data-dir / --db-url the logs go to the kept database of that engine and size, the one
 * `bench/query.ts --reuse` uses (keptLocation below): a SQLite data directory under
 * $TMPDIR/loglane-bench-kept/, or a PostgreSQL database named loglane_bench_kept_<logs>_<days>d.
 * A database that already holds a complete load of the same size is left as it is; --drop removes
 * the kept one instead of loading.
 *
 * How: the built server (dist/cli.js) starts once on the database to migrate it and to create an
 * account and a project over HTTP, and stops; then a worker thread generates the logs (seeded: the
 * same logs every time, timestamps spread evenly over the last --days days) while this thread
 * writes them: SQLite with 50-row prepared INSERTs, 10,000 rows per transaction, on a connection
 * with synchronous=OFF and a 256 MiB cache (for the load only: the server's own connections keep
 * synchronous=FULL); PostgreSQL with COPY (1,000,000 rows per statement) into `logs`, whatever
 * `logs` is (a partitioned parent routes each row to its partition; the day partitions the server
 * would keep are made first). Afterwards projects.log_count, projects.last_seq and the per-minute
 * rollup log_counts are set as the ingest path would have left them (the generator thread counts
 * the logs per minute and level as it goes), SQLite's WAL is checkpointed and PostgreSQL's table is
 * VACUUM ANALYZEd. The account, the project and the load's
 * parameters are kept in the table loglane_bench_meta of the same database.
 *
 * Progress goes to stderr: one line redrawn in place on a terminal, a plain line every 10 % (or
 * 15 s) otherwise.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import Sqlite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Config, Engine } from '../src/config.js';
import { SQLITE_FILE } from '../src/db/connect.js';
import type { DatabaseSchema } from '../src/db/types.js';
import { dayOf, ensurePartitions, isPartitioned, partitionWindow } from '../src/features/logs/store/partitions.js';
import { PLAN_NAMES } from '../src/features/plans/plans.js';
import { LogGenerator } from './query-data.js';
import { fmt } from './report.js';
import { call, createDatabase, startServer, type BenchDatabase } from './server.js';
import { COMMON_USAGE, parseBenchArgs } from './options.js';

export const DAY_MS = 86_400_000;
/** The generator's seed: every load of the same size and spread holds the same logs. */
export const SEED = 7;
/** Bump when query-data.ts generates different logs, so kept databases of the old data are reloaded. */
export const DATA_VERSION = 4;

/** Rows per piece handed from the generator thread to the writer. */
const CHUNK_ROWS = 10_000;
/** Pieces the generator may run ahead of the writer. */
const CHUNKS_AHEAD = 4;
/** SQLite: rows per INSERT statement (a remainder goes one by one). */
const SQLITE_ROWS_PER_INSERT = 50;
/** PostgreSQL: rows per COPY statement (each its own transaction). */
const PG_COPY_ROWS = 1_000_000;
const INSERT_COLUMNS = 'project_id, seq, ts, received_at, level, source, message, metadata';
const META_TABLE = 'loglane_bench_meta';

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The plans' default retention (src/config.ts), unless RETENTION_DAYS_<PLAN> says otherwise. */
const DEFAULT_RETENTION_DAYS: Config['retentionDays'] = { free: 7, starter: 30, pro: 90, enterprise: 365 };

/** The retention the bench servers get: each plan's, from this process's environment (which they inherit) or the default. */
export function benchRetentionDays(): Config['retentionDays'] {
  const out = { ...DEFAULT_RETENTION_DAYS };
  for (const plan of PLAN_NAMES) {
    const raw = process.env[`RETENTION_DAYS_${plan.toUpperCase()}`];
    if (raw !== undefined && /^\d+$/.test(raw.trim())) out[plan] = Number(raw);
  }
  return out;
}

/**
 * Raises RETENTION_DAYS_<PLAN> in this process's environment, which the bench servers inherit,
 * where a plan's retention would not reach back to `oldestMs` (plus a day): retention never removes
 * bench logs, and otherwise the plans keep their usual retention, so that PostgreSQL keeps the
 * partitions it would keep for them (the bench accounts are on the enterprise plan: 365 days).
 */
export function coverRetention(oldestMs: number, now = Date.now()): void {
  const need = Math.ceil((now - oldestMs) / DAY_MS) + 1;
  const current = benchRetentionDays();
  for (const plan of PLAN_NAMES) if (current[plan] < need) process.env[`RETENTION_DAYS_${plan.toUpperCase()}`] = String(need);
}

/* ----------------------------------------------------------------------------------------------
 * Progress on stderr.
 * -------------------------------------------------------------------------------------------- */

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.round(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

export interface Progress {
  update(done: number): void;
  /** Clears the bar (on a terminal) and prints `summary`, if any, as a plain line. */
  end(summary?: string): void;
}

/**
 * A progress bar: percentage, rows, rows/s (average since the start) and ETA. On a terminal one
 * line redrawn at most 5 times a second; otherwise a plain line at every 10 % step or after 15 s
 * without one, whichever comes first.
 */
export function progressBar(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = stream.isTTY === true;
  const start = performance.now();
  let lastDraw = 0;
  let lastTenth = 0;
  const text = (done: number, bar: boolean) => {
    const seconds = (performance.now() - start) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const share = total > 0 ? done / total : 1;
    const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
    const width = 24;
    const filled = Math.round(share * width);
    const gauge = bar ? ` [${'#'.repeat(filled)}${'.'.repeat(width - filled)}]` : '';
    return `  ${label}${gauge} ${(100 * share).toFixed(1).padStart(5)} %  ${fmt(done)} / ${fmt(total)} rows  ${fmt(rate)} rows/s  ETA ${clock(eta)}  (${clock(seconds)} so far)`;
  };
  return {
    update(done) {
      const now = performance.now();
      if (tty) {
        if (now - lastDraw < 200 && done < total) return;
        const line = text(done, true);
        const columns = stream.columns ?? 120;
        stream.write(`\r${line.length >= columns ? line.slice(0, columns - 1) : line}\x1b[K`);
        lastDraw = now;
        return;
      }
      const tenth = Math.floor((10 * done) / Math.max(1, total));
      if (tenth > lastTenth || now - lastDraw >= 15_000) {
        stream.write(`${text(done, false)}\n`);
        lastTenth = tenth;
        lastDraw = now;
      }
    },
    end(summary) {
      if (tty) stream.write('\r\x1b[K');
      if (summary) stream.write(`${summary}\n`);
    },
  };
}

/* ----------------------------------------------------------------------------------------------
 * The generator thread: LogGenerator in a worker with a larger young generation (the generator
 * makes short-lived strings by the million; with the default one, half its time is GC).
 * -------------------------------------------------------------------------------------------- */

const WORKER_ROLE = 'loglane-bulk-load-generator';

interface GeneratorSpec {
  role: typeof WORKER_ROLE;
  seed: number;
  total: number;
  startMs: number;
  endMs: number;
  /** 'copy': PostgreSQL COPY text with project_id and seq; 'rows': columns for prepared inserts. */
  format: 'copy' | 'rows';
  projectId: string;
  firstSeq: number;
}

/** A piece of generated logs, in the form the writer needs. */
type Piece =
  | { type: 'copy'; rows: number; text: Uint8Array }
  | { type: 'rows'; rows: number; ts: Float64Array; level: Uint8Array; source: string[]; message: string[]; metadata: string[] };

interface GeneratorCounts {
  timeoutMatches: number;
  errorApiMatches: number;
}

/** Logs per (minute, level), as parallel arrays: what the writer adds to the log_counts rollup. */
interface MinuteCounts {
  minute: number[];
  level: number[];
  n: number[];
}

type GeneratorEnd = GeneratorCounts & { minutes: MinuteCounts };

const NO_COUNTS: GeneratorEnd = { timeoutMatches: 0, errorApiMatches: 0, minutes: { minute: [], level: [], n: [] } };

type WorkerMessage = Piece | ({ type: 'done' } & GeneratorEnd);

/** The log_source_counts rollup (migration 0011) of one project's logs, as the writer would have kept it; the project id is the one parameter. */
const SOURCE_ROLLUP = `insert into log_source_counts (project_id, minute, level, source, n)
  select project_id, ts - (ts % 60000), level, coalesce(source, ''), count(*) from logs where project_id = ?
  group by project_id, ts - (ts % 60000), level, coalesce(source, '')
  on conflict (project_id, minute, level, source) do update set n = log_source_counts.n + excluded.n`;

/** COPY's text format: backslash, tab, newline and carriage return are escaped with a backslash. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

async function runGeneratorThread(spec: GeneratorSpec): Promise<void> {
  const port = parentPort!;
  const gen = new LogGenerator(spec.seed, spec.total, spec.startMs, spec.endMs);
  let credits = 0;
  let wake: (() => void) | undefined;
  port.on('message', (m: { credit: number }) => {
    credits += m.credit;
    wake?.();
  });
  const encoder = new TextEncoder();
  // (minute start * 8 + level) → logs, as the server's writer keys them.
  const perMinute = new Map<number, number>();
  let seq = spec.firstSeq;
  for (let done = 0; done < spec.total; ) {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    const rows = gen.take(CHUNK_ROWS);
    done += rows.length;
    for (const r of rows) {
      const key = (r.ts - (r.ts % 60_000)) * 8 + r.level;
      perMinute.set(key, (perMinute.get(key) ?? 0) + 1);
    }
    if (spec.format === 'copy') {
      let text = '';
      for (const r of rows) text += `${spec.projectId}\t${seq++}\t${r.ts}\t${r.ts}\t${r.level}\t${copyText(r.source)}\t${copyText(r.message)}\t${copyText(r.metadata)}\n`;
      const bytes = encoder.encode(text);
      port.postMessage({ type: 'copy', rows: rows.length, text: bytes } satisfies Piece, [bytes.buffer as ArrayBuffer]);
    } else {
      const ts = Float64Array.from(rows, (r) => r.ts);
      const level = Uint8Array.from(rows, (r) => r.level);
      const piece: Piece = { type: 'rows', rows: rows.length, ts, level, source: rows.map((r) => r.source), message: rows.map((r) => r.message), metadata: rows.map((r) => r.metadata) };
      port.postMessage(piece, [ts.buffer as ArrayBuffer, level.buffer as ArrayBuffer]);
    }
  }
  const minutes: MinuteCounts = { minute: [], level: [], n: [] };
  for (const [key, n] of perMinute) {
    minutes.minute.push(Math.floor(key / 8));
    minutes.level.push(key % 8);
    minutes.n.push(n);
  }
  port.postMessage({ type: 'done', timeoutMatches: gen.timeoutMatches, errorApiMatches: gen.errorApiMatches, minutes } satisfies WorkerMessage);
  port.close();
}

if (!isMainThread && (workerData as GeneratorSpec | undefined)?.role === WORKER_ROLE) {
  await runGeneratorThread(workerData as GeneratorSpec);
}

/** Starts this file as a worker; under tsx the worker registers tsx's loader before importing it. */
function startWorker(spec: GeneratorSpec): Worker {
  const self = import.meta.url;
  const options = { workerData: spec, resourceLimits: { maxYoungGenerationSizeMb: 192 } };
  if (!self.endsWith('.ts')) return new Worker(new URL(self), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(self)}); })`;
  return new Worker(code, { ...options, eval: true });
}

/** The generated pieces, in order, with the generator's counts at the end. */
async function* generate(spec: Omit<GeneratorSpec, 'role'>, signal: AbortSignal | undefined): AsyncGenerator<Piece, GeneratorEnd> {
  const worker = startWorker({ ...spec, role: WORKER_ROLE });
  const inbox: WorkerMessage[] = [];
  let failure: Error | undefined;
  let sentDone = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (m: WorkerMessage) => {
    if (m.type === 'done') sentDone = true;
    inbox.push(m);
    poke();
  });
  worker.on('error', (err) => {
    failure ??= err;
    poke();
  });
  worker.on('exit', (code) => {
    if (!sentDone) failure ??= new Error(`the generator thread exited (${code}) before it was done`);
    poke();
  });
  const abort = () => {
    failure ??= new Error('interrupted');
    poke();
  };
  signal?.addEventListener('abort', abort);
  try {
    worker.postMessage({ credit: CHUNKS_AHEAD });
    for (;;) {
      while (inbox.length === 0 && !failure) await new Promise<void>((resolve) => (wake = resolve));
      if (signal?.aborted || (failure && inbox.length === 0)) throw failure ?? new Error('interrupted');
      const m = inbox.shift()!;
      if (m.type === 'done') return { timeoutMatches: m.timeoutMatches, errorApiMatches: m.errorApiMatches, minutes: m.minutes };
      worker.postMessage({ credit: 1 });
      yield m;
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    await worker.terminate();
  }
}

/* ----------------------------------------------------------------------------------------------
 * The writers.
 * -------------------------------------------------------------------------------------------- */

export type LoadTarget = { engine: 'sqlite'; sqliteFile: string } | { engine: 'postgres'; databaseUrl: string };

export interface LoadOptions {
  projectId: string;
  logs: number;
  startMs: number;
  endMs: number;
  seed?: number;
  /** Progress bar label; no progress output when undefined. */
  label?: string;
  signal?: AbortSignal;
}

export interface LoadResult extends GeneratorCounts {
  /** Rows added to the log_counts rollup (minute × level), where the schema has it. */
  rollupRows?: number;
  /** PostgreSQL with a partitioned `logs`: its partitions (the default one aside) when the load began. */
  partitions?: number;
  rows: number;
  /** Generating and writing the rows. */
  seconds: number;
  rowsPerSec: number;
  /** projects update plus checkpoint (SQLite) or VACUUM ANALYZE (PostgreSQL). */
  finishSeconds: number;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Writes `logs` generated logs into `projectId` (which must exist and should receive nothing else
 * meanwhile: stop servers on this database first) and updates its log_count and last_seq.
 */
export async function loadLogs(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  return target.engine === 'sqlite' ? loadSqlite(target.sqliteFile, options) : loadPostgres(target.databaseUrl, options);
}

async function loadSqlite(file: string, o: LoadOptions): Promise<LoadResult> {
  const conn = new Sqlite(file);
  try {
    conn.pragma('journal_mode = WAL');
    conn.pragma('busy_timeout = 5000');
    // The load only: a crash mid-load loses the bench database, not anyone's logs.
    conn.pragma('synchronous = OFF');
    conn.pragma('cache_size = -262144');
    // seq numbers a project's logs (migration 0008, as on PostgreSQL): it continues from the project's last_seq.
    const found = conn.prepare('select last_seq from projects where id = ?').get(o.projectId) as { last_seq: number } | undefined;
    if (!found) throw new Error(`no project ${o.projectId} in ${file}`);
    const firstSeq = Number(found.last_seq) + 1;
    const values = (n: number) => Array.from({ length: n }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    const many = conn.prepare(`insert into logs (${INSERT_COLUMNS}) values ${values(SQLITE_ROWS_PER_INSERT)}`);
    const one = conn.prepare(`insert into logs (${INSERT_COLUMNS}) values ${values(1)}`);
    const args: unknown[] = new Array(8 * SQLITE_ROWS_PER_INSERT);
    let seq = firstSeq;
    const write = conn.transaction((p: Extract<Piece, { type: 'rows' }>) => {
      let i = 0;
      for (; i + SQLITE_ROWS_PER_INSERT <= p.rows; i += SQLITE_ROWS_PER_INSERT) {
        for (let j = 0; j < SQLITE_ROWS_PER_INSERT; j++) {
          const k = 8 * j;
          const ts = p.ts[i + j]!;
          args[k] = o.projectId;
          args[k + 1] = seq++;
          args[k + 2] = ts;
          args[k + 3] = ts;
          args[k + 4] = p.level[i + j]!;
          args[k + 5] = p.source[i + j]!;
          args[k + 6] = p.message[i + j]!;
          args[k + 7] = p.metadata[i + j]!;
        }
        many.run(args);
      }
      for (; i < p.rows; i++) one.run(o.projectId, seq++, p.ts[i]!, p.ts[i]!, p.level[i]!, p.source[i]!, p.message[i]!, p.metadata[i]!);
    });

    const progress = o.label === undefined ? undefined : progressBar(o.label, o.logs);
    const start = performance.now();
    let done = 0;
    const pieces = generate({ seed: o.seed ?? SEED, total: o.logs, startMs: o.startMs, endMs: o.endMs, format: 'rows', projectId: o.projectId, firstSeq }, o.signal);
    let counts: GeneratorEnd;
    try {
      for (;;) {
        const next = await pieces.next();
        if (next.done) {
          counts = next.value;
          break;
        }
        if (next.value.type !== 'rows') throw new Error('the generator sent the wrong format');
        write(next.value);
        done += next.value.rows;
        progress?.update(done);
      }
    } finally {
      progress?.end();
      // Stops the generator thread if the load failed half-way.
      await pieces.return(NO_COUNTS).catch(() => {});
    }
    const seconds = (performance.now() - start) / 1000;

    const finishStart = performance.now();
    const lastSeq = seq - 1;
    conn.prepare('update projects set log_count = log_count + ?, last_seq = max(last_seq, ?) where id = ?').run(o.logs, lastSeq, o.projectId);
    // The per-minute rollup the server's writer keeps beside the logs (migration 0007), where there is one.
    let rollupRows: number | undefined;
    if (conn.prepare(`select 1 from sqlite_master where type = 'table' and name = 'log_counts'`).get()) {
      const add = conn.prepare('insert into log_counts (project_id, minute, level, n) values (?, ?, ?, ?) on conflict (project_id, minute, level) do update set n = log_counts.n + excluded.n');
      const m = counts.minutes;
      conn.transaction(() => {
        for (let i = 0; i < m.n.length; i++) add.run(o.projectId, m.minute[i]!, m.level[i]!, m.n[i]!);
      })();
      rollupRows = m.n.length;
    }
    // The rollup by source (migration 0011), counted from the loaded logs in one pass.
    if (conn.prepare(`select 1 from sqlite_master where type = 'table' and name = 'log_source_counts'`).get()) {
      conn.prepare(SOURCE_ROLLUP).run(o.projectId);
    }
    // Fold the load's WAL into the database file, as it would be long after the logs arrived.
    conn.pragma('wal_checkpoint(TRUNCATE)');
    return { rows: done, seconds, rowsPerSec: done / seconds, finishSeconds: (performance.now() - finishStart) / 1000, firstSeq, lastSeq, timeoutMatches: counts.timeoutMatches, errorApiMatches: counts.errorApiMatches, ...(rollupRows === undefined ? {} : { rollupRows }) };
  } finally {
    conn.close();
  }
}

async function loadPostgres(url: string, o: LoadOptions): Promise<LoadResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query('set synchronous_commit = off');
    // seq numbers a project's logs there: it continues from the project's last_seq.
    const found = await client.query<{ last_seq: string }>('select last_seq from projects where id = $1', [o.projectId]);
    if (found.rows.length === 0) throw new Error(`no project ${o.projectId} in ${new URL(url).pathname.slice(1)}`);
    const firstSeq = Number(found.rows[0]!.last_seq) + 1;
    const partitions = await preparePartitions(url, o.startMs, o.endMs);

    const progress = o.label === undefined ? undefined : progressBar(o.label, o.logs);
    const start = performance.now();
    let done = 0;
    const pieces = generate({ seed: o.seed ?? SEED, total: o.logs, startMs: o.startMs, endMs: o.endMs, format: 'copy', projectId: o.projectId, firstSeq }, o.signal);
    let counts: GeneratorEnd | undefined;
    try {
      while (counts === undefined) {
        // One COPY statement per PG_COPY_ROWS rows, fed from the generator as it goes.
        let inStatement = 0;
        const feed = async function* () {
          while (inStatement < PG_COPY_ROWS) {
            const next = await pieces.next();
            if (next.done) {
              counts = next.value;
              return;
            }
            if (next.value.type !== 'copy') throw new Error('the generator sent the wrong format');
            inStatement += next.value.rows;
            done += next.value.rows;
            progress?.update(done);
            yield next.value.text;
          }
        };
        await pipeline(Readable.from(feed()), client.query(copyFrom(`COPY logs (${INSERT_COLUMNS}) FROM STDIN`)));
      }
    } catch (err) {
      if (/no partition of relation/.test(errorText(err))) {
        throw new Error(`${errorText(err)}: logs is partitioned and has no partition for some of the loaded days; create them (or a default partition) first`, { cause: err });
      }
      throw err;
    } finally {
      progress?.end();
      await pieces.return(NO_COUNTS).catch(() => {});
    }
    const seconds = (performance.now() - start) / 1000;

    const finishStart = performance.now();
    const lastSeq = firstSeq + done - 1;
    await client.query('update projects set log_count = log_count + $1, last_seq = greatest(last_seq, $2) where id = $3', [o.logs, lastSeq, o.projectId]);
    // The per-minute rollup the server's writer keeps beside the logs (migration 0007), where there is one.
    let rollupRows: number | undefined;
    if ((await client.query(`select to_regclass('log_counts') as t`)).rows[0]?.t !== null) {
      const m = counts!.minutes;
      await client.query(
        `insert into log_counts (project_id, minute, level, n) select $1, t.minute, t.level, t.n from unnest($2::bigint[], $3::smallint[], $4::bigint[]) as t(minute, level, n)
         on conflict (project_id, minute, level) do update set n = log_counts.n + excluded.n`,
        [o.projectId, m.minute, m.level, m.n],
      );
      rollupRows = m.n.length;
    }
    if ((await client.query(`select to_regclass('log_source_counts') as t`)).rows[0]?.t !== null) {
      await client.query(SOURCE_ROLLUP.replace('?', '$1'), [o.projectId]);
    }
    // VACUUM as well as ANALYZE: otherwise autovacuum starts on the fresh rows in the middle of the
    // timed runs; and it leaves the visibility map as it would be later on (index-only scans).
    await client.query('vacuum (analyze) logs');
    return {
      rows: done,
      seconds,
      rowsPerSec: done / seconds,
      finishSeconds: (performance.now() - finishStart) / 1000,
      firstSeq,
      lastSeq,
      timeoutMatches: counts!.timeoutMatches,
      errorApiMatches: counts!.errorApiMatches,
      ...(rollupRows === undefined ? {} : { rollupRows }),
      ...(partitions === undefined ? {} : { partitions }),
    };
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL, when `logs` is partitioned by day (migration 0006): makes the partitions a server
 * would keep now that the bench project exists (the window of its plan's retention, see
 * src/features/logs/store/partitions.ts) plus every day of the load, before the rows arrive. Otherwise
 * the rows of days without a partition would land in the default partition, and the next server
 * start would move them into new partitions in the background, in the middle of the timed queries.
 * Answers how many partitions `logs` has, or undefined when it is not partitioned.
 */
async function preparePartitions(url: string, startMs: number, endMs: number): Promise<number | undefined> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {});
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    if (!(await isPartitioned(db))) return undefined;
    const window = await partitionWindow(db, benchRetentionDays(), Date.now());
    await ensurePartitions(db, { fromDay: Math.min(window.fromDay, dayOf(startMs)), toDay: Math.max(window.toDay, dayOf(endMs)) });
    const { rows } = await pool.query<{ n: string }>(`select count(*) as n from pg_inherits where inhparent = 'logs'::regclass`);
    return Number(rows[0]!.n) - 1;
  } finally {
    await db.destroy();
  }
}

/* ----------------------------------------------------------------------------------------------
 * A bench project: a database with an account, a project and N logs in it, made once and
 * described by a row of loglane_bench_meta, so a kept database can be used again.
 * -------------------------------------------------------------------------------------------- */

export interface BenchMeta {
  dataVersion: number;
  seed: number;
  logs: number;
  days: number;
  startMs: number;
  endMs: number;
  email: string;
  password: string;
  projectId: string;
  /** PostgreSQL: the SECRET_KEY the project's API key was sealed with (SQLite keeps its own in the data directory). */
  secretKey: string;
  complete: boolean;
  load?: Omit<LoadResult, 'firstSeq' | 'lastSeq'>;
  timeoutMatches?: number;
  errorApiMatches?: number;
}

export interface BenchProject {
  /** drop() removes it, also when it is a kept one; release() is what a run calls when it is done. */
  database: BenchDatabase;
  /** Drops a temporary database; of any other, only removes the temporary data directory a PostgreSQL server was given. */
  release(): Promise<void>;
  meta: BenchMeta & { complete: true; timeoutMatches: number; errorApiMatches: number };
  /** True when the logs were already there (a kept database); then there are no load figures. */
  reused: boolean;
  /** This run's load, when it loaded. */
  load?: LoadResult;
}

/** Where the kept database of an engine, size and spread lives. */
export function keptLocation(engine: Engine, logs: number, days: number): string {
  return engine === 'sqlite' ? path.join(os.tmpdir(), 'loglane-bench-kept', `sqlite-${logs}-${days}d`) : `loglane_bench_kept_${logs}_${days}d`;
}

async function adminQuery(pgAdminUrl: string, statement: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: pgAdminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function readMeta(database: BenchDatabase): Promise<BenchMeta | undefined> {
  if (database.engine === 'sqlite') {
    const file = path.join(database.dataDir, SQLITE_FILE);
    if (!fs.existsSync(file)) return undefined;
    const conn = new Sqlite(file, { readonly: true });
    try {
      const exists = conn.prepare(`select 1 from sqlite_master where type = 'table' and name = ?`).get(META_TABLE);
      const row = exists ? (conn.prepare(`select value from ${META_TABLE} where key = 'load'`).get() as { value: string } | undefined) : undefined;
      return row ? (JSON.parse(row.value) as BenchMeta) : undefined;
    } finally {
      conn.close();
    }
  }
  const client = new pg.Client({ connectionString: database.databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const exists = await client.query(`select to_regclass($1) as t`, [META_TABLE]);
    if (exists.rows[0]?.t === null) return undefined;
    const res = await client.query<{ value: string }>(`select value from ${META_TABLE} where key = 'load'`);
    return res.rows[0] ? (JSON.parse(res.rows[0].value) as BenchMeta) : undefined;
  } finally {
    await client.end();
  }
}

async function writeMeta(database: BenchDatabase, meta: BenchMeta): Promise<void> {
  const create = `create table if not exists ${META_TABLE} (key text primary key, value text not null)`;
  if (database.engine === 'sqlite') {
    const conn = new Sqlite(path.join(database.dataDir, SQLITE_FILE));
    try {
      conn.pragma('busy_timeout = 5000');
      conn.exec(create);
      conn.prepare(`insert into ${META_TABLE} (key, value) values ('load', ?) on conflict (key) do update set value = excluded.value`).run(JSON.stringify(meta));
    } finally {
      conn.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(create);
    await client.query(`insert into ${META_TABLE} (key, value) values ('load', $1) on conflict (key) do update set value = excluded.value`, [JSON.stringify(meta)]);
  } finally {
    await client.end();
  }
}

/** Where the logs go: a fresh temporary database, the kept one, or a database the caller names. */
export type Placement = { kind: 'temp' } | { kind: 'kept' } | { kind: 'data-dir'; dir: string } | { kind: 'db-url'; url: string };

/**
 * The kept database of an engine and size as a BenchDatabase (created when missing), with the
 * SECRET_KEY it was loaded with. drop() removes it for good.
 */
async function keptDatabase(engine: Engine, logs: number, days: number, pgAdminUrl: string): Promise<BenchDatabase> {
  const where = keptLocation(engine, logs, days);
  if (engine === 'sqlite') {
    fs.mkdirSync(where, { recursive: true });
    return { engine, dataDir: where, databaseUrl: undefined, secretKey: randomBytes(32).toString('hex'), drop: async () => fs.rmSync(where, { recursive: true, force: true }) };
  }
  const exists = await adminQuery(pgAdminUrl, `select 1 from pg_database where datname = '${where}'`);
  if (exists.rowCount === 0) await adminQuery(pgAdminUrl, `create database ${where}`);
  return postgresAt(withDatabase(pgAdminUrl, where), async () => {
    await adminQuery(pgAdminUrl, `drop database if exists ${where} with (force)`);
  });
}

/** A BenchDatabase on an existing PostgreSQL database; the server's data directory is a temp one. */
function postgresAt(url: string, dropDatabase: () => Promise<void>): BenchDatabase {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-bench-'));
  return {
    engine: 'postgres',
    dataDir,
    databaseUrl: url,
    secretKey: process.env.SECRET_KEY ?? randomBytes(32).toString('hex'),
    async drop() {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase();
    },
  };
}

/** Removes the kept database of an engine and size; answers what it removed, or undefined. */
export async function dropKept(engine: Engine, logs: number, days: number, pgAdminUrl: string): Promise<string | undefined> {
  const where = keptLocation(engine, logs, days);
  if (engine === 'sqlite') {
    if (!fs.existsSync(where)) return undefined;
    fs.rmSync(where, { recursive: true, force: true });
    return where;
  }
  const exists = await adminQuery(pgAdminUrl, `select 1 from pg_database where datname = '${where}'`);
  if (exists.rowCount === 0) return undefined;
  await adminQuery(pgAdminUrl, `drop database ${where} with (force)`);
  return where;
}

export interface PrepareOptions {
  engine: Engine;
  logs: number;
  days: number;
  placement: Placement;
  pgAdminUrl: string;
  /** Show a progress bar while loading. */
  progress: boolean;
  signal?: AbortSignal;
  /** The end of the spread (the newest log); default now. */
  endMs?: number;
}

/**
 * A database with a bench project of `logs` logs over `days` days: loaded now, or found complete
 * where the placement says (a kept database of a previous run). On an explicitly named database a
 * different or unfinished load is an error; a kept one is then made again from scratch.
 * The returned database is not dropped here: that is the caller's, and only for a temp placement.
 */
export async function prepareBenchProject(o: PrepareOptions): Promise<BenchProject> {
  const matches = (m: BenchMeta | undefined) => m !== undefined && m.complete && m.dataVersion === DATA_VERSION && m.seed === SEED && m.logs === o.logs && m.days === o.days;
  let database = await openPlacement(o);
  try {
    let meta = o.placement.kind === 'temp' ? undefined : await readMeta(database);
    if (meta && matches(meta)) {
      coverRetention(meta.startMs);
      if (database.engine === 'postgres') database = { ...database, secretKey: meta.secretKey };
      return { database, release: releaser(o.placement, database), meta: meta as BenchProject['meta'], reused: true };
    }
    if (meta) {
      const what = meta.complete ? `a load of ${fmt(meta.logs)} logs over ${meta.days} days (data version ${meta.dataVersion})` : 'an unfinished load';
      if (o.placement.kind !== 'kept') throw new Error(`${describe(database)} already holds ${what}; use another database, or remove that one`);
      process.stderr.write(`  ${o.engine}: the kept database holds ${what}: making it again\n`);
      await database.drop();
      database = await openPlacement(o);
    }

    // The server migrates the database and makes the account and the project, then stops.
    const endMs = o.endMs ?? Date.now();
    const startMs = endMs - o.days * DAY_MS;
    coverRetention(startMs);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
    const password = randomBytes(12).toString('hex');
    let projectId: string;
    const server = await startServer(database, agent);
    try {
      const base = server.baseUrl;
      const signedUp = await call<{ accessToken: string }>(agent, `${base}/v1/auth/signup`, 'POST', 201, undefined, { email, password });
      projectId = (await call<{ id: string }>(agent, `${base}/v1/projects`, 'POST', 201, signedUp.accessToken, { name: `bench: ${fmt(o.logs)} logs over ${o.days} days` })).id;
    } finally {
      const exit = await server.stop();
      agent.destroy();
      if (exit !== 0) process.stderr.write(`  ${o.engine}: the setup server exited with ${exit}\n`);
    }

    // Unfinished until the end: an interrupted load is made again by the next --reuse run.
    meta = { dataVersion: DATA_VERSION, seed: SEED, logs: o.logs, days: o.days, startMs, endMs, email, password, projectId, secretKey: database.secretKey, complete: false };
    await writeMeta(database, meta);
    const target: LoadTarget = database.engine === 'sqlite' ? { engine: 'sqlite', sqliteFile: path.join(database.dataDir, SQLITE_FILE) } : { engine: 'postgres', databaseUrl: database.databaseUrl! };
    const load = await loadLogs(target, { projectId, logs: o.logs, startMs, endMs, label: o.progress ? `${o.engine}: loading` : undefined, signal: o.signal });
    const { firstSeq: _f, lastSeq: _l, ...figures } = load;
    const done = { ...meta, complete: true as const, load: figures, timeoutMatches: load.timeoutMatches, errorApiMatches: load.errorApiMatches };
    await writeMeta(database, done);
    return { database, release: releaser(o.placement, database), meta: done, reused: false, load };
  } catch (err) {
    await releaser(o.placement, database)().catch(() => {});
    throw err;
  }
}

function releaser(placement: Placement, database: BenchDatabase): () => Promise<void> {
  if (placement.kind === 'temp') return () => database.drop();
  return async () => {
    if (database.engine === 'postgres') fs.rmSync(database.dataDir, { recursive: true, force: true });
  };
}

function describe(database: BenchDatabase): string {
  return database.engine === 'sqlite' ? path.join(database.dataDir, SQLITE_FILE) : new URL(database.databaseUrl!).pathname.slice(1);
}

async function openPlacement(o: PrepareOptions): Promise<BenchDatabase> {
  switch (o.placement.kind) {
    case 'temp':
      return createDatabase(o.engine, o.pgAdminUrl);
    case 'kept':
      return keptDatabase(o.engine, o.logs, o.days, o.pgAdminUrl);
    case 'data-dir': {
      const dir = path.resolve(o.placement.dir);
      fs.mkdirSync(dir, { recursive: true });
      return { engine: 'sqlite', dataDir: dir, databaseUrl: undefined, secretKey: randomBytes(32).toString('hex'), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
    }
    case 'db-url':
      // A named database is the caller's: drop() only removes the server's temporary data directory.
      return postgresAt(o.placement.url, async () => {});
  }
}

/* ----------------------------------------------------------------------------------------------
 * Command line.
 * -------------------------------------------------------------------------------------------- */

const USAGE = `Usage: npm run build --silent && npx tsx bench/bulk-load.ts [options]

Fills one project with generated logs, straight through the engine's bulk path.

  --logs <n>                       logs to load (default 1000000)
  --days <n>                       spread their timestamps evenly over the last n days (default 7)
  --data-dir <dir>                 SQLite: the Loglane data directory to load into (made if missing)
  --db-url <url>                   PostgreSQL: the database to load into (must exist)
                                   Without either: the kept database of that engine and size, which
                                   bench/query.ts --reuse uses: ${keptLocation('sqlite', 0, 0).replace(/sqlite-0-0d$/, 'sqlite-<logs>-<days>d')}
                                   or the PostgreSQL database ${keptLocation('postgres', 0, 0).replace('0_0d', '<logs>_<days>d')}
  --drop                           remove the kept database of that engine and size instead
${COMMON_USAGE}`;

async function main(argv: string[]): Promise<number> {
  const { values, engines, engineProblem, pgAdminUrl } = parseBenchArgs(argv, USAGE, {
    logs: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '7' },
    'data-dir': { type: 'string' },
    'db-url': { type: 'string' },
    drop: { type: 'boolean', default: false },
  });
  const whole = (raw: string, min: number) => {
    const clean = raw.replace(/[_,]/g, '');
    return /^\d+$/.test(clean) && Number(clean) >= min ? Number(clean) : undefined;
  };
  const logs = whole(values.logs, 1);
  const days = whole(values.days, 1);
  const problems = [
    engineProblem,
    logs === undefined ? `--logs must be a whole number of at least 1 (got "${values.logs}")` : undefined,
    days === undefined ? `--days must be a whole number of at least 1 (got "${values.days}")` : undefined,
    values['data-dir'] !== undefined && engines?.join() !== 'sqlite' ? '--data-dir goes with --engine sqlite' : undefined,
    values['db-url'] !== undefined && engines?.join() !== 'postgres' ? '--db-url goes with --engine postgres' : undefined,
  ].filter((p) => p !== undefined);
  if (problems.length > 0) {
    console.error(`${problems.join('\n')}\n\n${USAGE}`);
    return 2;
  }
  const controller = new AbortController();
  // `on`, not `once`: under tsx Ctrl-C arrives twice, and the load must get to remove what it made.
  process.on('SIGINT', () => controller.abort());
  process.on('SIGTERM', () => controller.abort());

  for (const engine of engines!) {
    if (values.drop) {
      const gone = await dropKept(engine, logs!, days!, pgAdminUrl);
      console.log(gone ? `${engine}: removed ${gone}` : `${engine}: no kept database ${keptLocation(engine, logs!, days!)}`);
      continue;
    }
    const placement: Placement = values['data-dir'] !== undefined ? { kind: 'data-dir', dir: values['data-dir'] } : values['db-url'] !== undefined ? { kind: 'db-url', url: values['db-url'] } : { kind: 'kept' };
    const started = performance.now();
    const project = await prepareBenchProject({ engine, logs: logs!, days: days!, placement, pgAdminUrl, progress: true, signal: controller.signal });
    const where = describe(project.database);
    await project.release();
    const m = project.meta;
    console.log(`${engine}: ${where}`);
    console.log(`  project ${m.projectId} (account ${m.email}, password ${m.password}): ${fmt(m.logs)} logs from ${new Date(m.startMs).toISOString()} to ${new Date(m.endMs).toISOString()}`);
    if (project.reused || !project.load) {
      console.log(`  already loaded${m.load ? ` (then at ${fmt(m.load.rowsPerSec)} rows/s)` : ''}; nothing to do`);
    } else {
      const l = project.load;
      console.log(`  loaded ${fmt(l.rows)} rows in ${fmt(l.seconds, 1)} s: ${fmt(l.rowsPerSec)} rows/s; then ${engine === 'sqlite' ? 'WAL checkpoint' : 'VACUUM (ANALYZE)'} ${fmt(l.finishSeconds, 1)} s; ${fmt((performance.now() - started) / 1000, 1)} s in all${l.partitions === undefined ? '' : `; logs has ${fmt(l.partitions)} daily partitions`}`);
      console.log(`BENCH_LOAD ${JSON.stringify({ engine, logs: l.rows, days: days!, seconds: Number(l.seconds.toFixed(2)), rowsPerSec: Math.round(l.rowsPerSec), finishSeconds: Number(l.finishSeconds.toFixed(2)), cpus: os.cpus().length, node: process.version })}`);
    }
  }
  return 0;
}

if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`bulk-load: ${errorText(err)}`);
    return 1;
  });
}

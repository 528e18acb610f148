import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import type { Db } from '../../db/types.js';
import { SQLITE_PRAGMAS } from '../../db/connect.js';
import type { LogRow } from './normalise.js';

/** One request's accepted logs for one project. */
export interface Batch {
  projectId: string;
  receivedAt: number;
  rows: LogRow[];
  /** When the request had an Idempotency-Key: marked done, with its answer, in the same transaction. */
  idempotency?: { key: string; response: string };
}

/**
 * Where a committed batch went: its logs hold the consecutive seqs firstSeq..lastSeq, and the
 * project's newest log before them was prevSeq (so a reader that has seen prevSeq can take these
 * logs as the exact continuation).
 */
export interface CommitResult {
  prevSeq: number;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Commits batches in one transaction, durably. For each batch it answers where its logs went, or
 * null when the project no longer exists (its logs are then not stored).
 */
export interface LogWriter {
  write(batches: Batch[]): Promise<(CommitResult | null)[]>;
  /**
   * SQLite only: adds alert-rule matches to their counters and reads back the counters of `ruleIds`
   * from `from` on, in the writer's thread between log commits. On the main thread the same write
   * would wait (blocking the event loop) for the writer's transaction to release the lock.
   */
  addAlertCounts?(counts: AlertCount[], ruleIds: string[], from: number): Promise<AlertCountRow[]>;
  close(): Promise<void>;
}

export interface AlertCount {
  ruleId: string;
  bucket: number;
  n: number;
}

export interface AlertCountRow {
  rule_id: string;
  bucket: number;
  n: number;
}

/** Column arrays: cheaper to send to a worker and to bind than an object per row. */
interface Columns {
  projectId: string;
  receivedAt: number;
  idempotency: { key: string; response: string } | undefined;
  ts: number[];
  level: number[];
  source: (string | null)[];
  message: string[];
  metadata: (string | null)[];
}

/** Parallel arrays of rollup rows. */
export interface RollupCounts {
  /** Per (minute, level): the log_counts rows. */
  levels: { minute: number[]; level: number[]; n: number[] };
  /** Per (minute, level, source), '' for none: the log_source_counts rows. */
  sources: { minute: number[]; level: number[]; source: string[]; n: number[] };
}

/** A batch's logs counted for both per-minute rollups, in one pass over the logs. */
export function minuteCounts(ts: number[], level: number[], source: (string | null)[]): RollupCounts {
  const bySource = new Map<string, number>();
  for (let i = 0; i < ts.length; i++) {
    // Timestamps are never negative, so ts - ts % 60000 is the minute's first ms (as in SQL).
    const key = `${(ts[i]! - (ts[i]! % 60_000)) * 8 + level[i]!}:${source[i] ?? ''}`;
    bySource.set(key, (bySource.get(key) ?? 0) + 1);
  }
  const out: RollupCounts = { levels: { minute: [], level: [], n: [] }, sources: { minute: [], level: [], source: [], n: [] } };
  const byLevel = new Map<number, number>();
  for (const [key, n] of bySource) {
    const colon = key.indexOf(':');
    const cell = Number(key.slice(0, colon));
    out.sources.minute.push(Math.floor(cell / 8));
    out.sources.level.push(cell % 8);
    out.sources.source.push(key.slice(colon + 1));
    out.sources.n.push(n);
    byLevel.set(cell, (byLevel.get(cell) ?? 0) + n);
  }
  for (const [cell, n] of byLevel) {
    out.levels.minute.push(Math.floor(cell / 8));
    out.levels.level.push(cell % 8);
    out.levels.n.push(n);
  }
  return out;
}

function toColumns(b: Batch): Columns {
  const n = b.rows.length;
  const c: Columns = { projectId: b.projectId, receivedAt: b.receivedAt, idempotency: b.idempotency, ts: new Array(n), level: new Array(n), source: new Array(n), message: new Array(n), metadata: new Array(n) };
  b.rows.forEach((r, i) => {
    c.ts[i] = r.ts;
    c.level[i] = r.level;
    c.source[i] = r.source;
    c.message[i] = r.message;
    c.metadata[i] = r.metadata;
  });
  return c;
}

/**
 * The SQLite writer's thread. It runs in a worker, so a large commit (and its fsync) never blocks
 * the event loop. Compiled with the rest of the code and sent as source: it may use only its
 * arguments, `require` and minuteCounts (sent with it).
 */
function sqliteWriterThread(require: NodeRequire) {
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const Sqlite = require(workerData.sqlitePath) as typeof import('better-sqlite3');
  const db = new Sqlite(workerData.file);
  for (const pragma of workerData.pragmas as string[]) db.pragma(pragma);
  const current = db.prepare('select last_seq from projects where id = ?');
  const bump = db.prepare('update projects set log_count = log_count + ?, last_seq = ? where id = ?');
  const idempotent = db.prepare("update idempotency_keys set state = 'done', response = ? where project_id = ? and key = ?");
  const addMinute = db.prepare('insert into log_counts (project_id, minute, level, n) values (?, ?, ?, ?) on conflict (project_id, minute, level) do update set n = log_counts.n + excluded.n');
  const addSourceMinute = db.prepare(
    'insert into log_source_counts (project_id, minute, level, source, n) values (?, ?, ?, ?, ?) on conflict (project_id, minute, level, source) do update set n = log_source_counts.n + excluded.n',
  );
  // Multi-row INSERTs: one call into SQLite per 100 rows instead of per row.
  const ROWS_PER_INSERT = 100;
  const inserts = new Map<number, import('better-sqlite3').Statement>();
  const insertFor = (rows: number) => {
    let stmt = inserts.get(rows);
    if (!stmt) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      stmt = db.prepare(`insert into logs (project_id, seq, ts, received_at, level, source, message, metadata) values ${values}`);
      inserts.set(rows, stmt);
    }
    return stmt;
  };
  const commit = db.transaction((batches: Columns[]) =>
    batches.map((b) => {
      const n = b.ts.length;
      const project = current.get(b.projectId) as { last_seq: number } | undefined;
      if (!project) return null;
      // seq numbers the project's logs (migration 0008), as on PostgreSQL: this thread is the only
      // writer of logs, so the seqs after the project's last are free and follow commit order.
      const first = project.last_seq + 1;
      for (let start = 0; start < n; start += ROWS_PER_INSERT) {
        const end = Math.min(n, start + ROWS_PER_INSERT);
        const params: unknown[] = new Array((end - start) * 8);
        let k = 0;
        for (let i = start; i < end; i++) {
          params[k++] = b.projectId;
          params[k++] = first + i;
          params[k++] = b.ts[i];
          params[k++] = b.receivedAt;
          params[k++] = b.level[i];
          params[k++] = b.source[i];
          params[k++] = b.message[i];
          params[k++] = b.metadata[i];
        }
        insertFor(end - start).run(params);
      }
      bump.run(n, first + n - 1, b.projectId);
      const { levels, sources } = minuteCounts(b.ts, b.level, b.source);
      for (let i = 0; i < levels.n.length; i++) addMinute.run(b.projectId, levels.minute[i], levels.level[i], levels.n[i]);
      for (let i = 0; i < sources.n.length; i++) addSourceMinute.run(b.projectId, sources.minute[i], sources.level[i], sources.source[i], sources.n[i]);
      if (b.idempotency) idempotent.run(b.idempotency.response, b.projectId, b.idempotency.key);
      return { prevSeq: project.last_seq, firstSeq: first, lastSeq: first + n - 1 };
    }),
  );
  const addCount = db.prepare('insert into alert_counts (rule_id, bucket, n) values (?, ?, ?) on conflict (rule_id, bucket) do update set n = alert_counts.n + excluded.n');
  const countAlerts = db.transaction((counts: AlertCount[], ruleIds: string[], from: number) => {
    for (const c of counts) addCount.run(c.ruleId, c.bucket, c.n);
    const rows: AlertCountRow[] = [];
    // Bounded IN lists: SQLite caps the parameters of one statement.
    for (let i = 0; i < ruleIds.length; i += 500) {
      const ids = ruleIds.slice(i, i + 500);
      const read = db.prepare(`select rule_id, bucket, n from alert_counts where bucket >= ? and rule_id in (${ids.map(() => '?').join(', ')})`);
      for (const row of read.all(from, ...ids) as AlertCountRow[]) rows.push(row);
    }
    return rows;
  });
  type Message = { id: number; batches: Columns[] } | { id: number; counts: AlertCount[]; ruleIds: string[]; from: number } | { close: true };
  parentPort!.on('message', (msg: Message) => {
    if ('close' in msg) {
      db.close();
      parentPort!.close();
      return;
    }
    try {
      if ('counts' in msg) parentPort!.postMessage({ id: msg.id, results: countAlerts.immediate(msg.counts, msg.ruleIds, msg.from) });
      else parentPort!.postMessage({ id: msg.id, results: commit.immediate(msg.batches) });
    } catch (err) {
      parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
}

export function createSqliteWriter(file: string): LogWriter {
  const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
  const pending = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let worker: Worker | undefined;
  let closed = false;

  function start(): Worker {
    // The thread's source, with the one module function it uses.
    const w = new Worker(`${minuteCounts.toString()}\n(${sqliteWriterThread.toString()})(require)`, {
      eval: true,
      workerData: { file, sqlitePath, pragmas: SQLITE_PRAGMAS },
      // The thread holds one commit's columns at a time (INGEST_COMMIT_MAX_LOGS logs, a few MB):
      // small heaps keep its share of the server's memory small under sustained ingest.
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    w.on('message', (msg: { id: number; results?: never; error?: string }) => {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`log writer: ${msg.error}`));
      else p.resolve(msg.results!);
    });
    const fail = (err: Error) => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
      worker = undefined;
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`log writer thread exited (${code})`)));
    return w;
  }

  function call<R>(message: object): Promise<R> {
    if (closed) return Promise.reject(new Error('log writer is closed'));
    worker ??= start();
    const id = nextId++;
    const w = worker;
    return new Promise<R>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (r: never) => void, reject });
      w.postMessage({ id, ...message });
    });
  }

  return {
    write(batches) {
      return call<(CommitResult | null)[]>({ batches: batches.map(toColumns) });
    },
    addAlertCounts(counts, ruleIds, from) {
      return call<AlertCountRow[]>({ counts, ruleIds, from });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      if (!w) return;
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.postMessage({ close: true });
      });
    },
  };
}

/**
 * The channel on which PostgreSQL nodes announce committed logs: payload
 * `projectId:lastSeq:count:minTs` (minTs, the oldest timestamp among them, bounds the read).
 */
export const PG_CHANNEL = 'loglane_logs';

/**
 * PostgreSQL: one multi-row INSERT … SELECT FROM unnest(arrays) per batch, after the project row's
 * update (which both counts the logs and serialises the project's commits, so seqs follow commit
 * order). pg_notify in the same transaction tells the other nodes, on commit.
 */
export function createPostgresWriter(db: Db): LogWriter {
  return {
    write(batches) {
      return db.transaction().execute(async (tx) => {
        const results: (CommitResult | null)[] = new Array(batches.length).fill(null);
        // Project rows are locked in one order (by id) on every node, so two nodes' commits that
        // share projects queue behind each other instead of deadlocking.
        const order = batches.map((_, i) => i).sort((a, b) => (batches[a]!.projectId < batches[b]!.projectId ? -1 : batches[a]!.projectId > batches[b]!.projectId ? 1 : a - b));
        for (const index of order) {
          const b = batches[index]!;
          const n = b.rows.length;
          const c = toColumns(b);
          let minTs = Number.POSITIVE_INFINITY;
          for (const t of c.ts) if (t < minTs) minTs = t;
          // One statement, one round trip: count the logs and take their seqs under the project row's
          // lock, insert them and their per-minute counts, and notify the other nodes (on commit).
          // No row comes back when the project is gone, and then nothing is written.
          const { rows } = await sql<{ last_seq: number }>`with p as (
              update projects set log_count = log_count + ${n}::bigint, last_seq = last_seq + ${n}::bigint where id = ${b.projectId} returning last_seq
            ), t as (
              select p.last_seq - ${n}::bigint + t.i as seq, t.ts, t.level, t.source, t.message, t.metadata
              from p, unnest(${c.ts}::bigint[], ${c.level}::smallint[], ${c.source}::text[], ${c.message}::text[], ${c.metadata}::text[])
                with ordinality as t(ts, level, source, message, metadata, i)
            ), logs_added as (
              insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
              select ${b.projectId}, seq, ts, ${b.receivedAt}::bigint, level, source, message, metadata from t
            ), counts_added as (
              insert into log_counts (project_id, minute, level, n)
              select ${b.projectId}, ts - ts % 60000, level, count(*) from t group by 2, 3
              on conflict (project_id, minute, level) do update set n = log_counts.n + excluded.n
            ), source_counts_added as (
              insert into log_source_counts (project_id, minute, level, source, n)
              select ${b.projectId}, ts - ts % 60000, level, coalesce(source, ''), count(*) from t group by 2, 3, 4
              on conflict (project_id, minute, level, source) do update set n = log_source_counts.n + excluded.n
            )
            select p.last_seq, pg_notify(${PG_CHANNEL}, ${b.projectId}::text || ':' || p.last_seq || ':' || ${n}::bigint || ':' || ${minTs}::bigint) from p`.execute(tx);
          const last = rows[0] === undefined ? undefined : Number(rows[0].last_seq);
          if (last === undefined) continue;
          if (b.idempotency) {
            await sql`update idempotency_keys set state = 'done', response = ${b.idempotency.response} where project_id = ${b.projectId} and key = ${b.idempotency.key}`.execute(tx);
          }
          results[index] = { prevSeq: last - n, firstSeq: last - n + 1, lastSeq: last };
        }
        return results;
      });
    },
    async close() {},
  };
}

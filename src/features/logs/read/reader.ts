/**
 * What search and stats share: reads under the query time budget, through the store, and the
 * skip index's switches and report.
 */
import type { Config } from '../../../config.js';
import { AppError } from '../../../errors.js';
import { formatDuration } from '../../../duration.js';
import type { LogFilter } from '../filter.js';
import type { IndexOptions, IndexReads, IndexReport } from './block-search.js';
import { chunksOf, PAGE_CHUNK_LOGS, rowTextBytes } from './page-stream.js';
import { nextTurn } from '../turns.js';
import type { LogRowStored, Position } from '../store/repository.js';
import type { LogStore } from '../store/index.js';

export type SearchIndexMode = 'on' | 'forced' | 'all-maybe' | 'off';

export type LogReader = ReturnType<typeof createLogReader>;

/**
 * One read of a caller (a search page, a count, a context, an export's page): when its time budget
 * ends, the time it spent waiting before it could do its own work, and the signal that says its
 * client has gone. The budget runs from the request's arrival. Running out of it is the query's own
 * fault (400) when the read spent it on its own work (reading and deciding logs), and the
 * database's (503 OVERLOADED with Retry-After) when most of it went in waiting: for the request's
 * authentication lookup and the access check, small queries that are slow only when the database
 * is busy or locked, or other tenants' work is ahead of them. See outOfTime.
 */
export interface ReadRun {
  readonly budgetMs: number;
  readonly deadline: number;
  /** Milliseconds spent waiting before the read's own work: the request's queueing, and the access check. */
  waitedMs: number;
  readonly signal?: AbortSignal;
  /** Reads of the store this run has made (tests count what a read does after its client left). */
  reads: number;
}

/** Who a read is for: its client's signal, and how long the request waited before its handler ran. */
export interface ReadCaller {
  /** Aborts when the client has gone. */
  signal?: AbortSignal;
  /**
   * Milliseconds the request waited before the read began (its authentication's database lookup,
   * other tenants' work ahead of it): spent from the budget, and counted as waiting for the database.
   */
  queuedMs?: number;
}

/** A read's run, its budget starting when its request did (`queuedMs` ago). */
export function startRun(budgetMs: number, caller: ReadCaller = {}, now = Date.now()): ReadRun {
  const queued = Math.max(0, caller.queuedMs ?? 0);
  return { budgetMs, deadline: now - queued + budgetMs, waitedMs: queued, signal: caller.signal, reads: 0 };
}

/**
 * Sheds a read that spent its whole budget waiting before it could do its own work (the
 * database, or other tenants' work on it, was slow): 503 OVERLOADED with Retry-After, rather than
 * a 400 for a query that never had its time, or a partial answer.
 */
export function shedIfLate(run: ReadRun | undefined): void {
  if (run && Date.now() > run.deadline && run.waitedMs * 2 >= run.budgetMs) throw overloaded();
}

/**
 * Waits for `work` (the access check), counting the time as the run's wait for the database. The
 * reads of logs are not counted: their time is the query's own work (on SQLite a read is the
 * engine reading the logs it was asked for), and a range too large to read in time stays a 400.
 */
export async function waited<T>(run: ReadRun | undefined, work: Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work;
  } finally {
    if (run) run.waitedMs += performance.now() - started;
  }
}

/** Ends the read with the signal's reason when its client has gone. */
export function stopIfGone(run: ReadRun | undefined): void {
  run?.signal?.throwIfAborted();
}

/** Seconds a read refused for the database's load asks its client to wait. */
export const OVERLOADED_RETRY_AFTER_S = 2;

/**
 * What a read that ran out of time is told: 503 OVERLOADED with Retry-After when it spent at least
 * half its budget waiting for the database (the database, or other tenants' work on it, was slow:
 * the same read may well succeed later), else `ownFault` (the query's own work did not fit: 400).
 */
export function outOfTime(run: ReadRun | undefined, ownFault: () => AppError): AppError {
  if (run && run.waitedMs * 2 >= run.budgetMs) return overloaded();
  return ownFault();
}

export function overloaded(): AppError {
  return new AppError('OVERLOADED', 'The database is too busy to answer this read within its time budget just now; retry after the delay in Retry-After.', { retryAfter: OVERLOADED_RETRY_AFTER_S });
}

export function createLogReader(store: Pick<LogStore, 'isTimeout' | 'isRetryable' | 'isUnavailable' | 'pageKeys' | 'rowsAt'> & IndexReads, config: Pick<Config, 'queryBudgetMs' | 'indexBlockLogs' | 'searchIndex'>) {
  const index: IndexOptions = { blockLogs: config.indexBlockLogs, enabled: config.searchIndex };
  /** What the last search through the index read (tests count it). */
  let lastReport: IndexReport | undefined;
  /** What scans read: their chunks, and the most text one chunk held (tests check the bound). */
  const scanned = { chunks: 0, maxChunkBytes: 0 };
  /** Reads of the store made under the budget, by every read (tests count what aborted reads still do). */
  let reads = 0;
  return {
    /** How searches use the skip index (setSearchIndex changes it). */
    index,
    /**
     * Runs reads of the store (on its read connection) with the query time budget, handing `work`
     * the store's reads of the skip index. Where the engine cancels a statement that outlives it
     * (PostgreSQL's statement_timeout) that is the client's 400: the statement's own work did not
     * fit. A database that is busy, locked or unreachable (a lock wait given up, SQLite busy, the
     * pool's connection wait) is 503 OVERLOADED with Retry-After. With a `run`, the read is counted,
     * and a run whose client has gone reads no more.
     */
    async withBudget<T>(work: (store: IndexReads) => Promise<T>, run?: ReadRun): Promise<T> {
      stopIfGone(run);
      reads++;
      if (run) run.reads++;
      try {
        return await work(store);
      } catch (err) {
        if (store.isTimeout(err)) throw new AppError('VALIDATION_ERROR', `The search did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);
        if (!(err instanceof AppError) && (store.isRetryable(err) || store.isUnavailable(err))) throw overloaded();
        throw err;
      }
    },
    /**
     * The store's reads of the skip index for one run: each after a turn of the event loop, counted,
     * and none made once its client has gone (a search through the index stops at its next read).
     */
    measured(run: ReadRun | undefined): IndexReads {
      if (!run) return store;
      const each = <A extends unknown[], R>(read: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
        // A turn of the event loop first: on SQLite a read resolves without waiting for I/O, and a
        // search through the index would otherwise run read after read without ever letting the
        // news of its client's leaving (or anyone else's request) in.
        await nextTurn();
        stopIfGone(run);
        reads++;
        run.reads++;
        return read(...args);
      };
      return { indexState: each(store.indexState), blocksInRange: each(store.blocksInRange), slicesInBlocks: each(store.slicesInBlocks), inSeqRange: each(store.inSeqRange) };
    },
    /** A run of the query time budget from the caller's start, ended early when its signal aborts. */
    startRun(caller?: ReadCaller): ReadRun {
      return startRun(config.queryBudgetMs, caller);
    },
    /** Reads of the store made under the budget since the start. */
    readCount(): number {
      return reads;
    },
    /**
     * The logs SQL narrows `filter` to (see narrowed), newest first from `before`, for the app to
     * decide: PATTERN_CHUNK keys and sizes a round, the logs themselves read in chunks of at most
     * SCAN_CHUNK_BYTES of text (and `maxLogs` logs: PAGE_CHUNK_LOGS for a search, whose page ends
     * early; a count takes whole rounds), with a turn of the event loop after each. `through` is where
     * the chunk's keys end (a log deleted since its key was read is not in `rows`); the scan ends
     * when the keys run out, or when the caller stops asking.
     */
    async *scan(projectId: string, filter: LogFilter, before: Position | undefined, maxLogs = PAGE_CHUNK_LOGS, run?: ReadRun): AsyncGenerator<{ rows: LogRowStored[]; through: Position }> {
      const sqlFilter = this.narrowed(filter);
      for (;;) {
        const keys = await this.withBudget(() => store.pageKeys(projectId, sqlFilter, before, PATTERN_CHUNK), run);
        for (const chunk of chunksOf(keys, SCAN_CHUNK_BYTES, maxLogs)) {
          const rows = await this.withBudget(() => store.rowsAt(projectId, chunk), run);
          let bytes = 0;
          for (const row of rows) bytes += rowTextBytes(row);
          scanned.chunks++;
          if (bytes > scanned.maxChunkBytes) scanned.maxChunkBytes = bytes;
          const last = chunk[chunk.length - 1]!;
          yield { rows, through: { ts: last.ts, seq: last.seq } };
          await nextTurn();
          stopIfGone(run);
        }
        if (keys.length < PATTERN_CHUNK) return;
        const last = keys[keys.length - 1]!;
        before = { ts: last.ts, seq: last.seq };
      }
    },
    /** What SQL narrows to when the app decides: the other filters, the pattern's literal, the query's levels and times. */
    narrowed(filter: LogFilter): LogFilter {
      return { ...filter, pattern: undefined, contains: sqlSafe(filter.pattern?.literal) };
    },
    reported(report: IndexReport): void {
      lastReport = report;
    },
    /** The chunks scans have read since the start, and the most text one held. */
    scanStats(): { chunks: number; maxChunkBytes: number } {
      return { ...scanned };
    },
    /** What the last search through the skip index read. */
    lastIndexReport(): IndexReport | undefined {
      return lastReport;
    },
    /**
     * Test hook: search with the index where it helps (on), wherever it can be used (forced), with
     * every block saying "maybe" (all-maybe, forced too), or without it (off).
     */
    setSearchIndex(mode: SearchIndexMode): void {
      index.enabled = mode !== 'off';
      index.force = mode === 'forced' || mode === 'all-maybe';
      index.allMaybe = mode === 'all-maybe';
    },
  };
}

/**
 * Bytes of log text a scan reads and decides at a time: enough that a costly pattern's tests go to
 * the regex runner in batches of a useful size, few enough that a scan holds little.
 */
export const SCAN_CHUNK_BYTES = 4 * 1024 * 1024;

/** Keys read per round when the app decides (a pattern or a query); their logs are read a chunk of bounded bytes at a time (scan). */
export const PATTERN_CHUNK = 2000;

/** Text a database can search for: PostgreSQL text cannot hold NUL. */
function sqlSafe(text: string | undefined): string | undefined {
  return text !== undefined && !text.includes('\u0000') ? text : undefined;
}

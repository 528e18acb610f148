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

export function createLogReader(store: Pick<LogStore, 'isTimeout' | 'pageKeys' | 'rowsAt'> & IndexReads, config: Pick<Config, 'queryBudgetMs' | 'indexBlockLogs' | 'searchIndex'>) {
  const index: IndexOptions = { blockLogs: config.indexBlockLogs, enabled: config.searchIndex };
  /** What the last search through the index read (tests count it). */
  let lastReport: IndexReport | undefined;
  /** What scans read: their chunks, and the most text one chunk held (tests check the bound). */
  const scanned = { chunks: 0, maxChunkBytes: 0 };
  return {
    /** How searches use the skip index (setSearchIndex changes it). */
    index,
    /**
     * Runs reads of the store (on its read connection) with the query time budget, handing `work`
     * the store's reads of the skip index. Where the engine cancels a statement that outlives it
     * (PostgreSQL's statement_timeout) that is the client's 400; elsewhere the scan's rounds and
     * their deadline bound the work.
     */
    async withBudget<T>(work: (store: IndexReads) => Promise<T>): Promise<T> {
      try {
        return await work(store);
      } catch (err) {
        if (store.isTimeout(err)) throw new AppError('VALIDATION_ERROR', `The search did not finish within its ${formatDuration(config.queryBudgetMs)} budget; narrow the time range or add filters.`);
        throw err;
      }
    },
    /**
     * The logs SQL narrows `filter` to (see narrowed), newest first from `before`, for the app to
     * decide: PATTERN_CHUNK keys and sizes a round, the logs themselves read in chunks of at most
     * SCAN_CHUNK_BYTES of text (and `maxLogs` logs: PAGE_CHUNK_LOGS for a search, whose page ends
     * early; a count takes whole rounds), with a turn of the event loop after each. `through` is where
     * the chunk's keys end (a log deleted since its key was read is not in `rows`); the scan ends
     * when the keys run out, or when the caller stops asking.
     */
    async *scan(projectId: string, filter: LogFilter, before: Position | undefined, maxLogs = PAGE_CHUNK_LOGS): AsyncGenerator<{ rows: LogRowStored[]; through: Position }> {
      const sqlFilter = this.narrowed(filter);
      for (;;) {
        const keys = await this.withBudget(() => store.pageKeys(projectId, sqlFilter, before, PATTERN_CHUNK));
        for (const chunk of chunksOf(keys, SCAN_CHUNK_BYTES, maxLogs)) {
          const rows = await this.withBudget(() => store.rowsAt(projectId, chunk));
          let bytes = 0;
          for (const row of rows) bytes += rowTextBytes(row);
          scanned.chunks++;
          if (bytes > scanned.maxChunkBytes) scanned.maxChunkBytes = bytes;
          const last = chunk[chunk.length - 1]!;
          yield { rows, through: { ts: last.ts, seq: last.seq } };
          await nextTurn();
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

/**
 * The log store: everything the logs slice asks of the database engine, behind one interface with
 * one implementation per engine (sqlite.ts, postgres.ts), chosen where the database is opened
 * (db/connect.ts). Features call this interface and never ask which engine runs; a new engine
 * (a column store, say) is a new implementation. The queries both engines share (repository.ts,
 * blocks/store.ts) take the engine's statements where they differ (sql.ts); the store passes its
 * own, so no executor and no engine's statements leave it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../../config.js';
import type { Db, Executor } from '../../../db/types.js';
import { blocksInRange, deleteBlocksBefore, indexState, projectsBehind, slicesInBlocks, type BlockRow, type SliceProbe } from './blocks/store.js';
import type { LogFilter } from '../filter.js';
import * as repo from './repository.js';
import type { AlertCount, AlertCountRow, LogWriter } from './writer.js';
import type { LogSql } from './sql.js';
import type { Packer } from './packs/packer.js';
import { blockRows, projectsWithPacksBefore } from './packs/read.js';
import { keyOf, mergePage, mergeRowsAt, mergeSeqRange, mergeSince } from './packs/merge.js';
import { blocksToPack, markKeptInRows, type BlockTimes } from './packs/statements.js';
import { createStoreBytes, createStoredBytes, type StoreBytes } from './packs/size.js';

/** What a store needs from the app, given once when it is made. */
export interface LogStoreDeps {
  config: Pick<Config, 'retentionDays'>;
  now: () => number;
  log: FastifyBaseLogger;
}

/** Other nodes' commits, as they are announced (see LogStore.listen). */
export interface CommitHandlers {
  onCommit(projectId: string, lastSeq: number, count: number, minTs: number | undefined, maxTs?: number): void;
  /** Announcements may have been missed (a lost connection): re-read what matters. */
  onResync(): void;
}

export interface LogStore {
  // Writing.
  /** Commits ingest batches durably, one transaction per call (the ingest queue's writer). */
  readonly writer: LogWriter;
  /**
   * Adds alert-rule matches to their counters and reads back the counters of `ruleIds` from `from`
   * on, where the engine needs it done beside the log commits (SQLite: in the writer's thread, since
   * on the main thread the write would wait, blocking the event loop, for the writer's lock).
   * Undefined: the caller writes them on the main connection.
   */
  readonly addAlertCounts?: (counts: AlertCount[], ruleIds: string[], from: number) => Promise<AlertCountRow[]>;

  // Reading: where searches run (PostgreSQL: a pool whose statements time out at QUERY_TIME_BUDGET).
  /** A page of logs, newest first, strictly before `before`. */
  page(projectId: string, filter: LogFilter, before: repo.Position | undefined, limit: number): Promise<repo.LogRowStored[]>;
  /**
   * The same page as keys and sizes only (no log text): large pages are then read in bounded chunks.
   * Packed logs among the keys whose sizes, with every key's before them, add up to at most
   * `rowBytes` come with their row: the pack was decoded to find them, and a page's first chunk
   * then needs no second read (0, the default: none do, so the keys hold no text).
   */
  pageKeys(projectId: string, filter: LogFilter, before: repo.Position | undefined, limit: number, rowBytes?: number): Promise<(repo.PageKey & { row?: repo.LogRowStored })[]>;
  /** The logs at these keys, in their order (a log deleted since is left out). */
  rowsAt(projectId: string, keys: readonly repo.PageKey[]): Promise<repo.LogRowStored[]>;
  /** Counts per time bucket and level. */
  countByBucket(projectId: string, filter: LogFilter, intervalMs: number): Promise<repo.BucketCount[]>;
  /** Counts per time bucket and source; at most `maxRows` + 1 rows (the caller refuses past `maxRows`). */
  countBySourceBucket(projectId: string, filter: LogFilter, intervalMs: number, maxRows: number): Promise<repo.SourceBucketCount[]>;
  /** Logs after `afterSeq` in commit order (live tail), on the main connection; at most `maxBytes` of text (and one log) when given. */
  since(projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number, minTs?: number, maxBytes?: number): Promise<repo.LogRowStored[]>;
  /** The seq of the project's newest log; undefined when the project is gone. */
  lastSeq(projectId: string): Promise<number | undefined>;

  // Deleting and retention.
  /** Removes whole stretches of expired logs where the engine can (PostgreSQL: daily partitions); how many logs went. */
  expireWhole(): Promise<number>;
  /** The projects on `plan` holding logs older than `cutoff`. */
  projectsWithLogsBefore(plan: string, cutoff: number): Promise<string[]>;
  /** Deletes up to `batch` of the project's logs older than `cutoff`, keeping counts exact, in one transaction; how many went. */
  deleteOlderThan(projectId: string, cutoff: number, batch: number): Promise<number>;
  /** Forgets the skip index's summaries of blocks wholly older than `cutoff`, for projects on `plan`. */
  deleteBlocksBefore(plan: string, cutoff: number): Promise<number>;
  /** Upkeep retention relies on (PostgreSQL: the partitions ahead); never throws. */
  maintain(): Promise<void>;
  /**
   * Before a project is deleted: takes its logs away in steps where deleting them in the one
   * transaction that removes the project would stall every tenant (SQLite, whose statements run
   * on the event loop's thread); nothing where that transaction waits without holding anyone up.
   */
  purgeProject(projectId: string): Promise<void>;
  /** The steps that took logs so far (a purge's, retention's batches), counted where they ran: tests assert on them. */
  deleteCounts(): Promise<DeleteCounts>;

  // The skip index.
  /** Projects with at least `blockLogs` logs past their last summary. */
  projectsBehind(blockLogs: number, limit: number): Promise<{ id: string; next: number; lastSeq: number }[]>;
  /** Summarises and saves the block of seqs [first, last] as one transaction; false when another node is building. */
  buildBlock(projectId: string, first: number, last: number): Promise<boolean>;
  /**
   * Blocks this store summarised reading with their time range named (known from the commits that
   * made them, blocks/spans.ts: PostgreSQL) and by seq alone (tests count them).
   */
  builtBlocks(): { timed: number; bySeq: number };
  /** Where the project's index stands: its newest log's seq, and the first seq not in a summary; undefined when the project is gone. */
  indexState(projectId: string): Promise<{ lastSeq: number; next: number } | undefined>;
  /** The summaries of blocks whose time range meets [from, to], newest first, each saying per item (in order) whether it may hold it. */
  blocksInRange(projectId: string, from: number | undefined, to: number | undefined, items: string[]): Promise<BlockRow[]>;
  /** The slice filters of the blocks starting at `firstSeqs`, probed for `items`: per block, per slice, whether it may hold each. */
  slicesInBlocks(projectId: string, firstSeqs: number[], items: string[]): Promise<Map<number, SliceProbe>>;
  /** The logs of seqs [first, last] (no upper end: undefined) that the filter's SQL part admits, strictly before `before`, newest first, at most `limit`. */
  inSeqRange(projectId: string, filter: LogFilter, before: repo.Position | undefined, first: number, last: number | undefined, limit: number): Promise<repo.LogRowStored[]>;

  // Packs (packs/): blocks stored compressed once older than COMPACT_AFTER.
  /** Blocks summarised at or before `builtBefore` and not packed yet, oldest summaries first. */
  blocksToPack(builtBefore: number, limit: number): Promise<({ projectId: string; firstSeq: number; lastSeq: number } & BlockTimes)[]>;
  /**
   * Packing the block [first, last] is two steps, so that the compactor reads and packs the next
   * block while this one is saved: preparePack reads its rows and packs them off the event loop;
   * savePack then, in one transaction, writes the pack and deletes the rows. 'skipped' when the block
   * changed or went meanwhile (it is tried again later), 'busy' when another node is packing.
   * preparePack gives undefined for a block whose logs hold more text than a pack may
   * (packs/read.ts PACK_BYTES_PER_LOG): it is marked to stay in rows, and is not tried again.
   */
  preparePack(projectId: string, first: number, last: number, times: BlockTimes): Promise<PackToSave | undefined>;
  savePack(pack: PackToSave): Promise<PackOutcome>;
  /** The bytes each project's logs and their indexes take on disk, estimated (packs/size.ts), at most a minute old. */
  storedBytes(projectIds: string[]): Promise<Map<string, number>>;
  /** The whole store's bytes by part (logs in rows, packs, the skip index), estimated likewise: the /metrics gauge. */
  storeBytes(): Promise<StoreBytes>;

  // Nodes.
  /** Hears other nodes' commits (none where one node owns the database). */
  listen(handlers: CommitHandlers): { ready: Promise<void>; close(): Promise<void> };

  // Errors.
  /** The engine gave up a read at the query time budget. */
  isTimeout(err: unknown): boolean;
  /** The engine gave up a transaction that may well succeed again (deadlock, serialization, lock or connection trouble). */
  isRetryable(err: unknown): boolean;
  /**
   * A failed write says the database cannot write at all (unreachable, shutting down, out of disk,
   * locked, read-only, the writer closed), as opposed to refusing something in what was written.
   */
  isUnavailable(err: unknown): boolean;

  /** Stops the writer (after what it was given is committed). */
  close(): Promise<void>;
}

/** Steps that took logs, each one transaction of at most its batch. */
export interface StepCounts {
  steps: number;
  /** The most logs one step took. */
  maxLogs: number;
  /** The threads (worker_threads threadId) that ran the steps: SQLite's writer thread; on PostgreSQL the app's, which sends the statements. */
  threads: number[];
}

/** What the store's deletions did: a purge's steps ahead of a project's deletion, and retention's batches. */
export interface DeleteCounts {
  purge: StepCounts;
  retention: StepCounts;
}

export type PackOutcome = 'packed' | 'skipped' | 'busy';

/** A block's pack, ready to be saved in place of its rows. */
export interface PackToSave {
  projectId: string;
  firstSeq: number;
  lastSeq: number;
  /** How many rows were packed: the save checks that the block still has exactly these. */
  logs: number;
  data: Uint8Array;
  /** The block's time range (its summary's): the rows lie within it. */
  times: BlockTimes;
}

type SharedQueries = 'blocksToPack' | 'preparePack' | 'savePack' | 'storedBytes' | 'storeBytes' | 'page' | 'pageKeys' | 'rowsAt' | 'countByBucket' | 'countBySourceBucket' | 'since' | 'lastSeq' | 'projectsWithLogsBefore' | 'deleteBlocksBefore' | 'projectsBehind' | 'indexState' | 'blocksInRange' | 'slicesInBlocks' | 'inSeqRange';

/** An engine's own part of a store; withSharedQueries adds the rest. */
export type EngineStore = Omit<LogStore, SharedQueries> & {
  /** Where searches run (PostgreSQL: statements time out at QUERY_TIME_BUDGET). */
  readonly reads: Executor;
  /** The engine's statements of the shared queries. */
  readonly sql: LogSql;
  /** Saves a pack in place of its block's rows, in one transaction (see LogStore.packBlock). */
  savePack(pack: PackToSave): Promise<PackOutcome>;
  /** Packs blocks off the event loop; closed with the store. */
  readonly packer: Packer;
};

/** Completes an engine's store with the queries both engines share, run with its statements. */
export function withSharedQueries(db: Db, engine: EngineStore, now: () => number = Date.now): LogStore {
  const { reads, sql, savePack, packer, ...own } = engine;
  /**
   * The filter a newest-first page reads the rows with: when the packs alone fill the page, no row
   * older than that page's last log can be in it, so the rows are read from its time on. Where
   * most logs are packed, the rows' read is then one short index range in one partition instead of
   * a walk down every partition (PostgreSQL) for the few rows that are older. The packs are read
   * again after the rows (mergePage, from the cache of decoded packs), so a block packed in between
   * is still seen: see packs/read.ts.
   */
  async function rowsPageFilter(projectId: string, filter: LogFilter, before: repo.Position | undefined, limit: number): Promise<LogFilter> {
    const packed = await mergePage(reads, projectId, filter, before, limit, [] as repo.PageKey[], keyOf);
    if (packed.length < limit) return filter;
    const floor = packed[limit - 1]!.ts;
    return { ...filter, from: filter.from === undefined ? floor : Math.max(filter.from, floor) };
  }
  return {
    ...own,
    storedBytes: createStoredBytes(db, now),
    storeBytes: createStoreBytes(db, now),
    async close() {
      await own.close();
      await packer.close();
    },
    blocksToPack: async (builtBefore, limit) =>
      (await blocksToPack(db, builtBefore, limit).execute()).map((r) => ({ projectId: r.project_id, firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq), minTs: Number(r.min_ts), maxTs: Number(r.max_ts) })),
    async preparePack(projectId, first, last, times) {
      const logs = await blockRows(db, projectId, first, last, times, sql);
      if (!logs) {
        await markKeptInRows(db, projectId, first).execute();
        return undefined;
      }
      return { projectId, firstSeq: first, lastSeq: last, logs: logs.length, data: await packer.pack(logs), times };
    },
    savePack,
    page: async (projectId, filter, before, limit) =>
      mergePage(reads, projectId, filter, before, limit, await repo.findPage(reads, projectId, await rowsPageFilter(projectId, filter, before, limit), before, limit, sql), (row) => row),
    async pageKeys(projectId, filter, before, limit, rowBytes = 0) {
      const hot = await repo.findPageKeys(reads, projectId, await rowsPageFilter(projectId, filter, before, limit), before, limit, sql);
      const keys: (repo.PageKey & { row?: repo.LogRowStored })[] = await mergePage(reads, projectId, filter, before, limit, hot, rowBytes > 0 ? (row) => ({ ...keyOf(row), row }) : keyOf);
      // Rows only on the leading keys within rowBytes: the keys of a long page hold no text.
      let bytes = 0;
      for (const k of keys) {
        bytes += k.bytes;
        if (bytes > rowBytes && k.row !== undefined) delete k.row;
      }
      return keys;
    },
    rowsAt: async (projectId, keys) => mergeRowsAt(reads, projectId, keys, await repo.findRowsAt(reads, projectId, keys, sql)),
    countByBucket: (projectId, filter, intervalMs) => repo.countByBucket(reads, projectId, filter, intervalMs, sql),
    countBySourceBucket: (projectId, filter, intervalMs, maxRows) => repo.countBySourceBucket(reads, projectId, filter, intervalMs, maxRows, sql),
    since: (projectId, afterSeq, upToSeq, limit, minTs, maxBytes) =>
      mergeSince(db, projectId, afterSeq, upToSeq, limit, minTs, maxBytes, (bytes) => repo.findSince(db, projectId, afterSeq, upToSeq, limit, minTs, bytes)),
    lastSeq: (projectId) => repo.lastSeq(db, projectId),
    projectsWithLogsBefore: async (plan, cutoff) => [...new Set([...(await repo.projectsWithLogsBefore(db, plan, cutoff)), ...(await projectsWithPacksBefore(db, plan, cutoff))])],
    deleteBlocksBefore: (plan, cutoff) => deleteBlocksBefore(db, plan, cutoff),
    projectsBehind: (blockLogs, limit) => projectsBehind(db, blockLogs, limit),
    indexState: (projectId) => indexState(reads, projectId),
    blocksInRange: (projectId, from, to, items) => blocksInRange(reads, projectId, from, to, items, sql),
    slicesInBlocks: (projectId, firstSeqs, items) => slicesInBlocks(reads, projectId, firstSeqs, items, sql),
    inSeqRange: async (projectId, filter, before, first, last, limit) => mergeSeqRange(reads, projectId, filter, before, first, last, limit, await repo.findInSeqRange(reads, projectId, filter, before, first, last, limit, sql)),
  };
}

/**
 * The logs slice as the rest of the app holds it (`services.logs`: routes, the CLI, tests). It
 * builds little: services.ts wires the parts (the engine's store, the ingest queue, the tail hub,
 * the index builder, search, stats, tails, retention), and this puts them behind one object and
 * orders their start and their close. It makes the node's lines for heavy reads and exports,
 * which the routes take slots of and tests look at.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { IndexBuilder } from './store/blocks/builder.js';
import type { Compactor } from './store/packs/compactor.js';
import type { CommitFanOut, CommitListener } from './live/commits.js';
import type { createIngest } from './ingest/ingest.js';
import type { IngestQueue } from './ingest/ingest-queue.js';
import type { LogReader } from './read/reader.js';
import type { createRetention } from './retention.js';
import type { createSearch } from './read/search.js';
import type { createStats } from './read/stats.js';
import type { createFacets } from './read/facets.js';
import type { createContext } from './read/context.js';
import { createHeavyReads } from './read/slots.js';
import { createExportSlots } from './read/export.js';
import type { LogStore } from './store/index.js';
import type { TailHub } from './live/tail.js';
import type { createTails } from './live/tails.js';

export type { CommitListener } from './live/commits.js';
export type { IngestResult } from './ingest/ingest.js';
export type { StatsResult } from './read/stats.js';
export { TAIL_RECHECK_MS } from './live/tails.js';

export type LogsService = ReturnType<typeof createLogsService>;

export function createLogsService(parts: {
  config: Pick<Config, 'searchIndex' | 'compactAfterMs'>;
  log: FastifyBaseLogger;
  store: LogStore;
  queue: IngestQueue;
  hub: TailHub;
  commits: CommitFanOut;
  reader: LogReader;
  indexBuilder: IndexBuilder;
  compactor: Compactor;
  ingest: ReturnType<typeof createIngest>;
  search: ReturnType<typeof createSearch>;
  stats: ReturnType<typeof createStats>;
  facets: ReturnType<typeof createFacets>;
  context: ReturnType<typeof createContext>;
  tails: ReturnType<typeof createTails>;
  retention: ReturnType<typeof createRetention>;
}) {
  const { config, log, store, queue, hub, commits, reader, indexBuilder, compactor, tails, retention } = parts;
  let listener: ReturnType<LogStore['listen']> | undefined;

  return {
    hub,
    queue,
    /** Alert counters written beside the log commits where the engine needs it (see LogStore.addAlertCounts). */
    addAlertCounts: store.addAlertCounts,

    /** Resolves when every log queued so far is committed. */
    drain(): Promise<void> {
      return queue.drain();
    },

    /** Calls `listener` after every commit, with the committed logs. */
    onCommit(fn: CommitListener): void {
      commits.add(fn);
    },

    /**
     * Checks every item, stores the good ones and answers only once they are durably committed.
     * Every item bad → 400 with the reasons.
     */
    ingest: parts.ingest,
    /** Newest first, keyset-paginated, every row read: for small pages (an alert test's sample). */
    search: parts.search.search,
    /**
     * The same page as keys, with the rows of its first chunk: written to the client a chunk at a
     * time (pageReads.body), so a page of large logs is never held whole.
     */
    searchPage: parts.search.page,
    /** The per-user line for searches (at most SEARCHES_PER_USER at once) and the page writer. */
    pageReads: parts.search.reads,
    /** The per-user line for stats, facets, fields and context (at most HEAVY_READS_PER_USER at once). */
    heavyReads: createHeavyReads(),
    /** The lines for exports: EXPORTS_PER_USER per user, EXPORTS_PER_NODE on this node. */
    exportSlots: createExportSlots(),
    stats: parts.stats.stats,
    /** Counts of a few fields' values (and their numbers' statistics) over the whole range and query. */
    facets: parts.facets.facets,
    /** The fields the selected logs hold, most common first. */
    fields: parts.facets.fields,
    /** The logs nearest a log on each side, optionally only those a query selects. */
    context: parts.context,
    /** Every selected log, newest first, a chunk at a time (an export). */
    exportRows: parts.search.exportRows,
    /**
     * Opens a live tail after checking ownership, the per-user cap and the node's cap. The tail ends
     * when its access token expires, when its login ends (logout, revoked) or when the project is
     * deleted or changes hands, whichever comes first.
     */
    openTail: tails.openTail,
    /** Ends the tails whose authority has lapsed: an expired token, an ended login, a project gone or given away. */
    recheckTails: tails.recheckTails,
    /** Deletes logs past their plan's retention, in bounded batches, keeping logCount exact. */
    runRetention: retention.runRetention,

    async start(): Promise<void> {
      // A commit of nothing: the writer is up before the server takes requests. On SQLite its thread
      // loads (under tsx, compiles) its modules first, which would otherwise share the first seconds'
      // CPU with the first requests (hostile-* tests measured a bystander's /healthz p99 over 100 ms).
      await store.writer.write([]);
      // Other nodes' commits reach this node's tails (where the engine has other nodes).
      listener = store.listen({
        onCommit: (projectId, lastSeq, count, minTs) => hub.remote(projectId, lastSeq, count, minTs),
        onResync: () => void hub.resync().catch((err: unknown) => log.warn({ err }, 'tail resync failed')),
      });
      await listener.ready;
      retention.start();
      tails.start();
      // SEARCH_INDEX=off: searches scan; blocks are still summarised where they are to be packed
      // (a pack is a summarised block). buildIndex() always builds.
      if (config.searchIndex || config.compactAfterMs !== undefined) indexBuilder.start();
      if (config.compactAfterMs !== undefined) compactor.start();
    },

    /** Summarises what is due for the skip index now (tests; the builder also runs on its own). */
    buildIndex(): Promise<number> {
      return indexBuilder.runOnce();
    },

    /** Packs what is due now (tests; the compactor also runs on its own when COMPACT_AFTER is set). */
    compact(): Promise<number> {
      return compactor.runOnce();
    },

    /**
     * Test hook: search with the index where it helps (on), wherever it can be used (forced), with
     * every block saying "maybe" (all-maybe, forced too), or without it (off).
     */
    setSearchIndex: reader.setSearchIndex,

    /** What the last search through the skip index read. */
    lastIndexReport: reader.lastIndexReport,

    /** What scans that decide logs in the app have read, a chunk at a time (tests check the bound). */
    scanStats: () => reader.scanStats(),

    /** Reads of the store that searches, counts, contexts and exports have made (tests count what a read does after its client left). */
    readCount: () => reader.readCount(),

    /** Live tails open on this node. */
    openTails(): number {
      return hub.totalOpen;
    },

    /** Ends live tails (so the server can close). */
    closeTails(): void {
      hub.closeAll();
    },

    /** Waits for queued logs to commit, then stops the writer and the listener. */
    async close(): Promise<void> {
      const retentionStopped = retention.stop();
      tails.stop();
      await indexBuilder.stop();
      await compactor.stop();
      hub.closeAll();
      await queue.drain();
      await retentionStopped;
      await store.close();
      await listener?.close();
    },
  };
}

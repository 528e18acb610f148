/**
 * The log store on SQLite: one node owns the file. Logs are written, and deleted, by the writer's own
 * thread and connection (sqlite-writer.ts); everything else runs on the app's connection.
 */
import type { Db } from '../../../db/types.js';
import { summaryRows } from './blocks/rows.js';
import { summarise } from './blocks/store.js';
import { withSharedQueries, type LogStore, type LogStoreDeps } from './index.js';
import { createSqliteWriter } from './sqlite-writer.js';
import { createPacker } from './packs/packer.js';
import { sqliteSql } from './sqlite-sql.js';

/** Logs a project deletion takes away per step before its last transaction. */
export const PURGE_BATCH = 2000;

/** SQLite result codes of a database that cannot write: full, I/O error, busy or locked, read-only, cannot open, corrupt. */
const UNAVAILABLE_CODES = /^SQLITE_(?:FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|CORRUPT|NOTADB)/;
/** The same by message: the writer's thread passes on only the message (sqlite-writer.ts); or the writer was closed. */
const UNAVAILABLE_MESSAGE = /database or disk is full|disk I\/O error|database is locked|readonly database|unable to open database|database disk image is malformed|log writer is closed/i;

/** A failed write says SQLite cannot write at all (LogStore.isUnavailable). */
export function sqliteUnavailable(err: unknown): boolean {
  const { code, message } = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

export function createSqliteLogStore(db: Db, file: string, deps: Pick<LogStoreDeps, 'now'>): LogStore {
  const writer = createSqliteWriter(file);
  const built = { timed: 0, bySeq: 0 };
  return withSharedQueries(db, {
    writer,
    addAlertCounts: (counts, ruleIds, from) => writer.addAlertCounts(counts, ruleIds, from),
    reads: db,
    sql: sqliteSql,
    // No partitions: retention's batches delete every expired log.
    expireWhole: async () => 0,
    maintain: async () => {},
    // Retention's batches, like a purge's steps, run on the writer's thread: on this connection each
    // would hold the event loop while it deleted, and while it waited for the writer's commits.
    deleteOlderThan: (projectId, cutoff, batch) => writer.deleteStep(projectId, batch, cutoff),
    async purgeProject(projectId) {
      // Bounded steps on the writer's thread: the event loop neither deletes nor waits for the write
      // lock, and other tenants' commits wait for one step at most.
      while ((await writer.deleteStep(projectId, PURGE_BATCH, null)) > 0);
    },
    deleteCounts: () => writer.deleteCounts(),
    async buildBlock(projectId, first, last) {
      // Nobody else builds: one node owns the file. The summary is computed first, then saved in one
      // transaction, so a process killed mid-save leaves the block without a summary, never half of one.
      // The writer's thread saves it: on this connection the event loop would wait for the write lock
      // while the writer commits logs.
      const s = await summarise(db, sqliteSql, projectId, first, last);
      await writer.saveSummary(summaryRows(projectId, s, deps.now()));
      // By seq alone: one table, read through its (project_id, seq) index, with nothing to narrow.
      built.bySeq++;
      return true;
    },
    builtBlocks: () => ({ ...built }),
    listen: () => ({ ready: Promise.resolve(), close: async () => {} }),
    // SQLite has no statement timeout (the search's rounds and deadline bound the work), and its
    // busy errors are not worth a client's retry: they stay 500s.
    isTimeout: () => false,
    isRetryable: () => false,
    isUnavailable: sqliteUnavailable,
    close: () => writer.close(),
    // Packs are saved by the writer's thread, like summaries: the rows' deletion is a write.
    savePack: (pack) => writer.savePack(pack),
    packer: createPacker(),
  }, deps.now);
}

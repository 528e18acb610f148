import { Worker } from 'node:worker_threads';
import { threadModule } from '../../../thread-module.js';
import type { AlertCount, AlertCountRow, CommitResult, LogWriter } from './writer.js';
import { toColumns } from './batch.js';
import type { WriterMessage } from './sqlite-writer.worker.js';
import type { DeleteCounts, PackOutcome, PackToSave } from './index.js';
import type { BlockRowValues, BloomRowValues } from './blocks/rows.js';

/** The SQLite writer also writes alert counters (see LogStore.addAlertCounts), the skip index's summaries, and deletes logs in steps (retention, a project's purge). */
export interface SqliteLogWriter extends LogWriter {
  addAlertCounts(counts: AlertCount[], ruleIds: string[], from: number): Promise<AlertCountRow[]>;
  /** Saves a block's summary rows in one transaction; false when the block had one already. */
  saveSummary(rows: { block: BlockRowValues; blooms: BloomRowValues[] }): Promise<boolean>;
  /**
   * One step of deleting a project's logs (the worker's deleteStep): its `batch` oldest, of those
   * older than `before` when given, counts kept exact; with no `before`, once the logs are gone,
   * some of its block summaries. How many went; 0 when nothing is left.
   */
  deleteStep(projectId: string, batch: number, before: number | null): Promise<number>;
  /** The steps that took logs so far, as the thread counted them (LogStore.deleteCounts). */
  deleteCounts(): Promise<DeleteCounts>;
  /** Saves a block's pack in place of its rows, in one transaction (the worker's savePack). */
  savePack(pack: PackToSave): Promise<PackOutcome>;
}

/** Commits through the writer's own thread and connection (sqlite-writer.worker.ts). */
export function createSqliteWriter(file: string): SqliteLogWriter {
  const pending = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let worker: Worker | undefined;
  let closed = false;

  function start(): Worker {
    const { url, execArgv } = threadModule(import.meta.url, './sqlite-writer.worker');
    const w = new Worker(url, {
      execArgv,
      workerData: { file },
      // The thread holds one commit's columns at a time (INGEST_COMMIT_MAX_LOGS logs, a few MB):
      // small heaps keep its share of the server's memory small under sustained ingest.
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    w.on('message', (msg: { id: number; results?: never; error?: string }) => {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (pending.size === 0) w.unref();
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
    // An idle thread does not keep the process alive (one waiting for a commit does).
    w.unref();
    return w;
  }

  function call<R>(message: WriterMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never): Promise<R> {
    if (closed) return Promise.reject(new Error('log writer is closed'));
    worker ??= start();
    const id = nextId++;
    const w = worker;
    return new Promise<R>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (r: never) => void, reject });
      w.ref();
      w.postMessage({ id, ...message });
    });
  }

  // Started now rather than at the first commit: loading the thread's modules takes a few hundred
  // milliseconds on a busy machine, better spent while the server starts than by the first request.
  worker = start();

  return {
    write(batches) {
      return call<(CommitResult | null)[]>({ batches: batches.map(toColumns) });
    },
    addAlertCounts(counts, ruleIds, from) {
      return call<AlertCountRow[]>({ counts, ruleIds, from });
    },
    saveSummary({ block, blooms }) {
      return call<boolean>({ block, blooms });
    },
    deleteStep(projectId, batch, before) {
      return call<number>({ deleteFrom: projectId, batch, before });
    },
    deleteCounts() {
      return call<DeleteCounts>({ deleteCounts: true });
    },
    savePack(pack) {
      return call<PackOutcome>({ pack });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      if (!w) return;
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.ref();
        w.postMessage({ close: true } satisfies WriterMessage);
      });
    },
  };
}

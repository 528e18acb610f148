import { AppError } from '../../errors.js';
import type { Batch, CommitResult, LogWriter } from './writer.js';

export interface Committed extends CommitResult {
  batch: Batch;
}

/**
 * The bounded queue in front of the log writer. Requests wait here until their logs are committed;
 * whatever is waiting when the writer is free goes into the next transaction together (group
 * commit: one fsync for many requests). When more logs wait than `maxQueuedLogs`, new requests are
 * refused with 503 OVERLOADED and Retry-After instead of letting latency grow without bound.
 */
export class IngestQueue {
  #waiting: { batch: Batch; resolve: (result: CommitResult | null) => void; reject: (err: unknown) => void }[] = [];
  #queuedLogs = 0;
  #running = false;
  #idle: (() => void)[] = [];
  #behind: (() => boolean)[] = [];

  constructor(
    private readonly writer: LogWriter,
    private readonly options: { maxQueuedLogs: number; maxLogsPerCommit: number; onCommit: (committed: Committed[]) => void },
  ) {}

  get queuedLogs(): number {
    return this.#queuedLogs;
  }

  /** Also refuses new batches (503) while `check` says work that follows the commit is too far behind. */
  shedWhen(check: () => boolean): void {
    this.#behind.push(check);
  }

  /** Resolves once the batch is durably committed (with where it went), or with null if the project is gone. */
  submit(batch: Batch): Promise<CommitResult | null> {
    if ((this.#queuedLogs > 0 && this.#queuedLogs + batch.rows.length > this.options.maxQueuedLogs) || this.#behind.some((check) => check())) {
      return Promise.reject(new AppError('OVERLOADED', 'Ingestion is at capacity; retry after the delay in Retry-After.', { retryAfter: 1 }));
    }
    this.#queuedLogs += batch.rows.length;
    const done = new Promise<CommitResult | null>((resolve, reject) => this.#waiting.push({ batch, resolve, reject }));
    void this.#run();
    return done;
  }

  /** Resolves when nothing is waiting or being written. */
  drain(): Promise<void> {
    if (!this.#running && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#waiting.length > 0) {
        const group = [];
        let logs = 0;
        while (this.#waiting.length > 0 && (group.length === 0 || logs + this.#waiting[0]!.batch.rows.length <= this.options.maxLogsPerCommit)) {
          const next = this.#waiting.shift()!;
          logs += next.batch.rows.length;
          group.push(next);
        }
        try {
          const results = await this.writer.write(group.map((g) => g.batch));
          const committed: Committed[] = [];
          group.forEach((g, i) => {
            const result = results[i] ?? null;
            if (result !== null) committed.push({ batch: g.batch, ...result });
            g.resolve(result);
          });
          if (committed.length > 0) this.options.onCommit(committed);
        } catch (err) {
          for (const g of group) g.reject(err);
        } finally {
          this.#queuedLogs -= logs;
        }
      }
    } finally {
      this.#running = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { LogRowStored } from '../logs/repository.js';

/**
 * Rounds start at least this far apart: under load one round takes every commit of the last 50 ms
 * (on SQLite, each round's counter write competes with the log writer for the one write lock),
 * while a lone log is evaluated at once.
 */
export const MIN_ROUND_GAP_MS = 50;

/**
 * Committed logs waiting for alert evaluation, which runs after the 202, off the request's path.
 * One evaluation runs at a time; whatever was committed meanwhile is taken together by the next,
 * so under load many commits share one round of statements. `backlog` (logs waiting) lets ingestion
 * shed load before the backlog grows without bound.
 */
export class EvaluationQueue {
  #pending = new Map<string, LogRowStored[]>();
  #backlog = 0;
  #running: Promise<void> | undefined;

  constructor(
    private readonly evaluate: (work: Iterable<[string, LogRowStored[]]>) => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Logs committed but not yet evaluated. */
  get backlog(): number {
    return this.#backlog;
  }

  add(projectId: string, rows: LogRowStored[]): void {
    const pending = this.#pending.get(projectId);
    if (pending) for (const row of rows) pending.push(row);
    else this.#pending.set(projectId, rows.slice());
    this.#backlog += rows.length;
    this.#running ??= this.#run();
  }

  /** Resolves when every log added so far has been evaluated. */
  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #run(): Promise<void> {
    try {
      let last = -Infinity;
      while (this.#pending.size > 0) {
        const wait = last + MIN_ROUND_GAP_MS - performance.now();
        if (wait > 0) await sleep(wait);
        last = performance.now();
        const work = this.#pending;
        this.#pending = new Map();
        let rows = 0;
        for (const list of work.values()) rows += list.length;
        try {
          await this.evaluate(work);
        } catch (err) {
          this.onError(err);
        } finally {
          this.#backlog -= rows;
        }
      }
    } finally {
      this.#running = undefined;
    }
  }
}

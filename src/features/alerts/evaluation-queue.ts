import { batchBytes } from '../logs/store/batch.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogRowStored } from '../logs/store/repository.js';

/**
 * Rounds start at least this far apart: under load one round takes every commit of the last 50 ms
 * (on SQLite, each round's counter write competes with the log writer for the one write lock),
 * while a lone log is evaluated at once.
 */
export const MIN_ROUND_GAP_MS = 50;


/**
 * Committed logs waiting for alert evaluation, which runs after the 202, off the request's path.
 * One evaluation runs at a time; whatever was committed meanwhile is taken together by the next,
 * so under load many commits share one round of statements. The backlog (logs and bytes waiting,
 * in all and per project) lets ingestion shed load before it grows without bound: `pressure()`.
 */
export class EvaluationQueue {
  #pending = new Map<string, LogRowStored[]>();
  #backlog = 0;
  #backlogBytes = 0;
  /** Logs and bytes waiting (or being evaluated) per project. */
  #held = new Map<string, { logs: number; bytes: number }>();
  #running: Promise<void> | undefined;

  constructor(
    /** Evaluates a round; answers the logs it could not decide yet (costly patterns), per project, for the next round. */
    private readonly evaluate: (work: Iterable<[string, LogRowStored[]]>) => Promise<Map<string, LogRowStored[]> | void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Logs committed but not yet evaluated. */
  get backlog(): number {
    return this.#backlog;
  }

  /** Bytes of the logs committed but not yet evaluated (message, source and metadata). */
  get backlogBytes(): number {
    return this.#backlogBytes;
  }

  /**
   * Whether ingestion should wait for evaluation: `'all'` once the whole backlog reaches `bounds`
   * (logs or bytes), `'project'` once one project's part of it reaches `share` of them (so one
   * tenant's alert load cannot make everyone wait), else undefined.
   */
  pressure(projectId: string, bounds: { logs: number; bytes: number }, share = 0.25): 'all' | 'project' | undefined {
    if (this.#backlog >= bounds.logs || this.#backlogBytes >= bounds.bytes) return 'all';
    const mine = this.#held.get(projectId);
    if (mine !== undefined && (mine.logs >= bounds.logs * share || mine.bytes >= bounds.bytes * share)) return 'project';
    return undefined;
  }

  add(projectId: string, rows: LogRowStored[]): void {
    this.#add(projectId, rows, false);
  }

  /** Adds rows; `first`: before the project's logs already waiting (logs carried over from a round go before those committed during it). */
  #add(projectId: string, rows: LogRowStored[], first: boolean): void {
    const bytes = batchBytes(rows);
    const pending = this.#pending.get(projectId);
    if (pending && first) this.#pending.set(projectId, rows.concat(pending));
    else if (pending) for (const row of rows) pending.push(row);
    else this.#pending.set(projectId, rows.slice());
    const held = this.#held.get(projectId);
    if (held) {
      held.logs += rows.length;
      held.bytes += bytes;
    } else this.#held.set(projectId, { logs: rows.length, bytes });
    this.#backlog += rows.length;
    this.#backlogBytes += bytes;
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
        try {
          const leftovers = await this.evaluate(work);
          // Each project's logs are evaluated oldest first: what a round left undecided comes first in the next.
          if (leftovers) for (const [projectId, rest] of leftovers) this.#add(projectId, rest, true);
        } catch (err) {
          this.onError(err);
        } finally {
          for (const [projectId, list] of work) {
            const bytes = batchBytes(list);
            this.#backlog -= list.length;
            this.#backlogBytes -= bytes;
            const held = this.#held.get(projectId)!;
            held.logs -= list.length;
            held.bytes -= bytes;
            if (held.logs <= 0) this.#held.delete(projectId);
          }
        }
      }
    } finally {
      this.#running = undefined;
    }
  }
}

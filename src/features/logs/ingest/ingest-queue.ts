import { AppError } from '../../../errors.js';
import { IngestAdmission, type Admitted } from './admission.js';
import { MAX_BODY_BYTES } from './body.js';
import { batchBytes } from '../store/batch.js';
import type { Batch, CommitResult, Committed, LogWriter } from '../store/writer.js';

/**
 * What a check given to `shedWhen` says about a new batch: `'all'` refuses every project (503),
 * `'project'` refuses only the batch's own project (429, it is over its share), `undefined` lets it in.
 */
export type Shed = 'all' | 'project' | undefined;

export interface IngestQueueOptions {
  /** Logs, and bytes of logs, that may wait (or be in the commit being written): past either, 503. */
  maxQueuedLogs: number;
  maxQueuedBytes: number;
  /** The most logs, and bytes of logs, one commit takes; a lone larger batch still goes alone. */
  maxLogsPerCommit: number;
  maxBytesPerCommit: number;
  /**
   * The most bytes of logs one batch (one request's logs) may come to, even alone: past it, 413.
   * Default: twice a commit's bytes or twice the 5 MiB body limit, whichever is more (a body's logs
   * can be larger than the body: OTLP copies resource attributes into every record), and never more
   * than maxQueuedBytes.
   */
  maxBytesPerBatch?: number;
  /** The part of `maxQueuedLogs` and of `maxQueuedBytes` one project may hold; past it, that project gets 429. Default 1/4. */
  projectShare?: number;
  /**
   * Request body bytes one project may have in flight (admitted, not yet answered): past it, that
   * project gets 429 before its body is read (see admit). Default: `maxBytesPerCommit`, one
   * commit's worth. A bound of its own, not the commit size: changing one must not move the other.
   */
  maxInFlightBytesPerProject?: number;
  onCommit: (committed: Committed[]) => void;
  /**
   * Whether a failed commit says the database cannot write at all (LogStore.isUnavailable): then a
   * failed group is not written again batch by batch.
   */
  isUnavailable: (err: unknown) => boolean;
  /** Told when a commit of several batches failed (they are then written one by one), and when onCommit throws. */
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

interface Waiting {
  batch: Batch;
  logs: number;
  bytes: number;
  resolve: (result: CommitResult | null) => void;
  reject: (err: unknown) => void;
}

/** How far past a batch that does not fit the current commit the queue looks for smaller ones that do. */
const LOOK_AHEAD = 256;

/**
 * The bounded queue in front of the log writer. Requests wait here until their logs are committed;
 * whatever is waiting when the writer is free goes into the next transaction together (group
 * commit: one fsync for many requests), up to a number of logs and of bytes per commit (the SQLite
 * writer's thread has a small heap). A batch that does not fit lets smaller ones behind it join the
 * commit, so a small request does not wait behind a line of large ones.
 *
 * Bounds, each with Retry-After: one project holding more than its share of the queue's logs or
 * bytes gets 429 RATE_LIMITED (it cannot fill the queue for everyone else); past the whole queue's
 * logs or bytes, or while work that follows the commit is too far behind, 503 OVERLOADED. A lone
 * batch is let in when nothing of its kind waits, so a request larger than a bound can pass; but
 * never one of more than maxBatchBytes (413 PAYLOAD_TOO_LARGE, whatever waits): one request's logs
 * can be far larger than its body (OTLP's resource attributes are copied into every record), and
 * the commit holds them all in memory at once, on SQLite in the writer thread's small heap.
 *
 * A commit of several batches that fails is retried batch by batch, each in its own transaction,
 * so a batch that the database refuses fails alone and never takes the others with it; unless the
 * database could not write at all (the store's isUnavailable), when they all fail at once.
 */
export class IngestQueue {
  #waiting: Waiting[] = [];
  #queuedLogs = 0;
  #queuedBytes = 0;
  #perProject = new Map<string, { logs: number; bytes: number }>();
  #running = false;
  #idle: (() => void)[] = [];
  #behind: ((projectId: string) => Shed)[] = [];
  readonly #shareLogs: number;
  readonly #shareBytes: number;
  readonly #maxBatchBytes: number;
  readonly #admission: IngestAdmission;

  constructor(
    private readonly writer: LogWriter,
    private readonly options: IngestQueueOptions,
  ) {
    const share = options.projectShare ?? 0.25;
    this.#shareLogs = Math.max(1, Math.floor(options.maxQueuedLogs * share));
    this.#shareBytes = Math.max(1, Math.floor(options.maxQueuedBytes * share));
    this.#maxBatchBytes = Math.min(options.maxQueuedBytes, options.maxBytesPerBatch ?? Math.max(2 * options.maxBytesPerCommit, 2 * MAX_BODY_BYTES));
    this.#admission = new IngestAdmission({ perProjectBytes: options.maxInFlightBytesPerProject ?? options.maxBytesPerCommit, totalBytes: options.maxQueuedBytes });
  }

  /**
   * Claims room for a request body before it is read (see IngestAdmission): each project may have
   * maxInFlightBytesPerProject of body bytes in flight, all projects together the queue's bytes
   * (maxQueuedBytes). Throws 429 or 503.
   */
  admit(projectId: string, bodyBytes: number): Admitted {
    return this.#admission.admit(projectId, bodyBytes);
  }

  /** Bytes of request bodies admitted and not yet answered. */
  get inFlightBytes(): number {
    return this.#admission.inFlightBytes;
  }

  get queuedLogs(): number {
    return this.#queuedLogs;
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** The logs and bytes one project may hold in the queue before its new batches get 429. */
  get projectShare(): { logs: number; bytes: number } {
    return { logs: this.#shareLogs, bytes: this.#shareBytes };
  }

  /** The most bytes of logs one batch may come to, whatever else waits: a larger one is refused (413). */
  get maxBatchBytes(): number {
    return this.#maxBatchBytes;
  }

  /** Also refuses new batches while `check` says work that follows the commit is too far behind (for everyone, or for that project). */
  shedWhen(check: (projectId: string) => Shed): void {
    this.#behind.push(check);
  }

  /**
   * Throws what submit would refuse a batch of `logs` logs and `bytes` bytes of logs for the project
   * with, now: 413 past maxBatchBytes, 429 over the project's share (or its work after the commit
   * too far behind), 503 past the queue's bounds. For a request to be refused before its logs are
   * normalised (with what it will at least hold), and while they are (with what they hold so far).
   */
  check(projectId: string, logs: number, bytes: number): void {
    if (bytes > this.#maxBatchBytes) throw tooLarge(this.#maxBatchBytes);
    const mine = this.#perProject.get(projectId);
    if (mine !== undefined && (mine.logs + logs > this.#shareLogs || mine.bytes + bytes > this.#shareBytes)) throw overShare('more logs waiting to be stored than its share of the ingest queue');
    for (const check of this.#behind) {
      const verdict = check(projectId);
      if (verdict === 'project') throw overShare('more logs waiting for alert evaluation than its share');
      if (verdict === 'all') throw overloaded();
    }
    if ((this.#queuedLogs > 0 && this.#queuedLogs + logs > this.options.maxQueuedLogs) || (this.#queuedBytes > 0 && this.#queuedBytes + bytes > this.options.maxQueuedBytes)) {
      throw overloaded();
    }
  }

  /** Resolves once the batch is durably committed (with where it went), or with null if the project is gone. */
  submit(batch: Batch): Promise<CommitResult | null> {
    const logs = batch.rows.length;
    const bytes = batchBytes(batch.rows);
    try {
      this.check(batch.projectId, logs, bytes);
    } catch (err) {
      return Promise.reject(err);
    }
    const mine = this.#perProject.get(batch.projectId);
    this.#queuedLogs += logs;
    this.#queuedBytes += bytes;
    if (mine === undefined) this.#perProject.set(batch.projectId, { logs, bytes });
    else {
      mine.logs += logs;
      mine.bytes += bytes;
    }
    const done = new Promise<CommitResult | null>((resolve, reject) => this.#waiting.push({ batch, logs, bytes, resolve, reject }));
    void this.#run();
    return done;
  }

  /** Resolves when nothing is waiting or being written. */
  drain(): Promise<void> {
    if (!this.#running && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The next commit: the first waiting batch, and any behind it that still fit. */
  #nextGroup(): Waiting[] {
    const { maxLogsPerCommit, maxBytesPerCommit } = this.options;
    const waiting = this.#waiting;
    const group: Waiting[] = [waiting[0]!];
    let logs = waiting[0]!.logs;
    let bytes = waiting[0]!.bytes;
    const rest: Waiting[] = [];
    let i = 1;
    for (; i < waiting.length && rest.length < LOOK_AHEAD; i++) {
      const w = waiting[i]!;
      if (logs + w.logs <= maxLogsPerCommit && bytes + w.bytes <= maxBytesPerCommit) {
        group.push(w);
        logs += w.logs;
        bytes += w.bytes;
      } else rest.push(w);
      if (logs >= maxLogsPerCommit || bytes >= maxBytesPerCommit) {
        i++;
        break;
      }
    }
    this.#waiting = i < waiting.length ? rest.concat(waiting.slice(i)) : rest;
    return group;
  }

  /** Frees a batch's place in the queue and answers its request. */
  #settle(w: Waiting, outcome: { result: CommitResult | null } | { error: unknown }): void {
    this.#queuedLogs -= w.logs;
    this.#queuedBytes -= w.bytes;
    const mine = this.#perProject.get(w.batch.projectId)!;
    mine.logs -= w.logs;
    mine.bytes -= w.bytes;
    if (mine.logs === 0) this.#perProject.delete(w.batch.projectId);
    if ('error' in outcome) w.reject(outcome.error);
    else w.resolve(outcome.result);
  }

  /** Answers the batches of a finished commit and reports the stored ones. */
  #committed(group: Waiting[], results: (CommitResult | null)[]): void {
    const committed: Committed[] = [];
    group.forEach((g, i) => {
      const result = results[i] ?? null;
      if (result !== null) committed.push({ batch: g.batch, ...result });
      this.#settle(g, { result });
    });
    if (committed.length === 0) return;
    try {
      this.options.onCommit(committed);
    } catch (err) {
      // The logs are stored and answered; what reacts to them must not stop the queue.
      this.options.log?.error({ err }, 'a commit listener failed');
    }
  }

  /**
   * Writes a group in one transaction and answers its batches. Answers 'split', with nothing
   * answered yet, when a group of several failed in a way one of its batches may have caused: each
   * is then to be written alone. When the database itself cannot write (the store's isUnavailable),
   * every batch alone would fail the same way after its own wait, so the whole group fails at once.
   */
  async #write(group: Waiting[]): Promise<'split' | undefined> {
    let results: (CommitResult | null)[];
    try {
      results = await this.writer.write(group.map((g) => g.batch));
    } catch (err) {
      if (group.length > 1 && !this.options.isUnavailable(err)) {
        this.options.log?.warn({ err, batches: group.length }, 'a group commit failed; writing its batches one by one');
        return 'split';
      }
      for (const g of group) this.#settle(g, { error: err });
      return undefined;
    }
    this.#committed(group, results);
    return undefined;
  }

  async #run(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#waiting.length > 0) {
        const group = this.#nextGroup();
        if ((await this.#write(group)) !== 'split') continue;
        // One batch may be what the database refused (or the group was too much at once): each
        // alone, in its own transaction, so only a batch that fails by itself is refused.
        for (const g of group) await this.#write([g]);
      }
    } finally {
      this.#running = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }
}

/** 429 for one project over its share; `what` says which backlog (storing, or the work after it). */
function overShare(what: string): AppError {
  return new AppError('RATE_LIMITED', `This project has ${what}; retry after the delay in Retry-After.`, { retryAfter: 1 });
}

function overloaded(): AppError {
  return new AppError('OVERLOADED', 'Ingestion is at capacity; retry after the delay in Retry-After.', { retryAfter: 1 });
}

/** 413 for a batch that could never be taken: retrying it cannot help, splitting it can. */
export function tooLarge(maxBytes: number): AppError {
  const mib = Math.round((maxBytes / 1048576) * 10) / 10;
  return new AppError('PAYLOAD_TOO_LARGE', `This request's logs come to more than ${mib.toLocaleString('en')} MiB once read (OTLP resource and scope attributes count once for every record that carries them); split it into smaller batches.`);
}

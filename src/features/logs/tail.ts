import type { FastifyBaseLogger } from 'fastify';
import { matches, type LogFilter } from './filter.js';
import type { LogRowStored } from './repository.js';

/** What the hub needs from storage. */
export interface TailSource {
  /** Logs of a project after `afterSeq` (up to `upToSeq` when given), in seq order, at most `limit`. */
  since(projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number): Promise<LogRowStored[]>;
  lastSeq(projectId: string): Promise<number | undefined>;
}

export interface TailSink {
  /** Sends one log; returns false when the client cannot keep up (the tail is then closed). */
  send(row: LogRowStored): boolean;
  close(): void;
}

const PAGE = 1000;

/** Logs that follow a known point: `prevSeq` was the project's newest log before `rows`. */
export interface Continuation {
  prevSeq: number;
  rows: LogRowStored[];
}

/**
 * One open tail. `seen` is the seq of the newest log of the project it has considered, matching or
 * not; logs are taken strictly in seq order, so a tail never repeats and never skips one. Logs at
 * hand are used when they continue from what the tail has seen; otherwise (a commit on another
 * node, a notification that overtook another) the missing ones are read from the database.
 */
class Tail {
  seen = 0;
  closed = false;
  #chain: Promise<void>;

  constructor(
    readonly projectId: string,
    private readonly filter: LogFilter,
    private readonly sink: TailSink,
    private readonly source: TailSource,
    start: Promise<number>,
    private readonly onError: (err: unknown) => void,
    /** Called once, when the tail closes (by the client, the hub, or an error). */
    private readonly onClosed: () => void,
  ) {
    this.#chain = start.then((seq) => {
      this.seen = seq;
    });
    this.#chain.catch(onError);
  }

  /** Brings the tail up to `target`. */
  advance(target: number, next?: Continuation): void {
    this.#chain = this.#chain
      .then(async () => {
        if (next && next.prevSeq <= this.seen) {
          this.#deliver(next.rows);
          if (this.seen >= target) return;
        }
        while (!this.closed && this.seen < target) {
          const rows = await this.source.since(this.projectId, this.seen, target, PAGE);
          if (rows.length === 0) return;
          this.#deliver(rows);
        }
      })
      .catch(this.onError);
  }

  #deliver(rows: LogRowStored[]): void {
    for (const row of rows) {
      if (this.closed) return;
      if (row.seq <= this.seen) continue;
      this.seen = row.seq;
      if (matches(this.filter, row) && !this.sink.send(row)) {
        this.close();
        return;
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sink.close();
    this.onClosed();
  }
}

export type TailHandle = Pick<Tail, 'close'>;

/** The live tails open on this node, fed by local commits and by other nodes' notifications. */
export class TailHub {
  #byProject = new Map<string, Set<Tail>>();
  #perUser = new Map<string, number>();
  /** Per project, the newest seq this node has handed to its tails. */
  #known = new Map<string, number>();

  constructor(
    private readonly source: TailSource,
    private readonly log: FastifyBaseLogger,
  ) {}

  openCount(userId: string): number {
    return this.#perUser.get(userId) ?? 0;
  }

  /**
   * Opens a tail. With `afterSeq` (from Last-Event-ID) it first replays what came after it;
   * without, it starts at the project's newest log.
   */
  open(userId: string, projectId: string, filter: LogFilter, sink: TailSink, afterSeq?: number): TailHandle {
    const start = afterSeq !== undefined ? Promise.resolve(afterSeq) : this.source.lastSeq(projectId).then((s) => s ?? 0);
    let set = this.#byProject.get(projectId);
    if (!set) this.#byProject.set(projectId, (set = new Set()));
    const tails = set;
    const tail: Tail = new Tail(
      projectId,
      filter,
      sink,
      this.source,
      start,
      (err) => {
        this.log.warn({ err, projectId }, 'live tail failed; closing it');
        tail.close();
      },
      () => {
        tails.delete(tail);
        if (tails.size === 0) this.#byProject.delete(projectId);
        const left = this.openCount(userId) - 1;
        if (left > 0) this.#perUser.set(userId, left);
        else this.#perUser.delete(userId);
      },
    );
    tails.add(tail);
    this.#perUser.set(userId, this.openCount(userId) + 1);
    // Catch up at once: replays after Last-Event-ID, and anything committed while opening.
    void start.then(async () => tail.advance((await this.source.lastSeq(projectId)) ?? 0)).catch(() => {});
    return tail;
  }

  isTailed(projectId: string): boolean {
    return this.#byProject.has(projectId);
  }

  /** Records that this node committed a project's logs up to `lastSeq` (so its own NOTIFY is skipped). */
  markCommitted(projectId: string, lastSeq: number): void {
    if (this.#byProject.has(projectId)) this.#known.set(projectId, Math.max(this.#known.get(projectId) ?? 0, lastSeq));
  }

  /** Logs committed on this node: handed over from memory. */
  publish(projectId: string, prevSeq: number, lastSeq: number, rows: LogRowStored[]): void {
    this.markCommitted(projectId, lastSeq);
    const tails = this.#byProject.get(projectId);
    if (!tails) return;
    for (const tail of tails) tail.advance(lastSeq, { prevSeq, rows });
  }

  /** Another node committed logs up to `lastSeq` (PostgreSQL NOTIFY): read them once for every tail here. */
  remote(projectId: string, lastSeq: number, count: number): void {
    const tails = this.#byProject.get(projectId);
    if (!tails || (this.#known.get(projectId) ?? 0) >= lastSeq) return;
    this.#known.set(projectId, lastSeq);
    const rows = this.source.since(projectId, lastSeq - count, lastSeq, PAGE).catch((err: unknown) => {
      this.log.warn({ err, projectId }, 'could not read logs for live tails');
      return [] as LogRowStored[];
    });
    void rows.then((r) => {
      for (const tail of this.#byProject.get(projectId) ?? []) tail.advance(lastSeq, { prevSeq: lastSeq - count, rows: r });
    });
  }

  /** After a lost notification connection: bring every tail up to date from the database. */
  async resync(): Promise<void> {
    for (const [projectId, tails] of this.#byProject) {
      const last = (await this.source.lastSeq(projectId)) ?? 0;
      for (const tail of tails) tail.advance(last);
    }
  }

  closeAll(): void {
    for (const tails of [...this.#byProject.values()]) for (const tail of [...tails]) tail.close();
  }
}

import type { FastifyBaseLogger } from 'fastify';
import { matchAll, type LogFilter } from '../filter.js';
import { nextTurn } from '../turns.js';
import { sseFrame } from '../present.js';
import type { LogRowStored } from '../store/repository.js';

/** What the hub needs from storage. */
export interface TailSource {
  /**
   * Logs of a project after `afterSeq` (up to `upToSeq` when given), in seq order, at most `limit`,
   * and at most `maxBytes` of text when given (but always one log when there is one).
   */
  since(projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number, minTs?: number, maxBytes?: number): Promise<LogRowStored[]>;
  lastSeq(projectId: string): Promise<number | undefined>;
}

export interface TailSink {
  /**
   * Sends logs (in seq order, already filtered, as SSE frames in `frames`). Returns false when the
   * client has not read what was sent before: the tail then pauses, and calls `resume` once, when
   * the client has caught up.
   */
  send(out: TailOutput, resume: () => void): boolean;
  /** Ends the stream; with a reason when the server ends it (expired token, lost access), for the client to show. */
  close(reason?: string): void;
}

/** What a tail sends for one run of logs: the logs that match, and their SSE frames as bytes. */
export interface TailOutput {
  rows: LogRowStored[];
  frames: Buffer;
}

function output(rows: LogRowStored[]): TailOutput {
  let text = '';
  for (const row of rows) text += sseFrame(row);
  return { rows, frames: Buffer.from(text) };
}

/** A filter as text: tails with the same text select the same logs. */
function filterKey(filter: LogFilter): string {
  return JSON.stringify([filter.from, filter.to, filter.levels, filter.source, filter.q, filter.pattern?.source, filter.query?.text]);
}

/** How long a tail's pattern may take over one run of logs; a log it cannot decide by then is not sent. */
const MATCH_BUDGET_MS = 10_000;

/**
 * What tails in step with a commit send: computed once per run of logs and filter, so ten tails
 * on the same filter cost one filtering, one serialisation and one encoding.
 */
class SharedOutputs {
  #byRows = new WeakMap<LogRowStored[], Map<string, Promise<TailOutput>>>();

  constructor(private readonly log: FastifyBaseLogger) {}

  get(rows: LogRowStored[], key: string, filter: LogFilter, projectId: string): Promise<TailOutput> {
    let byFilter = this.#byRows.get(rows);
    if (!byFilter) this.#byRows.set(rows, (byFilter = new Map()));
    let out = byFilter.get(key);
    if (!out) byFilter.set(key, (out = this.select(filter, rows, projectId).then(output)));
    return out;
  }

  /**
   * The logs of `rows` that `filter` selects, its pattern tested through the regex runner (for one
   * tail's own run, not shared). Logs it could not decide within MATCH_BUDGET_MS are not sent, and
   * said so in the server's log with their count.
   */
  async select(filter: LogFilter, rows: LogRowStored[], projectId: string): Promise<LogRowStored[]> {
    const verdicts = await matchAll(filter, rows, projectId, Date.now() + MATCH_BUDGET_MS);
    let undecided = 0;
    const selected = rows.filter((_, i) => {
      if (verdicts[i] === undefined) undecided++;
      return verdicts[i] === true;
    });
    if (undecided > 0) this.log.warn({ projectId, undecided, budgetMs: MATCH_BUDGET_MS }, 'live tail: logs not sent, the filter could not decide them in time');
    return selected;
  }
}

/**
 * Bytes of log text a tail that catches up (a replay from Last-Event-ID, a client that paused)
 * reads from the database and tests per slice, with a turn of the event loop between slices: a
 * slice of large logs that the filter all refuses still costs only so much before others' requests
 * are served.
 */
export const TAIL_SLICE_BYTES = 512 * 1024;

/** What tails that caught up read, for tests and the bench: slices, and the largest one's bytes of text. */
export interface ReplayStats {
  slices: number;
  rows: number;
  maxSliceBytes: number;
}

/** A stored log's text, in characters (bytes for ASCII). */
function textBytes(row: LogRowStored): number {
  return row.message.length + (row.metadata?.length ?? 0) + (row.source?.length ?? 0);
}


/** Logs read from the database at a time (a log is at most ~130 KB, so a page is at most ~26 MB). */
const PAGE = 200;
/** Logs per tailed project kept in memory, so tails that paused for a slow client catch up without a database read. */
const RECENT_ROWS = 10_000;
/**
 * Bytes of recent logs kept per tailed project, and for all tailed projects together: the window is
 * bounded by bytes as well as by logs, so large logs cannot make one open tail hold hundreds of MB.
 */
export const RECENT_MAX_BYTES = 8 * 1024 * 1024;
export const RECENT_TOTAL_BYTES = 64 * 1024 * 1024;

/** What a stored log costs in memory, roughly: its text as UTF-16, room for its SSE frame, and the object. */
function rowBytes(row: LogRowStored): number {
  return (row.message.length + (row.metadata?.length ?? 0) + (row.source?.length ?? 0)) * 3 + 200;
}

/**
 * The newest logs of one project that this node has seen, without a gap: every log after
 * `prevSeq`, in seq order. Tails share the row objects (and so each log's serialised frame).
 */
class Recent {
  rows: LogRowStored[] = [];
  bytes = 0;
  constructor(public prevSeq: number) {}

  get lastSeq(): number {
    return this.rows.length > 0 ? this.rows[this.rows.length - 1]!.seq : this.prevSeq;
  }

  /** Adds logs that follow `prevSeq`, then keeps at most `maxBytes` (and RECENT_ROWS logs) of the newest. */
  append(prevSeq: number, rows: LogRowStored[], maxBytes: number): void {
    if (prevSeq !== this.lastSeq) {
      // A gap (another node's commit not seen yet, or an out-of-order notification): start again.
      this.rows = [];
      this.bytes = 0;
      this.prevSeq = prevSeq;
    }
    for (const row of rows) {
      this.rows.push(row);
      this.bytes += rowBytes(row);
    }
    if (this.rows.length > 2 * RECENT_ROWS || this.bytes > maxBytes) {
      // Trim to half the bounds, so trimming (a copy of the array) happens once per many appends.
      let drop = Math.max(0, this.rows.length - RECENT_ROWS);
      let bytes = this.bytes;
      for (let i = 0; i < drop; i++) bytes -= rowBytes(this.rows[i]!);
      while (drop < this.rows.length && bytes > maxBytes / 2) bytes -= rowBytes(this.rows[drop++]!);
      if (drop > 0) {
        this.prevSeq = this.rows[drop - 1]!.seq;
        this.rows = this.rows.slice(drop);
        this.bytes = bytes;
      }
    }
  }

  /** Logs after `seen` (up to `upTo`, at most `limit` and `maxBytes` of text but one), or undefined when they are not all here. */
  after(seen: number, upTo: number | undefined, limit: number, maxBytes = Number.POSITIVE_INFINITY): LogRowStored[] | undefined {
    if (seen < this.prevSeq) return undefined;
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid]!.seq <= seen) lo = mid + 1;
      else hi = mid;
    }
    let end = Math.min(this.rows.length, lo + limit);
    if (upTo !== undefined) while (end > lo && this.rows[end - 1]!.seq > upTo) end--;
    let bytes = 0;
    for (let i = lo; i < end; i++) {
      bytes += textBytes(this.rows[i]!);
      if (bytes > maxBytes && i > lo) {
        end = i;
        break;
      }
    }
    return this.rows.slice(lo, end);
  }
}

/** Logs that follow a known point: `prevSeq` was the project's newest log before `rows`. */
export interface Continuation {
  prevSeq: number;
  rows: LogRowStored[];
}

/** Who opened a tail, and until when that authority holds. */
export interface TailAuthority {
  userId: string;
  /** The login (refresh-token family) the access token belongs to. */
  sessionId: string;
  /** When the access token expires (epoch ms): the tail ends then at the latest. */
  expiresAt: number;
}

/**
 * One open tail. `seen` is the seq of the newest log of the project it has considered, matching or
 * not; logs are taken strictly in seq order, so a tail never repeats and never skips one. Logs at
 * hand are used when they continue from what the tail has seen; otherwise (a commit on another
 * node, a notification that overtook another) the missing ones are read from the database.
 */
class Tail {
  seen = 0;
  readonly #filterKey: string;
  closed = false;
  /** The client is behind: nothing is sent until it has read what it has; then the tail catches up from the database. */
  paused = false;
  /** The newest seq of the project the tail has been told about. */
  #target = 0;
  #chain: Promise<void>;

  constructor(
    readonly projectId: string,
    readonly authority: TailAuthority,
    private readonly filter: LogFilter,
    private readonly sink: TailSink,
    private readonly source: TailSource,
    start: Promise<number>,
    private readonly onError: (err: unknown) => void,
    /** Called once, when the tail closes (by the client, the hub, or an error). */
    private readonly onClosed: () => void,
    private readonly shared: SharedOutputs,
    private readonly replays: ReplayStats,
  ) {
    this.#filterKey = filterKey(filter);
    this.#chain = start.then((seq) => {
      this.seen = seq;
    });
    this.#chain.catch(onError);
  }

  /** Brings the tail up to `target`. */
  advance(target: number, next?: Continuation): void {
    this.#target = Math.max(this.#target, target);
    if (this.paused) return;
    this.#chain = this.#chain
      .then(async () => {
        if (this.paused || this.closed) return;
        if (next && next.prevSeq <= this.seen) {
          await this.#deliver(next.rows);
          if (this.seen >= target) return;
        }
        // Catching up: slices of at most TAIL_SLICE_BYTES, a turn of the event loop after each.
        while (!this.closed && !this.paused && this.seen < target) {
          const rows = await this.source.since(this.projectId, this.seen, target, PAGE, undefined, TAIL_SLICE_BYTES);
          if (rows.length === 0) return;
          let bytes = 0;
          for (const row of rows) bytes += textBytes(row);
          this.replays.slices++;
          this.replays.rows += rows.length;
          this.replays.maxSliceBytes = Math.max(this.replays.maxSliceBytes, bytes);
          await this.#deliver(rows);
          await nextTurn();
        }
      })
      .catch(this.onError);
  }

  async #deliver(rows: LogRowStored[]): Promise<void> {
    if (this.closed || rows.length === 0) return;
    let out: TailOutput;
    if (rows[0]!.seq > this.seen) {
      // In step: every log of the run is new to this tail, as to every other tail in step.
      this.seen = rows[rows.length - 1]!.seq;
      out = await this.shared.get(rows, this.#filterKey, this.filter, this.projectId);
    } else {
      const fresh = rows.filter((row) => row.seq > this.seen);
      if (fresh.length === 0) return;
      this.seen = fresh[fresh.length - 1]!.seq;
      out = output(await this.shared.select(this.filter, fresh, this.projectId));
    }
    if (this.closed) return;
    if (out.rows.length > 0 && !this.sink.send(out, this.#resume)) this.paused = true;
  }

  readonly #resume = () => {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.advance(this.#target);
  };

  /** Ends the tail; `reason`, when given, is told to the client before the stream ends. */
  close(reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.sink.close(reason);
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
  #recent = new Map<string, Recent>();
  readonly #shared: SharedOutputs;
  /** What tails that caught up read (tests and the bench). */
  readonly replayStats: ReplayStats = { slices: 0, rows: 0, maxSliceBytes: 0 };
  /** What tails read: the recent logs in memory when they cover the request, else the database. */
  readonly #source: TailSource;

  constructor(
    private readonly source: TailSource,
    private readonly log: FastifyBaseLogger,
    /** The service's clock, which token expiry times are on. */
    private readonly now: () => number = Date.now,
  ) {
    this.#shared = new SharedOutputs(log);
    this.#source = {
      since: (projectId, afterSeq, upToSeq, limit, minTs, maxBytes) => {
        const rows = this.#recent.get(projectId)?.after(afterSeq, upToSeq, limit, maxBytes);
        return rows ? Promise.resolve(rows) : source.since(projectId, afterSeq, upToSeq, limit, minTs, maxBytes);
      },
      lastSeq: (projectId) => source.lastSeq(projectId),
    };
  }

  #remember(projectId: string, prevSeq: number, rows: LogRowStored[]): void {
    let recent = this.#recent.get(projectId);
    if (!recent) this.#recent.set(projectId, (recent = new Recent(prevSeq)));
    // Every tailed project may keep its share of the total, and no more than RECENT_MAX_BYTES.
    recent.append(prevSeq, rows, Math.min(RECENT_MAX_BYTES, RECENT_TOTAL_BYTES / Math.max(1, this.#recent.size)));
  }

  /** Bytes of recent logs held for tails, all projects together (for tests and metrics). */
  get recentBytes(): number {
    let n = 0;
    for (const r of this.#recent.values()) n += r.bytes;
    return n;
  }

  openCount(userId: string): number {
    return this.#perUser.get(userId) ?? 0;
  }

  /** Every tail open on this node. */
  get totalOpen(): number {
    let n = 0;
    for (const c of this.#perUser.values()) n += c;
    return n;
  }

  /**
   * Opens a tail. With `afterSeq` (from Last-Event-ID) it first replays what came after it;
   * without, it starts at the project's newest log.
   */
  async open(authority: TailAuthority, projectId: string, filter: LogFilter, sink: TailSink, afterSeq?: number): Promise<TailHandle> {
    const { userId } = authority;
    const start = afterSeq !== undefined ? Promise.resolve(afterSeq) : this.source.lastSeq(projectId).then((s) => s ?? 0);
    let set = this.#byProject.get(projectId);
    if (!set) this.#byProject.set(projectId, (set = new Set()));
    const tails = set;
    let expiry: NodeJS.Timeout | undefined;
    const tail: Tail = new Tail(
      projectId,
      authority,
      filter,
      sink,
      this.#source,
      start,
      (err) => {
        this.log.warn({ err, projectId }, 'live tail failed; closing it');
        tail.close();
      },
      () => {
        clearTimeout(expiry);
        tails.delete(tail);
        if (tails.size === 0) {
          this.#byProject.delete(projectId);
          this.#recent.delete(projectId);
        }
        const left = this.openCount(userId) - 1;
        if (left > 0) this.#perUser.set(userId, left);
        else this.#perUser.delete(userId);
      },
      this.#shared,
      this.replayStats,
    );
    tails.add(tail);
    this.#perUser.set(userId, this.openCount(userId) + 1);
    // The tail's authority is its access token: it ends when the token expires, at the latest.
    // (A timer holds at most ~24 days; tokens live far less.)
    expiry = setTimeout(() => tail.close('the access token expired; reconnect with a fresh one'), Math.min(2 ** 31 - 1, Math.max(0, authority.expiresAt - this.now())));
    expiry.unref();
    // Catch up at once: replays after Last-Event-ID, and anything committed while opening.
    void start.then(async () => tail.advance((await this.source.lastSeq(projectId)) ?? 0)).catch(() => {});
    // Answer once the starting point is fixed: a log committed after the client hears back is
    // always after it, so the tail shows it.
    await start.catch(() => {});
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
    this.#remember(projectId, prevSeq, rows);
    for (const tail of tails) tail.advance(lastSeq, { prevSeq, rows });
  }

  /** Another node committed logs up to `lastSeq` (PostgreSQL NOTIFY): read them once for every tail here. */
  remote(projectId: string, lastSeq: number, count: number, minTs?: number): void {
    const tails = this.#byProject.get(projectId);
    if (!tails || (this.#known.get(projectId) ?? 0) >= lastSeq) return;
    this.#known.set(projectId, lastSeq);
    const rows = this.source.since(projectId, lastSeq - count, lastSeq, PAGE, minTs).catch((err: unknown) => {
      this.log.warn({ err, projectId }, 'could not read logs for live tails');
      return [] as LogRowStored[];
    });
    void rows.then((r) => {
      if (r.length === count && this.#byProject.has(projectId)) this.#remember(projectId, lastSeq - count, r);
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

  /** The tails open on this node, each with its project and authority. */
  tails(): { projectId: string; authority: TailAuthority }[] {
    const out: { projectId: string; authority: TailAuthority }[] = [];
    for (const [projectId, tails] of this.#byProject) for (const tail of tails) out.push({ projectId, authority: tail.authority });
    return out;
  }

  /** Ends every tail `which` selects, telling each client `reason`. Returns how many ended. */
  closeWhere(which: (projectId: string, authority: TailAuthority) => boolean, reason?: string): number {
    let n = 0;
    for (const [projectId, tails] of [...this.#byProject]) {
      for (const tail of [...tails]) {
        if (!which(projectId, tail.authority)) continue;
        tail.close(reason);
        n++;
      }
    }
    return n;
  }

  closeAll(): void {
    this.closeWhere(() => true);
  }
}

import { AppError } from '../../../errors.js';

/**
 * A request's claim on the in-flight budget: resized once its body is decoded, grown while its logs
 * are built when they come to more than its body (ingest.ts), released when it is answered.
 */
export interface Admitted {
  /** The bytes claimed now. */
  readonly bytes: number;
  /** Changes the claim to `bytes` (the decoded body); growing past a bound refuses as admit() does. */
  resize(bytes: number): void;
  /**
   * Adds `bytes` the request holds once it can no longer be refused (its answer, built after its
   * logs were stored, held until the client has read it): counted like the rest, never refused, so
   * answers a client does not read keep later requests of the project (and the server) refused.
   */
  hold(bytes: number): void;
  /** Gives the claim back; later calls do nothing. */
  release(): void;
}

/**
 * Bytes of ingest request bodies in flight, per project and in all, from the moment the API key is
 * known (before the body is read) until the answer is sent. The body's reading, decompression,
 * JSON parsing and normalising all happen on the one event loop and in memory, before the logs
 * reach the ingest queue's own bounds; this caps that work and memory per tenant, so one tenant
 * sending many large requests at once is refused (429, its own problem) instead of stalling the
 * server for everyone, and all tenants together past the total are refused with 503.
 *
 * A request is always let in when its project (or the server) has nothing in flight, so a body
 * larger than a bound can still pass alone.
 */
export class IngestAdmission {
  #perProject = new Map<string, number>();
  #total = 0;

  constructor(private readonly limits: { perProjectBytes: number; totalBytes: number }) {}

  get inFlightBytes(): number {
    return this.#total;
  }

  /** Claims `bytes` for the project, or throws 429 RATE_LIMITED / 503 OVERLOADED with Retry-After. */
  admit(projectId: string, bytes: number): Admitted {
    this.#check(projectId, 0, bytes);
    this.#add(projectId, bytes);
    let held = bytes;
    let released = false;
    return {
      get bytes() {
        return released ? 0 : held;
      },
      resize: (to: number) => {
        if (released || to === held) return;
        if (to > held) this.#check(projectId, held, to);
        this.#add(projectId, to - held);
        held = to;
      },
      hold: (bytes: number) => {
        if (released || bytes <= 0) return;
        this.#add(projectId, bytes);
        held += bytes;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#add(projectId, -held);
      },
    };
  }

  /** Throws when growing this project's claim from `from` to `to` bytes would pass a bound. */
  #check(projectId: string, from: number, to: number): void {
    const mine = (this.#perProject.get(projectId) ?? 0) - from;
    if (mine > 0 && mine + to > this.limits.perProjectBytes) {
      throw new AppError('RATE_LIMITED', 'This project has too many request bytes being received and stored at once; retry after the delay in Retry-After.', { retryAfter: 1 });
    }
    const others = this.#total - from;
    if (others > 0 && others + to > this.limits.totalBytes) {
      throw new AppError('OVERLOADED', 'Ingestion is at capacity; retry after the delay in Retry-After.', { retryAfter: 1 });
    }
  }

  #add(projectId: string, delta: number): void {
    this.#total += delta;
    const next = (this.#perProject.get(projectId) ?? 0) + delta;
    if (next === 0) this.#perProject.delete(projectId);
    else this.#perProject.set(projectId, next);
  }
}

/**
 * Runs synchronous work on the event loop one piece per loop turn, in arrival order: each waits
 * for the one before it and then for a setImmediate, so I/O (a health check, another tenant's
 * small request) is served between two pieces. For the CPU-heavy steps of large ingest bodies
 * (JSON parsing, normalising), which would otherwise run back to back when many bodies arrive at
 * once and stall the server for the sum of them.
 */
export class EventLoopTurns {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => T): Promise<T> {
    const turn = this.#tail.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(work);
    this.#tail = turn.catch(() => undefined);
    return turn;
  }
}

/** One line of turns for the whole process: there is one event loop to share. */
export const heavyWork = new EventLoopTurns();

/** Bodies at least this large are parsed in their own event-loop turn; smaller ones at once. */
export const HEAVY_BODY_BYTES = 256 * 1024;

/**
 * Process-wide slots for reading large request bodies. Reading many bodies at once is what stalls
 * a Node server under a burst: each readable socket is read up to 2 MB per event-loop turn, so 80
 * sockets with 5 MB bodies cost ~160 MB of copying per turn (measured: a /healthz probe waited
 * ~100 ms behind a burst of 80 × 4.8 MB bodies even on a server doing nothing else with them, and
 * ~5 ms with four read at a time). A body waiting for a slot stays in the kernel's socket buffers,
 * and TCP slows its sender. A slot goes back when its body has been read, when its request ends,
 * or after `holdMs`, whichever comes first, so a body that arrives slowly (slowloris) holds one
 * only briefly and goes on being read without it.
 */
export class ReadSlots {
  #free: number;
  #waiting: (() => void)[] = [];

  constructor(
    slots: number,
    private readonly holdMs: number,
  ) {
    this.#free = slots;
  }

  /** Resolves with the function that gives the slot back (later calls do nothing). */
  async acquire(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let held = true;
    const timer = setTimeout(() => release(), this.holdMs);
    timer.unref();
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
    return release;
  }
}

/** Large ingest bodies read at the same time, process-wide. */
export const LARGE_BODY_READS = 4;
export const largeBodyReads = new ReadSlots(LARGE_BODY_READS, 2000);
/** Compressed bodies inflated at the same time, process-wide (each may grow to 5 MiB). */
export const inflations = new ReadSlots(4, 5000);




/**
 * Per-user lines for reads: each user runs at most `perUser` reads of a kind at once, a few more
 * wait in line briefly, and past that (or past the wait) the caller is answered 429 RATE_LIMITED
 * with Retry-After. Searches have one line (page-stream.ts), and the heavy reads that go over a
 * whole range (stats, facets, fields, a log's context) share another of the same shape, so that a
 * sidebar's counts never make a user's own searches wait, and no user's reads take more than their
 * share of the server however many they send. A caller that leaves while in line gives its place up.
 */
import { AppError } from '../../../errors.js';

export interface UserSlotsOptions {
  /** Reads one user may have running at once. */
  perUser: number;
  /** Reads of one user that may wait for a running one to end; past that, 429 at once. */
  waitingPerUser: number;
  /** How long a read waits in line before it is answered 429. */
  waitMs: number;
  /** What the refusal calls the reads ("searches", "counts and context reads"). */
  what: string;
}

export type UserSlots = ReturnType<typeof createUserSlots>;

/**
 * Reads over a whole range or around a log (stats, facets, fields, context) one user may run at
 * once: a line of their own, beside the searches' (SEARCHES_PER_USER), so the explorer's sidebar
 * never makes the user's own page wait, and one user's counts cannot take more of the server
 * however many they send. A few more wait in line (HEAVY_READ_WAIT_MS), then 429 with Retry-After.
 */
export const HEAVY_READS_PER_USER = 2;
export const HEAVY_READS_WAITING_PER_USER = 4;
export const HEAVY_READ_WAIT_MS = 10_000;

/** The per-user line for stats, facets, fields and context. */
export function createHeavyReads(): UserSlots {
  return createUserSlots({ perUser: HEAVY_READS_PER_USER, waitingPerUser: HEAVY_READS_WAITING_PER_USER, waitMs: HEAVY_READ_WAIT_MS, what: 'counts and context reads' });
}

export function createUserSlots(options: UserSlotsOptions) {
  const { perUser, waitingPerUser, waitMs, what } = options;
  const running = new Map<string, number>();
  const lines = new Map<string, (() => void)[]>();
  let waiting = 0;

  /** The function that gives a user's slot back: to the next read in its line, or to the pool. */
  function slot(userId: string): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const line = lines.get(userId);
      const next = line?.shift();
      if (line && line.length === 0) lines.delete(userId);
      if (next) return next(); // handed over: the user's count of running reads stays
      const left = (running.get(userId) ?? 1) - 1;
      if (left > 0) running.set(userId, left);
      else running.delete(userId);
    };
  }

  function refused(): AppError {
    return new AppError('RATE_LIMITED', `At most ${perUser} ${what} run at once per user; retry after the delay in Retry-After.`, { retryAfter: 1 });
  }

  /**
   * A slot for one read of `userId`: at once when the user has fewer than `perUser` running, else
   * after a wait in line (at most `waitMs`); 429 RATE_LIMITED when the line is full or the wait runs
   * out. A caller whose `signal` aborts while in line leaves it (the error is the signal's reason).
   * Resolves with the function that gives the slot back.
   */
  async function acquire(userId: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if ((running.get(userId) ?? 0) < perUser) {
      running.set(userId, (running.get(userId) ?? 0) + 1);
      return slot(userId);
    }
    let line = lines.get(userId);
    if (!line) lines.set(userId, (line = []));
    if (line.length >= waitingPerUser) throw refused();
    const queue = line;
    waiting++;
    try {
      await new Promise<void>((resolve, reject) => {
        const leave = (err: unknown) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const at = queue.indexOf(turn);
          if (at >= 0) queue.splice(at, 1);
          if (queue.length === 0 && lines.get(userId) === queue) lines.delete(userId);
          reject(err);
        };
        const turn = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => leave(signal!.reason);
        const timer = setTimeout(() => leave(refused()), waitMs);
        queue.push(turn);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } finally {
      waiting--;
    }
    return slot(userId);
  }

  return {
    acquire,
    /** Reads holding a slot, and reads waiting in line for one. */
    stats(): { running: number; waiting: number } {
      let n = 0;
      for (const c of running.values()) n += c;
      return { running: n, waiting };
    },
  };
}

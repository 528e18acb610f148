import { AppError } from '../../../errors.js';

/**
 * Per-project ingest rate limits: a token bucket per project that refills at the plan's rate
 * (logs per second) and holds two seconds' worth, and at least one full request (10,000 logs), so
 * any valid request can pass once the bucket has refilled.
 *
 * The buckets live in this process. On SQLite (one node) that is exact; in a PostgreSQL cluster
 * each node admits up to the rate, so N nodes admit up to N times it. A shared bucket would put a
 * database write in front of every ingest request.
 */
export class IngestRateLimiter {
  #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly rates: Readonly<Record<string, number>>,
    private readonly now: () => number,
  ) {}

  /** Takes `n` logs' worth from the project's bucket, or throws 429 RATE_LIMITED with Retry-After. */
  take(projectId: string, plan: string, n: number): void {
    // Own keys only: a plan name is data, and must not find Object.prototype's members.
    const rate = Object.hasOwn(this.rates, plan) ? this.rates[plan]! : 0;
    if (rate <= 0) return;
    const capacity = Math.max(rate * 2, 10_000);
    const t = this.now();
    const bucket = this.#buckets.get(projectId) ?? { tokens: capacity, at: t };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((t - bucket.at) / 1000) * rate);
    bucket.at = t;
    if (bucket.tokens < n) {
      this.#buckets.set(projectId, bucket);
      const wait = Math.ceil((n - bucket.tokens) / rate);
      throw new AppError('RATE_LIMITED', `This project's plan takes up to ${rate.toLocaleString('en')} logs per second; slow down and retry after the delay in Retry-After.`, { retryAfter: Math.max(1, wait) });
    }
    bucket.tokens -= n;
    this.#buckets.set(projectId, bucket);
    if (this.#buckets.size > 100_000) this.#prune(t);
  }

  /**
   * Takes `n` logs' worth for work already done (items read and then refused), even past what the
   * bucket holds: the project's later requests wait until it has refilled.
   */
  spend(projectId: string, plan: string, n: number): void {
    const rate = Object.hasOwn(this.rates, plan) ? this.rates[plan]! : 0;
    if (rate <= 0 || n <= 0) return;
    const capacity = Math.max(rate * 2, 10_000);
    const t = this.now();
    const bucket = this.#buckets.get(projectId) ?? { tokens: capacity, at: t };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((t - bucket.at) / 1000) * rate) - n;
    bucket.at = t;
    this.#buckets.set(projectId, bucket);
  }

  /**
   * Throws 429 RATE_LIMITED with Retry-After, as take does, unless the project's bucket holds `n`
   * logs' worth now; takes nothing (taken and given back at once: the bucket ends as it was).
   */
  check(projectId: string, plan: string, n: number): void {
    this.take(projectId, plan, n);
    this.give(projectId, plan, n);
  }

  /**
   * Gives back `n` logs' worth taken for a request that stored fewer (logs it refused, or nothing
   * when it failed before its commit), up to the bucket's capacity.
   */
  give(projectId: string, plan: string, n: number): void {
    const rate = Object.hasOwn(this.rates, plan) ? this.rates[plan]! : 0;
    const bucket = this.#buckets.get(projectId);
    if (rate <= 0 || n <= 0 || bucket === undefined) return;
    bucket.tokens = Math.min(Math.max(rate * 2, 10_000), bucket.tokens + n);
  }

  /** Forgets buckets that have been full for a while. */
  #prune(t: number): void {
    for (const [id, b] of this.#buckets) if (t - b.at > 60_000) this.#buckets.delete(id);
  }
}

/**
 * A request's protocol items against its project's rate: every item counts, whatever its kind (a
 * document, a delete or update action, a stream with no entries, an entry that cannot be read), a
 * token each, before the items are read further or stored, so a request of many items that are not
 * logs costs its sender the rate that logs would.
 *
 * Items that are not logs take their tokens here. The logs among them take theirs in the ingest
 * path, before it builds any: here the bucket is only checked to hold them too, so a request the
 * rate cannot take whole is refused before any of it is read. Items read and then refused (a
 * document that is not JSON, a log the checks refuse, whose token the ingest path gives back) are
 * spent once the request is done (settle), so refused items are no free way to make work or answers.
 */
export class ItemCharge {
  #taken = 0;

  constructor(
    private readonly rate: Pick<IngestRateLimiter, 'take' | 'give' | 'check' | 'spend'>,
    private readonly projectId: string,
    private readonly plan: string,
  ) {}

  /** Tokens this request holds now. */
  get taken(): number {
    return this.#taken;
  }

  /**
   * Takes a token for each of `others` more items that are not logs, and checks that the bucket
   * then still holds `logs` tokens for the request's logs; else gives back what the request took
   * and throws 429 RATE_LIMITED with Retry-After.
   */
  take(others: number, logs = 0): void {
    try {
      if (others > 0) {
        this.rate.take(this.projectId, this.plan, others);
        this.#taken += others;
      }
      if (logs > 0) this.rate.check(this.projectId, this.plan, logs);
    } catch (err) {
      this.refund();
      throw err;
    }
  }

  /**
   * Once the request is done: its items that became no stored log and took no token yet (documents
   * that could not be read, logs the ingest path refused and gave back) are spent from the bucket,
   * past what it holds if need be. `items` is every item of the request, `stored` the logs stored
   * (each of which took its token in the ingest path).
   */
  settle(items: number, stored: number): void {
    const owed = items - stored - this.#taken;
    if (owed <= 0) return;
    this.rate.spend(this.projectId, this.plan, owed);
    this.#taken += owed;
  }

  /** Gives back every token this request took (it stored and did nothing). */
  refund(): void {
    if (this.#taken > 0) this.rate.give(this.projectId, this.plan, this.#taken);
    this.#taken = 0;
  }
}

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
 * token each, taken as the items are counted and before they are read further or stored, so a
 * request of many items that are not logs costs its sender the same rate as logs would.
 *
 * The logs among them are handed over to the ingest path, which takes a token per log itself
 * before it builds any (and gives back those it refuses): `handOver` gives their tokens back just
 * before the ingest call takes them again in the same turn, so nothing is counted twice and no
 * other request can take them in between.
 */
export class ItemCharge {
  #taken = 0;

  constructor(
    private readonly rate: Pick<IngestRateLimiter, 'take' | 'give'>,
    private readonly projectId: string,
    private readonly plan: string,
  ) {}

  /** Tokens this request holds now. */
  get taken(): number {
    return this.#taken;
  }

  /** Takes a token for each of `n` more items, or gives back what the request took and throws 429 RATE_LIMITED with Retry-After. */
  take(n: number): void {
    if (n <= 0) return;
    try {
      this.rate.take(this.projectId, this.plan, n);
    } catch (err) {
      this.refund();
      throw err;
    }
    this.#taken += n;
  }

  /** Gives back `logs` tokens for the logs the ingest path is about to take them for; call it right before that call, with no await between. */
  handOver(logs: number): void {
    const n = Math.min(logs, this.#taken);
    if (n <= 0) return;
    this.rate.give(this.projectId, this.plan, n);
    this.#taken -= n;
  }

  /** Gives back every token this request took (it stored and did nothing). */
  refund(): void {
    if (this.#taken > 0) this.rate.give(this.projectId, this.plan, this.#taken);
    this.#taken = 0;
  }
}

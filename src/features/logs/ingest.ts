/**
 * Ingest: each item checked and normalised, the good ones queued for a durable commit under the
 * plan's rate, and an Idempotency-Key claimed before and released when nothing was committed.
 */
import { AppError } from '../../errors.js';
import type { Executor } from '../../db/types.js';
import type { BodyItem } from './body.js';
import { claimKey, releaseKey } from './idempotency.js';
import type { IngestQueue } from './ingest-queue.js';
import { normaliseLog, type LogRow } from './normalise.js';
import type { IngestRateLimiter } from './rate-limit.js';

export interface IngestResult {
  accepted: number;
  rejected: { index: number; message: string }[];
}

export function createIngest(deps: { db: Executor; queue: Pick<IngestQueue, 'submit'>; limiter: Pick<IngestRateLimiter, 'take'>; now: () => number }) {
  const { db, queue, limiter, now } = deps;
  /**
   * Checks every item, stores the good ones and answers only once they are durably committed.
   * Every item bad → 400 with the reasons.
   */
  async function ingest(projectId: string, plan: string, items: BodyItem[], idempotency?: { key: string; bodyHash: string }): Promise<{ result: IngestResult; replayed: boolean }> {
    const receivedAt = now();
    if (idempotency) {
      const claim = await claimKey(db, projectId, idempotency.key, idempotency.bodyHash, receivedAt);
      if (claim.kind === 'replay') return { result: JSON.parse(claim.response) as IngestResult, replayed: true };
    }
    try {
      const rows: LogRow[] = [];
      const rejected: IngestResult['rejected'] = [];
      items.forEach((item, index) => {
        if ('error' in item) return void rejected.push({ index, message: item.error });
        const n = normaliseLog(item.value, receivedAt);
        if (n.ok) rows.push(n.row);
        else rejected.push({ index, message: n.message });
      });
      if (rows.length === 0) {
        const first = rejected[0]!;
        throw new AppError('VALIDATION_ERROR', `No log was accepted: log ${first.index}: ${first.message}.`, { details: rejected.slice(0, 100).map((r) => ({ path: `/${r.index}`, message: r.message })) });
      }
      limiter.take(projectId, plan, rows.length);
      const result: IngestResult = { accepted: rows.length, rejected };
      const committed = await queue.submit({ projectId, receivedAt, rows, idempotency: idempotency && { key: idempotency.key, response: JSON.stringify(result) } });
      if (committed === null) throw new AppError('INVALID_API_KEY', 'The API key is not valid (its project no longer exists).');
      return { result, replayed: false };
    } catch (err) {
      // Nothing was committed: let a retry with the same key go ahead.
      if (idempotency) await releaseKey(db, projectId, idempotency.key).catch(() => {});
      throw err;
    }
  }

  return ingest;
}

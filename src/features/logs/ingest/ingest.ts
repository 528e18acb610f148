/**
 * Ingest: each item checked and normalised, the good ones queued for a durable commit under the
 * plan's rate, and an Idempotency-Key claimed before and released when nothing was committed.
 *
 * What refuses a request comes before the work it would waste: the plan's rate and the queue's
 * bounds are checked before any log is normalised, with the least the logs will come to when the
 * protocol knows it (an OTLP export copies its resource attributes into every record: 80 KB of
 * protobuf can be 572 MB of logs, refused at once), and the logs' size is counted while they are
 * built, so a request whose logs come to more than the queue takes in one batch is refused (413)
 * as soon as it passes that, having built no more than that. Normalising goes in slices of
 * about SLICE_BYTES, each in an event-loop turn of its own after the first, and the request's
 * claim on the in-flight bytes (see IngestAdmission) grows with the logs built, so one project's
 * concurrent requests cannot build more between them than its share.
 */
import { AppError } from '../../../errors.js';
import type { Executor } from '../../../db/types.js';
import { heavyWork, type Admitted } from './admission.js';
import type { BodyItem } from './body.js';
import { claimKey, releaseKey } from './idempotency.js';
import { tooLarge, type IngestQueue } from './ingest-queue.js';
import { normaliseLog, type NormaliseMeter } from './normalise.js';
import type { IngestRateLimiter } from './rate-limit.js';
import { logTextBytes } from '../store/batch.js';
import type { LogRow } from '../store/writer.js';

export interface IngestResult {
  accepted: number;
  rejected: { index: number; message: string }[];
}

/** Work done by ingest in this process, for tests that check a refusal came before the work: logs normalised. */
export const ingestWork = { normalised: 0 };

/** A slice of normalising ends past this many characters of logs built (or walked, for logs refused)… */
export const SLICE_BYTES = 1024 * 1024;
/** …or this many logs, whichever comes first. */
export const SLICE_LOGS = 2000;


export function createIngest(deps: {
  db: Executor;
  queue: Pick<IngestQueue, 'submit' | 'check' | 'maxBatchBytes'>;
  limiter: Pick<IngestRateLimiter, 'take' | 'give'>;
  now: () => number;
}) {
  const { db, queue, limiter, now } = deps;

  /**
   * Checks every item, stores the good ones and answers only once they are durably committed.
   * Every item bad → 400 with the reasons. `claim` is the request's claim on the in-flight bytes,
   * grown to the size of its logs while they are built when that passes the size of its body.
   * `firstSeq`: the seq of the first log stored; the accepted ones follow it in order (not on a replay).
   */
  async function ingest(projectId: string, plan: string, items: BodyItem[], idempotency?: { key: string; bodyHash: string }, claim?: Pick<Admitted, 'bytes' | 'resize'>): Promise<{ result: IngestResult; replayed: boolean; firstSeq?: number }> {
    const receivedAt = now();
    if (idempotency) {
      const claimed = await claimKey(db, projectId, idempotency.key, idempotency.bodyHash, receivedAt);
      if (claimed.kind === 'replay') return { result: JSON.parse(claimed.response) as IngestResult, replayed: true };
    }
    // Logs' worth taken from the plan's rate and not (yet) stored: given back unless they are.
    let taken = 0;
    try {
      let candidates = 0;
      let leastBytes = 0;
      for (const item of items) {
        if ('error' in item) continue;
        candidates++;
        leastBytes += item.leastBytes ?? 0;
      }
      if (candidates > 0) {
        // Before anything is built: a request too large for the queue, over the plan's rate or
        // over the queue's bounds costs nothing more.
        if (leastBytes > queue.maxBatchBytes) throw tooLarge(queue.maxBatchBytes);
        limiter.take(projectId, plan, candidates);
        taken = candidates;
        queue.check(projectId, candidates, leastBytes);
      }
      const { rows, rejected } = await normalise(projectId, items, receivedAt, claim);
      if (rows.length === 0) {
        const first = rejected[0]!;
        throw new AppError('VALIDATION_ERROR', `No log was accepted: log ${first.index}: ${first.message}.`, { details: rejected.slice(0, 100).map((r) => ({ path: `/${r.index}`, message: r.message })) });
      }
      limiter.give(projectId, plan, taken - rows.length);
      taken = rows.length;
      const result: IngestResult = { accepted: rows.length, rejected };
      const submitted = queue.submit({ projectId, receivedAt, rows, idempotency: idempotency && { key: idempotency.key, response: JSON.stringify(result) } });
      const committed = await submitted;
      taken = 0;
      if (committed === null) throw new AppError('INVALID_API_KEY', 'The API key is not valid (its project no longer exists).');
      return { result, replayed: false, firstSeq: committed.firstSeq };
    } catch (err) {
      // Nothing was committed: the rate gets its logs back, and a retry with the same key may go ahead.
      if (taken > 0) limiter.give(projectId, plan, taken);
      if (idempotency) await releaseKey(db, projectId, idempotency.key).catch(() => {});
      throw err;
    }
  }

  /**
   * Normalises the items in slices, counting the characters of the logs built (and of what the
   * checks walked in logs refused): past the largest batch the queue takes, 413 at once; at the end
   * of each slice the request's claim grows to that count when it is larger (429/503 when the
   * project or the server has too much in flight), and the queue is asked again whether it would
   * take what has been built so far.
   */
  async function normalise(projectId: string, items: BodyItem[], receivedAt: number, claim: Pick<Admitted, 'bytes' | 'resize'> | undefined) {
    const rows: LogRow[] = [];
    const rejected: IngestResult['rejected'] = [];
    const bodyClaim = claim?.bytes ?? 0;
    const meter: NormaliseMeter = { work: 0 };
    let bytes = 0;
    let index = 0;
    const slice = () => {
      const sliceEnd = bytes + SLICE_BYTES;
      for (let n = 0; index < items.length && n < SLICE_LOGS && bytes < sliceEnd; n++, index++) {
        const item = items[index]!;
        if ('error' in item) {
          rejected.push({ index, message: item.error });
          continue;
        }
        ingestWork.normalised++;
        const walked = meter.work;
        const result = normaliseLog(item.value, receivedAt, meter);
        if (result.ok) {
          rows.push(result.row);
          bytes += logTextBytes(result.row);
        } else {
          rejected.push({ index, message: result.message });
          bytes += meter.work - walked;
        }
        if (bytes > queue.maxBatchBytes) throw tooLarge(queue.maxBatchBytes);
      }
      if (claim && bytes > bodyClaim) claim.resize(bytes);
      if (index < items.length && rows.length > 0) queue.check(projectId, rows.length, bytes);
    };
    slice();
    while (index < items.length) await heavyWork.run(slice);
    // Built: the queue counts the logs from here; the claim goes back to the body's size.
    if (claim && claim.bytes > bodyClaim) claim.resize(bodyClaim);
    return { rows, rejected };
  }

  return ingest;
}

/**
 * Retention over a pack: the logs of a pack older than the cutoff go, the others stay in a pack
 * rewritten without them (logs are packed by seq, and a project's timestamps are its clients', so
 * a pack may straddle the cutoff).
 */
import type { PackedLog } from './format.js';

export interface Expiry {
  gone: PackedLog[];
  kept: PackedLog[];
  minTs: number;
  maxTs: number;
}

export function expire(logs: readonly PackedLog[], before: number): Expiry {
  const gone: PackedLog[] = [];
  const kept: PackedLog[] = [];
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  for (const l of logs) {
    if (l.ts < before) gone.push(l);
    else {
      kept.push(l);
      if (l.ts < minTs) minTs = l.ts;
      if (l.ts > maxTs) maxTs = l.ts;
    }
  }
  return { gone, kept, minTs, maxTs };
}

/**
 * The time range of recent commits, by seq range, so that the builder can name a block's time range
 * before it has read the block. On PostgreSQL a read of logs by seq alone is planned over every day
 * partition (an account on a long-retention plan has ~370): at 10M logs a read of 1,024 logs took
 * 18-19 ms of planning in a warm session (55-125 ms in a fresh one), against under 1.5 ms in all
 * with the time range named (docs/benchmarks.md). Each commit's seqs
 * and timestamps are known exactly when it is made (rows never change afterwards; retention only
 * takes some away), so a block wholly covered by recorded commits lies within their time range.
 *
 * Held in memory only, and only as help: a block not wholly covered (commits made before this
 * process started, another node's announcement missed, spans dropped past the bound) is read by seq
 * alone, as before. Bounded: past MAX_SPANS spans in all, everything recorded is dropped.
 */
import type { BlockTimes } from '../packs/statements.js';

/** Spans held at most, over all projects (~50 bytes each). */
export const MAX_SPANS = 65_536;

interface Span {
  first: number;
  last: number;
  minTs: number;
  maxTs: number;
}

export interface CommitSpans {
  /** A commit of the project's seqs [first, last], whose timestamps lie in [minTs, maxTs]. */
  add(projectId: string, first: number, last: number, minTs: number, maxTs: number): void;
  /** The time range of seqs [first, last] when recorded commits cover every one of them; else undefined. */
  bounds(projectId: string, first: number, last: number): BlockTimes | undefined;
  /** Forgets the project's spans that end at or before `seq` (its block through `seq` is summarised). */
  forget(projectId: string, seq: number): void;
  /** Spans held now (tests). */
  size(): number;
}

/**
 * `mergeUpTo`: contiguous commits are joined into one span while it covers at most that many seqs
 * (a block's, by default), which keeps a block's range about as narrow as its own commits' and the
 * spans few.
 */
export function createCommitSpans(mergeUpTo = 4096, maxSpans = MAX_SPANS): CommitSpans {
  /** Per project, in seq order, not overlapping. */
  const byProject = new Map<string, Span[]>();
  let held = 0;

  /** The index of the first span of `spans` that ends at or after `seq`. */
  function firstEndingFrom(spans: readonly Span[], seq: number): number {
    let lo = 0;
    let hi = spans.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (spans[mid]!.last < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  return {
    add(projectId, first, last, minTs, maxTs) {
      if (!(first <= last) || !(minTs <= maxTs)) return;
      // Whole milliseconds as stored (ingest truncates; this only keeps a range from ever being narrower).
      minTs = Math.floor(minTs);
      maxTs = Math.ceil(maxTs);
      let spans = byProject.get(projectId);
      if (!spans) byProject.set(projectId, (spans = []));
      const at = firstEndingFrom(spans, first);
      const next = spans[at];
      // Already recorded (this node's own commit, announced back to it), or overlapping: kept as it is.
      if (next && next.first <= last) return;
      const prev = spans[at - 1];
      if (prev && prev.last + 1 === first && last - prev.first + 1 <= mergeUpTo) {
        prev.last = last;
        prev.minTs = Math.min(prev.minTs, minTs);
        prev.maxTs = Math.max(prev.maxTs, maxTs);
        return;
      }
      spans.splice(at, 0, { first, last, minTs, maxTs });
      if (++held > maxSpans) {
        byProject.clear();
        held = 0;
      }
    },
    bounds(projectId, first, last) {
      const spans = byProject.get(projectId);
      if (!spans) return undefined;
      let minTs = Number.POSITIVE_INFINITY;
      let maxTs = Number.NEGATIVE_INFINITY;
      let covered = first - 1;
      for (let i = firstEndingFrom(spans, first); i < spans.length && covered < last; i++) {
        const s = spans[i]!;
        if (s.first > covered + 1) return undefined; // a gap
        minTs = Math.min(minTs, s.minTs);
        maxTs = Math.max(maxTs, s.maxTs);
        covered = s.last;
      }
      return covered >= last ? { minTs, maxTs } : undefined;
    },
    forget(projectId, seq) {
      const spans = byProject.get(projectId);
      if (!spans) return;
      let gone = 0;
      while (gone < spans.length && spans[gone]!.last <= seq) gone++;
      spans.splice(0, gone);
      held -= gone;
      if (spans.length === 0) byProject.delete(projectId);
    },
    size: () => held,
  };
}

/**
 * Search through the skip index: the query's tree says, per block summary, "no" or "maybe"; only
 * "maybe" blocks and the logs not yet summarised are read, newest block first, and reading stops
 * once the page is full and no block left can hold a log newer than its last. A block's logs go
 * through the query's raw-text prefilter (query/prefilter.ts) first; the one predicate (filter.ts
 * matchAll) still decides every log that passes, so the answer is the scan's.
 */
import { EVERY_LOG, needlesOf, prefilterOf, withFilter } from '../query/index.js';
import { matchAll, type LogFilter } from '../filter.js';
import type * as repo from '../store/repository.js';
import { blockMay, capItems, isGram, itemsOf, needOf, type Need } from '../store/blocks/items.js';
import { sliceSpan, SLICES_PER_BLOCK } from '../store/blocks/rows.js';
import type { BlockRow } from '../store/blocks/store.js';
import type { LogStore } from '../store/index.js';

/** What the search reads of the index and the logs, through the store (on its read connection). */
export type IndexReads = Pick<LogStore, 'indexState' | 'blocksInRange' | 'slicesInBlocks' | 'inSeqRange'>;

/** Items probed per query at most; the rest count as "maybe". */
const MAX_PROBES = 16;

export interface IndexOptions {
  /** Logs per block (as the builder makes them). */
  blockLogs: number;
  /** Off: every search scans (the index is still built). For diagnosis and differential tests. */
  enabled: boolean;
  /** Test hook: use the index whenever it is on, even where it would not help. */
  force?: boolean;
  /** Test hook: every block answers "maybe" (the index is used, and rules nothing out). */
  allMaybe?: boolean;
}

/** What one indexed search read, for tests and the bench: blocks and rows. */
export interface IndexReport {
  blocksInRange: number;
  /** Blocks (and the run of logs not summarised yet) of which some logs were read. */
  blocksRead: number;
  /** The seqs those reads covered: the logs the engine looked at. */
  seqsRead: number;
  /** The logs the engine handed back (those that hold the query's needles). */
  rowsRead: number;
}

export type IndexedPage = { data: repo.LogRowStored[]; nextCursor: repo.Position | null; report: IndexReport } | { outOfBudget: true };

/** The need of a filter: the query's tree ANDed with the legacy parameters, as matchAll decides it. */
function needOfFilter(filter: LogFilter): Need {
  return capItems(needOf(withFilter(filter.query ?? EVERY_LOG, filter).root), MAX_PROBES);
}

/**
 * A block's read in SQL, with the query's needles (query/prefilter.ts): only the logs whose raw text
 * holds them travel. A block is read by its seq range, so this costs a text test per log in the
 * engine, where reading every log out would cost far more.
 */
function withNeedles(sqlFilter: LogFilter, filter: LogFilter): LogFilter {
  const needles = filter.query ? needlesOf(filter.query.root) : [];
  return needles.length > 0 ? { ...sqlFilter, needles } : sqlFilter;
}

/**
 * Logs per read of a segment: a quarter of a block, at most 256. A read is one synchronous call on
 * SQLite, and one tenant's logs may each hold 128 KiB, so a read holds at most 32 MiB and stalls
 * the event loop only so long. With the query's needles in SQL, a block's matches usually come in
 * one read. (Tests' small blocks thus read in several, which keeps the paging tested.)
 */
const segmentRead = (blockLogs: number) => Math.max(4, Math.min(256, Math.floor(blockLogs / 4)));

/** A segment's logs that pass the SQL filter, lowest seqs first, at most segmentRead per read. */
async function* segmentRows(store: IndexReads, projectId: string, filter: LogFilter, before: repo.Position | undefined, seg: Segment, report: IndexReport, blockLogs: number): AsyncGenerator<repo.LogRowStored[]> {
  const limit = segmentRead(blockLogs);
  if (Number.isFinite(seg.minTs)) filter = { ...filter, from: Math.max(filter.from ?? seg.minTs, seg.minTs), to: Math.min(filter.to ?? seg.maxTs, seg.maxTs) };
  let first = seg.first;
  for (;;) {
    const rows = await store.inSeqRange(projectId, filter, before, first, seg.last, limit);
    report.rowsRead += rows.length;
    yield rows;
    if (rows.length < limit) return;
    let top = first;
    for (const r of rows) top = Math.max(top, Number(r.seq));
    first = top + 1;
  }
}

/** A run of seqs to read: a candidate block, or the logs not summarised yet (maxTs unknown: +∞). */
interface Segment {
  first: number;
  last: number;
  /** The block's times (every log of it lies within): in SQL, they let PostgreSQL read only the partitions holding it. */
  minTs: number;
  maxTs: number;
  /** A summarised block's facts: it is read by the slices its slice filters cannot rule out. */
  block?: BlockRow;
}

interface Plan {
  segments: Segment[];
  need: Need;
  /** The items probed, in the order probes answer for them. */
  items: string[];
  report: IndexReport;
}

/** What a probe's answers (one per item, in `items` order) say of one item; false: certainly absent. */
function holdsBy(items: string[]): (answers: boolean[]) => (item: string) => boolean {
  const index = new Map(items.map((item, i) => [item, i]));
  return (answers) => (item) => answers[index.get(item)!] !== false;
}

/** Candidate blocks whose slice filters are probed in one statement, as reading reaches them. */
const SLICE_PROBE_BLOCKS = 32;

/**
 * The runs of seqs to read, in the plan's order: the logs not summarised yet whole, each candidate
 * block by the slices whose filters may hold the need (probed SLICE_PROBE_BLOCKS blocks at a time,
 * so a search that stops early probes little). A block without slice filters is read whole. Grams
 * are in the block's gram filter only: every slice may hold them.
 */
async function* runsOf(store: IndexReads, projectId: string, plan: Plan, options: IndexOptions): AsyncGenerator<Segment> {
  const { segments, need, report } = plan;
  const items = plan.items.filter((item) => !isGram(item));
  const holds = holdsBy(items);
  let probed = new Map<number, Map<number, boolean[]>>();
  let probedBefore = 0;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const runs: Segment[] = [];
    if (!seg.block || items.length === 0 || options.allMaybe) runs.push(seg);
    else {
      if (i >= probedBefore) {
        const next = segments.slice(i, i + SLICE_PROBE_BLOCKS).filter((s) => s.block);
        probed = await store.slicesInBlocks(projectId, next.map((s) => s.first), items);
        probedBefore = i + SLICE_PROBE_BLOCKS;
      }
      const slices = probed.get(seg.first);
      if (!slices) runs.push(seg);
      else
        for (let s = 0; s < SLICES_PER_BLOCK; s++) {
          const span = sliceSpan(seg.first, seg.last, s);
          if (span.first > span.last) break;
          const may = slices.get(s);
          if (may !== undefined && !blockMay(need, seg.block, holds(may))) continue;
          // Adjacent slices that may hold it are one read.
          const prev = runs[runs.length - 1];
          if (prev && prev.last + 1 === span.first) prev.last = span.last;
          else runs.push({ ...span, minTs: seg.minTs, maxTs: seg.maxTs });
        }
    }
    if (runs.length > 0) report.blocksRead++;
    for (const run of runs) {
      report.seqsRead += run.last - run.first + 1;
      yield run;
    }
  }
}

/**
 * The seq runs a filter must read within [filter.from, upper]: the logs not summarised yet (their
 * times are not known), then the blocks that may hold a match, newest first. Undefined when the
 * index would not help (nothing to probe, too many blocks say "maybe", or too many logs are not
 * summarised yet): the caller then scans. Logs committed after the index state was read are left
 * out, as from a scan that ran a moment earlier.
 */
async function candidateSegments(store: IndexReads, projectId: string, filter: LogFilter, upper: number, options: IndexOptions): Promise<Plan | undefined> {
  if (!options.enabled) return undefined;
  const need = needOfFilter(filter);
  const items = [...itemsOf(need)];
  if (items.length === 0 && !options.force) return undefined;
  const state = await store.indexState(projectId);
  if (!state) return undefined;
  const { lastSeq, next } = state;
  // The logs not summarised yet are all read. With the query's needles in SQL only the logs holding
  // them travel, so that costs the engine a text test per log, far less than a scan of the range
  // (while the builder catches up after a burst, say). Without needles, past a few blocks' worth of
  // them, the scan's newest-first early stop does as well.
  const tail = lastSeq - next + 1;
  if (tail > 4 * options.blockLogs && !options.force && !(filter.query && needlesOf(filter.query.root).length > 0)) return undefined;
  const blocks = await store.blocksInRange(projectId, filter.from, Number.isFinite(upper) ? upper : undefined, items);
  const holds = holdsBy(items);
  const candidates = blocks.filter((b) => options.allMaybe || blockMay(need, b, b.mayHold && holds(b.mayHold)));
  // When most blocks may match, the index saves little and the scan's early stop does better.
  if (!options.force && blocks.length >= 8 && candidates.length > blocks.length / 2) return undefined;
  // The tail in runs of a block's seqs at most, newest first, so that one read looks at that many logs at most.
  const unsummarised: Segment[] = [];
  for (let last = lastSeq; last >= next; last -= options.blockLogs) unsummarised.push({ first: Math.max(next, last - options.blockLogs + 1), last, minTs: Number.NEGATIVE_INFINITY, maxTs: Number.POSITIVE_INFINITY });
  const segments = [...unsummarised, ...candidates.map((b) => ({ first: b.firstSeq, last: b.lastSeq, minTs: b.minTs, maxTs: b.maxTs, block: b }))];
  return { segments, need, items, report: { blocksInRange: blocks.length, blocksRead: 0, seqsRead: 0, rowsRead: 0 } };
}

/**
 * One page through the index, or undefined when the index would not help (see candidateSegments).
 * A full page carries a cursor, as the app's scan does.
 */
export async function searchIndexed(
  store: IndexReads,
  projectId: string,
  filter: LogFilter,
  sqlFilter: LogFilter,
  before: repo.Position | undefined,
  limit: number,
  deadline: number,
  options: IndexOptions,
): Promise<IndexedPage | undefined> {
  const upper = Math.min(before?.ts ?? Number.POSITIVE_INFINITY, filter.to ?? Number.POSITIVE_INFINITY);
  const plan = await candidateSegments(store, projectId, filter, upper, options);
  if (!plan) return undefined;
  const { report } = plan;
  const prefilter = filter.query && prefilterOf(filter.query.root);
  const blockFilter = withNeedles(sqlFilter, filter);
  const found: repo.LogRowStored[] = [];
  const after = (a: repo.LogRowStored, b: repo.LogRowStored) => Number(b.ts) - Number(a.ts) || Number(b.seq) - Number(a.seq);
  for await (const seg of runsOf(store, projectId, plan, options)) {
    if (found.length >= limit && seg.maxTs < Number(found[limit - 1]!.ts)) break;
    for await (const read of segmentRows(store, projectId, blockFilter, before, seg, report, options.blockLogs)) {
      const rows = prefilter ? read.filter(prefilter) : read;
      const verdicts = await matchAll(filter, rows, projectId, deadline, { sqlDecided: true });
      // Out of time: a log left undecided, or reads that found nothing to decide past the deadline.
      if (verdicts.some((v) => v === undefined) || Date.now() > deadline) {
        // Out of time. What is newer than anything this block and those after it can hold is final.
        const sure = found.filter((r) => Number(r.ts) > seg.maxTs).sort(after);
        if (sure.length === 0) return { outOfBudget: true };
        const page = sure.slice(0, limit);
        const last = page[page.length - 1]!;
        return { data: page, nextCursor: { ts: Number(last.ts), seq: Number(last.seq) }, report };
      }
      for (let i = 0; i < rows.length; i++) if (verdicts[i]) found.push(rows[i]!);
    }
    found.sort(after);
    if (found.length > limit) found.length = limit;
  }
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  const more = found.length >= limit;
  return { data: page, nextCursor: more && last ? { ts: Number(last.ts), seq: Number(last.seq) } : null, report };
}

/**
 * Every log matching the filter, through the index (stats): only the candidate blocks and the logs
 * not summarised yet are read, each decided by the one predicate and handed to `onMatch`. Undefined
 * when the index would not help (the caller scans); `outOfBudget` when a log could not be decided
 * by `deadline` (then nothing handed over may be used).
 */
export async function eachIndexed(
  store: IndexReads,
  projectId: string,
  filter: LogFilter,
  sqlFilter: LogFilter,
  deadline: number,
  options: IndexOptions,
  onMatch: (row: repo.LogRowStored) => void,
): Promise<IndexReport | { outOfBudget: true } | undefined> {
  const plan = await candidateSegments(store, projectId, filter, filter.to ?? Number.POSITIVE_INFINITY, options);
  if (!plan) return undefined;
  const { report } = plan;
  const prefilter = filter.query && prefilterOf(filter.query.root);
  const blockFilter = withNeedles(sqlFilter, filter);
  for await (const seg of runsOf(store, projectId, plan, options)) {
    for await (const read of segmentRows(store, projectId, blockFilter, undefined, seg, report, options.blockLogs)) {
      const rows = prefilter ? read.filter(prefilter) : read;
      const verdicts = await matchAll(filter, rows, projectId, deadline, { sqlDecided: true });
      if (Date.now() > deadline) return { outOfBudget: true };
      for (let i = 0; i < rows.length; i++) {
        if (verdicts[i] === undefined) return { outOfBudget: true };
        if (verdicts[i]) onMatch(rows[i]!);
      }
    }
  }
  return report;
}

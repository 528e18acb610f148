/**
 * The shared log reads over both forms: each reads the rows in `logs` as before (repository.ts),
 * then the packed blocks that may hold what it asks for, and merges. Rows first, packs second: see
 * read.ts for why that is exact while blocks are being packed.
 */
import type { Executor, LogsTable } from '../../../../db/types.js';
import type { LogFilter } from '../../filter.js';
import { fold, narrowing, needlesTest } from '../../query/index.js';
import type { PageKey, Position } from '../repository.js';
import { nextTurn } from '../../turns.js';
import { packMayHoldLevels, packRows, packsInRange, packsInSeqs, packsNewestFirst, stablePacks, type PackSpan } from './read.js';

/**
 * Log text a merge looks at between two turns of the event loop. A pack may hold 32 MiB of a
 * tenant's text, and a read that walks it (sizing each log it keeps, testing `q` on its message)
 * costs in proportion: 50 to 200 ms for such a pack in one go, and on SQLite a page's packs would all
 * be walked in the same turn. So a walk takes a turn after each MERGE_SLICE_BYTES of text.
 */
export const MERGE_SLICE_BYTES = 1024 * 1024;

/** What merges have walked in this process: slices, and the most log text one looked at (tests check the bound). */
export interface MergeStats {
  slices: number;
  maxSliceBytes: number;
}

const stats: MergeStats = { slices: 0, maxSliceBytes: 0 };

export const mergeStats = (): MergeStats => ({ ...stats });

/**
 * A walk's slices, each of at most MERGE_SLICE_BYTES of log text (or one log, if larger): `over(row)`
 * counts the log about to be looked at, and is true when it starts a new slice (the walk then awaits
 * a turn before looking at it).
 */
class Slices {
  private bytes = 0;

  over(row: LogsTable): boolean {
    const size = row.message.length + (row.metadata?.length ?? 0) + (row.source?.length ?? 0);
    const full = this.bytes > 0 && this.bytes + size > MERGE_SLICE_BYTES;
    if (full) this.end();
    this.bytes += size;
    return full;
  }

  /** Ends the slice (at a turn the walk takes, or at its end). */
  end(): void {
    if (this.bytes === 0) return;
    stats.slices++;
    stats.maxSliceBytes = Math.max(stats.maxSliceBytes, this.bytes);
    this.bytes = 0;
  }
}

/** Newest first: by time, then seq. */
const newestFirst = (a: { ts: number; seq: number }, b: { ts: number; seq: number }) => b.ts - a.ts || b.seq - a.seq;

const isBefore = (r: { ts: number; seq: number }, before: Position | undefined) => before === undefined || r.ts < before.ts || (r.ts === before.ts && r.seq < before.seq);

/** Stored rows come back from PostgreSQL with bigint columns as strings. */
function numeric<R extends { ts: number | string; seq: number | string }>(r: R): R & { ts: number; seq: number } {
  return Object.assign(r, { ts: Number(r.ts), seq: Number(r.seq) });
}

/**
 * What the SQL part of a filter (repository.ts applyFilter) selects, applied to a pack's logs:
 * time, levels and source exactly, `q` and the query's levels and times as the app decides them
 * (a superset is enough: the app decides both for rows of either form alike).
 */
export function sqlPart(filter: LogFilter): { from?: number; to?: number; levels?: readonly number[]; test: (row: LogsTable) => boolean } {
  let { from, to, levels } = filter;
  if (filter.query) {
    const n = narrowing(filter.query);
    if (n.from !== undefined) from = from === undefined ? n.from : Math.max(from, n.from);
    if (n.to !== undefined) to = to === undefined ? n.to : Math.min(to, n.to);
    if (n.levels) levels = levels ? levels.filter((l) => n.levels!.includes(l)) : n.levels;
  }
  const { source } = filter;
  const q = filter.q === undefined ? undefined : fold(filter.q);
  // The needles a read was given for SQL (a search through the skip index): as SQL tests them.
  const needles = needlesTest(filter.needles ?? []);
  return {
    from,
    to,
    levels,
    test: (row) =>
      (from === undefined || row.ts >= from) &&
      (to === undefined || row.ts <= to) &&
      (levels === undefined || levels.includes(row.level)) &&
      (source === undefined || row.source === source) &&
      (q === undefined || fold(row.message).includes(q)) &&
      (needles === undefined || needles(row)),
  };
}

/**
 * A page newest first, strictly before `before`: the rows' page (`hot`, already read), merged with
 * the packs that may hold logs newer than its last. Packs are opened newest first and only while
 * one may still hold a log that belongs in the page.
 */
export async function mergePage<R extends { ts: number; seq: number }>(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, limit: number, hot: R[], toR: (row: LogsTable) => R): Promise<R[]> {
  const part = sqlPart(filter);
  const upper = before === undefined ? part.to : Math.min(before.ts, part.to ?? Number.POSITIVE_INFINITY);
  if (part.levels?.length === 0 || limit <= 0) return hot;
  // The page so far: newest first, at most `limit` long, at all times.
  const out = hot.map(numeric);
  const seen = new Set(out.map((r) => r.seq));
  const slices = new Slices();
  for await (const p of packsNewestFirst(db, projectId, part.from, upper)) {
    if (out.length >= limit && p.maxTs < out[limit - 1]!.ts) break;
    if (!packMayHoldLevels(p, part.levels)) continue;
    const rows = await packRows(db, projectId, p);
    // The pack's logs newest first, from the first one before the cursor: the walk ends at the
    // first log that is not newer than the page's last once the page is full.
    const order = newestFirstOrder(rows);
    for (let i = firstNotBefore(order.length, (j) => !isBefore(rows[order[j]!]!, before)); i < order.length; i++) {
      const row = rows[order[i]!]!;
      if (out.length >= limit && newestFirst(row, out[limit - 1]!) >= 0) break;
      if (slices.over(row)) await nextTurn();
      if (seen.has(row.seq) || !part.test(row)) continue;
      seen.add(row.seq);
      out.splice(insertionPoint(out, row), 0, toR(row));
      if (out.length > limit) out.pop();
    }
  }
  slices.end();
  return out;
}

/** Each decoded pack's logs as indexes newest first (by time, then seq), made once while the pack is in the cache. */
const orders = new WeakMap<readonly LogsTable[], Uint32Array>();

function newestFirstOrder(rows: readonly LogsTable[]): Uint32Array {
  let order = orders.get(rows);
  if (!order) {
    order = new Uint32Array(rows.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => newestFirst(rows[a]!, rows[b]!));
    orders.set(rows, order);
  }
  return order;
}

/** The first index of `0..length` at which `before(i)` turns false (it must be true, then false). */
function firstNotBefore(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Where `row` goes in `page` (newest first) to keep it so. */
const insertionPoint = (page: readonly { ts: number; seq: number }[], row: { ts: number; seq: number }) => firstNotBefore(page.length, (i) => newestFirst(page[i]!, row) < 0);

/** A log's size as PageKey.bytes counts it (UTF-8 bytes of its message, metadata and source). */
export function storedBytes(row: LogsTable): number {
  return Buffer.byteLength(row.message) + (row.metadata === null ? 0 : Buffer.byteLength(row.metadata)) + (row.source === null ? 0 : Buffer.byteLength(row.source));
}

export const keyOf = (row: LogsTable): PageKey => ({ ts: row.ts, seq: row.seq, bytes: storedBytes(row) });

/** The logs at `keys` that the rows did not hold (`hot`): from the packs that hold their seqs. In the keys' order. */
export async function mergeRowsAt(db: Executor, projectId: string, keys: readonly PageKey[], hot: LogsTable[]): Promise<LogsTable[]> {
  const found = new Map(hot.map((r) => [Number(r.seq), r]));
  const missing = keys.filter((k) => !found.has(k.seq));
  if (missing.length > 0) {
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const k of missing) {
      first = Math.min(first, k.seq);
      last = Math.max(last, k.seq);
    }
    const wanted = new Set(missing.map((k) => k.seq));
    for (const p of await packsInSeqs(db, projectId, first, last)) {
      if (!missing.some((k) => k.seq >= p.firstSeq && k.seq <= p.lastSeq)) continue;
      for (const row of await packRows(db, projectId, p)) if (wanted.has(row.seq)) found.set(row.seq, row);
    }
  }
  const out: LogsTable[] = [];
  for (const k of keys) {
    const row = found.get(k.seq);
    if (row) out.push(row);
  }
  return out;
}

/** The index of the first of `rows` (in seq order) whose seq is at least `seq`. */
const firstAtOrAfter = (rows: readonly { seq: number }[], seq: number) => firstNotBefore(rows.length, (i) => rows[i]!.seq < seq);

/**
 * The logs of seqs [first, last] the filter's SQL part admits, strictly before `before`: the first
 * `limit` by seq, newest first (as repository.ts findInSeqRange), rows and packs together.
 */
export async function mergeSeqRange(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, first: number, last: number | undefined, limit: number, hot: LogsTable[]): Promise<LogsTable[]> {
  const packs = await packsInSeqs(db, projectId, first, last);
  if (packs.length === 0) return hot;
  const part = sqlPart(filter);
  const all = hot.map(numeric);
  const seen = new Set(all.map((r) => r.seq));
  // The rows' read stopped at `limit` by seq: a packed log past its last cannot be among the first `limit`.
  const hotEnd = all.length >= limit ? Math.max(...all.map((r) => r.seq)) : Number.POSITIVE_INFINITY;
  const slices = new Slices();
  for (const p of packs) {
    if (p.firstSeq > hotEnd) break;
    if (!packMayHoldLevels(p, part.levels)) continue;
    const rows = await packRows(db, projectId, p);
    // A pack's rows are in seq order: only those from `first` on are looked at.
    for (let i = firstAtOrAfter(rows, first); i < rows.length; i++) {
      const row = rows[i]!;
      if ((last !== undefined && row.seq > last) || row.seq > hotEnd) break;
      if (slices.over(row)) await nextTurn();
      if (seen.has(row.seq) || !part.test(row) || !isBefore(row, before)) continue;
      all.push(row);
      seen.add(row.seq);
    }
  }
  slices.end();
  all.sort((a, b) => a.seq - b.seq);
  return all.slice(0, limit).sort(newestFirst);
}

/**
 * Logs after `afterSeq` in seq order (live tail and its resumption): the rows (`hot`, read with
 * the same bounds, not cut by bytes) and the packs after `afterSeq`, at most `limit`, then cut at
 * `maxBytes` as repository.ts findSince does. A tail on new logs finds no pack and pays one
 * indexed probe.
 */
export async function mergeSince(db: Executor, projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number, minTs: number | undefined, maxBytes: number | undefined, readHot: (maxBytes: number | undefined) => Promise<LogsTable[]>): Promise<LogsTable[]> {
  // Rows first, packs second (read.ts), and again so when the bytes' cut must wait for the merge.
  const hot = await readHot(maxBytes);
  if ((await packsAfter(db, projectId, afterSeq, upToSeq, limit)).length === 0) return hot;
  const all = (await readHot(undefined)).map(numeric);
  const packs = await packsAfter(db, projectId, afterSeq, upToSeq, limit);
  const seen = new Set(all.map((r) => r.seq));
  for (const p of packs) {
    // Packs come in seq order: once `limit` logs lie before this one, it and the rest cannot be
    // among the first `limit`, so a tail resumed from far back opens about one pack per read.
    let before = 0;
    for (const r of all) if (r.seq < p.firstSeq) before++;
    if (before >= limit) break;
    for (const row of await packRows(db, projectId, p)) {
      if (row.seq <= afterSeq || (upToSeq !== undefined && row.seq > upToSeq) || (minTs !== undefined && row.ts < minTs) || seen.has(row.seq)) continue;
      all.push(row);
      seen.add(row.seq);
    }
  }
  all.sort((a, b) => a.seq - b.seq);
  const out = all.slice(0, limit);
  if (maxBytes === undefined) return out;
  let n = 0;
  let bytes = 0;
  while (n < out.length && (n === 0 || bytes + storedBytes(out[n]!) <= maxBytes)) bytes += storedBytes(out[n++]!);
  return out.slice(0, n);
}

/** The first `limit` packs after `afterSeq` (each holds at least one log, so no more can matter). */
function packsAfter(db: Executor, projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number): Promise<PackSpan[]> {
  return packsInSeqs(db, projectId, afterSeq + 1, upToSeq, limit);
}

/**
 * Counts of logs by a key over the rows and the packs of [filter.from, filter.to]: `countRows`
 * counts the rows (in SQL); packs that were packed meanwhile would be counted twice, so the rows
 * are counted again if the pack list changed while they were (read.ts stablePacks). Each packed log
 * the filter's SQL part admits adds one to the count of its key (`keyOfLog`; `keyOf` of a count),
 * made by `make` when it has none yet.
 */
export async function countWithPacks<R extends { n: number }>(
  db: Executor,
  projectId: string,
  filter: LogFilter,
  countRows: () => Promise<R[]>,
  count: { keyOf: (r: R) => string; keyOfLog: (row: LogsTable) => string; make: (row: LogsTable) => R },
): Promise<R[]> {
  const part = sqlPart(filter);
  if (part.levels?.length === 0) return countRows();
  const { packs, result } = await stablePacks(() => packsInRange(db, projectId, part.from, part.to), countRows);
  if (packs.length === 0) return result;
  const byKey = new Map(result.map((r) => [count.keyOf(r), r]));
  const slices = new Slices();
  for (const p of packs) {
    if (!packMayHoldLevels(p, part.levels)) continue;
    for (const row of await packRows(db, projectId, p)) {
      if (slices.over(row)) await nextTurn();
      if (!part.test(row)) continue;
      const key = count.keyOfLog(row);
      const found = byKey.get(key);
      if (found) found.n++;
      else {
        const made = count.make(row);
        made.n++;
        byKey.set(key, made);
        result.push(made);
      }
    }
  }
  slices.end();
  return result;
}

import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DatabaseSchema, Executor, LogsTable } from '../../../db/types.js';
import type { LogFilter } from '../filter.js';
import { fold, narrowing } from '../query/index.js';
import { FOLDS_INTO, type Needle } from '../query/prefilter.js';
import type { LogSql } from './sql.js';
import { selectLastSeq } from './statements.js';
import { countWithPacks } from './packs/merge.js';

export type LogRowStored = LogsTable;

export interface Position {
  ts: number;
  seq: number;
}

const COLUMNS = ['seq', 'ts', 'received_at', 'level', 'source', 'message', 'metadata', 'project_id'] as const;

/**
 * The shared log queries, on both engines. Each takes the executor first and, last, the engine's
 * statements where they differ (sql.ts), which the store passes: its own, never guessed from the
 * executor: the store calls them (index.ts withSharedQueries).
 */

/** The SQL part of a filter (all but `pattern`, which runs in the app with RE2). */
function applyFilter<O>(engine: LogSql, query: SelectQueryBuilder<DatabaseSchema, 'logs', O>, projectId: string, filter: LogFilter) {
  let q = query.where('project_id', '=', projectId);
  if (filter.from !== undefined) q = q.where('ts', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('ts', '<=', filter.to);
  if (filter.levels) q = filter.levels.length === 1 ? q.where('level', '=', filter.levels[0]!) : q.where('level', 'in', filter.levels);
  if (filter.source !== undefined) q = q.where('source', '=', filter.source);
  if (filter.q !== undefined) {
    const narrowed = qNeedle(filter.q);
    if (narrowed) q = q.where(needleSql(engine, narrowed));
  }
  if (filter.query) {
    // Only what every log the query selects must satisfy: its levels and its time bounds. The
    // query itself is decided in the app (filter.ts matchAll), over the rows this narrows to.
    const n = narrowing(filter.query);
    if (n.levels) q = n.levels.length === 0 ? q.where(sql<boolean>`1 = 0`) : q.where('level', 'in', n.levels);
    if (n.from !== undefined) q = q.where('ts', '>=', n.from);
    if (n.to !== undefined) q = q.where('ts', '<=', n.to);
  }
  if (filter.contains !== undefined) q = q.where(engine.messageContains(filter.contains));
  for (const needle of filter.needles ?? []) q = q.where(needleSql(engine, needle));
  return q;
}

/**
 * One of the query's needles in SQL: the message or metadata holds one of its texts, ignoring ASCII
 * case; a text holding a character that folds into one of the needle's (İ for i, K (Kelvin) for k…)
 * is kept too, as the prefilter keeps it. A superset: the query still decides.
 */
function needleSql(engine: LogSql, needle: Needle): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = [];
  for (const { text, where } of needle) {
    for (const column of where === 'either' ? (['message', 'metadata'] as const) : [where]) {
      parts.push(engine.holdsIgnoringCase(column, text));
      for (const [ascii, other] of Object.entries(FOLDS_INTO)) if (text.includes(ascii)) parts.push(engine.holds(column, other));
    }
  }
  return sql<boolean>`(${sql.join(parts, sql` or `)})`;
}

/**
 * The legacy `q` in SQL: a superset of the logs whose folded message holds fold(q), which the app
 * then decides (filter.ts matchAll) as a live tail does, so that both answer the same. The longest
 * ASCII run of fold(q) must be in the raw message ignoring ASCII case (or a character that folds
 * into one of its letters must: see needleSql), since folding only lower-cases and composes (NFC)
 * and never makes ASCII out of anything else but those characters. Undefined when q holds no ASCII
 * (then SQL does not narrow by it).
 */
function qNeedle(q: string): Needle | undefined {
  let best = '';
  for (const run of fold(q).split(/[^\x00-\x7f]+/)) if (run.length > best.length) best = run;
  return best === '' ? undefined : [{ text: best, where: 'message' }];
}

/** Where a log sits in a page, and its size: what a page is planned with before any log text is read. */
export interface PageKey {
  ts: number;
  seq: number;
  /** Bytes of its message, metadata and source, as stored (UTF-8). */
  bytes: number;
}

/** A log's stored size, computed by the engine without handing the text over. */
const BYTES = sql<number>`octet_length(message) + coalesce(octet_length(metadata), 0) + coalesce(octet_length(source), 0)`;

/**
 * One page of logs, newest first, strictly before `before`. Where the engine gives page windows
 * (PostgreSQL: the last hour, day and week before the page's upper end) it looks there first: a
 * full page there is exactly the page of the whole range, since every log left out is older than
 * every log in it.
 */
export function findPage(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, limit: number, engine: LogSql): Promise<LogRowStored[]> {
  return pageOf<LogRowStored>(db.selectFrom('logs').select(COLUMNS), projectId, filter, before, limit, engine);
}

/**
 * The same page as findPage, as keys and sizes only: a page of large logs is then read a few
 * hundred KB at a time (findRowsAt), never whole (see read/page-stream.ts).
 */
export async function findPageKeys(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, limit: number, engine: LogSql): Promise<PageKey[]> {
  const rows = await pageOf<{ ts: number; seq: number; bytes: number }>(db.selectFrom('logs').select(['seq', 'ts', BYTES.as('bytes')]), projectId, filter, before, limit, engine);
  return rows.map((r) => ({ ts: Number(r.ts), seq: Number(r.seq), bytes: Number(r.bytes) }));
}

async function pageOf<R>(select: SelectQueryBuilder<DatabaseSchema, 'logs', unknown>, projectId: string, filter: LogFilter, before: Position | undefined, limit: number, engine: LogSql): Promise<R[]> {
  // One upper bound on ts: given both `ts <= to` and the cursor's `ts <= before.ts`, SQLite may
  // take `to` for the index range and walk down from it past every page already read (a walk
  // through a range with `to` set went quadratic: 1M logs exported in 27 s instead of 12).
  if (before && filter.to !== undefined && before.ts <= filter.to) filter = { ...filter, to: undefined };
  let q = applyFilter(engine, select, projectId, filter);
  // `ts <= before.ts` repeats what the `or` implies, as a bound the index range can use: without
  // it SQLite walks the project's index from its newest log down to the cursor on every page.
  if (before) q = q.where('ts', '<=', before.ts).where((eb) => eb.or([eb('ts', '<', before.ts), eb.and([eb('ts', '=', before.ts), eb('seq', '<', before.seq)])]));
  q = q.orderBy('ts', 'desc').orderBy('seq', 'desc').limit(limit);
  if (engine.pageWindowsMs.length > 0) {
    const top = Math.min(before?.ts ?? Number.POSITIVE_INFINITY, filter.to ?? Number.POSITIVE_INFINITY, Date.now());
    for (const window of engine.pageWindowsMs) {
      const lower = top - window;
      // A window that is most of the range anyway would only scan it twice.
      if (filter.from !== undefined && lower <= filter.from + 0.1 * (top - filter.from)) break;
      const rows = (await q.where('ts', '>=', lower).execute()) as R[];
      if (rows.length === limit) return rows;
    }
  }
  return (await q.execute()) as R[];
}

/**
 * The logs at `keys` (from findPageKeys), in the keys' order; a log deleted since its key was read
 * is left out. One statement through the (project_id, seq) index, with the keys' time range so
 * that PostgreSQL reads only the partitions that hold them.
 */
export async function findRowsAt(db: Executor, projectId: string, keys: readonly PageKey[], engine: LogSql): Promise<LogRowStored[]> {
  if (keys.length === 0) return [];
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  for (const k of keys) {
    if (k.ts < minTs) minTs = k.ts;
    if (k.ts > maxTs) maxTs = k.ts;
  }
  const q = db
    .selectFrom('logs')
    .select(COLUMNS)
    .where('project_id', '=', projectId)
    .where('seq', 'in', keys.map((k) => k.seq))
    .where('ts', '>=', minTs)
    .where('ts', '<=', maxTs);
  const { rows } = await db.executeQuery<LogRowStored>(engine.seqRangeRead(q.compile()));
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  const out: LogRowStored[] = [];
  for (const k of keys) {
    const row = bySeq.get(k.seq);
    if (row) out.push(row);
  }
  return out;
}

/**
 * The logs of seqs [first, last] (no upper end when last is undefined) that the filter's SQL part
 * admits, strictly before `before`, newest first: one block of the skip index (blocks/), at most
 * `limit` of them. Read through the (project_id, seq) index: the time index would walk the range.
 */
export async function findInSeqRange(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, first: number, last: number | undefined, limit: number, engine: LogSql): Promise<LogRowStored[]> {
  let q = applyFilter(engine, db.selectFrom('logs').select(COLUMNS), projectId, filter).where('seq', '>=', first);
  if (last !== undefined) q = q.where('seq', '<=', last);
  if (before) q = q.where('ts', '<=', before.ts).where((eb) => eb.or([eb('ts', '<', before.ts), eb.and([eb('ts', '=', before.ts), eb('seq', '<', before.seq)])]));
  const { rows } = await db.executeQuery<LogRowStored>(engine.seqRangeRead(q.orderBy('seq').limit(limit).compile()));
  return rows.sort((a, b) => Number(b.ts) - Number(a.ts) || Number(b.seq) - Number(a.seq));
}

/**
 * Logs after `afterSeq`, in seq (commit) order: live tail and its resumption. `minTs`, when the
 * caller knows that every log it wants is at least that old (another node's notification says so),
 * lets PostgreSQL plan over the partitions that can hold them only. `maxBytes`: the run stops
 * before the log that would take it past that many bytes of text (it always holds one log), so a
 * replay of large logs is read in bounded slices; the sizes are read first, without the text.
 */
export async function findSince(db: Executor, projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number, minTs?: number, maxBytes?: number): Promise<LogRowStored[]> {
  const since = <O>(q: SelectQueryBuilder<DatabaseSchema, 'logs', O>, upTo: number | undefined, n: number) => {
    let r = q.where('project_id', '=', projectId).where('seq', '>', afterSeq);
    if (upTo !== undefined) r = r.where('seq', '<=', upTo);
    if (minTs !== undefined) r = r.where('ts', '>=', minTs);
    return r.orderBy('seq').limit(n);
  };
  if (maxBytes !== undefined) {
    const sizes = await since(db.selectFrom('logs').select(['seq', BYTES.as('bytes')]), upToSeq, limit).execute();
    let n = 0;
    let bytes = 0;
    while (n < sizes.length && (n === 0 || bytes + Number(sizes[n]!.bytes) <= maxBytes)) bytes += Number(sizes[n++]!.bytes);
    if (n === 0) return [];
    upToSeq = Number(sizes[n - 1]!.seq);
    limit = n;
  }
  return since(db.selectFrom('logs').select(COLUMNS), upToSeq, limit).execute();
}

const MINUTE_MS = 60_000;

export interface BucketCount {
  bucket: number;
  level: number;
  n: number;
}

/**
 * Counts per time bucket and level. Buckets start at multiples of `intervalMs` since the epoch.
 * When only the time range and levels filter and buckets are whole minutes, the whole minutes of
 * the range are read from the log_counts rollup and only the partial minutes at its ends from the
 * logs themselves; the answer is the same as counting every log.
 */
export function countByBucket(db: Executor, projectId: string, filter: LogFilter, intervalMs: number, engine: LogSql): Promise<BucketCount[]> {
  return rollupAndEdges(
    filter,
    intervalMs,
    (first, end) => countRollupByBucket(db, projectId, filter.levels, first, end, intervalMs),
    // Packed logs are counted from their packs (packs/merge.ts): the rollups count them already.
    (f) =>
      countWithPacks(db, projectId, f, () => countLogsByBucket(db, projectId, f, intervalMs, engine), {
        keyOf: (r) => `${r.bucket}:${r.level}`,
        keyOfLog: (row) => `${row.ts - (row.ts % intervalMs)}:${row.level}`,
        make: (row) => ({ bucket: row.ts - (row.ts % intervalMs), level: row.level, n: 0 }),
      }),
    (r) => `${r.bucket}:${r.level}`,
  );
}

/**
 * Counts from a rollup when the filter allows it: its whole minutes from the rollup, the partial
 * minutes at the range's ends from the logs, summed by `keyOf`; otherwise every log is counted.
 */
async function rollupAndEdges<R extends { n: number }>(
  filter: LogFilter,
  intervalMs: number,
  fromRollup: (first: number, end: number) => Promise<R[]>,
  fromLogs: (filter: LogFilter) => Promise<R[]>,
  keyOf: (r: R) => string,
): Promise<R[]> {
  const span = wholeMinutes(filter, intervalMs);
  if (!span) return fromLogs(filter);
  const { from, to } = filter as { from: number; to: number };
  const parts = [fromRollup(span.first, span.end)];
  if (from < span.first) parts.push(fromLogs({ ...filter, from, to: span.first - 1 }));
  if (span.end <= to) parts.push(fromLogs({ ...filter, from: span.end, to }));
  const sums = new Map<string, R>();
  for (const rows of await Promise.all(parts)) {
    for (const r of rows) {
      const key = keyOf(r);
      const sum = sums.get(key);
      if (sum) sum.n += r.n;
      else sums.set(key, { ...r });
    }
  }
  return [...sums.values()];
}

/**
 * The whole minutes [first, end) of the range a rollup can count: only when nothing but the time
 * range and levels filter and buckets are whole minutes. `to` is inclusive, so the last whole
 * minute ends at or before to + 1.
 */
function wholeMinutes(filter: LogFilter, intervalMs: number): { first: number; end: number } | undefined {
  const { from, to } = filter;
  if (filter.source !== undefined || filter.q !== undefined || filter.pattern !== undefined || filter.query !== undefined || filter.contains !== undefined) return undefined;
  if (intervalMs % MINUTE_MS !== 0 || from === undefined || to === undefined) return undefined;
  const first = Math.ceil(from / MINUTE_MS) * MINUTE_MS;
  const end = Math.floor((to + 1) / MINUTE_MS) * MINUTE_MS;
  return first < end ? { first, end } : undefined;
}

/** Rollup counts of the whole minutes in [fromMinute, toMinute). */
async function countRollupByBucket(db: Executor, projectId: string, levels: number[] | undefined, fromMinute: number, toMinute: number, intervalMs: number): Promise<BucketCount[]> {
  const bucket = sql<number>`(minute - (minute % ${intervalMs}))`;
  let q = db
    .selectFrom('log_counts')
    .select([bucket.as('bucket'), 'level', (eb) => eb.fn.sum<number>('n').as('n')])
    .where('project_id', '=', projectId)
    .where('minute', '>=', fromMinute)
    .where('minute', '<', toMinute);
  if (levels) q = levels.length === 1 ? q.where('level', '=', levels[0]!) : q.where('level', 'in', levels);
  const rows = await q.groupBy([sql`1`, sql`2`]).execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), level: Number(r.level), n: Number(r.n) }));
}

/** Counts every log of the range. */
async function countLogsByBucket(db: Executor, projectId: string, filter: LogFilter, intervalMs: number, engine: LogSql): Promise<BucketCount[]> {
  const bucket = sql<number>`(ts - (ts % ${intervalMs}))`;
  const rows = await applyFilter(engine, db.selectFrom('logs').select([bucket.as('bucket'), 'level', (eb) => eb.fn.countAll<number>().as('n')]), projectId, filter)
    // By position: PostgreSQL would not see two copies of the parameterised expression as one.
    .groupBy([sql`1`, sql`2`])
    .execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), level: Number(r.level), n: Number(r.n) }));
}

export async function lastSeq(db: Executor, projectId: string): Promise<number | undefined> {
  const row = await selectLastSeq(db, projectId).executeTakeFirst();
  return row ? Number(row.last_seq) : undefined;
}

/** The projects whose owner is on `plan` and that hold logs older than `cutoff`. */
export async function projectsWithLogsBefore(db: Executor, plan: string, cutoff: number): Promise<string[]> {
  const rows = await db
    .selectFrom('projects')
    .innerJoin('users', 'users.id', 'projects.user_id')
    .select('projects.id')
    .where('users.plan', '=', plan)
    .where((eb) => eb.exists(eb.selectFrom('logs').select('logs.seq').whereRef('logs.project_id', '=', 'projects.id').where('logs.ts', '<', cutoff)))
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Counts per time bucket and source (null for logs without one), for stats grouped by source: from
 * the log_source_counts rollup where the filter allows (see rollupAndEdges). Each read returns at
 * most `maxRows` rows (a tenant may use any number of sources): the caller refuses past that.
 */
export function countBySourceBucket(db: Executor, projectId: string, filter: LogFilter, intervalMs: number, maxRows: number, engine: LogSql): Promise<SourceBucketCount[]> {
  return rollupAndEdges(
    filter,
    intervalMs,
    (first, end) => countSourceRollup(db, projectId, filter.levels, first, end, intervalMs, maxRows),
    (f) =>
      countWithPacks(db, projectId, f, () => countLogsBySourceBucket(db, projectId, f, intervalMs, maxRows, engine), {
        keyOf: (r) => `${r.bucket}:${r.source ?? '\u0000'}`,
        keyOfLog: (row) => `${row.ts - (row.ts % intervalMs)}:${row.source ?? '\u0000'}`,
        make: (row) => ({ bucket: row.ts - (row.ts % intervalMs), source: row.source, n: 0 }),
      }),
    (r) => `${r.bucket}:${r.source ?? ''}`,
  );
}

export interface SourceBucketCount {
  bucket: number;
  source: string | null;
  n: number;
}

async function countSourceRollup(db: Executor, projectId: string, levels: number[] | undefined, fromMinute: number, toMinute: number, intervalMs: number, maxRows: number): Promise<SourceBucketCount[]> {
  const bucket = sql<number>`(minute - (minute % ${intervalMs}))`;
  let q = db
    .selectFrom('log_source_counts')
    .select([bucket.as('bucket'), 'source', (eb) => eb.fn.sum<number>('n').as('n')])
    .where('project_id', '=', projectId)
    .where('minute', '>=', fromMinute)
    .where('minute', '<', toMinute);
  if (levels) q = levels.length === 1 ? q.where('level', '=', levels[0]!) : q.where('level', 'in', levels);
  const rows = await q.groupBy([sql`1`, sql`2`]).limit(maxRows + 1).execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), source: r.source === '' ? null : r.source, n: Number(r.n) }));
}

async function countLogsBySourceBucket(db: Executor, projectId: string, filter: LogFilter, intervalMs: number, maxRows: number, engine: LogSql): Promise<SourceBucketCount[]> {
  const bucket = sql<number>`(ts - (ts % ${intervalMs}))`;
  const rows = await applyFilter(engine, db.selectFrom('logs').select([bucket.as('bucket'), 'source', (eb) => eb.fn.countAll<number>().as('n')]), projectId, filter)
    .groupBy([sql`1`, sql`2`])
    .limit(maxRows + 1)
    .execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), source: r.source, n: Number(r.n) }));
}

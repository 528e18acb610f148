import { sql, type SelectQueryBuilder } from 'kysely';
import { isPostgres } from '../../db/lock.js';
import type { DatabaseSchema, Executor, LogsTable } from '../../db/types.js';
import type { LogFilter } from './filter.js';

export type LogRowStored = LogsTable;

export interface Position {
  ts: number;
  seq: number;
}

const COLUMNS = ['seq', 'ts', 'received_at', 'level', 'source', 'message', 'metadata', 'project_id'] as const;

/** `%` and `_` in a substring are literal. */
function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The SQL part of a filter (all but `pattern`, which runs in the app with RE2). */
function applyFilter<O>(db: Executor, query: SelectQueryBuilder<DatabaseSchema, 'logs', O>, projectId: string, filter: LogFilter) {
  let q = query.where('project_id', '=', projectId);
  if (filter.from !== undefined) q = q.where('ts', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('ts', '<=', filter.to);
  if (filter.levels) q = filter.levels.length === 1 ? q.where('level', '=', filter.levels[0]!) : q.where('level', 'in', filter.levels);
  if (filter.source !== undefined) q = q.where('source', '=', filter.source);
  if (filter.q !== undefined) {
    // Case-insensitive: ILIKE on PostgreSQL, LIKE on SQLite (which folds ASCII letters only).
    q = isPostgres(db)
      ? q.where(sql<boolean>`message ilike ${likePattern(filter.q)} escape '\\'`)
      : q.where(sql<boolean>`message like ${likePattern(filter.q)} escape '\\'`);
  }
  return q;
}

/**
 * Lower time bounds tried first on PostgreSQL, before the page's whole range. The logs table is
 * partitioned by day there, and a query without a time bound is planned over every partition
 * (tens of milliseconds with a year of them); with a bound the planner keeps only the few it needs.
 */
const PAGE_WINDOWS_MS = [3_600_000, 86_400_000, 7 * 86_400_000];

/**
 * One page of logs, newest first, strictly before `before`. On PostgreSQL it first looks in the
 * last hour, day and week before the page's upper end: a full page there is exactly the page of the
 * whole range, since every log left out is older than every log in it.
 */
export async function findPage(db: Executor, projectId: string, filter: LogFilter, before: Position | undefined, limit: number): Promise<LogRowStored[]> {
  let q = applyFilter(db, db.selectFrom('logs').select(COLUMNS), projectId, filter);
  if (before) q = q.where((eb) => eb.or([eb('ts', '<', before.ts), eb.and([eb('ts', '=', before.ts), eb('seq', '<', before.seq)])]));
  q = q.orderBy('ts', 'desc').orderBy('seq', 'desc').limit(limit);
  if (isPostgres(db)) {
    const top = Math.min(before?.ts ?? Number.POSITIVE_INFINITY, filter.to ?? Number.POSITIVE_INFINITY, Date.now());
    for (const window of PAGE_WINDOWS_MS) {
      const lower = top - window;
      if (filter.from !== undefined && lower <= filter.from) break;
      const rows = await q.where('ts', '>=', lower).execute();
      if (rows.length === limit) return rows;
    }
  }
  return q.execute();
}

/**
 * Logs after `afterSeq`, in seq (commit) order: live tail and its resumption. `minTs`, when the
 * caller knows that every log it wants is at least that old (another node's notification says so),
 * lets PostgreSQL plan over the partitions that can hold them only.
 */
export function findSince(db: Executor, projectId: string, afterSeq: number, upToSeq: number | undefined, limit: number, minTs?: number): Promise<LogRowStored[]> {
  let q = db.selectFrom('logs').select(COLUMNS).where('project_id', '=', projectId).where('seq', '>', afterSeq);
  if (upToSeq !== undefined) q = q.where('seq', '<=', upToSeq);
  if (minTs !== undefined) q = q.where('ts', '>=', minTs);
  return q.orderBy('seq').limit(limit).execute();
}

/** Counts per time bucket and level. Buckets start at multiples of `intervalMs` since the epoch. */
export async function countByBucket(db: Executor, projectId: string, filter: LogFilter, intervalMs: number) {
  const bucket = sql<number>`(ts - (ts % ${intervalMs}))`;
  const rows = await applyFilter(db, db.selectFrom('logs').select([bucket.as('bucket'), 'level', (eb) => eb.fn.countAll<number>().as('n')]), projectId, filter)
    // By position: PostgreSQL would not see two copies of the parameterised expression as one.
    .groupBy([sql`1`, sql`2`])
    .execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), level: Number(r.level), n: Number(r.n) }));
}

export async function lastSeq(db: Executor, projectId: string): Promise<number | undefined> {
  const row = await db.selectFrom('projects').select('last_seq').where('id', '=', projectId).executeTakeFirst();
  return row ? Number(row.last_seq) : undefined;
}

/**
 * Deletes up to `batch` logs of one project older than `cutoff` and lowers its logCount by as many,
 * in one transaction. Returns how many went.
 */
export async function deleteOlderThan(db: Executor, projectId: string, cutoff: number, batch: number): Promise<number> {
  const victims = db.selectFrom('logs').select('seq').where('project_id', '=', projectId).where('ts', '<', cutoff).limit(batch);
  // The ts bound repeats the victims' own: on PostgreSQL it keeps the delete to the partitions that can hold them.
  const result = await db.deleteFrom('logs').where('project_id', '=', projectId).where('ts', '<', cutoff).where('seq', 'in', victims).executeTakeFirst();
  const n = Number(result.numDeletedRows);
  if (n > 0) await db.updateTable('projects').set((eb) => ({ log_count: eb('log_count', '-', n) })).where('id', '=', projectId).execute();
  return n;
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

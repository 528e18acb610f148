import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Config } from '../../../config.js';
import type { Db, Executor } from '../../../db/types.js';
import { isPlanName, PLAN_NAMES } from '../../plans/plans.js';

/**
 * PostgreSQL's daily partitions of `logs` (see migration 0006): one per UTC day, `logs_p20261122`
 * holding ts in [2026-11-22T00:00Z, 2026-11-23T00:00Z), and `logs_default` for timestamps without
 * one. Two jobs keep them:
 *
 * - ensurePartitions() makes the partitions of the window: from (now − the longest retention of any
 *   plan that has projects, at most MAX_DAYS_BACK days) to FUTURE_DAYS days ahead. Rows already in
 *   the default partition for such a day are moved into the new partition in the same transaction.
 * - expirePartitions() empties (TRUNCATE) a partition once every project with rows in it is past its
 *   retention there, lowering logCount in the same transaction, and drops empty partitions older
 *   than the window. Rows that cannot go with a whole partition yet (a short-retention project
 *   beside a long-retention one) are left to retention's bounded batch deletes.
 * - reclaimPartition() gives back the files of a partition that packing left empty or nearly so
 *   (after each vacuum of what packing emptied, and every hourly round).
 *
 * The window follows the plans in use rather than every configured plan: each partition costs
 * planning time on every query without a time bound (the newest page, the live tail), so a server
 * whose projects are all on a 7-day plan keeps ~11 partitions, not 369.
 *
 * One node at a time changes the set of partitions (a transaction-scoped advisory lock), and every
 * lock on `logs` is taken with a short lock_timeout: a maintenance step that would wait long (or
 * close a deadlock with ingest) gives up and is tried again at the next round; correctness never
 * depends on it succeeding.
 */

export const DAY_MS = 86_400_000;
/** Partitions are made this many days ahead of today. */
export const FUTURE_DAYS = 3;
/** The window never reaches further back than this; older logs live in the default partition. */
export const MAX_DAYS_BACK = 400;
/** How long a maintenance step waits for a lock on `logs` before it gives up until the next round. */
const LOCK_TIMEOUT = '1s';
/**
 * Retention's steps hold project rows, which ingest also locks: their waits stay below PostgreSQL's
 * deadlock_timeout (1 s by default), so that in a lock cycle it is retention that gives up, never an
 * ingest transaction.
 */
const RETENTION_LOCK_TIMEOUT = '500ms';
const ADVISORY_LOCK = 'loglane:logs-partitions';
const COLUMNS = sql.raw('project_id, seq, ts, received_at, level, source, message, metadata');

export interface Partition {
  name: string;
  /** Inclusive, epoch ms. */
  from: number;
  /** Exclusive, epoch ms. */
  to: number;
}

export interface PartitionWindow {
  /** The first and last UTC day (days since the epoch) that should have a partition. */
  fromDay: number;
  toDay: number;
}

export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** `logs_p20261122` for the UTC day 2026-11-22 (given as days since the epoch). */
export function partitionName(day: number): string {
  return `logs_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** True when `logs` is a partitioned table (PostgreSQL after migration 0006). */
export async function isPartitioned(db: Executor): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`select relkind::text as kind from pg_class where oid = to_regclass('logs')`.execute(db);
  return rows[0]?.kind === 'p';
}

/** The range partitions of `logs`, oldest first (the default partition is not among them). */
export async function listPartitions(db: Executor): Promise<Partition[]> {
  const { rows } = await sql<{ name: string; bound: string }>`select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass('logs')`.execute(db);
  const partitions: Partition[] = [];
  for (const r of rows) {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    if (m) partitions.push({ name: r.name, from: Number(m[1]), to: Number(m[2]) });
  }
  return partitions.sort((a, b) => a.from - b.from);
}

/** The days that should have a partition now: see the comment at the top. */
export async function partitionWindow(db: Executor, retentionDays: Config['retentionDays'], now: number): Promise<PartitionWindow> {
  const plans = await db
    .selectFrom('users')
    .select('plan')
    .distinct()
    .where((eb) => eb.exists(eb.selectFrom('projects').select('projects.id').whereRef('projects.user_id', '=', 'users.id')))
    .execute();
  const longest = Math.max(0, ...plans.map((p) => (isPlanName(p.plan) ? retentionDays[p.plan] : 0)));
  return { fromDay: dayOf(now - Math.min(longest, MAX_DAYS_BACK) * DAY_MS), toDay: dayOf(now) + FUTURE_DAYS };
}

/**
 * Holds the set of partitions still for the caller's transaction (shared with other such holders;
 * a change of the set waits for them, and they for it). For work that saves what it reads: a read
 * planned while a day's partition is being made, its rows moved out of the default partition, can
 * miss those rows, and a block summarised from such a read would leave them out of its filter.
 */
export async function holdPartitionSet(tx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(hashtext(${ADVISORY_LOCK}))`.execute(tx);
}

async function lockPartitionSet(tx: Executor, lockTimeout: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${ADVISORY_LOCK}))`.execute(tx);
  await sql`select set_config('lock_timeout', ${lockTimeout}, true)`.execute(tx);
}

/** Days made per transaction: fewer commits, while writes wait only briefly for each. */
const DAYS_PER_TRANSACTION = 16;

/**
 * Makes the missing partitions of `window`, nearest days first. Returns the partitions made and how
 * many rows moved into them from the default partition.
 */
export async function ensurePartitions(db: Db, window: PartitionWindow): Promise<{ created: string[]; moved: number }> {
  const out = { created: [] as string[], moved: 0 };
  if (!(await isPartitioned(db))) return out;
  const existing = await listPartitions(db);
  const missing: number[] = [];
  for (let day = window.toDay; day >= window.fromDay; day--) if (!existing.some((p) => overlaps(p, day))) missing.push(day);
  for (let i = 0; i < missing.length; i += DAYS_PER_TRANSACTION) {
    const made = await createPartitions(db, missing.slice(i, i + DAYS_PER_TRANSACTION));
    out.created.push(...made.created);
    out.moved += made.moved;
  }
  return out;
}

function overlaps(p: Partition, day: number): boolean {
  return p.from < (day + 1) * DAY_MS && p.to > day * DAY_MS;
}

/**
 * Some days' partitions, in one transaction: each made as a plain table, the default partition's
 * rows of that day moved into it, then attached. (PostgreSQL refuses to add a partition while the
 * default partition holds rows of its range.) Days another node made meanwhile are skipped.
 */
async function createPartitions(db: Db, days: number[]): Promise<{ created: string[]; moved: number }> {
  return db.transaction().execute(async (tx) => {
    await lockPartitionSet(tx, LOCK_TIMEOUT);
    const existing = await listPartitions(tx);
    const todo = days.filter((day) => !existing.some((p) => overlaps(p, day)));
    if (todo.length === 0) return { created: [], moved: 0 };
    for (const day of todo) await sql`create table ${sql.id(partitionName(day))} (like logs including all)`.execute(tx);
    // Writes wait (reads go on) until the commit: an insert planned before the attach could
    // otherwise still route a row of these days to the default partition and then fail its check.
    await sql`lock table only logs in exclusive mode`.execute(tx);
    await sql`lock table logs_default in access exclusive mode`.execute(tx);
    let moved = 0;
    for (const day of todo) {
      const name = sql.id(partitionName(day));
      const from = day * DAY_MS;
      const to = from + DAY_MS;
      const result = await sql`with moved as (delete from logs_default where ts >= ${from} and ts < ${to} returning ${COLUMNS})
        insert into ${name} (${COLUMNS}) select ${COLUMNS} from moved`.execute(tx);
      moved += Number(result.numAffectedRows ?? 0);
      await sql`alter table logs attach partition ${name} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(tx);
    }
    return { created: todo.map(partitionName), moved };
  });
}

/**
 * Retention by whole partitions. A partition is emptied when its end is at or before the cutoff of
 * every project that has rows in it, i.e. end <= min over those projects of (now − the retention of
 * the project's plan). Looking at the projects actually present, rather than at the longest plan
 * configured, frees a day as soon as its own rows allow: a day that only free-plan projects wrote
 * goes after 7 days even while enterprise projects exist elsewhere. (A project whose plan is not
 * in the table of plans never expires, as in the batch deletes; rows of a project that no longer
 * exists hold nothing back.)
 *
 * An emptied partition inside the window is kept (TRUNCATE: only that partition is locked, and
 * ensurePartitions() would just make it again); an empty one older than the window is dropped.
 *
 * Returns how many logs went.
 */
export async function expirePartitions(db: Db, retentionDays: Config['retentionDays'], now: number, window: PartitionWindow): Promise<{ deleted: number; emptied: string[]; dropped: string[]; busy: string[] }> {
  const out = { deleted: 0, emptied: [] as string[], dropped: [] as string[], busy: [] as string[] };
  if (!(await isPartitioned(db))) return out;
  // Nothing newer than the shortest retention can be past anyone's cutoff.
  const horizon = now - Math.min(...PLAN_NAMES.map((p) => retentionDays[p])) * DAY_MS;
  for (const partition of await listPartitions(db)) {
    if (partition.to > horizon) break;
    try {
      const emptied = await emptyIfExpired(db, partition, retentionDays, now);
      if (emptied === undefined) continue;
      if (emptied > 0) {
        out.deleted += emptied;
        out.emptied.push(partition.name);
      }
      if (partition.to <= window.fromDay * DAY_MS && (await dropIfEmpty(db, partition))) out.dropped.push(partition.name);
    } catch (err) {
      // lock_timeout (55P03) or a deadlock PostgreSQL broke (40P01): the next round tries again.
      // (42P01: another node dropped it meanwhile.)
      const code = (err as { code?: string }).code;
      if (code === '42P01') continue;
      if (code !== '55P03' && code !== '40P01') throw err;
      out.busy.push(partition.name);
    }
  }
  return out;
}

/** Empties the partition if it is expired for every project in it. Returns the rows removed (0 if it was empty), or undefined if it must stay. */
async function emptyIfExpired(db: Db, partition: Partition, retentionDays: Config['retentionDays'], now: number): Promise<number | undefined> {
  return db.transaction().execute(async (tx) => {
    await lockPartitionSet(tx, RETENTION_LOCK_TIMEOUT);
    const table = sql.id(partition.name);
    // No writes into the partition from here on, so the counts below stay exact until the TRUNCATE.
    await sql`lock table ${table} in share mode`.execute(tx);
    const { rows: counts } = await sql<{ project_id: string; n: number }>`select project_id, count(*) as n from ${table} group by project_id`.execute(tx);
    if (counts.length === 0) return 0;
    const ids = counts.map((c) => c.project_id).sort();
    const owners = await tx.selectFrom('projects').innerJoin('users', 'users.id', 'projects.user_id').select(['projects.id', 'users.plan']).where('projects.id', 'in', ids).execute();
    const planOf = new Map(owners.map((o) => [o.id, o.plan]));
    for (const id of ids) {
      const plan = planOf.get(id);
      if (plan === undefined) continue;
      if (!isPlanName(plan) || partition.to > now - retentionDays[plan] * DAY_MS) return undefined;
    }
    // The project rows in id order; ingest takes the same lock before it writes.
    await sql`select id from projects where id = any(${ids}::text[]) order by id for update`.execute(tx);
    await sql`update projects as p set log_count = p.log_count - c.n
      from unnest(${counts.map((c) => c.project_id)}::text[], ${counts.map((c) => Number(c.n))}::bigint[]) as c(id, n)
      where p.id = c.id`.execute(tx);
    await sql`truncate ${table}`.execute(tx);
    // The partition held every log of its days: their minutes leave the rollup with them.
    await sql`delete from log_counts where project_id = any(${ids}::text[]) and minute >= ${partition.from} and minute < ${partition.to}`.execute(tx);
    await sql`delete from log_source_counts where project_id = any(${ids}::text[]) and minute >= ${partition.from} and minute < ${partition.to}`.execute(tx);
    return counts.reduce((sum, c) => sum + Number(c.n), 0);
  });
}

/** Drops the partition if it holds no rows. */
async function dropIfEmpty(db: Db, partition: Partition): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await lockPartitionSet(tx, RETENTION_LOCK_TIMEOUT);
    // The parent first, as every query takes it: then the partition, by the DROP.
    await sql`lock table only logs in access exclusive mode`.execute(tx);
    const table = sql.id(partition.name);
    const { rows } = await sql<{ any: boolean }>`select exists (select 1 from ${table}) as any`.execute(tx);
    if (rows[0]?.any) return false; // written meanwhile: its rows will expire like any others
    await sql`drop table ${table}`.execute(tx);
    return true;
  });
}

/** How long reclaiming waits for a partition's exclusive lock: it holds up reads and writes of that partition meanwhile. */
const RECLAIM_LOCK_TIMEOUT = '200ms';
/** Lock errors (lock_timeout, a deadlock), statement_timeout, a table gone: reclaiming tries again later. */
const RECLAIM_RETRY_CODES = new Set(['55P03', '40P01', '57014', '42P01']);

/**
 * A partition holding at most this many rows may be rewritten to their size (reclaimPartition):
 * two blocks' worth, what packing leaves of a day in rows (the last, incomplete block of each
 * project) once it has caught up.
 */
export const SPARSE_ROWS = 8192;
/** ...and only when it takes more than this many bytes, and more than SPARSE_FACTOR times a generous size of its rows. */
export const SPARSE_MIN_BYTES = 8 * 1024 * 1024;
const SPARSE_FACTOR = 8;
/** A generous size of one row with its index entries, for the test above (realistic logs take ~700 bytes). */
const ROW_BYTES = 2048;

export type Reclaimed = 'truncated' | 'rewritten' | false;

/**
 * Gives a partition's files back to the system once packing (see packs/) has moved most of its
 * logs into packs: VACUUM makes dead rows reusable space but returns disk only from a table's end,
 * so a partition that held a burst keeps the burst's size after its logs are packed.
 *
 * - Left with no row, the partition is truncated.
 * - Left with a few (at most SPARSE_ROWS: the incomplete last block of each project writing to it)
 *   while it takes many times their size, its rows are copied aside, the partition truncated and
 *   the rows written back, in one transaction: the files shrink to what the rows need. This is
 *   what gives a burst's space back while the day's partition still takes new logs.
 *
 * The rows are counted first through the (project_id, seq) index (cleaned by the VACUUM that comes
 * before, so the scan is index-only and short); a partition over SPARSE_ROWS, the usual case for
 * the day new logs go to, is never locked. Then, under the partition's exclusive lock taken with a
 * short lock_timeout (reads and writes of that partition wait meanwhile: a few milliseconds for a
 * few thousand rows), the count is taken again and the step done. No read in Loglane spans two
 * statements in one snapshot (all run in READ COMMITTED), so TRUNCATE's disregard of older
 * snapshots shows no reader an empty table. (The statistics' n_live_tup is no guide: it can keep
 * counting rows packing deleted.)
 */
export async function reclaimPartition(db: Db, table: string, minBytes = SPARSE_MIN_BYTES): Promise<Reclaimed> {
  const name = sql.id(table);
  const count = async (tx: Executor) =>
    Number((await sql<{ n: string }>`select count(*) as n from (select 1 from ${name} order by project_id, seq limit ${SPARSE_ROWS + 1}) s`.execute(tx)).rows[0]!.n);
  const size = async (tx: Executor) => Number((await sql<{ n: string }>`select pg_total_relation_size(${table}::regclass) as n`.execute(tx)).rows[0]!.n);
  const sparse = (rows: number, bytes: number) => rows <= SPARSE_ROWS && bytes > Math.max(minBytes, SPARSE_FACTOR * rows * ROW_BYTES);
  try {
    return await db.transaction().execute(async (tx): Promise<Reclaimed> => {
      await sql`set local statement_timeout = '5s'`.execute(tx);
      await sql`select set_config('lock_timeout', ${RECLAIM_LOCK_TIMEOUT}, true)`.execute(tx);
      // The rows through the index, never the heap the burst left behind.
      await sql`set local enable_seqscan = off`.execute(tx);
      let rows = await count(tx);
      if (rows > 0 && !sparse(rows, await size(tx))) return false;
      await sql`lock table ${name} in access exclusive mode`.execute(tx);
      rows = await count(tx);
      if (rows > 0 && !sparse(rows, await size(tx))) return false;
      if (rows === 0) {
        await sql`truncate ${name}`.execute(tx);
        return 'truncated';
      }
      await sql`create temporary table loglane_reclaim on commit drop as select * from ${name} order by project_id, seq`.execute(tx);
      await sql`truncate ${name}`.execute(tx);
      await sql`insert into ${name} select * from loglane_reclaim`.execute(tx);
      return 'rewritten';
    });
  } catch (err) {
    if (RECLAIM_RETRY_CODES.has(String((err as { code?: unknown } | null)?.code))) return false;
    throw err;
  }
}

/**
 * The partitions of `logs` (the default one too) that take more than an empty table's pages (a
 * btree's is its metapage): the ones reclaiming may give back.
 */
async function partitionsWithPages(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass('logs')
      and (pg_relation_size(c.oid) > 0 or pg_indexes_size(c.oid) > 8192 * (select count(*) from pg_index x where x.indrelid = c.oid))`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * The logs service's handle on partition upkeep (PostgreSQL only). Neither step ever throws: a
 * failure is logged, and the next round tries again; logs without a partition go to the default
 * one meanwhile, and expired ones are still deleted by retention's batches.
 */
export function createPartitionMaintenance(deps: { db: Db; config: Pick<Config, 'retentionDays'>; now: () => number; log: FastifyBaseLogger }) {
  const { db, config, now, log } = deps;
  return {
    async ensure(): Promise<void> {
      try {
        const { created, moved } = await ensurePartitions(db, await partitionWindow(db, config.retentionDays, now()));
        if (created.length > 0) log.info({ created: created.length, first: created.at(-1), last: created[0], moved }, 'created log partitions');
      } catch (err) {
        log.warn({ err }, 'creating log partitions failed; will retry');
      }
    },
    /**
     * Truncates those of `tables` (by default every partition with pages) that hold no row, and
     * rewrites those left with a few rows in many pages (reclaimPartition); a failure is logged, and the next round or the next packs try again.
     */
    async reclaim(tables?: string[]): Promise<void> {
      try {
        for (const table of tables ?? (await partitionsWithPages(db))) await reclaimPartition(db, table);
      } catch (err) {
        log.warn({ err }, 'could not give back the files of an emptied log partition; will retry');
      }
    },
    /** Returns how many logs went with whole partitions. */
    async expire(): Promise<number> {
      try {
        const at = now();
        const { deleted, emptied, dropped, busy } = await expirePartitions(db, config.retentionDays, at, await partitionWindow(db, config.retentionDays, at));
        if (emptied.length + dropped.length > 0) log.info({ deleted, emptied, dropped }, 'retention removed expired log partitions');
        if (busy.length > 0) log.info({ busy }, 'log partitions busy; retention will try them again');
        return deleted;
      } catch (err) {
        log.warn({ err }, 'expiring log partitions failed; will retry');
        return 0;
      }
    },
  };
}

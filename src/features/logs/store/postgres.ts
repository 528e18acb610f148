/**
 * The log store on PostgreSQL: several nodes share the database. Commits are announced to the
 * other nodes (NOTIFY, pg-listener.ts), logs live in daily partitions (partitions.ts), searches
 * read through a pool whose statements time out at the query budget, and one node at a time builds
 * the skip index (an advisory lock).
 */
import { threadId } from 'node:worker_threads';
import { sql } from 'kysely';
import type { Db, Executor } from '../../../db/types.js';
import { saveSummary, summarise } from './blocks/store.js';
import { createCommitSpans, type CommitSpans } from './blocks/spans.js';
import { createPartitionMaintenance, holdPartitionSet } from './partitions.js';
import { createPacker, type Packer } from './packs/packer.js';
import { unpackSliced } from './packs/codec.js';
import { expire } from './packs/expire.js';
import type { PackedLog } from './packs/format.js';
import * as packStatements from './packs/statements.js';
import { listenForCommits, PG_CHANNEL } from './pg-listener.js';
import type { CommitResult, LogWriter } from './writer.js';
import { minuteCounts, toColumns } from './batch.js';
import { withSharedQueries, type DeleteCounts, type LogStore, type LogStoreDeps, type PackOutcome } from './index.js';
import { postgresSql } from './postgres-sql.js';
import { countRemovedLogs, dropEmptyLogCounts, dropEmptySourceCounts, markIdempotencyDone } from './statements.js';

/** Advisory lock key of the skip index's builder (any constant not used elsewhere). */
const BUILDER_LOCK = 0x6c6f67_6978; // "logix"

/** Advisory lock key of the compactor: one node packs at a time. */
const PACKER_LOCK = 0x6c6f67_706b; // "logpk"
/**
 * Deleted rows become reusable space once VACUUM has been over them; autovacuum comes round when
 * a fifth of a table is dead, which a day's partition being packed as it fills may not reach for
 * hours. So the partitions that packs emptied are vacuumed at most this often (an index's emptied
 * pages are reused only after a second pass: a short interval keeps what rows take near the
 * rows that wait to be packed).
 */
const VACUUM_EVERY_MS = 10_000;

/** SQLSTATEs of transient failures: deadlock, serialization failure, lock not available, too many connections, admin shutdown. */
const RETRYABLE_CODES = new Set(['40P01', '40001', '55P03', '53300', '57P01']);
/** query_canceled: statement_timeout ended it. */
const STATEMENT_TIMEOUT = '57014';

const codeOf = (err: unknown) => (err as { code?: unknown } | null)?.code;

/** Codes of Node's network errors: the database server cannot be reached. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * SQLSTATEs about the server rather than the data: connection (class 08), authorisation (28), no
 * such database (3D), insufficient resources such as a full disk (53), system errors (58), shutting
 * down (57P01-57P03), a read-only server (25006).
 */
const UNAVAILABLE_CODES = /^(?:(?:08|28|3D|53|58)[0-9A-Z]{3}|57P0[123]|25006)$/;
/** pg's pool reports a connection timeout or a lost connection without a code. */
const UNAVAILABLE_MESSAGE = /timeout exceeded when trying to connect|Connection terminated/i;

/** A failed write says PostgreSQL cannot write at all (LogStore.isUnavailable). */
export function postgresUnavailable(err: unknown): boolean {
  const code = codeOf(err);
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_CODES.test(code))) return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

export function createPostgresLogStore(db: Db, readDb: Db, url: string, deps: LogStoreDeps): LogStore {
  /** The time ranges of recent commits, this node's and the others' (announced), for the builder's reads. */
  const spans = createCommitSpans();
  const built = { timed: 0, bySeq: 0 };
  const writer = createPostgresWriter(db, spans);
  const partitions = createPartitionMaintenance({ db, config: deps.config, now: deps.now, log: deps.log });
  /** Retention's batches that took logs, counted as they commit; a purge runs none (below). */
  const deleted: DeleteCounts = { purge: { steps: 0, maxLogs: 0, threads: [] }, retention: { steps: 0, maxLogs: 0, threads: [] } };
  const packer = createPacker();
  /**
   * Tables (partitions of `logs`, the filters' table, which loses a block's slice filters when it is
   * packed, and the block list, whose rows packing updates) that packing changed since the last
   * vacuum, each with the passes it still needs: an index page emptied by one pass is reused only
   * after the next, so each gets two.
   */
  const emptied = new Map<string, number>();
  let vacuumedAt = 0;
  let vacuuming: Promise<void> | undefined;
  let vacuumLater: NodeJS.Timeout | undefined;
  function vacuumSoon(): void {
    if (vacuuming || vacuumLater || emptied.size === 0) return;
    const wait = vacuumedAt + VACUUM_EVERY_MS - deps.now();
    if (wait > 0) {
      // The last packs of a run are vacuumed too, once the interval has passed.
      vacuumLater = setTimeout(() => {
        vacuumLater = undefined;
        vacuumSoon();
      }, wait).unref();
      return;
    }
    vacuumedAt = deps.now();
    const tables = [...emptied.keys()];
    for (const table of tables) {
      const passes = emptied.get(table)! - 1;
      if (passes > 0) emptied.set(table, passes);
      else emptied.delete(table);
    }
    vacuuming = (async () => {
      for (const table of tables) {
        // Not in a transaction (VACUUM cannot be); a partition gone meanwhile (retention) is no error.
        // The block tables are analysed too (they are small): a newest-first page finds its packs
        // through log_blocks' (project_id, max_ts) index only once the planner knows how many blocks
        // a project has; with the statistics of before a backlog was summarised it sorted all of
        // them instead (1.5 ms against 0.09 ms a page at 2,441 blocks, measured).
        const blocks = table === 'log_blocks' || table === 'log_block_blooms';
        await (blocks ? sql`vacuum (analyze) ${sql.id(table)}` : sql`vacuum ${sql.id(table)}`).execute(db).catch((err: unknown) => {
          if (codeOf(err) !== '42P01') deps.log.warn({ err, table }, 'vacuum after packing failed; autovacuum will get there');
        });
        // A partition packing left empty, or with a few rows in many pages, gives its files back (VACUUM returns only a table's empty end).
        if (!blocks) await partitions.reclaim([table]);
      }
    })().finally(() => {
      vacuuming = undefined;
      vacuumSoon();
    });
  }
  return withSharedQueries(db, {
    writer,
    reads: readDb,
    packer,
    async savePack(p) {
      const outcome = await db.transaction().execute(async (tx): Promise<{ outcome: PackOutcome; partitions?: string[] }> => {
        const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${PACKER_LOCK}) as ok`.execute(tx);
        if (!rows[0]?.ok) return { outcome: 'busy' };
        // The count and the delete below see every row of the block (see holdPartitionSet); a pack
        // read while a partition was being made, and short of rows, is then refused by the count.
        await holdPartitionSet(tx);
        // The block's row locked: a project's deletion (which deletes it) waits for this, or this for it.
        const block = await packStatements.unpackedBlock(tx, p.projectId, p.firstSeq).forUpdate().executeTakeFirst();
        if (!block) return { outcome: 'skipped' };
        const count = await packStatements.countBlockRows(tx, p.projectId, p.firstSeq, p.lastSeq, p.times).executeTakeFirstOrThrow();
        if (Number(count.n) !== p.logs) return { outcome: 'skipped' };
        // The partitions the rows are in (a log's partition is its timestamp's day, or the default one).
        // Every statement on the block's rows names its time range: PostgreSQL then plans over those days' partitions only.
        const { rows: parts } = await sql<{ name: string }>`select distinct tableoid::regclass::text as name from logs
          where project_id = ${p.projectId} and seq >= ${p.firstSeq} and seq <= ${p.lastSeq} and ts >= ${p.times.minTs} and ts <= ${p.times.maxTs}`.execute(tx);
        await packStatements.insertPack(tx, p.projectId, p.firstSeq, Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength)).execute();
        await packStatements.markPacked(tx, p.projectId, p.firstSeq, p.data.byteLength, p.logs).execute();
        await packStatements.deleteBlockRows(tx, p.projectId, p.firstSeq, p.lastSeq, p.times).execute();
        await packStatements.deleteSliceFilters(tx, p.projectId, p.firstSeq).execute();
        return { outcome: 'packed', partitions: parts.map((r) => r.name) };
      });
      if (outcome.outcome === 'packed') {
        for (const table of [...outcome.partitions!, 'log_block_blooms', 'log_blocks']) emptied.set(table, 2);
        vacuumSoon();
      }
      return outcome.outcome;
    },
    sql: postgresSql,
    expireWhole: () => partitions.expire(),
    async deleteOlderThan(projectId, cutoff, batch) {
      const n = await db.transaction().execute((tx) => deleteOlderThan(tx, projectId, cutoff, batch, packer));
      if (n > 0) {
        const counts = deleted.retention;
        counts.steps++;
        counts.maxLogs = Math.max(counts.maxLogs, n);
        if (!counts.threads.includes(threadId)) counts.threads.push(threadId);
      }
      return n;
    },
    // The deleting transaction's one DELETE runs in PostgreSQL, holding up no other request.
    purgeProject: async () => {},
    deleteCounts: async () => structuredClone(deleted),
    async maintain() {
      await partitions.ensure();
      // Partitions emptied before this process ran (packed by an earlier one, say) give their files back too.
      await partitions.reclaim();
    },
    buildBlock(projectId, first, last) {
      return db.transaction().execute(async (tx) => {
        const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${BUILDER_LOCK}) as ok`.execute(tx);
        if (!rows[0]?.ok) return false;
        // No partition is made (its rows moved out of the default one) while the block is read.
        await holdPartitionSet(tx);
        const times = spans.bounds(projectId, first, last);
        const s = await summarise(tx, postgresSql, projectId, first, last, times);
        await saveSummary(tx, projectId, s, deps.now());
        built[times ? 'timed' : 'bySeq']++;
        return true;
      }).then((done) => {
        if (done) spans.forget(projectId, last);
        return done;
      });
    },
    builtBlocks: () => ({ ...built }),
    listen: (handlers) =>
      listenForCommits(url, deps.log, {
        onCommit(projectId, lastSeq, count, minTs, maxTs) {
          if (minTs !== undefined && maxTs !== undefined) spans.add(projectId, lastSeq - count + 1, lastSeq, minTs, maxTs);
          handlers.onCommit(projectId, lastSeq, count, minTs, maxTs);
        },
        onResync: handlers.onResync,
      }),
    isTimeout: (err) => codeOf(err) === STATEMENT_TIMEOUT,
    isRetryable: (err) => {
      const code = codeOf(err);
      return typeof code === 'string' && RETRYABLE_CODES.has(code);
    },
    isUnavailable: postgresUnavailable,
    async close() {
      emptied.clear();
      if (vacuumLater) clearTimeout(vacuumLater);
      await vacuuming;
      await writer.close();
    },
  }, deps.now);
}

/**
 * PostgreSQL: one multi-row INSERT … SELECT FROM unnest(arrays) per batch, after the project row's
 * update (which both counts the logs and serialises the project's commits, so seqs follow commit
 * order). pg_notify in the same transaction tells the other nodes, on commit.
 */
export function createPostgresWriter(db: Db, spans?: CommitSpans): LogWriter {
  return {
    async write(batches) {
      /** Each batch's time range, recorded with its seqs once the transaction has committed. */
      const times: ({ minTs: number; maxTs: number } | undefined)[] = new Array(batches.length);
      const results = await db.transaction().execute(async (tx) => {
        const results: (CommitResult | null)[] = new Array(batches.length).fill(null);
        // Project rows are locked in one order (by id) on every node, so two nodes' commits that
        // share projects queue behind each other instead of deadlocking.
        const order = batches.map((_, i) => i).sort((a, b) => (batches[a]!.projectId < batches[b]!.projectId ? -1 : batches[a]!.projectId > batches[b]!.projectId ? 1 : a - b));
        for (const index of order) {
          const b = batches[index]!;
          const n = b.rows.length;
          const c = toColumns(b);
          let minTs = Number.POSITIVE_INFINITY;
          let maxTs = Number.NEGATIVE_INFINITY;
          for (const t of c.ts) {
            if (t < minTs) minTs = t;
            if (t > maxTs) maxTs = t;
          }
          // One statement, one round trip: count the logs and take their seqs under the project row's
          // lock, insert them and their per-minute counts, and notify the other nodes (on commit).
          // No row comes back when the project is gone, and then nothing is written.
          const { rows } = await sql<{ last_seq: number }>`with p as (
              update projects set log_count = log_count + ${n}::bigint, last_seq = last_seq + ${n}::bigint where id = ${b.projectId} returning last_seq
            ), t as (
              select p.last_seq - ${n}::bigint + t.i as seq, t.ts, t.level, t.source, t.message, t.metadata
              from p, unnest(${c.ts}::bigint[], ${c.level}::smallint[], ${c.source}::text[], ${c.message}::text[], ${c.metadata}::text[])
                with ordinality as t(ts, level, source, message, metadata, i)
            ), logs_added as (
              insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
              select ${b.projectId}, seq, ts, ${b.receivedAt}::bigint, level, source, message, metadata from t
            ), counts_added as (
              insert into log_counts (project_id, minute, level, n)
              select ${b.projectId}, ts - ts % 60000, level, count(*) from t group by 2, 3
              on conflict (project_id, minute, level) do update set n = log_counts.n + excluded.n
            ), source_counts_added as (
              insert into log_source_counts (project_id, minute, level, source, n)
              select ${b.projectId}, ts - ts % 60000, level, coalesce(source, ''), count(*) from t group by 2, 3, 4
              on conflict (project_id, minute, level, source) do update set n = log_source_counts.n + excluded.n
            )
            select p.last_seq, pg_notify(${PG_CHANNEL}, ${b.projectId}::text || ':' || p.last_seq || ':' || ${n}::bigint || ':' || ${minTs}::bigint || ':' || ${maxTs}::bigint) from p`.execute(tx);
          const last = rows[0] === undefined ? undefined : Number(rows[0].last_seq);
          if (last === undefined) continue;
          if (b.idempotency) await markIdempotencyDone(tx, b.projectId, b.idempotency.key, b.idempotency.response).execute();
          results[index] = { prevSeq: last - n, firstSeq: last - n + 1, lastSeq: last };
          times[index] = { minTs, maxTs };
        }
        return results;
      });
      if (spans) {
        for (let i = 0; i < batches.length; i++) {
          const r = results[i];
          const t = times[i];
          if (r && t) spans.add(batches[i]!.projectId, r.firstSeq, r.lastSeq, t.minTs, t.maxTs);
        }
      }
      return results;
    },
    async close() {},
  };
}

/**
 * Retention over the project's first pack that holds logs older than `cutoff`: those logs go, the
 * pack is rewritten with the rest (or goes, with its block, when none is left), in the caller's
 * transaction. The logs that went.
 */
async function expirePack(db: Executor, projectId: string, cutoff: number, packer: Packer): Promise<PackedLog[]> {
  // The block's row locked: the compactor and a project's deletion wait for this step, or it for them.
  const block = await packStatements.oldestPackBefore(db, projectId, cutoff).forUpdate().executeTakeFirst();
  if (!block) return [];
  const first = Number(block.first_seq);
  const row = await packStatements.packData(db, projectId, first).executeTakeFirst();
  const { gone, kept, minTs, maxTs } = expire(row ? await unpackSliced(row.data) : [], cutoff);
  if (kept.length === 0) {
    await packStatements.deletePack(db, projectId, first).execute();
    await packStatements.deleteBlockBlooms(db, projectId, first).execute();
    await packStatements.deleteBlock(db, projectId, first).execute();
  } else {
    const rewritten = Buffer.from(await packer.pack(kept));
    await packStatements.updatePack(db, projectId, first, rewritten).execute();
    await packStatements.updatePackedBlock(db, projectId, first, rewritten.byteLength, kept.length, minTs, maxTs).execute();
  }
  return gone;
}

/**
 * Retention's batch: up to `batch` logs of one project older than `cutoff`, with the project's
 * logCount and both rollups lowered by as many, in the caller's transaction. Returns how many went.
 * (SQLite's runs on its writer's thread: sqlite-writer.worker.ts deleteStep.)
 */
async function deleteOlderThan(db: Executor, projectId: string, cutoff: number, batch: number, packer: Packer): Promise<number> {
  const victims = db.selectFrom('logs').select('seq').where('project_id', '=', projectId).where('ts', '<', cutoff).limit(batch);
  // The ts bound repeats the victims' own: it keeps the delete to the partitions that can hold them.
  let deleted: { ts: number; level: number; source: string | null }[] = await db.deleteFrom('logs').where('project_id', '=', projectId).where('ts', '<', cutoff).where('seq', 'in', victims).returning(['ts', 'level', 'source']).execute();
  if (deleted.length === 0) deleted = await expirePack(db, projectId, cutoff, packer);
  const n = deleted.length;
  if (n === 0) return 0;
  await countRemovedLogs(db, projectId, n).execute();
  const { levels, sources } = minuteCounts(
    deleted.map((l) => Number(l.ts)),
    deleted.map((l) => Number(l.level)),
    deleted.map((l) => l.source),
  );
  await sql`update log_counts as c set n = c.n - t.n
    from unnest(${levels.minute}::bigint[], ${levels.level}::smallint[], ${levels.n}::bigint[]) as t(minute, level, n)
    where c.project_id = ${projectId} and c.minute = t.minute and c.level = t.level`.execute(db);
  await sql`update log_source_counts as c set n = c.n - t.n
    from unnest(${sources.minute}::bigint[], ${sources.level}::smallint[], ${sources.source}::text[], ${sources.n}::bigint[]) as t(minute, level, source, n)
    where c.project_id = ${projectId} and c.minute = t.minute and c.level = t.level and c.source = t.source`.execute(db);
  await dropEmptyLogCounts(db, projectId).execute();
  await dropEmptySourceCounts(db, projectId).execute();
  return n;
}

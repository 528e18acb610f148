/**
 * Statements the SQLite writer's thread runs and the main thread runs too (or its PostgreSQL
 * writer), built once here: the thread compiles them with Kysely's SQLite compiler and prepares
 * them on its own connection; the main thread executes them with Kysely. Each takes the executor
 * (or a compile-only Kysely) first and returns the query unexecuted.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/types.js';
import type { AlertCount } from './writer.js';
import type { BlockRowValues, BloomRowValues } from './blocks/rows.js';

/** The logs table's columns, in the order the writers bind them. */
export const LOG_COLUMNS = ['project_id', 'seq', 'ts', 'received_at', 'level', 'source', 'message', 'metadata'] as const;

/** The seq of the project's newest log (no row: the project is gone). */
export function selectLastSeq(db: Executor, projectId: string) {
  return db.selectFrom('projects').select('last_seq').where('id', '=', projectId);
}

/** Counts `n` new logs to the project, the newest of which is now `lastSeq`. */
export function countNewLogs(db: Executor, projectId: string, n: number, lastSeq: number) {
  return db
    .updateTable('projects')
    .set((eb) => ({ log_count: eb('log_count', '+', n), last_seq: lastSeq }))
    .where('id', '=', projectId);
}

/** Marks an Idempotency-Key done with its answer, in the transaction that commits its logs. */
export function markIdempotencyDone(db: Executor, projectId: string, key: string, response: string) {
  return db.updateTable('idempotency_keys').set({ state: 'done', response }).where('project_id', '=', projectId).where('key', '=', key);
}

/** Adds to the per-minute level rollup (log_counts). */
export function addLogCounts(db: Executor, projectId: string, rows: { minute: number; level: number; n: number }[]) {
  return db
    .insertInto('log_counts')
    .values(rows.map((r) => ({ project_id: projectId, minute: r.minute, level: r.level, n: r.n })))
    .onConflict((oc) => oc.columns(['project_id', 'minute', 'level']).doUpdateSet({ n: sql<number>`log_counts.n + excluded.n` }));
}

/** Adds to the per-minute level and source rollup (log_source_counts; '' for no source). */
export function addSourceCounts(db: Executor, projectId: string, rows: { minute: number; level: number; source: string; n: number }[]) {
  return db
    .insertInto('log_source_counts')
    .values(rows.map((r) => ({ project_id: projectId, minute: r.minute, level: r.level, source: r.source, n: r.n })))
    .onConflict((oc) => oc.columns(['project_id', 'minute', 'level', 'source']).doUpdateSet({ n: sql<number>`log_source_counts.n + excluded.n` }));
}

/** Adds alert-rule matches to their counters (a multi-row upsert). */
export function addAlertCounts(db: Executor, counts: AlertCount[]) {
  return db
    .insertInto('alert_counts')
    .values(counts.map((c) => ({ rule_id: c.ruleId, bucket: c.bucket, n: c.n })))
    .onConflict((oc) => oc.columns(['rule_id', 'bucket']).doUpdateSet({ n: sql<number>`alert_counts.n + excluded.n` }));
}

/** The counter buckets of these rules from `from` on. */
export function alertCountsSince(db: Executor, ruleIds: string[], from: number) {
  return db.selectFrom('alert_counts').select(['rule_id', 'bucket', 'n']).where('bucket', '>=', from).where('rule_id', 'in', ruleIds);
}

/** A block's summary row (blocks/rows.ts); another node's copy of the same block wins: the first one stays. */
export function insertBlock(db: Executor, block: BlockRowValues) {
  return db.insertInto('log_blocks').values(block).onConflict((oc) => oc.columns(['project_id', 'first_seq']).doNothing());
}

/**
 * The project's row, read in the transaction that saves a block's summary: a summary is saved only
 * for a project that still exists (a project deleted while its block was being summarised must not
 * get the block back after its deletion took the rest). PostgreSQL adds FOR KEY SHARE, so the
 * deletion, which locks the row first, waits for the save or the save for it.
 */
export function projectOfSummary(db: Executor, projectId: string) {
  return db.selectFrom('projects').select('id').where('id', '=', projectId);
}

/** Rows of a block's filters (at most BLOOM_ROWS_PER_STATEMENT). */
export function insertBlockBlooms(db: Executor, rows: BloomRowValues[]) {
  return db.insertInto('log_block_blooms').values(rows as never);
}

/**
 * The project's oldest `batch` logs by seq, of those older than `before` when given: what one
 * delete step takes away (with what the rollups need).
 */
export function oldestLogs(db: Executor, projectId: string, batch: number, before: number | null) {
  let q = db.selectFrom('logs').select(['seq', 'ts', 'level', 'source']).where('project_id', '=', projectId);
  if (before !== null) q = q.where('ts', '<', before);
  return q.orderBy('seq').limit(batch);
}

/** Deletes the project's logs up to `lastSeq`: after oldestLogs with no `before`, exactly the logs it read. */
export function deleteLogsThrough(db: Executor, projectId: string, lastSeq: number) {
  return db.deleteFrom('logs').where('project_id', '=', projectId).where('seq', '<=', lastSeq);
}

/** Deletes these logs of the project (at most a few hundred seqs). */
export function deleteLogSeqs(db: Executor, projectId: string, seqs: number[]) {
  return db.deleteFrom('logs').where('project_id', '=', projectId).where('seq', 'in', seqs);
}

/** Takes `n` deleted logs off the project's count. */
export function countRemovedLogs(db: Executor, projectId: string, n: number) {
  return db.updateTable('projects').set((eb) => ({ log_count: eb('log_count', '-', n) })).where('id', '=', projectId);
}

/** Rollup rows of the project that no log is counted in any more. */
export function dropEmptyLogCounts(db: Executor, projectId: string) {
  return db.deleteFrom('log_counts').where('project_id', '=', projectId).where('n', '<=', 0);
}

export function dropEmptySourceCounts(db: Executor, projectId: string) {
  return db.deleteFrom('log_source_counts').where('project_id', '=', projectId).where('n', '<=', 0);
}

/** The first seqs of up to `limit` of the project's summarised blocks: what one purge step forgets once the logs are gone. */
export function purgeBlocks(db: Executor, projectId: string, limit: number) {
  return db.selectFrom('log_blocks').select('first_seq').where('project_id', '=', projectId).orderBy('first_seq').limit(limit);
}

/** Forgets the summaries (filter parts, then block rows) of the project's blocks up to `lastFirstSeq`. */
export function deleteBlockBloomsThrough(db: Executor, projectId: string, lastFirstSeq: number) {
  return db.deleteFrom('log_block_blooms').where('project_id', '=', projectId).where('first_seq', '<=', lastFirstSeq);
}

export function deleteBlocksThrough(db: Executor, projectId: string, lastFirstSeq: number) {
  return db.deleteFrom('log_blocks').where('project_id', '=', projectId).where('first_seq', '<=', lastFirstSeq);
}

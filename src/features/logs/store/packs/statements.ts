/**
 * The statements that pack a block and forget packs, shared by the SQLite writer's thread (which
 * compiles them with Kysely's SQLite compiler) and the PostgreSQL store. Each takes the executor (or
 * a compile-only Kysely) first and returns the query unexecuted.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../../db/types.js';
import { COMMON_PART } from '../blocks/rows.js';

/**
 * A block's time range, from its summary: its rows' timestamps lie within it (rows never change;
 * retention only takes some away). Given to a statement on the block's rows, it lets PostgreSQL
 * look into the one or two daily partitions that hold them instead of every partition, which a
 * condition on seqs alone cannot tell apart.
 */
export interface BlockTimes {
  minTs: number;
  maxTs: number;
}

/** How many of the block's logs are rows now: a pack is written only when all it read are still there. */
export function countBlockRows(db: Executor, projectId: string, first: number, last: number, times?: BlockTimes) {
  const q = db.selectFrom('logs').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).where('seq', '>=', first).where('seq', '<=', last);
  return times ? q.where('ts', '>=', times.minTs).where('ts', '<=', times.maxTs) : q;
}

/** The block's summary, if it is still there and not packed yet. */
export function unpackedBlock(db: Executor, projectId: string, first: number) {
  return db.selectFrom('log_blocks').select(['last_seq', 'logs']).where('project_id', '=', projectId).where('first_seq', '=', first).where('packed', '=', 0);
}

export function insertPack(db: Executor, projectId: string, first: number, data: Uint8Array) {
  return db.insertInto('log_packs').values({ project_id: projectId, first_seq: first, data });
}

/** The block is packed in `bytes`, holding `logs` logs (fewer than summarised if retention took some first). */
export function markPacked(db: Executor, projectId: string, first: number, bytes: number, logs: number) {
  return db.updateTable('log_blocks').set({ packed: bytes, logs }).where('project_id', '=', projectId).where('first_seq', '=', first);
}

/** The block's rows, once its pack holds them. */
export function deleteBlockRows(db: Executor, projectId: string, first: number, last: number, times?: BlockTimes) {
  const q = db.deleteFrom('logs').where('project_id', '=', projectId).where('seq', '>=', first).where('seq', '<=', last);
  return times ? q.where('ts', '>=', times.minTs).where('ts', '<=', times.maxTs) : q;
}

/**
 * The block's slice filters (blocks/rows.ts): they let a search read a sixteenth of a block's rows,
 * but a pack is decoded whole, so once packed they only take space.
 */
export function deleteSliceFilters(db: Executor, projectId: string, first: number) {
  return db.deleteFrom('log_block_blooms').where('project_id', '=', projectId).where('first_seq', '=', first).where('part', '>=', COMMON_PART).where('part', '<=', -1);
}

/**
 * log_blocks.packed of a block left in rows for good: its logs' text passed what a pack may hold
 * (read.ts PACK_BYTES_PER_LOG). Reads take it as rows (packed > 0 is a pack), the compactor passes
 * it over (packed = 0 is due), retention forgets it as a block in rows (packed <= 0).
 */
export const KEPT_IN_ROWS = -1;

/** Marks the block, still unpacked, as left in rows for good. */
export function markKeptInRows(db: Executor, projectId: string, first: number) {
  return db.updateTable('log_blocks').set({ packed: KEPT_IN_ROWS }).where('project_id', '=', projectId).where('first_seq', '=', first).where('packed', '=', 0);
}

/** Blocks summarised at or before `builtBefore` and not packed: what the compactor packs next (oldest summaries first). */
export function blocksToPack(db: Executor, builtBefore: number, limit: number) {
  return db
    .selectFrom('log_blocks')
    .select(['project_id', 'first_seq', 'last_seq', 'min_ts', 'max_ts'])
    .where('packed', '=', 0)
    .where('built_at', '<=', builtBefore)
    .orderBy('built_at')
    .orderBy(sql`1`)
    .limit(limit);
}

/** The packs of the project up to `lastFirstSeq` (a purge's step forgets them with their blocks). */
export function deletePacksThrough(db: Executor, projectId: string, lastFirstSeq: number) {
  return db.deleteFrom('log_packs').where('project_id', '=', projectId).where('first_seq', '<=', lastFirstSeq);
}

export function deletePack(db: Executor, projectId: string, first: number) {
  return db.deleteFrom('log_packs').where('project_id', '=', projectId).where('first_seq', '=', first);
}

/** The project's first packed block that may hold logs older than `before`: what retention's next step takes from. */
export function oldestPackBefore(db: Executor, projectId: string, before: number) {
  return db.selectFrom('log_blocks').select(['first_seq', 'last_seq']).where('project_id', '=', projectId).where('packed', '>', 0).where('min_ts', '<', before).orderBy('first_seq').limit(1);
}

export function packData(db: Executor, projectId: string, first: number) {
  return db.selectFrom('log_packs').select('data').where('project_id', '=', projectId).where('first_seq', '=', first);
}

/** A pack rewritten with fewer logs (retention took the older ones). */
export function updatePack(db: Executor, projectId: string, first: number, data: Uint8Array) {
  return db.updateTable('log_packs').set({ data }).where('project_id', '=', projectId).where('first_seq', '=', first);
}

/** The block's summary after its pack was rewritten: its size, count and time range (its filter and level mask still cover it: they may only say "maybe" more often). */
export function updatePackedBlock(db: Executor, projectId: string, first: number, bytes: number, logs: number, minTs: number, maxTs: number) {
  return db.updateTable('log_blocks').set({ packed: bytes, logs, min_ts: minTs, max_ts: maxTs }).where('project_id', '=', projectId).where('first_seq', '=', first);
}

/** A block whose pack lost its last log: its filter, then its summary. */
export function deleteBlockBlooms(db: Executor, projectId: string, first: number) {
  return db.deleteFrom('log_block_blooms').where('project_id', '=', projectId).where('first_seq', '=', first);
}

export function deleteBlock(db: Executor, projectId: string, first: number) {
  return db.deleteFrom('log_blocks').where('project_id', '=', projectId).where('first_seq', '=', first);
}

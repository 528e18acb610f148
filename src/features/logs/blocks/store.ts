/**
 * The skip index's tables (migration 0012): building a block's summary from its logs, and reading
 * the summaries of a time range with the buckets a query's items fall in. The same statements on
 * both engines, apart from substr/substring.
 */
import { sql } from 'kysely';
import { isPostgres } from '../../../db/lock.js';
import type { Executor } from '../../../db/types.js';
import { BUCKET_BYTES, buildBloom, bucketMayHold, hashItem, type ItemHash } from './bloom.js';
import { addLogItems } from './items.js';

/** Buckets per stored part of a filter (2 KiB). */
export const PART_BUCKETS = 64;

export interface BlockRow {
  firstSeq: number;
  lastSeq: number;
  minTs: number;
  maxTs: number;
  levelMask: number;
  logs: number;
  /** Per probed item, in the order given: whether the block may hold it; undefined without a filter. */
  mayHold: boolean[] | undefined;
}

/** The first seq of the project not yet in a summary (summaries are built in seq order). */
export async function nextUnindexedSeq(db: Executor, projectId: string): Promise<number> {
  const row = await db.selectFrom('log_blocks').select((eb) => eb.fn.max('last_seq').as('last')).where('project_id', '=', projectId).executeTakeFirst();
  return Number(row?.last ?? 0) + 1;
}

/** Projects holding at least `blockLogs` committed logs past their last summary, with where that is. */
export async function projectsBehind(db: Executor, blockLogs: number, limit: number): Promise<{ id: string; next: number; lastSeq: number }[]> {
  const { rows } = await sql<{ id: string; indexed: number | string; last_seq: number | string }>`
    select p.id, coalesce((select max(b.last_seq) from log_blocks b where b.project_id = p.id), 0) as indexed, p.last_seq
    from projects p
    where p.last_seq >= coalesce((select max(b.last_seq) from log_blocks b where b.project_id = p.id), 0) + ${blockLogs}
    order by p.id
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ id: r.id, next: Number(r.indexed) + 1, lastSeq: Number(r.last_seq) }));
}

/** A block's summary, computed from its logs. */
export interface Summary {
  firstSeq: number;
  lastSeq: number;
  minTs: number;
  maxTs: number;
  levelMask: number;
  logs: number;
  /** Undefined: the block keeps no filter. */
  bloom: { buckets: number; bytes: Buffer } | undefined;
}

/** Reads the logs of seqs [first, last] and summarises them. */
export async function summarise(db: Executor, projectId: string, first: number, last: number): Promise<Summary> {
  const rows = await db
    .selectFrom('logs')
    .select(['ts', 'level', 'source', 'message', 'metadata'])
    .where('project_id', '=', projectId)
    .where('seq', '>=', first)
    .where('seq', '<=', last)
    .execute();
  let minTs = Number.MAX_SAFE_INTEGER;
  let maxTs = -1;
  let levelMask = 0;
  const items = new Set<string>();
  let indexable = true;
  for (let i = 0; i < rows.length; i++) {
    // Summarising is CPU work on the event loop: let requests in every 512 logs.
    if (i > 0 && i % 512 === 0) await new Promise((resolve) => setImmediate(resolve));
    const r = rows[i]!;
    const ts = Number(r.ts);
    if (ts < minTs) minTs = ts;
    if (ts > maxTs) maxTs = ts;
    levelMask |= 1 << Number(r.level);
    if (indexable && !addLogItems(r, items)) indexable = false;
  }
  return { firstSeq: first, lastSeq: last, minTs, maxTs, levelMask, logs: rows.length, bloom: indexable ? buildBloom(items, items.size) : undefined };
}

/** Stores a summary (another node's copy of the same block wins: the first one stays). */
export async function saveSummary(db: Executor, projectId: string, s: Summary, builtAt: number): Promise<void> {
  const inserted = await db
    .insertInto('log_blocks')
    .values({ project_id: projectId, first_seq: s.firstSeq, last_seq: s.lastSeq, min_ts: s.minTs, max_ts: s.maxTs, level_mask: s.levelMask, logs: s.logs, buckets: s.bloom?.buckets ?? 0, built_at: builtAt })
    .onConflict((oc) => oc.columns(['project_id', 'first_seq']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0 || !s.bloom) return;
  const parts: { project_id: string; first_seq: number; part: number; bits: Buffer }[] = [];
  const partBytes = PART_BUCKETS * BUCKET_BYTES;
  for (let p = 0; p * partBytes < s.bloom.bytes.length; p++) {
    parts.push({ project_id: projectId, first_seq: s.firstSeq, part: p, bits: s.bloom.bytes.subarray(p * partBytes, (p + 1) * partBytes) });
  }
  for (let i = 0; i < parts.length; i += 200) await db.insertInto('log_block_blooms').values(parts.slice(i, i + 200)).execute();
}

/**
 * The summaries of blocks whose time range meets [from, to], newest max_ts first, each with the
 * bucket of every item probed (one 32-byte slice per block and item, read in SQL).
 */
export async function blocksInRange(db: Executor, projectId: string, from: number | undefined, to: number | undefined, items: string[]): Promise<BlockRow[]> {
  const hashes: ItemHash[] = items.map(hashItem);
  const pg = isPostgres(db);
  const probes = hashes.map((h, i) => {
    const bucket = sql`(cast(${h.bucket} as bigint) % b.buckets)`;
    const slice = pg
      ? sql`substring(p.bits from cast((${bucket} % ${PART_BUCKETS}) * ${BUCKET_BYTES} + 1 as integer) for ${BUCKET_BYTES})`
      : sql`substr(p.bits, (${bucket} % ${PART_BUCKETS}) * ${BUCKET_BYTES} + 1, ${BUCKET_BYTES})`;
    return sql`(select ${slice} from log_block_blooms p where p.project_id = b.project_id and p.first_seq = b.first_seq and p.part = ${bucket} / ${PART_BUCKETS})`.as(`i${i}`);
  });
  let q = db
    .selectFrom('log_blocks as b')
    .select(['b.first_seq', 'b.last_seq', 'b.min_ts', 'b.max_ts', 'b.level_mask', 'b.logs', 'b.buckets'])
    .where('b.project_id', '=', projectId)
    .where('b.logs', '>', 0);
  if (probes.length > 0) q = q.select(probes as never);
  if (from !== undefined) q = q.where('b.max_ts', '>=', from);
  if (to !== undefined) q = q.where('b.min_ts', '<=', to);
  const rows = (await q.orderBy('b.max_ts', 'desc').execute()) as unknown as Record<string, unknown>[];
  return rows.map((r) => {
    const buckets = Number(r.buckets);
    return {
      firstSeq: Number(r.first_seq),
      lastSeq: Number(r.last_seq),
      minTs: Number(r.min_ts),
      maxTs: Number(r.max_ts),
      levelMask: Number(r.level_mask),
      logs: Number(r.logs),
      mayHold: buckets === 0 ? undefined : hashes.map((h, i) => bucketMayHold(asBytes(r[`i${i}`]), h)),
    };
  });
}

function asBytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(0);
}

/** Forgets the summaries of blocks whose every log is older than `cutoff` (retention took them all). */
export async function deleteBlocksBefore(db: Executor, projectId: string, cutoff: number): Promise<number> {
  const old = db.selectFrom('log_blocks').select('first_seq').where('project_id', '=', projectId).where('max_ts', '<', cutoff);
  await db.deleteFrom('log_block_blooms').where('project_id', '=', projectId).where('first_seq', 'in', old).execute();
  const res = await db.deleteFrom('log_blocks').where('project_id', '=', projectId).where('max_ts', '<', cutoff).executeTakeFirst();
  return Number(res.numDeletedRows);
}

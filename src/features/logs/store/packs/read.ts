/**
 * Reading packs: which packed blocks a read must look into, their logs (decoded once, kept in a
 * small cache by bytes, since a page and the next one, or a search's slices, read the same pack
 * again). What a read keeps of a pack's logs is merge.ts's.
 *
 * How a read stays exact while blocks are being packed: a block's rows leave `logs` in the
 * transaction that writes its pack, and a pack goes away only when its logs are deleted. So a read
 * that reads the rows first and the pack list second sees every log at least once (a log packed in
 * between is seen in both, and kept once, by seq), whatever commits in between. A count cannot
 * tell its duplicates apart, so it reads the pack list before and after its rows and starts again
 * if a block was packed in between (see `stablePacks`).
 */
import type { Executor, LogsTable } from '../../../../db/types.js';
import type { BlockSpan } from '../blocks/rows.js';
import { unpackSliced } from './codec.js';
import type { PackedLog } from './format.js';
import type { LogSql } from '../sql.js';
import type { BlockTimes } from './statements.js';

/** A packed block as the block list tells it: its summary's span and its pack's size. */
export interface PackSpan extends BlockSpan {
  bytes: number;
}

const SPAN_COLUMNS = ['first_seq', 'last_seq', 'min_ts', 'max_ts', 'level_mask', 'logs', 'packed'] as const;

/** The statement of the project's packed blocks that may hold logs of [from, to] (both optional). */
function packsOverlapping(db: Executor, projectId: string, from: number | undefined, to: number | undefined) {
  let q = db.selectFrom('log_blocks').select(SPAN_COLUMNS).where('project_id', '=', projectId).where('packed', '>', 0);
  if (from !== undefined) q = q.where('max_ts', '>=', from);
  if (to !== undefined) q = q.where('min_ts', '<=', to);
  return q;
}

/** The project's packed blocks that may hold logs of [from, to] (both optional), oldest seq first. */
export async function packsInRange(db: Executor, projectId: string, from: number | undefined, to: number | undefined): Promise<PackSpan[]> {
  return (await packsOverlapping(db, projectId, from, to).orderBy('first_seq').execute()).map(spanOf);
}

/**
 * The project's packed blocks that may hold logs of [from, to], newest log first (max_ts, then
 * first_seq, descending), read a few at a time as the caller asks for more (log_blocks_project_max_ts):
 * a newest-first page usually stops after one or two.
 */
export async function* packsNewestFirst(db: Executor, projectId: string, from: number | undefined, to: number | undefined): AsyncGenerator<PackSpan> {
  let after: { maxTs: number; firstSeq: number } | undefined;
  for (let batch = 4; ; batch = Math.min(batch * 2, 256)) {
    let q = packsOverlapping(db, projectId, from, to);
    if (after) {
      const { maxTs, firstSeq } = after;
      q = q.where((eb) => eb.or([eb('max_ts', '<', maxTs), eb.and([eb('max_ts', '=', maxTs), eb('first_seq', '<', firstSeq)])]));
    }
    const rows = (await q.orderBy('max_ts', 'desc').orderBy('first_seq', 'desc').limit(batch).execute()).map(spanOf);
    for (const span of rows) yield span;
    if (rows.length < batch) return;
    const last = rows[rows.length - 1]!;
    after = { maxTs: last.maxTs, firstSeq: last.firstSeq };
  }
}

/**
 * The project's packed blocks holding seqs in [first, last] (last undefined: no upper end), oldest
 * first, at most `limit`. Blocks do not overlap, so these are the block starting at or before
 * `first` and those starting after it up to `last`: two seeks on the key (project_id, first_seq),
 * where one condition on both ends would read every block before `last`.
 */
export async function packsInSeqs(db: Executor, projectId: string, first: number, last: number | undefined, limit?: number): Promise<PackSpan[]> {
  const holdingFirst = db.selectFrom('log_blocks').select(SPAN_COLUMNS).where('project_id', '=', projectId).where('first_seq', '<=', first).orderBy('first_seq', 'desc').limit(1);
  let after = db.selectFrom('log_blocks').select(SPAN_COLUMNS).where('project_id', '=', projectId).where('first_seq', '>', first).where('packed', '>', 0);
  if (last !== undefined) after = after.where('first_seq', '<=', last);
  after = after.orderBy('first_seq');
  if (limit !== undefined) after = after.limit(limit);
  const rows = await db
    .selectFrom(holdingFirst.as('h'))
    .selectAll()
    .unionAll(db.selectFrom(after.as('a')).selectAll())
    .execute();
  return rows
    .filter((r) => Number(r.packed) > 0 && Number(r.last_seq) >= first)
    .sort((a, b) => Number(a.first_seq) - Number(b.first_seq))
    .slice(0, limit)
    .map(spanOf);
}

function spanOf(r: { first_seq: number; last_seq: number; min_ts: number; max_ts: number; level_mask: number; logs: number; packed: number }): PackSpan {
  return { firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq), minTs: Number(r.min_ts), maxTs: Number(r.max_ts), levelMask: Number(r.level_mask), logs: Number(r.logs), bytes: Number(r.packed) };
}

/** Whether two reads of a pack list saw the same packs. */
export function samePacks(a: readonly PackSpan[], b: readonly PackSpan[]): boolean {
  return a.length === b.length && a.every((p, i) => p.firstSeq === b[i]!.firstSeq && p.lastSeq === b[i]!.lastSeq && p.logs === b[i]!.logs && p.bytes === b[i]!.bytes);
}

/**
 * Runs `read` between two reads of the pack list until no block was packed (or changed) in
 * between, so that what `read` counted in rows and what the packs hold do not overlap. Compaction
 * packs a block of a project now and then, so a second round is rare and a third rarer still.
 */
export async function stablePacks<T>(list: () => Promise<PackSpan[]>, read: () => Promise<T>): Promise<{ packs: PackSpan[]; result: T }> {
  let before = await list();
  for (let round = 0; ; round++) {
    const result = await read();
    const after = await list();
    if (samePacks(before, after) || round >= 20) return { packs: after, result };
    before = after;
  }
}

/**
 * Rows read per statement while packing: a read is one synchronous call on SQLite, and a log may
 * hold 128 KiB, so a read holds 16 MiB at most.
 */
const PACK_READ_LOGS = 128;
/**
 * Text a pack may hold per log of its block, on average: a block is packed whole in memory (read,
 * encoded, compressed), so one of a tenant's huge logs (4,096 × 128 KiB would be 512 MiB) is left in
 * rows instead. 8 KiB a log is 32 MiB for a block of 4,096, twenty times what realistic logs take.
 */
export const PACK_BYTES_PER_LOG = 8 * 1024;

/**
 * The rows of the block [first, last] still in `logs`, in seq order, as a pack holds them; undefined
 * once their text passes PACK_BYTES_PER_LOG × the block's logs (the block is then not packed).
 */
export async function blockRows(db: Executor, projectId: string, first: number, last: number, times: BlockTimes, engine: LogSql): Promise<PackedLog[] | undefined> {
  const maxBytes = (last - first + 1) * PACK_BYTES_PER_LOG;
  const out: PackedLog[] = [];
  let bytes = 0;
  let from = first;
  while (from <= last) {
    // Within the block's time range: on PostgreSQL the read looks into the partitions of those days only.
    const q = db
      .selectFrom('logs')
      .select(['seq', 'ts', 'received_at', 'level', 'source', 'message', 'metadata'])
      .where('project_id', '=', projectId)
      .where('seq', '>=', from)
      .where('seq', '<=', last)
      .where('ts', '>=', times.minTs)
      .where('ts', '<=', times.maxTs)
      .orderBy('seq')
      .limit(PACK_READ_LOGS);
    const { rows } = await db.executeQuery<{ seq: number; ts: number; received_at: number; level: number; source: string | null; message: string; metadata: string | null }>(engine.seqRangeRead(q.compile()));
    for (const r of rows) {
      bytes += r.message.length + (r.metadata?.length ?? 0) + (r.source?.length ?? 0);
      out.push({ seq: Number(r.seq), ts: Number(r.ts), received_at: Number(r.received_at), level: Number(r.level), source: r.source, message: r.message, metadata: r.metadata });
    }
    if (bytes > maxBytes) return undefined;
    if (rows.length < PACK_READ_LOGS) break;
    from = out[out.length - 1]!.seq + 1;
  }
  return out;
}

/** Decoded packs, most recently used last, bounded by their logs' text bytes. */
const CACHE_BYTES = 64 * 1024 * 1024;
const cache = new Map<string, { rows: LogsTable[]; bytes: number }>();
let cachedBytes = 0;
/**
 * Packs being decoded, by the same key: reads that want a pack another read is decoding wait for
 * that decoding instead of making their own (four pages over the same packs decode each once).
 */
const decoding = new Map<string, Promise<LogsTable[]>>();

/**
 * A pack's logs as stored rows, in seq order; empty when the pack is gone (its logs deleted since).
 * A pack not in the cache is decompressed off the event loop and decoded a bounded slice per turn
 * (codec.ts unpackSliced): a pack may hold 32 MiB of a tenant's text.
 */
export async function packRows(db: Executor, projectId: string, span: PackSpan): Promise<LogsTable[]> {
  // The key names the pack's content: a pack rewritten by retention has other logs or bytes.
  const key = `${projectId}\u0000${span.firstSeq}\u0000${span.logs}\u0000${span.bytes}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.rows;
  }
  let pending = decoding.get(key);
  if (!pending) {
    pending = decodePack(db, projectId, span, key).finally(() => decoding.delete(key));
    decoding.set(key, pending);
  }
  return pending;
}

async function decodePack(db: Executor, projectId: string, span: PackSpan, key: string): Promise<LogsTable[]> {
  const row = await db.selectFrom('log_packs').select('data').where('project_id', '=', projectId).where('first_seq', '=', span.firstSeq).executeTakeFirst();
  if (!row) return [];
  const rows = (await unpackSliced(row.data)).map((l) => ({ project_id: projectId, ...l }) as LogsTable);
  rows.sort((a, b) => a.seq - b.seq);
  let bytes = 0;
  for (const r of rows) bytes += r.message.length + (r.metadata?.length ?? 0) + 100;
  cache.set(key, { rows, bytes });
  cachedBytes += bytes;
  for (const [k, v] of cache) {
    if (cachedBytes <= CACHE_BYTES || k === key) break;
    cache.delete(k);
    cachedBytes -= v.bytes;
  }
  return rows;
}

/** Whether the pack may hold logs of these levels. */
export function packMayHoldLevels(span: PackSpan, levels: readonly number[] | undefined): boolean {
  if (levels === undefined) return true;
  return levels.some((l) => (span.levelMask & (1 << l)) !== 0);
}

/** The projects whose owner is on `plan` and that hold packs with logs older than `cutoff`. */
export async function projectsWithPacksBefore(db: Executor, plan: string, cutoff: number): Promise<string[]> {
  const rows = await db
    .selectFrom('projects')
    .innerJoin('users', 'users.id', 'projects.user_id')
    .select('projects.id')
    .where('users.plan', '=', plan)
    .where((eb) => eb.exists(eb.selectFrom('log_blocks').select('log_blocks.first_seq').whereRef('log_blocks.project_id', '=', 'projects.id').where('log_blocks.packed', '>', 0).where('log_blocks.min_ts', '<', cutoff)))
    .execute();
  return rows.map((r) => r.id);
}

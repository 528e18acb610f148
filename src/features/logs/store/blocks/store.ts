/**
 * The skip index's tables (migration 0012): building a block's summary from its logs, and reading
 * the summaries of a time range with the buckets a query's items fall in. The same statements on
 * both engines, apart from the slice of a filter's bytes (the engine's LogSql.bytesSlice).
 */
import { sql } from 'kysely';
import type { Executor } from '../../../../db/types.js';
import { BUCKET_BYTES, buildBloom, buildSliceBlooms, bucketMayHold, GRAM_BITS_PER_ITEM, hashItem, ItemSet, type ItemHash } from './bloom.js';
import { BLOOM_ROWS_PER_STATEMENT, COMMON_PART, GRAM_PART, GRAM_PART_BUCKETS, SLICES_PER_BLOCK, summaryRows, type BlockSpan, type Summary } from './rows.js';
import * as statements from '../statements.js';
import { batchBytes } from '../batch.js';
import { addLogItems, isGram, type GramSet, type IndexedLog } from './items.js';
import type { LogSql } from '../sql.js';
import type { BlockTimes } from '../packs/statements.js';

/** A summary as a search reads it. */
export interface BlockRow extends BlockSpan {
  /** Per probed item, in the order given: whether the block may hold it; undefined without a filter. */
  mayHold: boolean[] | undefined;
  /** The format its filter was built in (rows.ts INDEX_FORMAT). */
  format: number;
}

/**
 * Where the project's index stands, in one read: its newest log's seq, and the first seq not yet in
 * a summary (summaries are built in seq order). Undefined when the project is gone.
 */
export async function indexState(db: Executor, projectId: string): Promise<{ lastSeq: number; next: number } | undefined> {
  const row = await db
    .selectFrom('projects')
    .select((eb) => ['last_seq', eb.selectFrom('log_blocks').select((b) => b.fn.max('last_seq').as('m')).where('log_blocks.project_id', '=', projectId).as('indexed')])
    .where('id', '=', projectId)
    .executeTakeFirst();
  return row && { lastSeq: Number(row.last_seq), next: Number(row.indexed ?? 0) + 1 };
}

/** Projects holding at least `blockLogs` committed logs past their last summary, with where that is. */
export async function projectsBehind(db: Executor, blockLogs: number, limit: number): Promise<{ id: string; next: number; lastSeq: number }[]> {
  const { rows } = await sql<{ id: string; indexed: number | string; last_seq: number | string }>`
    select p.id, coalesce(b.indexed, 0) as indexed, p.last_seq
    from projects p left join (select project_id, max(last_seq) as indexed from log_blocks group by project_id) b on b.project_id = p.id
    where p.last_seq >= coalesce(b.indexed, 0) + ${blockLogs}
    order by p.id
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ id: r.id, next: Number(r.indexed) + 1, lastSeq: Number(r.last_seq) }));
}

/**
 * Logs read per round while summarising. A read is one synchronous call on SQLite, so its size is
 * a stall; on PostgreSQL a read by seq cannot be bounded in time, so it looks into every daily
 * partition, and its cost is mostly per read. So the size follows the bytes read: it starts at
 * SUMMARY_READ_FIRST logs (at most 128 KiB each: 4 MiB), doubles up to the engine's summaryReadLogs
 * (SQLite 256: 32 MiB at worst in one synchronous call; PostgreSQL 1,024: 128 MiB) while a
 * round's text stays under the engine's summaryReadBytes, halves when past four times that, and
 * carries over to the next block (up to SUMMARY_READ_START).
 */
const SUMMARY_READ_FIRST = 32;
const SUMMARY_READ_START = 256;
/** The read size the last round settled on. */
let summaryRead = SUMMARY_READ_FIRST;
/** Distinct items one block's filter may hold; past it the block keeps no filter (16 bits each: 512 KiB). */
const MAX_ITEMS_PER_BLOCK = 262_144;
/** Distinct grams one block's gram filter may hold; past it the block keeps none (8 bits each: 256 KiB). */
const MAX_GRAMS_PER_BLOCK = 262_144;
/** Summarising is CPU work on the event loop: it yields at least this often. */
const YIELD_MS = 8;

/** A log as the builder reads it. */
export interface SummarisedLog extends IndexedLog {
  seq: number | string | bigint;
  ts: number | string | bigint;
  level: number;
}

/** A block's summary as its logs come in (bench/summarise.ts uses it alone). */
export class Summariser {
  #minTs = Number.MAX_SAFE_INTEGER;
  #maxTs = -1;
  #levelMask = 0;
  #logs = 0;
  #items: ItemSet | undefined = new ItemSet();
  /** The block's grams; undefined once a log gave too many or the block too many (no gram filter then). */
  #grams: GramSet | undefined = { items: new ItemSet(), complete: true };
  readonly #sliceSize: number;

  constructor(
    readonly first: number,
    readonly last: number,
  ) {
    this.#sliceSize = Math.ceil((last - first + 1) / SLICES_PER_BLOCK);
  }

  add(r: SummarisedLog): void {
    const ts = Number(r.ts);
    if (ts < this.#minTs) this.#minTs = ts;
    if (ts > this.#maxTs) this.#maxTs = ts;
    this.#levelMask |= 1 << Number(r.level);
    this.#logs++;
    const items = this.#items;
    if (!items) return;
    items.slice = Math.floor((Number(r.seq) - this.first) / this.#sliceSize);
    // A log past the limits, or a block past its item cap, leaves the block without a filter.
    const grams = this.#grams;
    if (!addLogItems(r, items, grams) || items.size > MAX_ITEMS_PER_BLOCK) this.#items = undefined;
    if (grams && (!grams.complete || grams.items.size > MAX_GRAMS_PER_BLOCK)) this.#grams = undefined;
  }

  finish(): Summary {
    const items = this.#items;
    const facts = { firstSeq: this.first, lastSeq: this.last, minTs: this.#minTs, maxTs: this.#maxTs, levelMask: this.#levelMask, logs: this.#logs };
    if (!items) return { ...facts, bloom: undefined, slices: undefined, grams: undefined };
    const grams = this.#grams?.items;
    const gramFilter = grams ? buildBloom(grams, grams.size, GRAM_BITS_PER_ITEM) : undefined;
    return { ...facts, bloom: buildBloom(items, items.size), slices: buildSliceBlooms(items, SLICES_PER_BLOCK), grams: gramFilter };
  }
}

/**
 * Reads the logs of seqs [first, last] and summarises them, a round of logs at a time, yielding to
 * other work every few milliseconds: no tenant's logs (each up to 128 KiB) can hold the event loop
 * or make the builder hold more than a round of them and one block's items.
 */
export async function summarise(db: Executor, engine: LogSql, projectId: string, first: number, last: number, times?: BlockTimes): Promise<Summary> {
  const summary = new Summariser(first, last);
  let yielded = Date.now();
  const { summaryReadBytes: target, summaryReadLogs: most } = engine;
  // A block starts at most at SUMMARY_READ_START logs (32 MiB at 128 KiB each), whatever the last one settled on.
  let read = Math.min(summaryRead, SUMMARY_READ_START, most);
  let from = first;
  while (from <= last) {
    const to = Math.min(last, from + read - 1);
    let q = db.selectFrom('logs').select(['seq', 'ts', 'level', 'source', 'message', 'metadata']).where('project_id', '=', projectId).where('seq', '>=', from).where('seq', '<=', to);
    // The block's time range, when the commits that made it are known (blocks/spans.ts): PostgreSQL
    // then plans over the partitions of those days only, not every one.
    if (times) q = q.where('ts', '>=', times.minTs).where('ts', '<=', times.maxTs);
    const { rows } = await db.executeQuery<SummarisedLog & { source: string | null; message: string; metadata: string | null }>(engine.seqRangeRead(q.compile()));
    const bytes = batchBytes(rows);
    const nextRead = bytes > 4 * target ? Math.max(1, read >> 1) : bytes < target ? Math.min(most, read * 2) : read;
    for (const r of rows) {
      summary.add(r);
      if (Date.now() - yielded >= YIELD_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        yielded = Date.now();
      }
    }
    from = to + 1;
    read = nextRead;
    summaryRead = nextRead;
  }
  return summary.finish();
}

/**
 * Stores a summary (another node's copy of the same block wins: the first one stays), in the
 * caller's PostgreSQL transaction, and only while the project exists (its row is held against the
 * deletion until the transaction ends).
 */
export async function saveSummary(db: Executor, projectId: string, s: Summary, builtAt: number): Promise<void> {
  if (!(await statements.projectOfSummary(db, projectId).forKeyShare().executeTakeFirst())) return;
  const { block, blooms } = summaryRows(projectId, s, builtAt);
  const inserted = await statements.insertBlock(db, block).executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return;
  for (let i = 0; i < blooms.length; i += BLOOM_ROWS_PER_STATEMENT) await statements.insertBlockBlooms(db, blooms.slice(i, i + BLOOM_ROWS_PER_STATEMENT)).execute();
}

/**
 * The summaries of blocks whose time range meets [from, to], newest max_ts first, each with the
 * bucket of every item probed (one 32-byte slice per block and item, read in SQL): a gram's in the
 * block's gram filter (a block without one may hold every gram), any other's in its filter.
 */
export async function blocksInRange(db: Executor, projectId: string, from: number | undefined, to: number | undefined, items: string[], engine: LogSql): Promise<BlockRow[]> {
  const hashes: ItemHash[] = items.map(hashItem);
  // The constants are literals: better-sqlite3 binds every JS number as a REAL, and `bucket / 64.0`
  // is then no part number (a probe that finds no part says "maybe": the index would rule nothing out).
  const bucketBytes = sql.lit(BUCKET_BYTES);
  const grams = items.map(isGram);
  const probes = hashes.map((h, i) => {
    const bucket = sql`(cast(${sql.lit(h.bucket)} as bigint) % nullif(${sql.ref(grams[i] ? 'b.gram_buckets' : 'b.buckets')}, 0))`;
    const partBuckets = grams[i] ? sql.lit(GRAM_PART_BUCKETS) : sql.ref('b.part_buckets');
    const part = grams[i] ? sql`${sql.lit(GRAM_PART)} + ${bucket} / ${partBuckets}` : sql`${bucket} / ${partBuckets}`;
    const slice = engine.bytesSlice(sql`p.bits`, sql`(${bucket} % ${partBuckets}) * ${bucketBytes}`, bucketBytes);
    return sql`(select ${slice} from log_block_blooms p where p.project_id = b.project_id and p.first_seq = b.first_seq and p.part = ${part})`.as(`i${i}`);
  });
  let q = db
    .selectFrom('log_blocks as b')
    .select(['b.first_seq', 'b.last_seq', 'b.min_ts', 'b.max_ts', 'b.level_mask', 'b.logs', 'b.buckets', 'b.gram_buckets', 'b.format'])
    .where('b.project_id', '=', projectId)
    .where('b.logs', '>', 0);
  if (probes.length > 0) q = q.select(probes as never);
  if (from !== undefined) q = q.where('b.max_ts', '>=', from);
  if (to !== undefined) q = q.where('b.min_ts', '<=', to);
  const rows = (await q.orderBy('b.max_ts', 'desc').execute()) as unknown as Record<string, unknown>[];
  return rows.map((r) => {
    const buckets = Number(r.buckets);
    const gramBuckets = Number(r.gram_buckets);
    const format = Number(r.format) || 1;
    return {
      format,
      firstSeq: Number(r.first_seq),
      lastSeq: Number(r.last_seq),
      minTs: Number(r.min_ts),
      maxTs: Number(r.max_ts),
      levelMask: Number(r.level_mask),
      logs: Number(r.logs),
      mayHold: buckets === 0 ? undefined : hashes.map((h, i) => (grams[i] && gramBuckets === 0) || bucketMayHold(asBytes(r[`i${i}`]), h)),
    };
  });
}

/** Per slice index, whether it may hold each probed item (in the order given). */
export type SliceProbe = Map<number, boolean[]>;

/**
 * The slice filters of the blocks starting at `firstSeqs`, probed for `items` in SQL as blocks are
 * (32 bytes per slice and item): per block, per slice index, whether it may hold each item, an item
 * the block's common filter may hold counting as held by every slice. A block missing from the
 * answer keeps no slice filters; a slice missing from its block's, none of its own.
 */
export async function slicesInBlocks(db: Executor, projectId: string, firstSeqs: number[], items: string[], engine: LogSql): Promise<Map<number, SliceProbe>> {
  const out = new Map<number, SliceProbe>();
  if (firstSeqs.length === 0) return out;
  const hashes: ItemHash[] = items.map(hashItem);
  const bucketBytes = sql.lit(BUCKET_BYTES);
  const probes = hashes.map((h, i) => {
    const bucket = sql`(cast(${sql.lit(h.bucket)} as bigint) % nullif(length(bits) / ${bucketBytes}, 0))`;
    return engine.bytesSlice(sql`bits`, sql`${bucket} * ${bucketBytes}`, bucketBytes).as(`i${i}`);
  });
  const rows = (await db
    .selectFrom('log_block_blooms')
    .select(['first_seq', 'part', ...(probes as never[])])
    .where('project_id', '=', projectId)
    .where('first_seq', 'in', firstSeqs)
    .where('part', '<', 0)
    .execute()) as unknown as Record<string, unknown>[];
  const common = new Map<number, boolean[]>();
  for (const r of rows) {
    const first = Number(r.first_seq);
    const mayHold = hashes.map((h, i) => bucketMayHold(asBytes(r[`i${i}`]), h));
    if (Number(r.part) === COMMON_PART) {
      common.set(first, mayHold);
      continue;
    }
    let block = out.get(first);
    if (!block) out.set(first, (block = new Map()));
    block.set(-1 - Number(r.part), mayHold);
  }
  for (const [first, block] of out) {
    // Without its common filter, a block's slices cannot rule anything out.
    const c = common.get(first);
    if (!c) out.delete(first);
    else for (const mayHold of block.values()) for (let i = 0; i < mayHold.length; i++) mayHold[i] ||= c[i]!;
  }
  return out;
}

function asBytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(0);
}

/**
 * Forgets the summaries of blocks whose every log is older than `cutoff`, in the projects of
 * accounts on `plan`: retention (batches or whole partitions) took all their logs.
 */
export async function deleteBlocksBefore(db: Executor, plan: string, cutoff: number): Promise<number> {
  const projects = sql`select p.id from projects p join users u on u.id = p.user_id where u.plan = ${plan}`;
  await sql`delete from log_block_blooms where project_id in (${projects}) and exists (
    select 1 from log_blocks b where b.project_id = log_block_blooms.project_id and b.first_seq = log_block_blooms.first_seq and b.max_ts < ${cutoff} and b.packed <= 0)`.execute(db);
  // A packed block goes with its pack, when retention takes the pack's logs (LogStore.deleteOlderThan);
  // one kept in rows (packed < 0) goes as a block in rows.
  const res = await sql`delete from log_blocks where project_id in (${projects}) and max_ts < ${cutoff} and packed <= 0`.execute(db);
  return Number(res.numAffectedRows ?? 0n);
}

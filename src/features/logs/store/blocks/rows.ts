/**
 * How a block's summary is stored (migration 0012's log_blocks and log_block_blooms): the rows of a
 * summary, made once here for every writer (the SQLite writer's thread saves them too, so this
 * module stays light: no database, no query builder).
 */
import type { LogBlockBloomsTable, LogBlocksTable } from '../../../../db/types.js';
import { BUCKET_BYTES, type Bloom } from './bloom.js';

/**
 * Buckets per stored part of a block's filter (1,920 bytes): two parts fit a 4 KiB SQLite page and
 * four an 8 KiB PostgreSQL page (64, 2 KiB, as blocks summarised before migration 0020 keep in
 * log_blocks.part_buckets, took a SQLite page alone). A block's own value is what reads use.
 */
export const PART_BUCKETS = 60;

/**
 * Slices per block. A block whose filter says "maybe" is read by slices, and only those whose own
 * (smaller, coarser) filter says "maybe" too: a needle in a 4,096-log block reads 256 logs, not
 * 4,096. Slice i's filter is stored as part -1 - i of the block's filter rows, and the filter of the
 * items common to many slices as part COMMON_PART, so whatever forgets a block's filter (retention,
 * project deletion) forgets its slices with it. A block without those rows is read whole; a slice
 * without its row is read. Changing this number changes where the stored slices lie: keep it (at
 * most 16: ItemSet keeps an item's slices in 16 bits).
 */
export const SLICES_PER_BLOCK = 16;
export const COMMON_PART = -1 - SLICES_PER_BLOCK;

/** The seqs of slice `i` of the block [first, last]. */
export function sliceSpan(first: number, last: number, i: number): { first: number; last: number } {
  const size = Math.ceil((last - first + 1) / SLICES_PER_BLOCK);
  return { first: first + i * size, last: Math.min(last, first + (i + 1) * size - 1) };
}

/**
 * The block's gram filter (items.ts GRAM_CHARS) is stored as parts GRAM_PART + 0, 1, …, as the
 * block's filter is from part 0 (which never reaches this far: at most 256 parts), and its bucket
 * count is log_blocks.gram_buckets (0: none). Its parts are GRAM_PART_BUCKETS buckets (1,792
 * bytes): two such rows fit a 4 KiB SQLite page, where a 2 KiB part fills one alone (half of
 * it unused), and PostgreSQL's 8 KiB page takes four.
 */
export const GRAM_PART = 1_000_000;
export const GRAM_PART_BUCKETS = 56;

/**
 * The summary's format, kept in log_blocks.format (migration 0022; blocks summarised before it
 * without a format are of format 1). Format 2 names a path whose first key is empty as every other path
 * (items.ts pathOf), where format 1 took the empty key for no key at all: a format-1 filter cannot
 * say "no" to such a path (items.ts Need `since`). Blocks without a filter keep a format too, which says nothing: they
 * say "maybe" to every item anyway.
 */
export const INDEX_FORMAT = 2;

/** What a summary says of its block apart from its filter. */
export interface BlockSpan {
  firstSeq: number;
  lastSeq: number;
  minTs: number;
  maxTs: number;
  levelMask: number;
  logs: number;
}

/** A block's summary, computed from its logs. */
export interface Summary extends BlockSpan {
  /** Undefined: the block keeps no filter. */
  bloom: Bloom | undefined;
  /** The slices' filters (bloom.ts buildSliceBlooms); undefined when the block keeps none. */
  slices: { slices: Bloom[]; common: Bloom } | undefined;
  /** The gram filter; undefined when the block keeps none. */
  grams: Bloom | undefined;
}

/** A log_blocks row. */
export type BlockRowValues = LogBlocksTable;

/** A log_block_blooms row: its bits are a Buffer, or the Uint8Array a Buffer becomes in a message to the writer's thread. */
export type BloomRowValues = Omit<LogBlockBloomsTable, 'bits'> & { bits: Uint8Array };

/** A summary's rows: the block's, and its filter's parts, slices and common filter. */
export function summaryRows(projectId: string, s: Summary, builtAt: number): { block: BlockRowValues; blooms: BloomRowValues[] } {
  const grams = s.bloom && s.grams;
  const block = { project_id: projectId, first_seq: s.firstSeq, last_seq: s.lastSeq, min_ts: s.minTs, max_ts: s.maxTs, level_mask: s.levelMask, logs: s.logs, buckets: s.bloom?.buckets ?? 0, gram_buckets: grams?.buckets ?? 0, built_at: builtAt, packed: 0, part_buckets: PART_BUCKETS, format: INDEX_FORMAT };
  const blooms: BloomRowValues[] = [];
  if (!s.bloom) return { block, blooms };
  const parts = (bloom: Bloom, first: number, partBuckets: number) => {
    const partBytes = partBuckets * BUCKET_BYTES;
    for (let p = 0; p * partBytes < bloom.bytes.length; p++) blooms.push({ project_id: projectId, first_seq: s.firstSeq, part: first + p, bits: bloom.bytes.subarray(p * partBytes, (p + 1) * partBytes) });
  };
  parts(s.bloom, 0, PART_BUCKETS);
  if (grams) parts(grams, GRAM_PART, GRAM_PART_BUCKETS);
  if (s.slices) {
    s.slices.slices.forEach((slice, i) => blooms.push({ project_id: projectId, first_seq: s.firstSeq, part: -1 - i, bits: slice.bytes }));
    blooms.push({ project_id: projectId, first_seq: s.firstSeq, part: COMMON_PART, bits: s.slices.common.bytes });
  }
  return { block, blooms };
}

/** Filter rows per INSERT. */
export const BLOOM_ROWS_PER_STATEMENT = 200;

/**
 * What a project's logs take on disk (LogStore.storedBytes), estimated from what the store keeps
 * anyway rather than by reading the logs: the packs' sizes (exact), the skip index's filters (from
 * their bucket counts), and the logs still in rows (their number, times the size of the newest
 * few, plus what a row and its index entries cost beside its text). Projects asked for again
 * within a minute get the same figure.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../../db/types.js';
import { BUCKET_BYTES } from '../blocks/bloom.js';

/** Per log in rows, beside its text: the row's header and columns, and its three index entries. */
const ROW_OVERHEAD_BYTES = 120;
/** Rows sampled for their text's size. */
const SAMPLE_ROWS = 64;
/** The slices' filters, kept until a block is packed: about 12 bits per item where its filter has 16. */
const SLICES_OF_FILTER = 0.75;
const FRESH_MS = 60_000;

export interface StoredBytes {
  (projectIds: string[]): Promise<Map<string, number>>;
}

export function createStoredBytes(db: Executor, now: () => number): StoredBytes {
  const cache = new Map<string, { bytes: number; at: number }>();

  async function measure(ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const projects = await db.selectFrom('projects').select(['id', 'log_count']).where('id', 'in', ids).execute();
    const blocks = await db
      .selectFrom('log_blocks')
      .select([
        'project_id',
        sql<number>`coalesce(sum(case when packed > 0 then packed else 0 end), 0)`.as('packs'),
        sql<number>`coalesce(sum(case when packed > 0 then logs else 0 end), 0)`.as('packed_logs'),
        sql<number>`coalesce(sum(buckets + gram_buckets), 0)`.as('buckets'),
        sql<number>`coalesce(sum(case when packed > 0 then 0 else buckets end), 0)`.as('slice_buckets'),
      ])
      .where('project_id', 'in', ids)
      .groupBy('project_id')
      .execute();
    const byProject = new Map(blocks.map((b) => [b.project_id, b]));
    for (const p of projects) {
      const b = byProject.get(p.id);
      const packs = Number(b?.packs ?? 0);
      const filters = (Number(b?.buckets ?? 0) + SLICES_OF_FILTER * Number(b?.slice_buckets ?? 0)) * BUCKET_BYTES;
      const inRows = Math.max(0, Number(p.log_count) - Number(b?.packed_logs ?? 0));
      let rows = 0;
      if (inRows > 0) {
        const sample = await db
          .selectFrom('logs')
          .select(sql<number>`octet_length(message) + coalesce(octet_length(metadata), 0) + coalesce(octet_length(source), 0)`.as('bytes'))
          .where('project_id', '=', p.id)
          .orderBy('seq', 'desc')
          .limit(SAMPLE_ROWS)
          .execute();
        const text = sample.length === 0 ? 0 : sample.reduce((sum, r) => sum + Number(r.bytes), 0) / sample.length;
        rows = inRows * (text + ROW_OVERHEAD_BYTES);
      }
      out.set(p.id, Math.round(packs + filters + rows));
    }
    return out;
  }

  return async (projectIds) => {
    const t = now();
    const stale = projectIds.filter((id) => {
      const hit = cache.get(id);
      return !hit || t - hit.at >= FRESH_MS;
    });
    if (stale.length > 0) {
      for (let i = 0; i < stale.length; i += 500) {
        const measured = await measure(stale.slice(i, i + 500));
        for (const [id, bytes] of measured) cache.set(id, { bytes, at: t });
      }
      // Forget what has not been asked for in a while (deleted projects among them).
      if (cache.size > 10_000) for (const [id, hit] of cache) if (t - hit.at >= FRESH_MS) cache.delete(id);
    }
    return new Map(projectIds.map((id) => [id, cache.get(id)?.bytes ?? 0]));
  };
}

/** The whole store's bytes by part (the /metrics gauge): logs in rows, packs, and the skip index's filters. */
export interface StoreBytes {
  rows: number;
  packs: number;
  index: number;
}

/** StoreBytes of every project together, estimated as storedBytes is, at most a minute old. */
export function createStoreBytes(db: Executor, now: () => number): () => Promise<StoreBytes> {
  let last: { at: number; bytes: StoreBytes } | undefined;
  return async () => {
    if (last && now() - last.at < FRESH_MS) return last.bytes;
    const logs = await db.selectFrom('projects').select(sql<number>`coalesce(sum(log_count), 0)`.as('n')).executeTakeFirstOrThrow();
    const b = await db
      .selectFrom('log_blocks')
      .select([
        sql<number>`coalesce(sum(case when packed > 0 then packed else 0 end), 0)`.as('packs'),
        sql<number>`coalesce(sum(case when packed > 0 then logs else 0 end), 0)`.as('packed_logs'),
        sql<number>`coalesce(sum(buckets + gram_buckets), 0)`.as('buckets'),
        sql<number>`coalesce(sum(case when packed > 0 then 0 else buckets end), 0)`.as('slice_buckets'),
      ])
      .executeTakeFirstOrThrow();
    const inRows = Math.max(0, Number(logs.n) - Number(b.packed_logs));
    let rows = 0;
    if (inRows > 0) {
      const sample = await db.selectFrom('logs').select(sql<number>`octet_length(message) + coalesce(octet_length(metadata), 0) + coalesce(octet_length(source), 0)`.as('bytes')).limit(SAMPLE_ROWS).execute();
      const text = sample.length === 0 ? 0 : sample.reduce((sum, r) => sum + Number(r.bytes), 0) / sample.length;
      rows = Math.round(inRows * (text + ROW_OVERHEAD_BYTES));
    }
    const bytes = { rows, packs: Number(b.packs), index: Math.round((Number(b.buckets) + SLICES_OF_FILTER * Number(b.slice_buckets)) * BUCKET_BYTES) };
    last = { at: now(), bytes };
    return bytes;
  };
}

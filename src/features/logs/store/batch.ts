/**
 * A batch as the writers send and bind it (column arrays), its per-minute rollup counts, and the
 * size of logs as everything that holds them in memory counts it. Pure: the SQLite writer's thread
 * imports it too.
 */
import type { Batch, LogRow } from './writer.js';

/** Column arrays: cheaper to send to a worker and to bind than an object per row. */
export interface Columns {
  projectId: string;
  receivedAt: number;
  idempotency: { key: string; response: string } | undefined;
  ts: number[];
  level: number[];
  source: (string | null)[];
  message: string[];
  metadata: (string | null)[];
}

export function toColumns(b: Batch): Columns {
  const n = b.rows.length;
  const c: Columns = { projectId: b.projectId, receivedAt: b.receivedAt, idempotency: b.idempotency, ts: new Array(n), level: new Array(n), source: new Array(n), message: new Array(n), metadata: new Array(n) };
  b.rows.forEach((r, i) => {
    c.ts[i] = r.ts;
    c.level[i] = r.level;
    c.source[i] = r.source;
    c.message[i] = r.message;
    c.metadata[i] = r.metadata;
  });
  return c;
}

/** Parallel arrays of rollup rows. */
export interface RollupCounts {
  /** Per (minute, level): the log_counts rows. */
  levels: { minute: number[]; level: number[]; n: number[] };
  /** Per (minute, level, source), '' for none: the log_source_counts rows. */
  sources: { minute: number[]; level: number[]; source: string[]; n: number[] };
}

/** A batch's logs counted for both per-minute rollups, in one pass over the logs. */
export function minuteCounts(ts: number[], level: number[], source: (string | null)[]): RollupCounts {
  const bySource = new Map<string, number>();
  for (let i = 0; i < ts.length; i++) {
    // Timestamps are never negative, so ts - ts % 60000 is the minute's first ms (as in SQL).
    const key = `${(ts[i]! - (ts[i]! % 60_000)) * 8 + level[i]!}:${source[i] ?? ''}`;
    bySource.set(key, (bySource.get(key) ?? 0) + 1);
  }
  const out: RollupCounts = { levels: { minute: [], level: [], n: [] }, sources: { minute: [], level: [], source: [], n: [] } };
  const byLevel = new Map<number, number>();
  for (const [key, n] of bySource) {
    const colon = key.indexOf(':');
    const cell = Number(key.slice(0, colon));
    out.sources.minute.push(Math.floor(cell / 8));
    out.sources.level.push(cell % 8);
    out.sources.source.push(key.slice(colon + 1));
    out.sources.n.push(n);
    byLevel.set(cell, (byLevel.get(cell) ?? 0) + n);
  }
  for (const [cell, n] of byLevel) {
    out.levels.minute.push(Math.floor(cell / 8));
    out.levels.level.push(cell % 8);
    out.levels.n.push(n);
  }
  return out;
}

/**
 * Logs' size as the queue counts it: the characters of their messages, sources and metadata. For
 * stored rows too, so work that follows the commit (alert evaluation) counts what ingest counted.
 */
export function batchBytes(rows: readonly Pick<LogRow, 'message' | 'source' | 'metadata'>[]): number {
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) bytes += logTextBytes(rows[i]!);
  return bytes;
}

/** One log's size as the queue counts it (batchBytes): ingest while it builds logs, pages as they are read, the skip index's builder as it reads. */
export function logTextBytes(r: Pick<LogRow, 'message' | 'source' | 'metadata'>): number {
  return r.message.length + (r.source === null ? 0 : r.source.length) + (r.metadata === null ? 0 : r.metadata.length);
}

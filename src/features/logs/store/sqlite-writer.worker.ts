/**
 * The SQLite writer's thread: the one connection that writes logs, so a large commit (and its
 * fsync) never blocks the event loop. Started by sqlite-writer.ts with workerData `{file}`; it
 * answers `{id, results}` or `{id, error}` to each message, in order.
 *
 * Group commit: every message's batches are committed in one immediate transaction. The statements
 * shared with the main thread come from statements.ts, compiled here with Kysely's SQLite compiler
 * (no connection) and prepared once per distinct text on this thread's connection.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import Sqlite from 'better-sqlite3';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type Compilable } from 'kysely';
import { SQLITE_PRAGMAS } from '../../../db/sqlite-pragmas.js';
import type { DatabaseSchema } from '../../../db/types.js';
import type { AlertCount, AlertCountRow, CommitResult } from './writer.js';
import type { DeleteCounts, PackOutcome, PackToSave } from './index.js';
import * as packStatements from './packs/statements.js';
import { packSync, unpack } from './packs/codec.js';
import { expire } from './packs/expire.js';
import type { PackedLog } from './packs/format.js';
import { minuteCounts, type Columns } from './batch.js';
import * as statements from './statements.js';
import { LOG_COLUMNS } from './statements.js';
import { BLOOM_ROWS_PER_STATEMENT, type BlockRowValues, type BloomRowValues } from './blocks/rows.js';

export type WriterMessage =
  | { id: number; batches: Columns[] }
  | { id: number; counts: AlertCount[]; ruleIds: string[]; from: number }
  | { id: number; block: BlockRowValues; blooms: BloomRowValues[] }
  | { id: number; deleteFrom: string; batch: number; before: number | null }
  | { id: number; deleteCounts: true }
  | { id: number; pack: PackToSave }
  | { close: true };

const db = new Sqlite((workerData as { file: string }).file);
for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);

/** Builds SQL only: statements.ts's queries, as SQLite text and parameters. */
const compiler = new Kysely<DatabaseSchema>({
  dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new SqliteIntrospector(k), createQueryCompiler: () => new SqliteQueryCompiler() },
});
/** Prepared statements by their text; texts vary only with the number of rows or ids, which is bounded. */
const prepared = new Map<string, Sqlite.Statement>();
function prepare(query: Compilable): { statement: Sqlite.Statement; params: unknown[] } {
  const { sql, parameters } = query.compile();
  let statement = prepared.get(sql);
  if (!statement) {
    if (prepared.size >= 512) prepared.clear();
    statement = db.prepare(sql);
    prepared.set(sql, statement);
  }
  return { statement, params: parameters as unknown[] };
}
const run = (query: Compilable) => {
  const { statement, params } = prepare(query);
  statement.run(params);
};

/** Rows per multi-row statement: one call into SQLite per 100 rows instead of per row, and a bounded number of texts. */
const ROWS_PER_STATEMENT = 100;
const inserts = new Map<number, Sqlite.Statement>();
/** The multi-row INSERT of `rows` logs (too hot a path to compile per call). */
function insertFor(rows: number): Sqlite.Statement {
  let stmt = inserts.get(rows);
  if (!stmt) {
    const row = `(${LOG_COLUMNS.map(() => '?').join(', ')})`;
    stmt = db.prepare(`insert into logs (${LOG_COLUMNS.join(', ')}) values ${Array.from({ length: rows }, () => row).join(', ')}`);
    inserts.set(rows, stmt);
  }
  return stmt;
}

function inChunks<T>(rows: T[], each: (chunk: T[]) => void): void {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) each(rows.slice(i, i + ROWS_PER_STATEMENT));
}

const commit = db.transaction((batches: Columns[]) =>
  batches.map((b): CommitResult | null => {
    const n = b.ts.length;
    const current = prepare(statements.selectLastSeq(compiler, b.projectId));
    const project = current.statement.get(current.params) as { last_seq: number } | undefined;
    if (!project) return null;
    // seq numbers the project's logs (migration 0008), as on PostgreSQL: this thread is the only
    // writer of logs, so the seqs after the project's last are free and follow commit order.
    const first = project.last_seq + 1;
    for (let start = 0; start < n; start += ROWS_PER_STATEMENT) {
      const end = Math.min(n, start + ROWS_PER_STATEMENT);
      const params: unknown[] = new Array((end - start) * LOG_COLUMNS.length);
      let k = 0;
      for (let i = start; i < end; i++) {
        params[k++] = b.projectId;
        params[k++] = first + i;
        params[k++] = b.ts[i];
        params[k++] = b.receivedAt;
        params[k++] = b.level[i];
        params[k++] = b.source[i];
        params[k++] = b.message[i];
        params[k++] = b.metadata[i];
      }
      insertFor(end - start).run(params);
    }
    run(statements.countNewLogs(compiler, b.projectId, n, first + n - 1));
    const { levels, sources } = minuteCounts(b.ts, b.level, b.source);
    inChunks(
      levels.n.map((count, i) => ({ minute: levels.minute[i]!, level: levels.level[i]!, n: count })),
      (rows) => run(statements.addLogCounts(compiler, b.projectId, rows)),
    );
    inChunks(
      sources.n.map((count, i) => ({ minute: sources.minute[i]!, level: sources.level[i]!, source: sources.source[i]!, n: count })),
      (rows) => run(statements.addSourceCounts(compiler, b.projectId, rows)),
    );
    if (b.idempotency) run(statements.markIdempotencyDone(compiler, b.projectId, b.idempotency.key, b.idempotency.response));
    return { prevSeq: project.last_seq, firstSeq: first, lastSeq: first + n - 1 };
  }),
);

const countAlerts = db.transaction((counts: AlertCount[], ruleIds: string[], from: number) => {
  inChunks(counts, (chunk) => run(statements.addAlertCounts(compiler, chunk)));
  const rows: AlertCountRow[] = [];
  // Bounded IN lists: SQLite caps the parameters of one statement.
  for (let i = 0; i < ruleIds.length; i += 500) {
    const read = prepare(statements.alertCountsSince(compiler, ruleIds.slice(i, i + 500), from));
    for (const row of read.statement.all(read.params) as AlertCountRow[]) rows.push(row);
  }
  return rows;
});

/**
 * A skip index summary (blocks/rows.ts), in one transaction: saved here, by the connection that
 * writes logs, so the event loop never waits for the write lock. False when the block was there.
 */
const saveSummary = db.transaction((block: BlockRowValues, blooms: BloomRowValues[]): boolean => {
  // Not for a project deleted meanwhile (its deletion's transaction has taken the rest of its blocks).
  const project = prepare(statements.projectOfSummary(compiler, block.project_id));
  if (project.statement.get(project.params) === undefined) return false;
  const insert = prepare(statements.insertBlock(compiler, block));
  if (insert.statement.run(insert.params).changes === 0) return false;
  // A Buffer arrives as a Uint8Array; better-sqlite3 binds Buffers as blobs.
  const rows = blooms.map((r) => ({ ...r, bits: Buffer.from(r.bits.buffer, r.bits.byteOffset, r.bits.byteLength) }));
  for (let i = 0; i < rows.length; i += BLOOM_ROWS_PER_STATEMENT) run(statements.insertBlockBlooms(compiler, rows.slice(i, i + BLOOM_ROWS_PER_STATEMENT)));
  return true;
});

/** Seqs per DELETE of a retention step (well under SQLite's limit on a statement's parameters). */
const SEQS_PER_DELETE = 500;
/** Skip-index blocks one purge step forgets, once the logs are gone (a block has up to ~40 filter rows). */
const PURGE_BLOCKS = 50;
/** The steps that took logs, counted here as they run (LogStore.deleteCounts): a purge's (no `before`) and retention's. */
const deleted: DeleteCounts = { purge: { steps: 0, maxLogs: 0, threads: [] }, retention: { steps: 0, maxLogs: 0, threads: [] } };

/**
 * One step of deleting a project's logs, in one transaction on this thread, so the event loop
 * never runs the delete nor waits for the write lock: the project's `batch` oldest logs (of those
 * older than `before`, for retention), with its count and rollups kept exact. With no `before` (a
 * purge ahead of the project's deletion), once no log is left, the summaries of up to PURGE_BLOCKS
 * blocks go instead. Answers how many logs (or blocks) went; 0: nothing left.
 */
const deleteStep = db.transaction((projectId: string, batch: number, before: number | null): number => {
  const read = prepare(statements.oldestLogs(compiler, projectId, batch, before));
  let victims = read.statement.all(read.params) as { seq: number; ts: number; level: number; source: string | null }[];
  if (victims.length === 0 && before !== null) victims = expirePack(projectId, before);
  else if (victims.length > 0) {
    // Every log up to the last seq read is one of them unless only the older ones were asked for.
    if (before === null) run(statements.deleteLogsThrough(compiler, projectId, victims[victims.length - 1]!.seq));
    else for (let i = 0; i < victims.length; i += SEQS_PER_DELETE) run(statements.deleteLogSeqs(compiler, projectId, victims.slice(i, i + SEQS_PER_DELETE).map((v) => v.seq)));
  }
  const n = victims.length;
  if (n === 0) return before === null ? forgetBlocks(projectId) : 0;
  run(statements.countRemovedLogs(compiler, projectId, n));
  const { levels, sources } = minuteCounts(
    victims.map((v) => v.ts),
    victims.map((v) => v.level),
    victims.map((v) => v.source),
  );
  // The rollups' upserts add negative counts; rows that reach zero go.
  inChunks(
    levels.n.map((count, i) => ({ minute: levels.minute[i]!, level: levels.level[i]!, n: -count })),
    (rows) => run(statements.addLogCounts(compiler, projectId, rows)),
  );
  inChunks(
    sources.n.map((count, i) => ({ minute: sources.minute[i]!, level: sources.level[i]!, source: sources.source[i]!, n: -count })),
    (rows) => run(statements.addSourceCounts(compiler, projectId, rows)),
  );
  run(statements.dropEmptyLogCounts(compiler, projectId));
  run(statements.dropEmptySourceCounts(compiler, projectId));
  const counts = before === null ? deleted.purge : deleted.retention;
  counts.steps++;
  counts.maxLogs = Math.max(counts.maxLogs, n);
  if (!counts.threads.includes(threadId)) counts.threads.push(threadId);
  return n;
});

/**
 * Retention over the project's first pack that holds logs older than `before`: those logs go, the
 * pack is rewritten with the rest (or goes, with its block, when none is left). The logs that went.
 */
function expirePack(projectId: string, before: number): PackedLog[] {
  const found = prepare(packStatements.oldestPackBefore(compiler, projectId, before));
  const block = found.statement.get(found.params) as { first_seq: number } | undefined;
  if (!block) return [];
  const first = Number(block.first_seq);
  const data = prepare(packStatements.packData(compiler, projectId, first));
  const row = data.statement.get(data.params) as { data: Uint8Array } | undefined;
  const { gone, kept, minTs, maxTs } = expire(row ? unpack(row.data) : [], before);
  if (kept.length === 0) {
    run(packStatements.deletePack(compiler, projectId, first));
    run(packStatements.deleteBlockBlooms(compiler, projectId, first));
    run(packStatements.deleteBlock(compiler, projectId, first));
  } else {
    const rewritten = packSync(kept);
    run(packStatements.updatePack(compiler, projectId, first, rewritten));
    run(packStatements.updatePackedBlock(compiler, projectId, first, rewritten.byteLength, kept.length, minTs, maxTs));
  }
  return gone;
}

function forgetBlocks(projectId: string): number {
  const blocks = prepare(statements.purgeBlocks(compiler, projectId, PURGE_BLOCKS));
  const firsts = blocks.statement.all(blocks.params) as { first_seq: number }[];
  if (firsts.length === 0) return 0;
  const last = firsts[firsts.length - 1]!.first_seq;
  run(packStatements.deletePacksThrough(compiler, projectId, last));
  run(statements.deleteBlockBloomsThrough(compiler, projectId, last));
  run(statements.deleteBlocksThrough(compiler, projectId, last));
  return firsts.length;
}

/**
 * A block's pack in place of its rows, in one transaction: written only if the block is still
 * summarised and unpacked and holds exactly the rows that were packed (retention or a purge may
 * have taken some since they were read: the block is then packed again later, from what is left).
 */
const savePack = db.transaction((p: PackToSave): PackOutcome => {
  const block = prepare(packStatements.unpackedBlock(compiler, p.projectId, p.firstSeq));
  if (block.statement.get(block.params) === undefined) return 'skipped';
  const count = prepare(packStatements.countBlockRows(compiler, p.projectId, p.firstSeq, p.lastSeq));
  if (Number((count.statement.get(count.params) as { n: number }).n) !== p.logs) return 'skipped';
  run(packStatements.insertPack(compiler, p.projectId, p.firstSeq, Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength)));
  run(packStatements.markPacked(compiler, p.projectId, p.firstSeq, p.data.byteLength, p.logs));
  run(packStatements.deleteBlockRows(compiler, p.projectId, p.firstSeq, p.lastSeq));
  run(packStatements.deleteSliceFilters(compiler, p.projectId, p.firstSeq));
  return 'packed';
});

const port = parentPort!;
port.on('message', (msg: WriterMessage) => {
  if ('close' in msg) {
    db.close();
    port.close();
    return;
  }
  try {
    if ('counts' in msg) port.postMessage({ id: msg.id, results: countAlerts.immediate(msg.counts, msg.ruleIds, msg.from) });
    else if ('block' in msg) port.postMessage({ id: msg.id, results: saveSummary.immediate(msg.block, msg.blooms) });
    else if ('pack' in msg) port.postMessage({ id: msg.id, results: savePack.immediate(msg.pack) });
    else if ('deleteCounts' in msg) port.postMessage({ id: msg.id, results: deleted });
    else if ('deleteFrom' in msg) port.postMessage({ id: msg.id, results: deleteStep.immediate(msg.deleteFrom, msg.batch, msg.before) });
    else port.postMessage({ id: msg.id, results: commit.immediate(msg.batches) });
  } catch (err) {
    port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});

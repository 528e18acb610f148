/**
 * What the ingest queue commits through: the writer's interface and its messages. Each engine's
 * writer lives with its store (sqlite-writer.ts, postgres.ts). Only types: the store's contract,
 * which ingestion and the tail import without importing the store's code.
 */

/** A log ready to store (ingestion makes it: ingest/normalise.ts). `metadata` is serialised JSON or null. */
export interface LogRow {
  ts: number;
  level: number;
  source: string | null;
  message: string;
  metadata: string | null;
}

/** One request's accepted logs for one project. */
export interface Batch {
  projectId: string;
  receivedAt: number;
  rows: LogRow[];
  /** When the request had an Idempotency-Key: marked done, with its answer, in the same transaction. */
  idempotency?: { key: string; response: string };
}

/**
 * Where a committed batch went: its logs hold the consecutive seqs firstSeq..lastSeq, and the
 * project's newest log before them was prevSeq (so a reader that has seen prevSeq can take these
 * logs as the exact continuation).
 */
export interface CommitResult {
  prevSeq: number;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Commits batches in one transaction, durably. For each batch it answers where its logs went, or
 * null when the project no longer exists (its logs are then not stored).
 */
export interface LogWriter {
  write(batches: Batch[]): Promise<(CommitResult | null)[]>;
  close(): Promise<void>;
}

/** A batch as committed, with where its logs went: what the queue hands to whoever follows commits. */
export interface Committed extends CommitResult {
  batch: Batch;
}

export interface AlertCount {
  ruleId: string;
  bucket: number;
  n: number;
}

export interface AlertCountRow {
  rule_id: string;
  bucket: number;
  n: number;
}

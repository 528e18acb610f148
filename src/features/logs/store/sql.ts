import type { CompiledQuery, RawBuilder } from 'kysely';

/**
 * The statements of the shared log queries (repository.ts, blocks/store.ts) that differ between
 * engines. Each engine's store passes its own (sqlite-sql.ts, postgres-sql.ts); nothing guesses the
 * engine from an executor. This module imports neither engine's: they import it.
 */
export interface LogSql {
  /** `message` holds `text` exactly (a pattern's required literal). */
  messageContains(text: string): RawBuilder<boolean>;
  /** The column holds the ASCII `text`, with ASCII letters in either case. */
  holdsIgnoringCase(column: 'message' | 'metadata', text: string): RawBuilder<boolean>;
  /** The column holds `text` exactly. */
  holds(column: 'message' | 'metadata', text: string): RawBuilder<boolean>;
  /** Lower time bounds a page tries first, newest first, before its whole range (none: the whole range at once). */
  readonly pageWindowsMs: readonly number[];
  /**
   * Bytes of log text the skip index's builder aims to read per statement (blocks/store.ts
   * summarise): a read is a stall on SQLite (synchronous), and mostly a fixed cost on PostgreSQL
   * (a read by seq looks into every daily partition).
   */
  readonly summaryReadBytes: number;
  /** And the most logs it reads per statement: at 128 KiB a log, what one read may hold at worst. */
  readonly summaryReadLogs: number;
  /** A read of one seq range (a block), made to walk the (project_id, seq) index. */
  seqRangeRead(compiled: CompiledQuery): CompiledQuery;
  /** `length` bytes of the blob `bytes` from the 0-based `offset` (SQL expressions, so callers choose literals or parameters). */
  bytesSlice(bytes: RawBuilder<unknown>, offset: RawBuilder<unknown>, length: RawBuilder<unknown>): RawBuilder<unknown>;
}

/** A LIKE pattern of a substring, with `\\` as its escape: `%` and `_` in the substring are literal. */
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

import { sql } from 'kysely';
import { likePattern, type LogSql } from './sql.js';

/**
 * Lower time bounds tried first on PostgreSQL, before the page's whole range. The logs table is
 * partitioned by day there, and a query without a time bound is planned over every partition
 * (tens of milliseconds with a year of them); with a bound the planner keeps only the few it needs.
 */
const PAGE_WINDOWS_MS = [3_600_000, 86_400_000, 7 * 86_400_000];

/** PostgreSQL's statements of the shared log queries. */
export const postgresSql: LogSql = {
  messageContains: (text) => sql<boolean>`strpos(message, ${text}) > 0`,
  // ASCII only: the "C" collation's ILIKE folds ASCII letters, as the needles are.
  holdsIgnoringCase: (column, text) => sql<boolean>`${sql.ref(column)} collate "C" ilike ${likePattern(text)} escape '\\'`,
  holds: (column, text) => sql<boolean>`strpos(${sql.ref(column)}, ${text}) > 0`,
  summaryReadLogs: 1024,
  summaryReadBytes: 8 * 1024 * 1024,
  pageWindowsMs: PAGE_WINDOWS_MS,
  seqRangeRead: (compiled) => compiled,
  bytesSlice: (bytes, offset, length) => sql`substring(${bytes} from cast(${offset} + 1 as integer) for ${length})`,
};
